import CoreMetrics
import Prometheus
import SAML
import Synchronization

/// The service's metrics, through swift-metrics, into a Prometheus registry of its own (so that two
/// instances in one process, as in the tests, keep separate counts; `saml-server serve` also bootstraps
/// the process-wide `MetricsSystem` with the same registry, so other libraries' metrics appear too).
///
/// - `saml_token_exchange_verdicts_total{endpoint, code, mvpd}`: one per answered exchange; `code` is `ok`,
///   the library's error code (`signature.digest-mismatch`, `replay.detected`, ...) or the Enhanced Error
///   Code when the library was not reached (`invalid_header_pfs_permission_access_not_granted`, ...).
/// - `saml_token_exchange_duration_seconds{endpoint, mvpd}`: a histogram of an exchange's handling time.
/// - `saml_http_request_duration_seconds{endpoint, status}`: a histogram of the handling time.
/// - `saml_store_duration_seconds{operation, mvpd}`: a histogram of the state store's answers: `consume`
///   (a login's one write, by its MVPD) and `profiles` (a device's profiles read, `mvpd="none"`).
/// - `saml_build_info{version, commit, schema}`: 1, with the release's version and commit and the
///   PostgreSQL schema version it runs (`none` with the in-memory store).
/// - `saml_store_errors_total{operation}`: store failures (each one failed closed).
/// - `saml_store_connections_total{tls}`: connections the PostgreSQL store opened, by whether they
///   negotiated TLS (`yes`, `no`, `unknown`); alert `SAMLStoreConnectionPlaintext` on `no`.
/// - `saml_store_entries{kind}` and `saml_store_capacity{kind}` (the in-memory store: `assertions`,
///   `requests`, `profiles`; read at each scrape); `saml_store_full_total{kind}`: logins refused because
///   the kind was full of live entries (`503`, `replay.cache-full`).
/// - `saml_requests_issued_total{mvpd, api}`: SAML requests issued (`sessions/sso`, v1
///   `profile-requests`); `saml_requests_answered_total{mvpd, api}`: accepted responses that answered
///   one. Issued minus answered is what devices started and did not finish (nothing is stored for them).
/// - `saml_legacy_digest_acceptances_total{mvpd, legacy_digest}`: accepted logins whose signatures used a
///   legacy digest (`sha1` or `sha224`), which only an MVPD whose trust file entry sets
///   `allowLegacyDigests` can give; alert `SAMLLegacyDigestAccepted`.
/// - `saml_sso_sessions_total{action, reason}`: `sessions/sso` answers.
/// - `saml_overload_rejections_total{reason}`: requests or connections refused to stay within bounds:
///   `verification-queue-full` (503 with `Retry-After`), `connection-evicted` (the longest-waiting
///   connection closed to make room), `connection-cap` (every connection busy: the new one closed),
///   `header-timeout`, `request-timeout` (the connection closed).
/// - `saml_trust_last_refresh_timestamp_seconds{mvpd}`: when the MVPD's metadata source last answered with
///   a document accepted (or unchanged, `304`).
/// - `saml_trust_valid_until_timestamp_seconds{mvpd}` and `saml_trust_expiry_seconds{mvpd}`: the trusted
///   metadata's `validUntil`, and the seconds left until it (updated at each refresh and every 15 s).
/// - `saml_trust_key_not_after_timestamp_seconds{mvpd, source, key}`: the `notAfter` of each trusted key's
///   certificate (`source` `pinned` or `metadata`, `key` 16 hex digits of its fingerprint; bare public
///   keys have none); alerts `SAMLTrustKeyExpiringSoon`, `SAMLPinnedKeyExpired`.
/// - `saml_trust_refresh_failures_total{mvpd, reason}`: refreshes that kept the previous trust:
///   `unreachable`, `http-status`, `too-large`, `backing-file`, or the library's code (`metadata.expired`,
///   `signature.invalid`, `metadata.valid-until-too-far`, ...).
/// - `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
///   `process_open_fds`, `process_max_fds`, `process_start_time_seconds`: the process's, from `/proc`.
/// `mvpd` label values come from the configuration only (the MVPD configuration and the trust file),
/// never from a request: `none` when a request reached no configured MVPD. Their number is bounded by
/// the configuration's, whatever the traffic.
public struct ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    /// The per-request metrics' objects, by label set.
    private let perRequest = PerRequestMetrics()
    /// The key-expiry gauges, by (mvpd, source, key).
    private let keyGauges = KeyGauges()
    private final class KeyGauges: Sendable {
        let gauges = Mutex<[[String]: Prometheus.Gauge]>([:])
        func withLock(_ body: (inout [[String]: Prometheus.Gauge]) -> Void) { gauges.withLock { body(&$0) } }
    }

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

    func verdict(endpoint: String, code: String, mvpd: String, _ duration: Duration) {
        perRequest.counter(.verdicts, endpoint, code, mvpd) {
            Counter(
                label: "saml_token_exchange_verdicts_total", dimensions: [("endpoint", endpoint), ("code", code), ("mvpd", mvpd)],
                factory: factory)
        }.increment()
        perRequest.timer(.exchangeDuration, endpoint, mvpd) {
            CoreMetrics.Timer(
                label: "saml_token_exchange_duration_seconds", dimensions: [("endpoint", endpoint), ("mvpd", mvpd)], factory: factory)
        }.recordNanoseconds(duration.nanoseconds)
    }

    func storeDuration(operation: String, mvpd: String, _ duration: Duration) {
        perRequest.timer(.storeDuration, operation, mvpd) {
            CoreMetrics.Timer(
                label: "saml_store_duration_seconds", dimensions: [("operation", operation), ("mvpd", mvpd)], factory: factory)
        }.recordNanoseconds(duration.nanoseconds)
    }

    func requestIssued(mvpd: String, api: String) {
        Counter(label: "saml_requests_issued_total", dimensions: [("mvpd", mvpd), ("api", api)], factory: factory).increment()
    }

    func requestAnswered(mvpd: String, api: String) {
        Counter(label: "saml_requests_answered_total", dimensions: [("mvpd", mvpd), ("api", api)], factory: factory).increment()
    }

    /// An accepted login: the request it answered, and the legacy digests its signatures used.
    func accepted(_ response: VerifiedResponse, mvpd: String, api: String) {
        if response.inResponseTo != nil { requestAnswered(mvpd: mvpd, api: api) }
        let digests = Set(response.legacyAlgorithms.map { $0.hasSuffix("sha224") ? "sha224" : "sha1" })
        for digest in digests.sorted() { legacyDigestCounter(mvpd: mvpd, digest: digest).increment() }
    }

    /// The MVPD may give logins signed with legacy digests: its series exist from the start, at 0, so
    /// that the first acceptance is an increase an alert sees.
    func legacyDigestsAllowed(mvpd: String) {
        for digest in ["sha1", "sha224"] { _ = legacyDigestCounter(mvpd: mvpd, digest: digest) }
    }

    private func legacyDigestCounter(mvpd: String, digest: String) -> CoreMetrics.Counter {
        Counter(label: "saml_legacy_digest_acceptances_total", dimensions: [("mvpd", mvpd), ("legacy_digest", digest)], factory: factory)
    }

    func duration(endpoint: String, status: Int, _ duration: Duration) {
        perRequest.timer(.httpDuration, endpoint, String(status)) {
            CoreMetrics.Timer(
                label: "saml_http_request_duration_seconds", dimensions: [("endpoint", endpoint), ("status", String(status))],
                factory: factory)
        }.recordNanoseconds(duration.nanoseconds)
    }

    /// The in-memory store's live entries and capacity by kind (`assertions`, `requests`, `profiles`).
    func storeOccupancy(_ occupancy: [StoreOccupancy]) {
        for entry in occupancy {
            Gauge(label: "saml_store_entries", dimensions: [("kind", entry.kind)], factory: factory).record(entry.entries)
            Gauge(label: "saml_store_capacity", dimensions: [("kind", entry.kind)], factory: factory).record(entry.capacity)
        }
    }

    /// A login refused because the in-memory store was full of live entries.
    func storeFull(kind: String) {
        Counter(label: "saml_store_full_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// The connection counters at 0 from the start (with PostgreSQL), so that the first plaintext
    /// connection is an increase.
    func storeConnectionsExpected() {
        for tls in ["yes", "no", "unknown"] {
            Counter(label: "saml_store_connections_total", dimensions: [("tls", tls)], factory: factory).increment(by: 0)
        }
    }

    /// `saml_build_info{version, commit, schema} 1`: which release (and store schema) an instance runs.
    func buildInfo(version: String, commit: String, schema: String) {
        Gauge(label: "saml_build_info", dimensions: [("version", version), ("commit", commit), ("schema", schema)], factory: factory)
            .record(1)
    }

    func storeConnection(tls: String) {
        Counter(label: "saml_store_connections_total", dimensions: [("tls", tls)], factory: factory).increment()
    }

    func storeError(operation: String) {
        Counter(label: "saml_store_errors_total", dimensions: [("operation", operation)], factory: factory).increment()
    }

    /// A profile read of `sessions/sso` or `GET .../profiles`, by where its answer came from
    /// (``ProfileLookups``): `memory`, `store`, `shed` (beyond the read rate or concurrency) or `error`.
    func profileLookup(_ source: String) {
        Counter(label: "saml_profile_lookups_total", dimensions: [("source", source)], factory: factory).increment()
    }

    func session(action: String, reason: String) {
        Counter(label: "saml_sso_sessions_total", dimensions: [("action", action), ("reason", reason)], factory: factory).increment()
    }

    /// A decisions request's answers, by kind (`preauthorize`, `authorize`) and decision.
    func decisions(_ kind: String, permitted: Int, denied: Int, mvpd: String) {
        for (decision, count) in [("permit", permitted), ("deny", denied)] where count > 0 {
            Counter(label: "saml_decisions_total", dimensions: [("kind", kind), ("decision", decision), ("mvpd", mvpd)], factory: factory)
                .increment(by: Int64(count))
        }
    }

    /// Profiles removed: by a device's logout (`logout`) or an operator (`admin`).
    func profilesRemoved(_ by: String, count: Int) {
        Counter(label: "saml_profiles_removed_total", dimensions: [("by", by)], factory: factory).increment(by: Int64(count))
    }

    func rejection(_ reason: String) {
        Counter(label: "saml_overload_rejections_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    func trustRefreshed(mvpd: String, at instant: SAMLInstant) {
        Gauge(label: "saml_trust_last_refresh_timestamp_seconds", dimensions: [("mvpd", mvpd)], factory: factory)
            .record(Double(instant.millisecondsSinceEpoch) / 1000)
    }

    func trustValidity(mvpd: String, validUntil: SAMLInstant?, now: SAMLInstant) {
        guard let validUntil else { return }
        Gauge(label: "saml_trust_valid_until_timestamp_seconds", dimensions: [("mvpd", mvpd)], factory: factory)
            .record(Double(validUntil.millisecondsSinceEpoch) / 1000)
        Gauge(label: "saml_trust_expiry_seconds", dimensions: [("mvpd", mvpd)], factory: factory)
            .record(Double(validUntil.millisecondsSinceEpoch - now.millisecondsSinceEpoch) / 1000)
    }

    /// A trusted key's certificate end (``TrustMaintainer/enforceKeyExpiry(now:ended:)``).
    struct KeyExpiry {
        var mvpd: String
        var source: String
        var key: String
        var notAfter: SAMLInstant
    }

    /// Sets `saml_trust_key_not_after_timestamp_seconds{mvpd, source, key}` for exactly `expiries`: a key
    /// no longer trusted (rotated out of its metadata, removed from the trust file) loses its series, so
    /// that no alert fires for a key nothing uses.
    func keyExpiries(_ expiries: [KeyExpiry]) {
        keyGauges.withLock { gauges in
            var seen: Set<[String]> = []
            for expiry in expiries {
                let labels = [expiry.mvpd, expiry.source, expiry.key]
                guard seen.insert(labels).inserted else { continue }
                let gauge =
                    gauges[labels]
                    ?? registry.makeGauge(
                        name: "saml_trust_key_not_after_timestamp_seconds",
                        labels: [("mvpd", expiry.mvpd), ("source", expiry.source), ("key", expiry.key)])
                gauge.set(Double(expiry.notAfter.millisecondsSinceEpoch) / 1000)
                gauges[labels] = gauge
            }
            for (labels, gauge) in gauges where !seen.contains(labels) {
                registry.unregisterGauge(gauge)
                gauges[labels] = nil
            }
        }
    }

    func trustRefreshFailed(mvpd: String, reason: String) {
        Counter(label: "saml_trust_refresh_failures_total", dimensions: [("mvpd", mvpd), ("reason", reason)], factory: factory)
            .increment()
    }

    /// The Prometheus text exposition.
    /// The registry's metrics, then the process's (``ProcessMetrics``).
    public func exposition() -> [UInt8] {
        registry.emitToBuffer() + ProcessMetrics.exposition()
    }
}

/// The objects of the metrics every request records, made once per label set and kept: making one
/// through the swift-metrics factory validates its name and labels, builds a key, takes the registry's
/// lock and allocates a new object, four times a Token Exchange (issue 28). As bounded as the registry's
/// own series: the label values come from the configuration, the routes and fixed code lists.
private final class PerRequestMetrics: Sendable {
    enum Family: UInt8 { case verdicts, exchangeDuration, storeDuration, httpDuration }

    private struct Key: Hashable {
        var family: Family
        var first: String, second: String, third: String
    }

    private let counters = Mutex<[Key: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])

    func counter(_ family: Family, _ first: String, _ second: String, _ third: String = "", make: () -> CoreMetrics.Counter)
        -> CoreMetrics.Counter
    {
        Self.kept(in: counters, Key(family: family, first: first, second: second, third: third), make: make)
    }

    func timer(_ family: Family, _ first: String, _ second: String, make: () -> CoreMetrics.Timer) -> CoreMetrics.Timer {
        Self.kept(in: timers, Key(family: family, first: first, second: second, third: ""), make: make)
    }

    /// The object kept for `key`, made and kept first if there is none.
    private static func kept<Metric: Sendable>(in table: borrowing Mutex<[Key: Metric]>, _ key: Key, make: () -> Metric) -> Metric {
        if let known = table.withLock({ $0[key] }) { return known }
        let made = make()
        table.withLock { $0[key] = made }
        return made
    }
}
