import CoreMetrics
import Prometheus

/// The service's metrics, through swift-metrics, into a Prometheus registry of its own (so that two
/// instances in one process, as in the tests, keep separate counts; `saml-server serve` also bootstraps
/// the process-wide `MetricsSystem` with the same registry, so other libraries' metrics appear too).
///
/// - `saml_token_exchange_verdicts_total{endpoint, code}`: one per answered exchange; `code` is `ok`, the
///   library's error code (`signature.digest-mismatch`, `replay.detected`, ...) or the Enhanced Error
///   Code when the library was not reached (`invalid_header_pfs_permission_access_not_granted`, ...).
/// - `saml_http_request_duration_seconds{endpoint, status}`: a histogram of the handling time.
/// - `saml_store_errors_total{operation}`: store failures (each one failed closed).
/// - `saml_sso_sessions_total{action, reason}`: `sessions/sso` answers.
/// - `saml_overload_rejections_total{reason}`: requests or connections refused to stay within bounds:
///   `verification-queue-full` (503 with `Retry-After`), `connection-evicted` (the longest-waiting
///   connection closed to make room), `connection-cap` (every connection busy: the new one closed),
///   `header-timeout`, `request-timeout` (the connection closed).
public struct ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        // 100 µs to 10 s: a verification takes ~0.1-1 ms, a PostgreSQL round trip a few ms.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2), .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    func verdict(endpoint: String, code: String) {
        Counter(label: "saml_token_exchange_verdicts_total", dimensions: [("endpoint", endpoint), ("code", code)], factory: factory)
            .increment()
    }

    func duration(endpoint: String, status: Int, _ duration: Duration) {
        CoreMetrics.Timer(
            label: "saml_http_request_duration_seconds", dimensions: [("endpoint", endpoint), ("status", String(status))], factory: factory
        ).recordNanoseconds(duration.nanoseconds)
    }

    func storeError(operation: String) {
        Counter(label: "saml_store_errors_total", dimensions: [("operation", operation)], factory: factory).increment()
    }

    func session(action: String, reason: String) {
        Counter(label: "saml_sso_sessions_total", dimensions: [("action", action), ("reason", reason)], factory: factory).increment()
    }

    func rejection(_ reason: String) {
        Counter(label: "saml_overload_rejections_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// The Prometheus text exposition.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
