import ArgumentParser
import Foundation
import SAML

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print the structure of a SAML response (signatures, references, IDs, algorithms, conditions) without judging it."
    )

    @Argument(help: "The file to read (XML, Base64, form value or body), or - for standard input.")
    var file: String?

    func run() throws {
        let input = try StandardStreams.readAll(file)
        let outline = try rejectingOnError {
            let decoded = try SAMLResponseDecoder().decode(input)
            return try decoded.bytes.withUnsafeBytes { try DocumentOutline.read($0) }
        }
        let object: [String: Any] = [
            "root": outline.root,
            "version": outline.version ?? NSNull(),
            "destination": outline.destination ?? NSNull(),
            "inResponseTo": outline.inResponseTo ?? NSNull(),
            "issueInstant": outline.issueInstant ?? NSNull(),
            "issuer": outline.issuer ?? NSNull(),
            "status": outline.status,
            "encryptedAssertions": outline.encryptedAssertions,
            "ids": outline.identifiers.map { ["element": $0.path, "value": $0.value] },
            "assertions": outline.assertions.map { assertion -> [String: Any] in
                [
                    "path": assertion.path, "id": assertion.id ?? NSNull(), "issuer": assertion.issuer ?? NSNull(),
                    "nameID": assertion.nameID ?? NSNull(), "notBefore": assertion.notBefore ?? NSNull(),
                    "notOnOrAfter": assertion.notOnOrAfter ?? NSNull(), "audiences": assertion.audiences,
                    "attributes": assertion.attributeNames,
                ]
            },
            "signatures": outline.signatures.map { signature -> [String: Any] in
                [
                    "path": signature.path, "canonicalization": signature.canonicalization ?? NSNull(),
                    "signatureMethod": signature.signatureMethod ?? NSNull(), "keyInfo": signature.keyInfo,
                    "object": signature.hasObject,
                    "references": signature.references.map { reference -> [String: Any] in
                        [
                            "uri": reference.uri ?? NSNull(), "transforms": reference.transforms,
                            "digestMethod": reference.digestMethod ?? NSNull(),
                        ]
                    },
                ]
            },
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        StandardStreams.writeOutput(String(decoding: data, as: UTF8.self) + "\n")
    }
}
