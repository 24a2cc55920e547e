import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Against a real PostgreSQL server, started by `scripts/postgres-tests` (which `.ci/run` runs). Without
/// `SAML_POSTGRES_URL` the suite is skipped, except under CI, where that is a failure.
enum PostgresEnvironment {
    static let url = ProcessInfo.processInfo.environment["SAML_POSTGRES_URL"]
    static let control = ProcessInfo.processInfo.environment["SAML_POSTGRES_CTL"]
    static var configured: Bool { url != nil }
}

@Suite("PostgreSQL state store", .serialized, .enabled(if: PostgresEnvironment.configured))
struct PostgresStateStoreTests {
    static let url = PostgresEnvironment.url
    static let control = PostgresEnvironment.control
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("TestVectors")
    static let provider = try! MockIdentityProvider(
        privateKeyPEM: Array(try! Data(contentsOf: vectors.appendingPathComponent("keys/ecdsa-p256.key.pem"))),
        certificatePEM: Array(try! Data(contentsOf: vectors.appendingPathComponent("keys/ecdsa-p256.cert.pem"))))

    /// One service instance: its own pool, its own verifier.
    struct Instance {
        let store: PostgresStateStore
        let verifier: SAMLResponseVerifier
        let task: Task<Void, Never>
    }

    static func instance(timeout: Duration = .seconds(2), cleanup: Duration = .seconds(60)) async throws -> Instance {
        var configuration = try PostgresStateStore.Configuration(url: url!)
        configuration.timeout = timeout
        configuration.cleanupInterval = cleanup
        let store = PostgresStateStore(configuration)
        let task = Task { await store.run() }
        try await store.prepare()
        var verifierConfiguration = SAMLResponseVerifier.Configuration(
            identityProvider: try IdentityProvider(
                entityID: MockIdentityProvider.Template().issuer,
                keys: try TrustedKey.all(pem: Array(Data(contentsOf: vectors.appendingPathComponent("keys/ecdsa-p256.cert.pem"))))),
            audience: .equals(MockIdentityProvider.Template().audience), destination: .skip, replay: .store(store))
        verifierConfiguration.maximumAge = nil
        return Instance(store: store, verifier: try SAMLResponseVerifier(verifierConfiguration), task: task)
    }

    /// A fresh request, recorded as outstanding, and a signed response to it.
    static func answeredRequest(_ store: PostgresStateStore, lifetime: Duration = .seconds(300)) async throws -> (String, [UInt8]) {
        let request = try SAMLRequest(issuer: "https://saml.sp.auth.adobe.com", destination: "https://idp.mvpd.example.com/sso")
        try await store.recordOutstandingRequest(request.id, expiry: .now() + lifetime)
        var template = MockIdentityProvider.Template()
        template.inResponseTo = request.id
        return (request.id, try provider.response(template, issuedAt: .now(), placement: .assertion))
    }

    static func code(_ body: () async throws -> Void) async -> String {
        do {
            try await body()
            return "accepted"
        } catch let error as SAMLError {
            return error.code.identifier
        } catch {
            return "\(error)"
        }
    }

