import AppleSSO
import ArgumentParser
import Foundation
import SAML

struct ExchangeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract: "Run the server side of the Apple SSO Token Exchange on a request body.",
        discussion: "Prints the appleSSO profile JSON (exit 0) or the Enhanced Error Code JSON (exit 1)."
    )

    @Option(help: "The MVPD configuration (v1 JSON or XML, v2 JSON).")
    var config: String

    @Option(help: "The AP-Partner-Framework-Status header value.")
    var pfs: String?

    @Option(help: "The MVPD id (default: from the header's provider id through platformMappingId).")
    var mvpd: String?

    @OptionGroup var verifier: VerifierOptions

    @Option(
        help:
            "A JSON file mapping MVPD ids to {\"metadata\": path} or {\"issuer\": ..., \"certificates\": [paths]} (paths relative to it). Without it, the --cert/--metadata IdP is trusted for every MVPD of the configuration."
    )
    var trust: String?

    @Option(help: "SAML attribute name to user-metadata key, as name=key,... (NameID maps to userID by default).")
    var map: String?

    @Argument(help: "The request body (application/x-www-form-urlencoded), or - for standard input.")
    var body: String

    func run() async throws {
        let configuration = try rejectingOnError { try MVPDConfiguration.decode(try StandardStreams.readAll(config)) }
        var mapping = UserMetadataMapping()
        for pair in (map ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw CommandFailure.usage("--map expects name=key pairs, found \(pair)") }
            mapping.keys[parts[0]] = parts[1]
        }
        let identityProviders: [String: IdentityProvider]
        if let trust {
            identityProviders = try rejectingOnError { try TrustFile.load(contentsOf: trust, now: try verifier.instant()) }
        } else {
            let single = try verifier.identityProvider()
            guard let issuer = single.issuer else {
                throw CommandFailure.usage("--issuer (or --metadata) is required: a verifier is always bound to its IdP's entity ID")
            }
            let idp = try rejectingOnError { try IdentityProvider(entityID: issuer, keys: single.keys) }
            identityProviders = Dictionary(uniqueKeysWithValues: configuration.mvpds.map { ($0.id, idp) })
        }
        let template = try verifier.configuration(keys: [], issuer: nil)
        let registry = try rejectingOnError { try TrustRegistry(identityProviders, template: template) }
        let exchange = TokenExchange(configuration: configuration, trust: registry, mapping: mapping)
        let input = try StandardStreams.readAll(body)
        do {
            let profile = try await exchange.exchange(body: input, partnerFrameworkStatus: pfs, mvpd: mvpd)
            StandardStreams.writeOutput(profile.json + [UInt8(ascii: "\n")])
        } catch {
            StandardStreams.writeOutput(error.json + [UInt8(ascii: "\n")])
            // The answer a device gets is on stdout; the operator's detail (which required fields are
            // missing, what was expected and found) on stderr, as the service logs it.
            if let cause = error.cause { throw CommandFailure.rejected(cause) }
            throw CommandFailure(status: CommandFailure.rejectedStatus, code: error.code, message: error.message)
        }
    }
}
