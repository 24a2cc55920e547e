import ArgumentParser
import Foundation
import SAML

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a SAML response (XML, Base64, form value or form body): signature, conditions, fields.",
        discussion: """
            Checks whose expected value is not given are skipped and listed as skipped. Replay detection \
            needs state across calls and is skipped by this one-shot command. Exit status: 0 valid, \
            1 rejected (malformed input included), 2 usage or I/O error.
            """
    )

    @OptionGroup var verifier: VerifierOptions

    @Option(help: "Comma-separated requiredMetadataFields (SAML attribute names, or NameID) that must be present.")
    var requireFields: String?

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Argument(help: "The file to read, or - for standard input (the default).")
    var file: String?

    func run() async throws {
        let input = try StandardStreams.readAll(file)
        let configured = try verifier.makeVerifier()
        let fields = requireFields.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } } ?? []
        let report = VerificationReport.run(input: input, verifier: configured, at: try self.verifier.instant(), requiredFields: fields)
        if json {
            StandardStreams.writeOutput(report.json() + "\n")
        } else {
            StandardStreams.writeOutput(report.text())
        }
        if let error = report.error {
            throw CommandFailure(status: CommandFailure.rejectedStatus, code: error.code.identifier, message: error.message, quiet: json)
        }
    }
}

/// The options every command that verifies shares.
struct VerifierOptions: ParsableArguments {
    @Option(name: .customLong("cert"), help: "A pinned IdP certificate or public key (PEM or DER). Repeatable.")
    var certificates: [String] = []

    @Option(
        name: .customLong("metadata"),
        help: "IdP metadata (SAML 2.0) whose signing keys are pinned and whose entity ID is the expected Issuer. Repeatable.")
    var metadataFiles: [String] = []

    @Option(help: "A PEM key the --metadata files must be signed by.")
    var metadataSigner: String?

    @Option(help: "The expected Issuer (IdP entity ID); with --metadata, picks that entity.")
    var issuer: String?

    @Option(help: "The expected Audience (for Adobe Pass: https://saml.sp.auth.adobe.com).")
    var audience: String?

    @Option(help: "The endpoint the response was sent to (checks Destination and, unless --recipient is given, Recipient).")
    var destination: String?

    @Option(
        name: .customLong("recipient"),
        help: "An accepted bearer Recipient (the ACS URL, the SP entity ID). Repeatable; replaces --destination for that check.")
    var recipients: [String] = []

    @Option(help: "The ID of the request this response answers.")
    var inResponseTo: String?

    @Option(help: "Verify as of this instant (ISO 8601, e.g. 2026-11-21T12:00:00Z) instead of now.")
    var now: String?

    @Option(help: "Clock skew tolerance in seconds.")
    var skew: Int = 180

    @Option(
        name: .customLong("sp-key"), help: "An SP private key (PEM) to decrypt encrypted assertions, NameIDs and attributes. Repeatable.")
    var spKeys: [String] = []

    @Flag(help: "Accept RSA-1_5 key transport and AES-CBC / 3DES-CBC data encryption (weaker; most IdPs still use them).")
    var allowLegacyEncryption = false

    @Option(help: "The oldest IssueInstant accepted, in seconds before now (not checked when absent).")
    var maxAge: Int?

    @Flag(help: "Do not undo the cookbook's whitespace normalisation when a signature fails (docs/recovery.md).")
    var noRecovery = false

    @Flag(help: "Accept the legacy digests, SHA-1 and SHA-224, as digests and in RSA and ECDSA signatures (weaker; older IdPs use them).")
    var allowSHA1 = false

    func instant() throws -> SAMLInstant {
        guard let now else { return .now() }
        guard let instant = SAMLInstant(xmlDateTime: now) else {
            throw CommandFailure.usage("--now expects an ISO 8601 instant such as 2026-11-21T12:00:00Z, found \(now)")
        }
        return instant
    }

    func makeVerifier() throws -> SAMLResponseVerifier {
        let identity = try identityProvider()
        return try SAMLResponseVerifier(try configuration(keys: identity.keys, issuer: identity.issuer))
    }

    /// The pinned keys (from --cert and --metadata) and the expected issuer (--issuer, or the metadata's
    /// entity ID).
    func identityProvider() throws -> (keys: [TrustedKey], issuer: String?) {
        guard !certificates.isEmpty || !metadataFiles.isEmpty else {
            throw CommandFailure.usage("at least one --cert or --metadata is required")
        }
        var keys: [TrustedKey] = []
        for path in certificates {
            let bytes = try StandardStreams.readAll(path)
            do {
                let isPEM = String(decoding: bytes.prefix(1 << 16), as: UTF8.self).contains("-----BEGIN")
                keys += isPEM ? try TrustedKey.all(pem: bytes) : [try TrustedKey(der: bytes)]
            } catch let error as SAMLError {
                throw CommandFailure.usage("cannot use \(path) as a pinned key: \(error.message)")
            }
        }
        var issuer = issuer
        var options = IdentityProviderMetadata.Options(now: try instant())
        if let metadataSigner {
            options.signers = try rejectingOnError { try TrustedKey.all(pem: try StandardStreams.readAll(metadataSigner)) }
        }
        for path in metadataFiles {
            let metadata = try rejectingOnError {
                try IdentityProviderMetadata.read(try StandardStreams.readAll(path), entityID: issuer, options: options)
            }
            if let named = issuer, named != metadata.entityID {
                throw CommandFailure.usage("--metadata \(path) describes \(metadata.entityID), not the issuer \(named)")
            }
            issuer = metadata.entityID
            keys += metadata.signingKeys
        }
        return (keys, issuer)
    }

    /// The verifier configuration of these options, with the given keys and issuer.
    func configuration(keys: [TrustedKey], issuer: String?) throws -> SAMLResponseVerifier.Configuration {
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: keys,
            issuer: ExpectedValue(orSkip: issuer),
            audience: ExpectedValue(orSkip: audience),
            destination: ExpectedValue(orSkip: destination),
            inResponseTo: ExpectedValue(orSkip: inResponseTo),
            replay: .skip
        )
        if !recipients.isEmpty { configuration.recipients = .anyOf(recipients) }
        configuration.algorithms = allowSHA1 ? .allowingSHA1 : .strict
        configuration.recoversNormalizationDamage = !noRecovery
        configuration.clockSkew = .seconds(skew)
        configuration.maximumAge = maxAge.map { .seconds($0) }
        for path in spKeys {
            let bytes = try StandardStreams.readAll(path)
            do {
                configuration.decryptionKeys.append(try DecryptionKey(pem: bytes))
            } catch let error as SAMLError {
                throw CommandFailure.usage("cannot use \(path) as an SP key: \(error.message)")
            }
        }
        configuration.encryptionAlgorithms = allowLegacyEncryption ? .allowingLegacy : .strict
        configuration.clock = FixedClock(try instant())
        return configuration
    }
}