    @Test("two instances, 50 concurrent posts each of the same response: exactly one accepted, 99 replays")
    func sameResponseConcurrently() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let (_, response) = try await Self.answeredRequest(a.store)
        let codes = await withTaskGroup(of: String.self) { group in
            for index in 0..<100 {
                let verifier = index % 2 == 0 ? a.verifier : b.verifier
                group.addTask { await Self.code { _ = try await verifier.verify(response) } }
            }
            var codes: [String] = []
            for await code in group { codes.append(code) }
            return codes
        }
        #expect(codes.filter { $0 == "accepted" }.count == 1)
        #expect(codes.filter { $0 == "replay.detected" }.count == 99, "\(Set(codes))")
    }

    @Test("10,000 distinct responses through two instances: all accepted, none flagged as replay")
    func manyDistinctResponses() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        var responses: [[UInt8]] = []
        for _ in 0..<10_000 { responses.append(try await Self.answeredRequest(a.store).1) }
        let all = responses
        let codes = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var codes: [String] = []
                    for index in stride(from: worker, to: all.count, by: 16) {
                        let verifier = index % 2 == 0 ? a.verifier : b.verifier
                        codes.append(await Self.code { _ = try await verifier.verify(all[index]) })
                    }
                    return codes
                }
            }
            var codes: [String] = []
            for await part in group { codes += part }
            return codes
        }
        #expect(codes.count == 10_000)
        #expect(codes.allSatisfy { $0 == "accepted" }, "\(Set(codes))")
    }

    @Test("a response to an unknown, expired or already answered request is refused")
    func notOutstanding() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        var unknown = MockIdentityProvider.Template()
        unknown.inResponseTo = "_never-issued-\(UUID().uuidString)"
        let stranger = try Self.provider.response(unknown, issuedAt: .now(), placement: .assertion)
        #expect(await Self.code { _ = try await a.verifier.verify(stranger) } == "in-response-to.not-outstanding")
        let (_, expired) = try await Self.answeredRequest(a.store, lifetime: .milliseconds(-1))
        #expect(await Self.code { _ = try await b.verifier.verify(expired) } == "in-response-to.not-outstanding")
        let (requestID, first) = try await Self.answeredRequest(a.store)
        #expect(await Self.code { _ = try await a.verifier.verify(first) } == "accepted")
        var again = MockIdentityProvider.Template()
        again.inResponseTo = requestID
        let second = try Self.provider.response(again, issuedAt: .now(), placement: .assertion)
        #expect(await Self.code { _ = try await b.verifier.verify(second) } == "in-response-to.not-outstanding")
        #expect(await Self.code { _ = try await b.verifier.verify(first) } == "replay.detected")
        let unsolicited = try Self.provider.response(MockIdentityProvider.Template(), issuedAt: .now(), placement: .assertion)
        #expect(await Self.code { _ = try await a.verifier.verify(unsolicited) } == "in-response-to.unsolicited")
    }

    @Test("expired rows disappear in the background, while requests go on")
    func expiry() async throws {
        let a = try await Self.instance(cleanup: .milliseconds(300))
        defer { a.task.cancel() }
        for _ in 0..<50 { _ = try await Self.answeredRequest(a.store, lifetime: .milliseconds(-1000)) }
        let before = try await a.store.counts()
        #expect(before.outstandingRequests >= 50)
        var accepted = 0
        let deadline = ContinuousClock.now + .seconds(10)
        var after = before
        while ContinuousClock.now < deadline {
            let (_, response) = try await Self.answeredRequest(a.store)
            if await Self.code({ _ = try await a.verifier.verify(response) }) == "accepted" { accepted += 1 }
            after = try await a.store.counts()
            if after.outstandingRequests == 0 { break }
        }
        #expect(after.outstandingRequests == 0)
        #expect(accepted > 0)
    }

    @Test(
        "the database stopped mid-run: every verification fails closed with store.unavailable, then recovers by itself",
        .enabled(if: PostgresEnvironment.control != nil))
    func databaseOutage() async throws {
        let a = try await Self.instance(timeout: .seconds(1)), b = try await Self.instance(timeout: .seconds(1))
        defer { a.task.cancel(); b.task.cancel() }
        var pending: [[UInt8]] = []
        for _ in 0..<20 { pending.append(try await Self.answeredRequest(a.store).1) }
        #expect(await Self.code { _ = try await a.verifier.verify(pending.removeFirst()) } == "accepted")
        try Self.pgctl("stop")
        var outage: [String] = []
        for index in 0..<10 {
            let verifier = index % 2 == 0 ? a.verifier : b.verifier
            let response = pending.removeFirst()
            outage.append(await Self.code { _ = try await verifier.verify(response) })
        }
        #expect(outage.allSatisfy { $0 == "store.unavailable" }, "\(outage)")
        try Self.pgctl("start")
        // The pools reconnect by themselves; responses issued before the outage are still outstanding.
        var recovered: [String] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while pending.count > 0, ContinuousClock.now < deadline {
            let response = pending[0]
            let code = await Self.code { _ = try await (pending.count % 2 == 0 ? a : b).verifier.verify(response) }
            if code == "store.unavailable" {
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
            recovered.append(code)
            pending.removeFirst()
        }
        #expect(recovered.count == 9)
        #expect(recovered.allSatisfy { $0 == "accepted" }, "\(recovered)")
    }

    /// Stops or starts the server (the pg_ctl command of scripts/postgres-tests), its output discarded.
    static func pgctl(_ action: String) throws {
        let status = system("\(control!) \(action) >/dev/null 2>&1 </dev/null")
        #expect(status == 0, "pg_ctl \(action)")
    }
}

@Suite("PostgreSQL configuration")
struct PostgresConfigurationTests {
    @Test("postgres:// URLs are read; other forms are configuration errors")
    func urls() throws {
        let configuration = try PostgresStateStore.Configuration(url: "postgres://saml:secret@127.0.0.1:5433/tokens")
        #expect(configuration.host == "127.0.0.1" && configuration.port == 5433 && configuration.username == "saml")
        #expect(configuration.password == "secret" && configuration.database == "tokens")
        #expect(throws: SAMLError(.configurationInvalid, "")) { try PostgresStateStore.Configuration(url: "mysql://x@h/db") }
    }

    @Test("under CI the database tests are not skipped")
    func notSkippedInCI() {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            #expect(PostgresEnvironment.configured, "run through scripts/postgres-tests")
        }
    }
}
