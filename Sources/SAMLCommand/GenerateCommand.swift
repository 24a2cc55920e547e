import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate signed, MVPD-shaped SAML responses with fresh IDs and times (a mock MVPD).",
        discussion: """
            Without --out, the responses go to stdout, one per line. Attributes: --attributes uid=a,zip=1,zip=2 \
            (a repeated name is multi-valued).
            """
    )

    @Option(help: "How many responses.")
    var count: Int = 1

    @Option(help: "The signing private key (PEM, RSA or EC).")
    var key: String

    @Option(help: "The signing certificate (PEM); it goes into ds:KeyInfo.")
    var cert: String

    @Option(help: "Where to sign: assertion, response or both.")
    var sign: MockIdentityProvider.Placement = .assertion

    @Option(help: "Attributes as name=value,... (repeat a name for several values).")
    var attributes: String?

    @Option(help: "The Issuer (IdP entity ID).")
    var issuer = MockIdentityProvider.Template().issuer

    @Option(help: "The Audience.")
    var audience = MockIdentityProvider.Template().audience

    @Option(help: "The Destination and bearer Recipient.")
    var destination: String?

    @Option(help: "The InResponseTo of Response and bearer confirmation.")
    var inResponseTo: String?

    @Option(help: "The subject's NameID.")
    var nameID = MockIdentityProvider.Template().nameID

    @Option(help: "Encrypt the assertion to this SP certificate (PEM): AES-256-GCM, RSA-OAEP.")
    var encryptTo: String?

    @Flag(help: "Write the cookbook-encoded SAMLResponse value instead of the XML.")
    var encode = false

    @Option(help: "Write response-0001.xml (or .txt when encoded), ... into this folder instead of stdout.")
    var out: String?

    func validate() throws {
        guard count >= 1 else { throw ValidationError("--count must be at least 1") }
    }

    func run() throws {
        let provider = try rejectingOnError {
            try MockIdentityProvider(privateKeyPEM: try StandardStreams.readAll(key), certificatePEM: try StandardStreams.readAll(cert))
        }
        var template = MockIdentityProvider.Template()
        template.issuer = issuer
        template.audience = audience
        template.destination = destination
        template.inResponseTo = inResponseTo
        template.nameID = nameID
        if let attributes {
            template.attributes = try Self.parse(attributes)
        }
        if let out {
            do {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure.io("cannot create \(out)")
            }
        }
        let recipient = try encryptTo.map { path in
            try rejectingOnError { try TrustedKey(pem: try StandardStreams.readAll(path)) }
        }
        let width = max(4, String(count).count)
        for index in 1...count {
            var document = try rejectingOnError {
                try provider.response(template, issuedAt: .now(), placement: sign, encryptingFor: recipient)
            }
            if encode {
                document = try rejectingOnError { try Cookbook.encode(normalizingInPlace: &document) }
            }
            if let out {
                let number = String(index)
                let name = "response-" + String(repeating: "0", count: width - number.count) + number + (encode ? ".txt" : ".xml")
                let path = URL(fileURLWithPath: out).appendingPathComponent(name).path
                guard FileManager.default.createFile(atPath: path, contents: Data(document)) else {
                    throw CommandFailure.io("cannot write \(path)")
                }
            } else {
                StandardStreams.writeOutput(document + [UInt8(ascii: "\n")])
            }
        }
    }

    static func parse(_ list: String) throws -> [(name: String, values: [String])] {
        var result: [(name: String, values: [String])] = []
        for pair in list.split(separator: ",") {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw CommandFailure.usage("--attributes expects name=value pairs, found \(pair)")
            }
            let name = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            if let index = result.firstIndex(where: { $0.name == name }) {
                result[index].values.append(value)
            } else {
                result.append((name, [value]))
            }
        }
        return result
    }
}

extension MockIdentityProvider.Placement: ExpressibleByArgument {}
