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
            Tracing (off by default): the configuration's tracing object, --tracing-endpoint, \
            SAML_SERVICE_TRACING_ENDPOINT or the standard OTEL_EXPORTER_OTLP_* variables (docs/observability.md). \
            TLS belongs to a proxy in front.
            """)

    @Option(help: "The service configuration (JSON); or SAML_SERVICE_CONFIG. Required: there is no default.") var config: String?
    @Flag(
        help: """
            Development only: let the trust hold keys of the repository's TestVectors/, whose private keys are             public (TestVectors/exchange/service.json needs it); or SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS=true.
            """)
    var allowDevelopmentKeys = false
    @Option(help: "Overrides the configuration's port (0: any free port).") var port: Int?
    @Option(help: "Overrides the configuration's store.") var store: String?
    @Option(help: "Turns tracing on: the OTLP/HTTP traces URL (http://collector:4318/v1/traces).") var tracingEndpoint: String?

    func run() async throws {
        // No default file: a binary started from the repository's root must not pick up the test IdPs.
        guard let path = config ?? ProcessInfo.processInfo.environment["SAML_SERVICE_CONFIG"], !path.isEmpty else {
            throw ValidationError(
                "expected a configuration: --config FILE or SAML_SERVICE_CONFIG (deploy/service.json is a production template; TestVectors/exchange/service.json with --allow-development-keys for a development run)"
            )
        }
        var configuration = try ServiceConfiguration.load(contentsOf: path)
        if allowDevelopmentKeys { configuration.allowDevelopmentKeys = true }
        if let port { configuration.port = port }
        if let store { configuration.store = store }
        if let tracingEndpoint { try configuration.trace(to: tracingEndpoint) }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(wrapping: StreamLogHandler.standardError(label: label))
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
