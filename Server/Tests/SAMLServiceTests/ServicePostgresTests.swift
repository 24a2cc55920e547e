import Foundation
import SAML
import SAMLLoad
import Testing

@testable import SAMLService

#if canImport(Glibc)
    import Glibc
#endif

/// Several instances sharing one PostgreSQL server, started by `scripts/postgres/postgres-tests` (which `.ci/run`
/// runs). Without `SAML_POSTGRES_URL` the suite is skipped (under CI the PostgreSQL suite fails then).
@Suite("Token Exchange service on PostgreSQL", .serialized, .enabled(if: ProcessInfo.processInfo.environment["SAML_POSTGRES_URL"] != nil))
struct ServicePostgresTests {
    static let url = ProcessInfo.processInfo.environment["SAML_POSTGRES_URL"] ?? ""

    @Test("two instances, one truth: a request issued by one is answered on the other; an accepted response is a replay on both")
    func twoInstances() async throws {
        let configuration = Service.configuration(store: Self.url)
        try await Service.with(configuration) { a in
            try await Service.with(configuration) { b in
                #expect(try await Service.send(a, "/health/ready", method: "GET").status == 200)
                let status = Service.pfs("ProviderA")
                let id = try await Service.session(a, status.headerValue).partnerRequestID
                let request = Service.exchange(try Service.response(Service.mvpdA, to: id), status)
                #expect(try await Service.send(b, request).status == 201)
                #expect(Service.detailCode(try await Service.send(a, request)) == "replay.detected")
                #expect(Service.detailCode(try await Service.send(b, request)) == "replay.detected")

                var options = LoadOptions(targets: [("127.0.0.1", a), ("127.0.0.1", b)], serviceProvider: "REF30", mvpds: Service.mvpds)
                options.requests = 400
                options.connections = 4
                let report = try await LoadHarness.run(options)
                #expect(report.passed && report.wrong == 0, "\(report.table)")
                #expect(report.lines.allSatisfy { $0.sent > 0 && $0.asExpected == $0.sent }, "\(report.table)")
                // Every accepted response was re-posted to both instances and refused by both.
                #expect(report.settleChecked == 2 * report.lines[0].asExpected)
            }
        }
    }

