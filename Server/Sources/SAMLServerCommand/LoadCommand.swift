import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import SAML
import SAMLLoad
import SAMLService

/// `saml-server load`: the SAML-aware load harness (docs/service.md, "The load harness").
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract:
            "Load a Token Exchange service with fresh signed responses, replays, tampered ones and the attacker's mismatches; audit every answer.",
        discussion: """
            Plays the devices (one per response) and the MVPDs: those of the bundled TestVectors/exchange/ \
            (MVPD-A, MVPD-B with the test keys), or with --mvpds and --service-config the operator's own, \
            signed with a test IdP key the service's trust holds. Before the timed phase it obtains a SAML request from sessions/sso \
            for each response and signs the MVPD's answer to it. The report gives the latency percentiles \
            (HDR histogram), a timeline of the answers by class and the longest stretch without an acceptance; \
            --report writes it as an HTML page. Exit status 1 when any answer is wrong, an assertion is \
            accepted twice, an instance not declared --killed cannot be reached, or the page cannot be written.
            """)

    @Option(name: .customLong("target"), help: "A service instance, host:port. Repeatable.") var targets: [String] = ["127.0.0.1:8080"]
    @Option(help: "The service provider id (default: the service configuration's serviceProvider, else REF30).") var serviceProvider:
        String?
    @Option(
        help:
            "A file holding the service's bearer token (its first line), for a service with bearerTokensFile; or SAML_LOAD_BEARER_TOKEN. Never on the command line."
    ) var bearerTokenFile: String?
    @Option(help: "The TestVectors folder (for the MVPDs' keys).") var vectors = "TestVectors"
    @Option(
        help:
            "The service's configuration, for its serviceProvider and spEntityID, each MVPD's platformMappingId and requiredMetadataFields and the userMetadataMapping the profiles must show (default: <vectors>/exchange/service.json)."
    ) var serviceConfig: String?
    @Option(
        help:
            "The MVPDs to play instead of the bundled ones: a JSON file {\"mvpds\": [{\"id\", \"issuer\", \"signingKey\", \"signingCertificate\"}]} (paths relative to it; the key pair one the service's trust holds). Needs --service-config."
    ) var mvpds: String?
    @Option(help: "Requests prepared and sent.") var requests = 2000
    @Option(help: "At most this many seconds of timed phase (then a grace of --grace seconds for answers in flight).") var duration: Double?
    @Option(help: "Seconds answers in flight may take after --duration.") var grace = 2.0
    @Option(help: "Seconds each signed assertion is valid (NotOnOrAfter after IssueInstant).") var assertionLifetime = 300
    @Option(help: "Connections (over all targets).") var connections = 8
    @Option(help: "Requests per second; default: as fast as possible.") var rate: Double?
    @Option(help: "Share of replays.") var replay = 0.1
    @Option(help: "Share of responses altered after signing.") var tampered = 0.05
    @Option(help: "Share of requests asked for MVPD B, answered by A's IdP, posted as B (issuer.mismatch).") var wrongMVPD = 0.05
    @Option(
        name: .customLong("wrong-mvpd-request"),
        help: "Share of requests asked for MVPD A, answered by B's IdP, posted as B (in-response-to.wrong-mvpd).")
    var wrongMVPDRequest = 0.05
    @Option(help: "Share of requests asked by one device, answered from another (in-response-to.wrong-device).") var wrongDevice = 0.05
    @Option(name: .customLong("v1-crossover"), help: "Share of requests asked on API v2, answered on v1 (in-response-to.wrong-api).")
    var v1Crossover = 0.05
    @Option(help: "An instance stopped during the run on purpose, host:port: the settle phase expects it unreachable. Repeatable.")
    var killed: [String] = []
    @Option(help: "Connection attempts per instance before giving up (backoff 50 ms doubling to 1 s).") var connectAttempts = 5
    @Option(help: "The seed of the mix and of the device identifiers.") var seed: UInt64 = 42
    @Flag(help: "Skip the settle phase (re-posting accepted and lost responses after the run).") var noSettle = false
    @Option(
        help:
            "After the settle phase, this many accepted logins play the cookbook's session to its end across the instances: configuration, preauthorize, authorize, logout, signed out on the other instance."
    ) var sessions = 0
    @Flag(
        help:
            "A failover run: a 503 answer (the service failing closed while its database is away) counts as unavailable, not wrong, and its response is re-posted by the settle phase like a lost one."
    ) var tolerateUnavailable = false
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Write the acknowledged assertions to this file, one `issuer<TAB>assertion ID` per line (a failover check).")
    var acceptedAssertions: String?
    @Option(
        help:
            "Write every completed request of the timed phase to this file, one per line: index, kind, instance, seconds into the run, latency from when it was due and from when it was sent (µs), class, answer, tab-separated (a fault scenario's per-instance audit)."
    ) var requestsFile: String?
    @Option(
        help:
            "Also write the report as a self-contained HTML page (charts of requests/s over time by class and of the latency distribution) to this file."
    ) var report: String?
    @Option(help: "The title of the --report page.") var reportTitle: String?

    func run() async throws {
        func parse(_ target: String) throws -> (host: String, port: Int) {
            guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
                throw ValidationError("expected host:port, found \(target)")
            }
            return (String(target[..<colon]), port)
        }
        let facts = try LoadServiceFacts(serviceConfiguration: serviceConfig ?? "\(vectors)/exchange/service.json")
        let played: [LoadMVPD]
        if let mvpds {
            guard serviceConfig != nil else { throw ValidationError("--mvpds needs --service-config (the service's MVPD configuration)") }
            played = try LoadMVPD.configured(file: mvpds, facts: facts)
        } else {
            played = try LoadMVPD.bundled(vectors: vectors, facts: facts)
        }
        var options = LoadOptions(
            targets: try targets.map(parse), serviceProvider: serviceProvider ?? facts.serviceProvider ?? "REF30", mvpds: played)
        if let audience = facts.audience { options.audience = audience }
        options.requests = requests
        options.duration = duration.map { .milliseconds(Int64($0 * 1000)) }
        options.grace = .milliseconds(Int64(grace * 1000))
        guard assertionLifetime > 0 else { throw ValidationError("--assertion-lifetime expects a positive number of seconds") }
        options.assertionLifetime = .seconds(assertionLifetime)
        options.connections = connections
        options.rate = rate
        options.replayShare = replay
        options.tamperedShare = tampered
        options.wrongMVPDShare = wrongMVPD
        options.wrongMVPDRequestShare = wrongMVPDRequest
        options.wrongDeviceShare = wrongDevice
        options.v1CrossoverShare = v1Crossover
        options.killed = try killed.map(parse)
        options.connectAttempts = max(1, connectAttempts)
        options.seed = seed
        options.settle = !noSettle
        options.sessions = max(0, sessions)
        options.tolerateUnavailable = tolerateUnavailable
        if let bearerTokenFile {
            guard let text = try? String(contentsOfFile: bearerTokenFile, encoding: .utf8),
                let first = text.split(whereSeparator: \.isNewline).first.map({ $0.trimmingCharacters(in: .whitespaces) }), !first.isEmpty
            else { throw ValidationError("expected a token in --bearer-token-file, found none") }
            options.bearerToken = first
        } else if let token = ProcessInfo.processInfo.environment["SAML_LOAD_BEARER_TOKEN"], !token.isEmpty {
            options.bearerToken = token
        }
        let result = try await LoadHarness.run(options) { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        if json {
            FileHandle.standardOutput.write(
                try JSONSerialization.data(withJSONObject: result.jsonObject, options: [.sortedKeys]) + Data("\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data(result.table.utf8))
        }
        if let report {
            try write(result.htmlPage(title: reportTitle), to: report, option: "--report")
            FileHandle.standardError.write(Data("report page written to \(report)\n".utf8))
        }
        if let acceptedAssertions {
            try write(
                result.acknowledged.map { "\($0.issuer)\t\($0.id)\n" }.joined(), to: acceptedAssertions, option: "--accepted-assertions")
        }
        if let requestsFile {
            try write(result.requests.map { $0.line + "\n" }.joined(), to: requestsFile, option: "--requests-file")
        }
        if !result.passed { throw ExitCode(1) }
    }

    private func write(_ text: String, to path: String, option: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            FileHandle.standardError.write(Data("\(option): expected to write \(path), found \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
