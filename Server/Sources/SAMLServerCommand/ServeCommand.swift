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
            Configured through swift-configuration: the command line's options, over the environment's \
            SAML_SERVICE_* variables, over the JSON file (ServiceConfiguration, docs/service.md). Every setting \
            of the file is also an option and a variable: storeTimeoutSeconds is --store-timeout-seconds and \
            SAML_SERVICE_STORE_TIMEOUT_SECONDS; --port 0 picks a free port, --store memory or postgres://..., \
            --allow-development-keys (never in the file), --tracing-endpoint URL. Secrets (storePassword, \
            bearerTokens, adminTokens, requestKeys) come from the environment or the files the configuration \
            names, never from the command line. An unknown option, variable or member is refused. Logs go to \
            standard error. TLS belongs to a proxy in front.
            """)

    @Option(help: "The service configuration (JSON); or SAML_SERVICE_CONFIG. Required: there is no default.") var config: String?
    @Argument(
        parsing: .allUnrecognized,
        help: "Settings over the file and the environment: --port 0, --store URL, --allow-development-keys, ... (docs/service.md).")
    var settings: [String] = []

    func run() async throws {
        // No default file: a binary started from the repository's root must not pick up the test IdPs.
        guard let path = config ?? ProcessInfo.processInfo.environment["SAML_SERVICE_CONFIG"], !path.isEmpty else {
            throw ValidationError(
                "expected a configuration: --config FILE or SAML_SERVICE_CONFIG (deploy/service.json is a production template; TestVectors/exchange/service.json with --allow-development-keys for a development run)"
            )
        }
        let configuration = try await ServiceConfiguration.load(contentsOf: path, arguments: settings)
        let level = configuration.logLevel
        let json = configuration.logFormat == .json
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(
                wrapping: json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let metrics = ServiceMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let logger = Logger(label: "saml-service")
        logger.info("Swift concurrency's global executor", metadata: ["executor": "\(GlobalExecutor.selected)"])
        let application = try ServiceApplication.buildApplication(configuration: configuration, metrics: metrics, logger: logger)
        try await ServiceApplication.run(application, configuration: configuration, logger: logger)
    }
}
