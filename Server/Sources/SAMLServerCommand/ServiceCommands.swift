import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import SAML
import SAMLLoad
import SAMLService

/// `saml-server serve`: the Token Exchange service (README, "The service").
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Token Exchange service (Hummingbird) until SIGTERM or SIGINT.",
        discussion: """
            Configured from a JSON file (ServiceConfiguration) and the environment: SAML_SERVICE_HOST, \
            SAML_SERVICE_PORT, SAML_SERVICE_STORE (memory or postgres://...), SAML_SERVICE_LOG_LEVEL; secrets \
            from SAML_SERVICE_STORE_PASSWORD, SAML_SERVICE_BEARER_TOKENS, SAML_SERVICE_REQUEST_KEYS or the \
            files the configuration names (never needed on the command line). Logs go to standard error. \
            TLS belongs to a proxy in front.
            """)

    @Option(help: "The service configuration (JSON).") var config: String = "TestVectors/exchange/service.json"
    @Option(help: "Overrides the configuration's port (0: any free port).") var port: Int?
    @Option(help: "Overrides the configuration's store.") var store: String?

    func run() async throws {
        var configuration = try ServiceConfiguration.load(contentsOf: config)
        if let port { configuration.port = port }
        if let store { configuration.store = store }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let metrics = ServiceMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let logger = Logger(label: "saml-service")
        let application = try ServiceApplication.buildApplication(configuration: configuration, metrics: metrics, logger: logger)
        try await ServiceApplication.run(application, configuration: configuration, logger: logger)
    }
}

/// `saml-server load`: the SAML-aware load harness (BENCHMARKS.md).
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load a Token Exchange service with fresh signed responses, replays, tampered and wrong-MVPD ones; audit every answer.",
        discussion: """
            Plays the device and the MVPDs of the bundled TestVectors/exchange/ (MVPD-A, MVPD-B with the \
            test keys). Before the timed phase it obtains a SAML request from sessions/sso for each \
            response and signs the MVPD's answer to it. Exit status 1 when any answer is wrong.
            """)

    @Option(name: .customLong("target"), help: "A service instance, host:port. Repeatable.") var targets: [String] = ["127.0.0.1:8080"]
    @Option(help: "The service provider id.") var serviceProvider = "REF30"
    @Option(help: "The TestVectors folder (for the MVPDs' keys).") var vectors = "TestVectors"
    @Option(help: "Requests prepared and sent.") var requests = 2000
    @Option(help: "At most this many seconds of timed phase.") var duration: Double?
    @Option(help: "Connections (over all targets).") var connections = 8
    @Option(help: "Requests per second; default: as fast as possible.") var rate: Double?
    @Option(help: "Share of replays.") var replay = 0.1
    @Option(help: "Share of responses altered after signing.") var tampered = 0.05
    @Option(help: "Share of one MVPD's responses posted as another's.") var wrongMVPD = 0.05
    @Flag(help: "Skip the settle phase (re-posting accepted and lost responses after the run).") var noSettle = false
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let parsed = try targets.map { target -> (host: String, port: Int) in
            guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
                throw ValidationError("expected host:port, found \(target)")
            }
            return (String(target[..<colon]), port)
        }
        var options = LoadOptions(targets: parsed, serviceProvider: serviceProvider, mvpds: try LoadMVPD.bundled(vectors: vectors))
        options.requests = requests
        options.duration = duration.map { .milliseconds(Int64($0 * 1000)) }
        options.connections = connections
        options.rate = rate
        options.replayShare = replay
        options.tamperedShare = tampered
        options.wrongMVPDShare = wrongMVPD
        options.settle = !noSettle
        let report = try await LoadHarness.run(options) { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        if json {
            let object: [String: Any] = [
                "requests_per_second": report.requestsPerSecond.rounded(), "answered": report.answered,
                "p50_us": report.p50.rounded(), "p90_us": report.p90.rounded(), "p99_us": report.p99.rounded(),
                "max_us": report.maximum.rounded(),
                "wrong": report.wrong, "settle_checked": report.settleChecked,
                "kinds": report.lines.map {
                    ["kind": $0.kind, "sent": $0.sent, "as_expected": $0.asExpected, "wrong": $0.wrong, "unanswered": $0.unanswered]
                },
                "wrong_answers": report.wrongAnswers,
            ]
            FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) + Data("\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data(report.table.utf8))
        }
        if report.wrong > 0 { throw ExitCode(1) }
    }
}
