import Foundation
import SAMLLoad
import SAMLService
import SAMLTestSupport
import Testing

/// deploy/: the Grafana dashboard and the Prometheus alerting rules name only metrics the service
/// exports (read from a running service's `/metrics` after traffic that makes each appear), and only
/// labels those metrics carry. `promtool check rules` and `promtool test rules` run in
/// scripts/ci/observability-check.
@Suite("Operator assets")
struct OperatorAssetsTests {
    static let deploy = URL(fileURLWithPath: Service.vectors).deletingLastPathComponent().appendingPathComponent("deploy")

    /// Every `saml_*` metric family a query names, with the labels it groups or filters by.
    static func queries() throws -> [String] {
        let dashboard =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: deploy.appendingPathComponent("grafana/swift-saml-dashboard.json"))) as? [String: Any] ?? [:]
        var expressions: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, member) in object {
                    if key == "expr" || key == "definition", let text = member as? String { expressions.append(text) }
                    collect(member)
                }
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(dashboard)
        let rules = try String(contentsOf: deploy.appendingPathComponent("prometheus/swift-saml-alerts.yml"), encoding: .utf8)
        // The rules' expressions: from each `expr:` to the next key.
        var current: String?
        for line in rules.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("expr:") {
                if let current { expressions.append(current) }
                current = String(trimmed.dropFirst(5))
            } else if current != nil, trimmed.hasPrefix("for:") || trimmed.hasPrefix("labels:") || trimmed.hasPrefix("- alert:") {
                expressions.append(current!)
                current = nil
            } else if current != nil {
                current! += " " + trimmed
            }
        }
        return expressions
    }

    /// The family a sample name belongs to.
    static func family(_ name: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
        return name
    }

    @Test("the process metrics: CPU, memory, descriptors and start time, in the exposition with their types")
    func processMetrics() throws {
        let text = String(decoding: ServiceMetrics().exposition(), as: UTF8.self)
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("process_") {
            let parts = line.split(separator: " ")
            values[String(parts[0])] = Double(parts[1])
        }
        for name in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds"] {
            #expect((values[name] ?? 0) > 0, "\(name): \(values[name].map { "\($0)" } ?? "absent")")
            #expect(text.contains("# TYPE \(name) "))
        }
        let started = try #require(values["process_start_time_seconds"])
        #expect(abs(started - Date().timeIntervalSince1970) < 86_400 * 7)
        #expect(values["process_open_fds"]! < values["process_max_fds"]!)
    }

    @Test("the dashboard's and the alerts' queries name metrics, and labels, that the service exports")
    func queriesNameExportedMetrics() async throws {
        let expressions = try Self.queries()
        #expect(expressions.count >= 20, "\(expressions.count) queries read")
        let metrics = ServiceMetrics()
        // Traffic that makes every family appear: logins and a session through an MVPD whose trust comes
        // from metadata (then that metadata failing), a store that fails, a connection evicted at the cap.
        let published = TrustMaintenanceTests.Published()
        published.publish(try TrustMaintenanceTests.metadata([TrustMaintenanceTests.certificateA]))
        try await TrustMaintenanceTests.withMetadataServer(published) { (metadataPort: Int) async throws -> Void in
            let trust = try TrustMaintenanceTests.trustFile(url: "http://127.0.0.1:\(metadataPort)/idp-a.xml")
            try await Service.with(TrustMaintenanceTests.configuration(trust: trust), metrics: metrics) {
                (port: Int) async throws -> Void in
                #expect(try await TrustMaintenanceTests.login(port, Service.mvpdA).status == 201)
                published.fail(500)
                #expect(
                    try await TrustMaintenanceTests.eventually {
                        String(decoding: metrics.exposition(), as: UTF8.self).contains("saml_trust_refresh_failures_total{")
                    })
            }
        }
        try await Service.with(store: FailingStore(), metrics: metrics) { port in
            _ = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdB))
        }
        // An in-memory store filled up: its gauges (read at a scrape) and a login refused because it is full.
        var small = Service.configuration()
        small.memoryStoreCapacity = 1
        try await Service.with(small, metrics: metrics) { port in
            for _ in 0..<2 { _ = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdB)) }
            _ = try await Service.send(port, "/metrics", method: "GET")
        }
        // An MVPD allowed the legacy digests: its series exist from the start.
        let folder = try TemporaryFiles.folder("legacy-trust")
        let vectors = URL(fileURLWithPath: Service.configuration().trustPath).deletingLastPathComponent().deletingLastPathComponent().path
        let legacyTrust = folder.appendingPathComponent("trust.json")
        try Data(
            #"{"MVPD-A": {"metadata": "\#(vectors)/metadata/idp-a-signed.xml", "signer": "\#(vectors)/keys/metadata-signer-rsa-2048.cert.pem"}, "MVPD-B": {"issuer": "https://idp.mvpd-b.example.com", "certificates": ["\#(vectors)/keys/ecdsa-p256.cert.pem"], "allowLegacyDigests": true}}"#
                .utf8
        ).write(to: legacyTrust)
        var legacy = Service.configuration()
        legacy.trustPath = legacyTrust.path
        try await Service.with(legacy, metrics: metrics) { (port: Int) async throws -> Void in
            let status = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdB)).status
            #expect(status == 201)
        }
        #expect(
            String(decoding: metrics.exposition(), as: UTF8.self).contains(
                #"saml_legacy_digest_acceptances_total{mvpd="MVPD-B",legacy_digest="sha1"} 0"#))
        var capped = Service.configuration()
        capped.maximumConnections = 1
        try await Service.with(capped, metrics: metrics) { port in
            let first = try RawConnection(port: port)
            try await Task.sleep(for: .milliseconds(50))
            let second = try RawConnection(port: port)
            // One of the two is closed to make room (the eviction's metric is what this test needs): the
            // first, unless a loaded machine's event loops registered the second one first (CI saw the
            // first still open after 500 ms once). ServiceHostileTests checks which one.
            #expect(first.isClosed(waiting: .seconds(2)) || second.isClosed(waiting: .seconds(2)))
            first.close()
            second.close()
        }
        // A PostgreSQL store's connection counters exist from the start (the application is built, not run).
        _ = try ServiceApplication.buildApplication(
            configuration: Service.configuration(store: "postgres://saml@127.0.0.1:1/none"), metrics: metrics, logger: Service.quiet)
        let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
        // Family → the label names its samples carry (label values may hold braces: route templates).
        var exported: [String: Set<String>] = [:]
        for match in exposition.matches(of: #/(?m)^(saml_[a-z_]+)(\{.*\})? \S+$/#) {
            let labels = (match.output.2.map(String.init) ?? "").matches(of: #/([a-z_]+)="/#).map { String($0.output.1) }
            exported[Self.family(String(match.output.1)), default: []].formUnion(labels)
        }
        var named = Set<String>()
        for expression in expressions {
            for match in expression.matches(of: #/(saml_[a-z_]+)(\{[^}]*\})?/#) {
                let family = Self.family(String(match.output.1))
                named.insert(family)
                #expect(exported[family] != nil, "\(family) is queried but not exported: \(expression)")
                let labels = (match.output.2.map(String.init) ?? "").matches(of: #/([a-z_]+)\s*(=~|!=|!~|=)/#).map { String($0.output.1) }
                for label in labels {
                    #expect(label == "le" || exported[family]?.contains(label) == true, "\(family) has no label \(label)")
                }
            }
        }
        // The assets cover what an operator needs per MVPD.
        for family in [
            "saml_token_exchange_verdicts_total", "saml_token_exchange_duration_seconds", "saml_store_duration_seconds",
            "saml_store_errors_total", "saml_requests_issued_total", "saml_requests_answered_total", "saml_trust_expiry_seconds",
            "saml_trust_refresh_failures_total", "saml_store_entries", "saml_store_full_total",
        ] {
            #expect(named.contains(family), "\(family) is on no panel and in no rule")
        }
    }
}
