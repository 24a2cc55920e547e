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

    @Option(name: .customLong("cert"), help: "A pinned MVPD certificate (PEM). Repeatable.")
    var certificates: [String] = []

    @Option(help: "The AP-Partner-Framework-Status header value.")
    var pfs: String?

    @Option(help: "The MVPD id (default: from the header's provider id through platformMappingId).")
    var mvpd: String?

    @Option(help: "The expected Issuer.")
    var issuer: String?

    @Option(help: "The expected Audience.")
    var audience: String?

    @Option(help: "The expected InResponseTo (the attribute query's ID).")
    var inResponseTo: String?

    @Option(help: "The endpoint the response was sent to (Destination and Recipient).")
    var destination: String?

    @Option(help: "Exchange as of this instant (ISO 8601) instead of now.")
    var now: String?

    @Option(help: "SAML attribute name to user-metadata key, as name=key,... (NameID maps to userID by default).")
    var map: String?

    @Flag(help: "Accept SHA-1 signatures.")
    var allowSHA1 = false

    @Argument(help: "The request body (application/x-www-form-urlencoded), or - for standard input.")
    var body: String

    func run() async throws {
        guard !certificates.isEmpty else { throw CommandFailure.usage("at least one --cert is required") }
        let configuration = try rejectingOnError { try MVPDConfiguration.decode(try StandardStreams.readAll(config)) }
        var keys: [TrustedKey] = []
        for path in certificates {
            keys += try rejectingOnError { try TrustedKey.all(pem: try StandardStreams.readAll(path)) }
        }
        let instant: SAMLInstant
        if let now {
            guard let parsed = SAMLInstant(xmlDateTime: now) else { throw CommandFailure.usage("--now expects ISO 8601, found \(now)") }
            instant = parsed
        } else {
            instant = .now()
        }
        func expectation(_ value: String?) -> ExpectedValue<String> { value.map { .equals($0) } ?? .skip }
        var verifierConfiguration = SAMLResponseVerifier.Configuration(
            trustedKeys: keys, issuer: expectation(issuer), audience: expectation(audience),
            destination: expectation(destination), inResponseTo: expectation(inResponseTo), replay: .skip
        )
        verifierConfiguration.clock = FixedClock(instant)
        verifierConfiguration.algorithms = allowSHA1 ? .allowingSHA1 : .strict
        var mapping = UserMetadataMapping()
        for pair in (map ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw CommandFailure.usage("--map expects name=key pairs, found \(pair)") }
            mapping.keys[parts[0]] = parts[1]
        }
        let exchange = TokenExchange(
            configuration: configuration, verifier: try rejectingOnError { try SAMLResponseVerifier(verifierConfiguration) }, mapping: mapping)
        switch await exchange.exchange(body: try StandardStreams.readAll(body), partnerFrameworkStatus: pfs, mvpd: mvpd) {
        case .success(let profile):
            StandardStreams.writeOutput(profile.json + [UInt8(ascii: "\n")])
        case .failure(let error):
            StandardStreams.writeOutput(error.json + [UInt8(ascii: "\n")])
            throw CommandFailure(status: CommandFailure.rejectedStatus, code: error.code, message: error.message, quiet: true)
        }
    }
}