    @Test(
        "sessions/sso on two instances asks the database nothing: a flood of unknown devices and a login on the other instance, all answered from the directory"
    )
    func sessionsFromTheDirectory() async throws {
        let configuration = Service.configuration(store: Self.url)
        let metricsA = ServiceMetrics(), metricsB = ServiceMetrics()
        try await Service.with(configuration, metrics: metricsA) { a in
            try await Service.with(configuration, metrics: metricsB) { b in
                func session(_ port: Int, _ device: String) async throws -> String? {
                    Service.json(try await Service.session(port, Service.pfs("ProviderB").headerValue, device: device))["reasonType"]
                        as? String
                }
                // Loaded once the directory has read the table (at start, then every 250 ms).
                try await Task.sleep(for: .seconds(1))
                for _ in 0..<200 { _ = try await session(a, Service.newDevice()) }
                #expect(ProfileLookupsTests.count(metricsA, "directory") == 200)
                #expect(ProfileLookupsTests.count(metricsA, "store") == 0 && ProfileLookupsTests.count(metricsA, "shed") == 0)
                // Logged in on b: a's next sessions/sso for the device says so, from memory, within a second.
                let device = Service.newDevice()
                #expect(try await Service.send(b, try await Service.freshExchange(b, Service.mvpdB, device: device)).status == 201)
                var answer: String?
                for _ in 0..<100 where answer != "authenticatedSSO" {
                    answer = try await session(a, device)
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(answer == "authenticatedSSO")
                #expect(ProfileLookupsTests.count(metricsA, "store") == 0 && ProfileLookupsTests.count(metricsB, "store") == 0)
                let exposition = try await Service.send(a, "/metrics", method: "GET").text
                #expect(exposition.contains(#"saml_store_capacity{kind="profile-directory"} 1000000"#))
                #expect(exposition.contains(#"saml_store_entries{kind="profile-directory"}"#))
            }
        }
    }

    @Test(
        "a logout on one instance: the other answers the device as signed out within a second (sessions/sso, profiles, decisions), and an operator's sign-out of a subscriber too"
    )
    func logoutAcrossInstances() async throws {
        var configuration = Service.configuration(store: Self.url)
        configuration.bearerTokens = ["token"]
        try await Service.with(configuration) { a in
            try await Service.with(configuration) { b in
                let device = Service.newDevice()
                let headers = [("AP-Device-Identifier", "fingerprint \(device)"), ("Authorization", "Bearer token")]
                #expect(try await Service.send(b, try await Service.freshExchange(b, Service.mvpdB, device: device)).status == 201)
                func reason() async throws -> String? {
                    Service.json(try await Service.session(a, Service.pfs("ProviderB").headerValue, device: device))["reasonType"]
                        as? String
                }
                func authorize(_ port: Int) async throws -> Int {
                    try await Service.send(
                        port, "/api/v2/REF30/decisions/authorize/MVPD-B",
                        headers: headers + [
                            ("Content-Type", "application/json"), ("AP-Partner-Framework-Status", Service.pfs("ProviderB").headerValue),
                        ],
                        body: Array(#"{"resources": ["REF30"]}"#.utf8)
                    ).status
                }
                var answer: String?
                for _ in 0..<100 where answer != "authenticatedSSO" {
                    answer = try await reason()
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(answer == "authenticatedSSO")
                #expect(try await authorize(a) == 200)
                let logout = try await Service.send(
                    b, "/api/v2/REF30/logout/MVPD-B?redirectUrl=https%3A%2F%2Fapp.example", method: "GET", headers: headers)
                #expect(logout.status == 200 && logout.text.contains("partner_logout"))
                // Read from the table at once; sessions/sso from a's directory within its bound (1 s).
                #expect(try await authorize(a) == 403)
                #expect(try await Service.send(a, "/api/v2/REF30/profiles", method: "GET", headers: headers).text == #"{"profiles":{}}"#)
                let signedOut = ContinuousClock.now
                while try await reason() == "authenticatedSSO", ContinuousClock.now - signedOut < .seconds(3) {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(ContinuousClock.now - signedOut < .seconds(1) + .milliseconds(300))
                #expect(try await reason() != "authenticatedSSO")
            }
        }
    }

    @Test("killing one instance during a load run loses no accepted login and accepts no replay on the other")
    func killOneInstance() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("saml-server").path
        #expect(FileManager.default.isExecutableFile(atPath: binary), "build saml-server first (swift build)")
        let ports = [try await Service.freePort(), try await Service.freePort()]
        let instances = try ports.map { port in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [
                "serve", "--config", "\(Service.vectors)/exchange/service.json", "--allow-development-keys", "--port", String(port),
                "--store", Self.url,
            ]
            // The same request-ID key as the in-process instances (Service.configuration), as instances
            // sharing a store must have.
            process.environment = ProcessInfo.processInfo.environment.merging([
                "SAML_SERVICE_LOG_LEVEL": "warning", "SAML_SERVICE_REQUEST_KEYS": "1:" + String(repeating: "5a", count: 32),
            ]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        defer {
            for process in instances where process.isRunning { process.terminate() }
        }
        for port in ports {
            var ready = false
            for _ in 0..<200 where !ready {
                ready = (try? await Service.send(port, "/health/ready", method: "GET").status) == 200
                if !ready { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(ready, "instance on \(port) did not start")
        }
        var options = LoadOptions(targets: ports.map { ("127.0.0.1", $0) }, serviceProvider: "REF30", mvpds: Service.mvpds)
        options.requests = 1200
        options.connections = 4
        options.rate = 300  // about 4 s
        options.replayShare = 0.2
        // The settle phase must find the victim unreachable, and every other instance reachable.
        options.killed = [("127.0.0.1", ports[0])]
        let plan = try await LoadHarness.prepare(options)
        let victim = instances[0]
        let killer = Task {
            try await Task.sleep(for: .milliseconds(1500))
            kill(victim.processIdentifier, SIGKILL)
        }
        let report = try await LoadHarness.run(plan)
        try await killer.value
        print(report.table)
        #expect(!victim.isRunning)
        #expect(report.passed && report.wrong == 0, "\(report.table)")
        let fresh = report.lines[0], replays = report.lines[1]
        // Both instances answered, the victim until it died; the rest went to the survivor.
        #expect(fresh.asExpected > 300 && replays.asExpected > 50, "\(report.table)")
        // The settle phase re-posted every accepted response to the survivor: all refused as replays,
        // those the victim accepted included (no accepted login lost, no replay accepted).
        #expect(report.settleChecked >= fresh.asExpected, "\(report.table)")
    }
}
