import ArgumentParser
import Foundation
import SAML

/// `saml metadata FILE [--signer PEM [--allow-sha1]]`: what IdP metadata says, as JSON.
struct MetadataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata",
        abstract: "Read SAML 2.0 IdP metadata: entity IDs, signing keys (SHA-256 fingerprints), SSO endpoints, validity.",
        discussion:
            "Exit status: 0 read, 1 refused (expired, unsigned when --signer is given, bad signature, malformed), 2 usage or I/O error."
    )

    @Option(help: "A PEM key the metadata must be signed by.")
    var signer: String?

    @Flag(
        help:
            "Accept a metadata signature made with a legacy digest: SHA-1 or SHA-224, in the signature method or the digest (weaker; older federation aggregates use them)."
    )
    var allowSHA1 = false

    @Option(help: "Check validUntil as of this instant (ISO 8601) instead of now.")
    var now: String?

    @Argument(help: "The metadata file, or - for standard input.")
    var file: String?

    func run() throws {
        var options = IdentityProviderMetadata.Options()
        options.algorithms = allowSHA1 ? .allowingSHA1 : .strict
        if let now {
            guard let instant = SAMLInstant(xmlDateTime: now) else {
                throw CommandFailure.usage("--now expects an ISO 8601 instant, found \(now)")
            }
            options.now = instant
        }
        if let signer {
            options.signers = try rejectingOnError { try TrustedKey.all(pem: try StandardStreams.readAll(signer)) }
        }
        let input = try StandardStreams.readAll(file)
        let entities = try rejectingOnError { try IdentityProviderMetadata.read(input, options: options) }
        let object: [[String: Any]] = entities.map { entity in
            var item: [String: Any] = [
                "entityID": entity.entityID,
                "keys": entity.signingKeys.map { ["sha256": $0.fingerprint, "certificate": $0.certificateDER != nil] as [String: Any] },
                "singleSignOnServices": entity.singleSignOnServices.map { ["binding": $0.binding, "location": $0.location] },
                "signed": signer != nil,
            ]
            item["validUntil"] = entity.validUntil.map { $0.description } ?? NSNull()
            item["cacheDurationSeconds"] = entity.cacheDuration.map { Int($0.components.seconds) } ?? NSNull()
            return item
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        StandardStreams.writeOutput(Array(data) + [UInt8(ascii: "\n")])
    }
}
