import ArgumentParser
import Foundation
import SAML

/// `saml sp-metadata --entity-id ID --acs URL...`: the service provider's own SAML 2.0 metadata.
struct SPMetadataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sp-metadata",
        abstract:
            "Write the service provider's SAML 2.0 metadata (md:EntityDescriptor with an SPSSODescriptor), signed when a key is given.",
        discussion: """
            The first --acs is the default endpoint (HTTP-POST, index 0). --signing-cert lists every certificate \
            of the file as a signing key; with --signing-key (the private key of its first certificate) the \
            document is signed and AuthnRequestsSigned is true. Exit status: 0 written, 1 refused (a value the \
            schema refuses, a key that does not fit), 2 usage or I/O error.
            """
    )

    @Option(help: "The SP's entity ID.")
    var entityID: String

    @Option(name: .customLong("acs"), help: "An assertion consumer service URL (HTTP-POST); repeat for several, the first is the default.")
    var assertionConsumerServices: [String] = []

    @Option(help: "The SP's signing certificate(s) (PEM; several blocks for a rotation).")
    var signingCert: String?

    @Option(help: "The private key (PEM) of the first --signing-cert: signs the document; AuthnRequestsSigned=\"true\".")
    var signingKey: String?

    @Option(help: "A certificate (PEM) the IdP encrypts assertions to; repeat for several.")
    var encryptionCert: [String] = []

    @Option(help: "A NameIDFormat URI; repeat for several (default: transient, persistent).")
    var nameIDFormat: [String] = []

    @Option(help: "validUntil is this many seconds after now (0: no validUntil).")
    var validFor = 7 * 86_400

    @Option(help: "The cacheDuration in seconds (0: no cacheDuration).")
    var cacheDuration = 6 * 3600

    @Option(help: "Count validUntil from this instant (ISO 8601) instead of now.")
    var now: String?

    @Option(help: "Write the document to this file instead of standard output.")
    var output: String?

    func validate() throws {
        guard !assertionConsumerServices.isEmpty else { throw ValidationError("expected at least one --acs URL") }
        guard signingKey == nil || signingCert != nil else { throw ValidationError("--signing-key needs --signing-cert (its certificate)") }
        guard validFor >= 0, cacheDuration >= 0 else { throw ValidationError("--valid-for and --cache-duration take seconds, 0 or more") }
    }

    func run() throws {
        var instant = SAMLInstant.now()
        if let now {
            guard let parsed = SAMLInstant(xmlDateTime: now) else {
                throw CommandFailure.usage("--now expects an ISO 8601 instant, found \(now)")
            }
            instant = parsed
        }
        let certificatePEM = try signingCert.map(StandardStreams.readAll)
        let keyPEM = try signingKey.map(StandardStreams.readAll)
        let encryptionPEMs = try encryptionCert.map(StandardStreams.readAll)
        let document = try rejectingOnError {
            let certificates = try certificatePEM.map { try TrustedKey.all(pem: $0) } ?? []
            let key = try keyPEM.map { try SigningKey(privateKeyPEM: $0, certificatePEM: certificatePEM) }
            var metadata = try ServiceProviderMetadata(
                entityID: entityID, assertionConsumerServiceURLs: assertionConsumerServices, signingKey: key,
                // With a key, the first certificate is the key's (listed through it); the others follow.
                additionalSigningKeys: key == nil ? certificates : Array(certificates.dropFirst()),
                encryptionKeys: try encryptionPEMs.flatMap { try TrustedKey.all(pem: $0) })
            if !nameIDFormat.isEmpty { metadata.nameIDFormats = nameIDFormat }
            metadata.validity = validFor > 0 ? .seconds(validFor) : nil
            metadata.cacheDuration = cacheDuration > 0 ? .seconds(cacheDuration) : nil
            return try metadata.xml(signedWith: key, now: instant)
        }
        guard let output else {
            StandardStreams.writeOutput(document)
            return
        }
        guard FileManager.default.createFile(atPath: output, contents: Data(document)) else {
            throw CommandFailure.io("cannot write \(output)")
        }
    }
}
