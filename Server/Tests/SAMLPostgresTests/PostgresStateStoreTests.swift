import AppleSSO
import Foundation
import SAML
import SAMLPostgres
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Against a real PostgreSQL server, started by `scripts/postgres/postgres-tests` (which `.ci/run` runs). Without
/// `SAML_POSTGRES_URL` the suite is skipped, except under CI, where that is a failure (as is any of the
/// other variables missing).
enum PostgresEnvironment {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["SAML_POSTGRES_URL"]
    static let control = environment["SAML_POSTGRES_CTL"]
    /// The same server through TLS: `sslmode=verify-full`, `sslrootcert` the throw-away CA.
    static let tlsURL = environment["SAML_POSTGRES_TLS_URL"]
    /// A CA that did not sign the server's certificate.
    static let otherCA = environment["SAML_POSTGRES_OTHER_CA"]
    static var configured: Bool { url != nil }
}

@Suite("PostgreSQL state store", .serialized, .enabled(if: PostgresEnvironment.configured))
struct PostgresStateStoreTests {
    static let url = PostgresEnvironment.url

    /// One service instance: its own pool, its clean-up loop.
    struct Instance {
        let store: PostgresStateStore
        let task: Task<Void, Never>
    }

    static func instance(
        url: String? = nil, timeout: Duration = .seconds(2), cleanup: Duration = .seconds(60), connections: Int = 10, prepare: Bool = true,
        directoryCapacity: Int = 1_000_000, directoryChangesLimit: Int = 50_000
    ) async throws -> Instance {
        var configuration = try PostgresStateStore.Configuration(url: url ?? Self.url!)
        configuration.timeout = timeout
        configuration.cleanupInterval = cleanup
        configuration.maximumConnections = connections
        configuration.profileDirectoryCapacity = directoryCapacity
        configuration.profileDirectoryChangesLimit = directoryChangesLimit
        let store = PostgresStateStore(configuration)
        let task = Task { await store.run() }
        if prepare { try await store.prepare() }
        return Instance(store: store, task: task)
    }

    static let issuer = "https://idp.mvpd.example.com"

    static func request(lifetime: Duration = .seconds(300)) -> IssuedRequestID {
        IssuedRequestID(id: "_r\(UUID().uuidString)", expiry: .now() + lifetime)
    }

    static func assertion(issuer: String = issuer, id: String = "_a\(UUID().uuidString)", lifetime: Duration = .seconds(300))
        -> UsedAssertion
    {
        UsedAssertion(issuer: issuer, id: id, expiry: .now() + lifetime)
    }

    /// The outcome's name, or the code of the error thrown.
    static func outcome(_ body: () async throws -> StateStoreOutcome) async -> String {
        do {
            return "\(try await body())"
        } catch let error as SAMLError {
            return error.code.identifier
        } catch {
            return "\(error)"
        }
    }

    /// Rows of one issuer (tests use their own, so as not to count each other's).
    static func rows(_ store: PostgresStateStore, issuer: String, expired: Bool? = nil) async throws -> Int {
        let condition = expired.map { $0 ? " AND expires_at <= now()" : " AND expires_at > now()" } ?? ""
        let text = try await store.firstValue(
            unsafeSQL: "SELECT count(*)::text FROM saml_consumed WHERE issuer = '\(issuer)'\(condition)")
        return Int(text ?? "") ?? -1
    }

    @Test("accepted; the same assertion again: replayed; another assertion for an answered request: requestAnswered")
    func outcomes() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let before = try await a.store.count()
        let request = Self.request(), assertion = Self.assertion()
        #expect(try await a.store.consume(request: request, assertion: assertion, now: .now()) == .accepted)
        #expect(try await b.store.consume(request: request, assertion: assertion, now: .now()) == .replayed)
        #expect(try await b.store.consume(request: Self.request(), assertion: assertion, now: .now()) == .replayed)
        #expect(try await b.store.consume(request: request, assertion: Self.assertion(), now: .now()) == .requestAnswered)
        // Keyed by issuer: another identity provider's assertion with the same ID is another assertion.
        let sameID = Self.assertion(issuer: "https://other-idp.example.com", id: assertion.id)
        #expect(try await a.store.consume(request: Self.request(), assertion: sameID, now: .now()) == .accepted)
        // Unsolicited: no request; the assertion is still recorded once.
        let unsolicited = Self.assertion()
        #expect(try await a.store.consume(request: nil, assertion: unsolicited, now: .now()) == .accepted)
        #expect(try await b.store.consume(request: nil, assertion: unsolicited, now: .now()) == .replayed)
        #expect(try await a.store.count() == before + 3)
    }

    @Test(
        "nothing is acknowledged before its synchronous commit: with a synchronous standby that never answers, a consume fails closed at the deadline though its row is committed locally; accepted once the wait ends"
    )
    func acknowledgedOnlyAfterSynchronousCommit() async throws {
        let a = try await Self.instance(timeout: .seconds(1))
        defer { a.task.cancel() }
        let issuer = "https://sync.\(UUID().uuidString).example.com"
        // Every commit now waits for a standby that does not exist (the server's configuration, reloaded).
        _ = try await a.store.firstValue(unsafeSQL: "ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
        _ = try await a.store.firstValue(unsafeSQL: "SELECT pg_reload_conf()::text")
        var restored = false
        defer {
            if !restored {
                Task {
                    _ = try? await a.store.firstValue(unsafeSQL: "ALTER SYSTEM RESET synchronous_standby_names")
                    _ = try? await a.store.firstValue(unsafeSQL: "SELECT pg_reload_conf()::text")
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let assertion = Self.assertion(issuer: issuer)
        // The wait outlasts the deadline and the server's statement_timeout (the same 1 s), whose cancel
        // ends the wait with only a warning: the procedure's row then arrives, and must not be believed.
        let waiting = await Self.outcome { try await a.store.consume(request: Self.request(), assertion: assertion, now: .now()) }
        #expect(waiting == "store.unavailable")
        // Committed on the primary (visible to other sessions), never acknowledged.
        #expect(try await Self.rows(a.store, issuer: issuer) == 1)
        _ = try await a.store.firstValue(unsafeSQL: "ALTER SYSTEM RESET synchronous_standby_names")
        _ = try await a.store.firstValue(unsafeSQL: "SELECT pg_reload_conf()::text")
        restored = true
        try await Task.sleep(for: .milliseconds(200))
        // Its retry is refused (the row stands), and a fresh one is accepted as before.
        #expect(try await a.store.consume(request: Self.request(), assertion: assertion, now: .now()) == .replayed)
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(issuer: issuer), now: .now()) == .accepted)
    }

    @Test("a schema that records version 5 without its procedure (a dump restored without routines): prepare() creates it again")
    func procedureCreatedAgain() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        _ = try await a.store.firstValue(unsafeSQL: "DROP PROCEDURE swift_saml_group_commit_v5")
        try await a.store.prepare()
        let b = try await Self.instance(prepare: false)
        defer { b.task.cancel() }
        #expect(try await b.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
    }

    @Test("a request expired by the database's clock: requestExpired, and nothing recorded")
    func expiredRequest() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        let before = try await a.store.count()
        let expired = IssuedRequestID(id: "_r\(UUID().uuidString)", expiry: .now() - .seconds(1))
        let assertion = Self.assertion()
        // `now` (this process's clock) is ignored for the request: the database's decides.
        #expect(try await a.store.consume(request: expired, assertion: assertion, now: .now() - .seconds(60)) == .requestExpired)
        #expect(try await a.store.count() == before)
        // The assertion was not recorded: it can still answer a live request.
        #expect(try await a.store.consume(request: Self.request(), assertion: assertion, now: .now()) == .accepted)
    }

    @Test("an assertion expired by the database's clock (this instance's clock behind): assertionExpired, and nothing recorded")
    func expiredAssertion() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        let before = try await a.store.count()
        // Valid by this process's `now` (an instance 5 minutes behind), past its expiry by the database's.
        let behind = SAMLInstant.now() - .seconds(300)
        let expired = UsedAssertion(issuer: Self.issuer, id: "_a\(UUID().uuidString)", expiry: .now() - .seconds(1))
        #expect(try await a.store.consume(request: nil, assertion: expired, now: behind) == .assertionExpired)
        // Also when it answers a request still live (its row would be kept until the request's expiry).
        #expect(try await a.store.consume(request: Self.request(), assertion: expired, now: behind) == .assertionExpired)
        #expect(try await a.store.count() == before)
        // A live assertion beside it in the same moment is recorded as usual.
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: behind) == .accepted)
    }

    @Test("two instances, 100 concurrent consumes of one request: exactly one accepted, the others requestAnswered")
    func sameRequestConcurrently() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let request = Self.request()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<100 {
                let store = index % 2 == 0 ? a.store : b.store
                group.addTask { await Self.outcome { try await store.consume(request: request, assertion: Self.assertion(), now: .now()) } }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == "accepted" }.count == 1)
        #expect(outcomes.filter { $0 == "requestAnswered" }.count == 99, "\(Set(outcomes))")
        // And one assertion posted 100 times at once, each time for a fresh request: one accepted.
        let assertion = Self.assertion()
        let replays = await withTaskGroup(of: String.self) { group in
            for index in 0..<100 {
                let store = index % 2 == 0 ? a.store : b.store
                group.addTask { await Self.outcome { try await store.consume(request: Self.request(), assertion: assertion, now: .now()) } }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(replays.filter { $0 == "accepted" }.count == 1)
        #expect(replays.filter { $0 == "replayed" }.count == 99, "\(Set(replays))")
    }

    @Test("50 saves of one device's profile for one MVPD at once: all saved (one batch never updates a row twice), one row kept")
    func sameProfileConcurrently() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let device = "device-\(UUID().uuidString)"
        let failures = await withTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                let store = index % 2 == 0 ? a.store : b.store
                group.addTask {
                    let profile = StoredProfile(
                        serviceProvider: "REF30", device: device, mvpd: "MVPD-A", json: Array(#"{"n":\#(index)}"#.utf8),
                        notAfter: .now() + .seconds(300))
                    return (try? await store.save(profile)) == nil ? 1 : 0
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        let kept = try await a.store.profiles(serviceProvider: "REF30", device: device, now: .now())
        #expect(kept.count == 1 && kept[0].mvpd == "MVPD-A")
    }

    @Test(
        "removals: a device's profile of one MVPD or all, only valid ones reported; a subscriber's on every device by a signed attribute (one value or one of several); the other instance's directory follows"
    )
    func removals() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let run = UUID().uuidString
        let now = SAMLInstant.now()
        func save(_ device: String, _ mvpd: String, _ value: String, expires: Duration = .seconds(300)) async throws {
            let json = #"{"attributes":{"userID":{"state":"plain","value":\#(value)}},"type":"appleSSO"}"#
            try await a.store.save(
                StoredProfile(
                    serviceProvider: "REF30", device: "\(run)-\(device)", mvpd: mvpd, json: Array(json.utf8), notAfter: now + expires))
        }
        try await save("d1", "MVPD-A", #""u1-\#(run)""#)
        try await save("d1", "MVPD-B", #""u1-\#(run)""#)
        try await save("d2", "MVPD-A", #"["x", "u1-\#(run)"]"#)
        try await save("d3", "MVPD-A", #""u2-\#(run)""#)
        try await save("d4", "MVPD-A", #""u3-\#(run)""#, expires: .milliseconds(-1000))
        // b's directory has read a's saves.
        var seen = false
        for _ in 0..<100 where !seen {
            seen = b.store.hasLiveProfile(serviceProvider: "REF30", device: "\(run)-d1", mvpd: "MVPD-B", now: .now()) == true
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(seen)
        #expect(try await b.store.removeProfiles(serviceProvider: "REF30", device: "\(run)-d1", mvpd: "MVPD-B", now: .now()) == ["MVPD-B"])
        #expect(b.store.hasLiveProfile(serviceProvider: "REF30", device: "\(run)-d1", mvpd: "MVPD-B", now: .now()) == false)
        #expect(try await a.store.profiles(serviceProvider: "REF30", device: "\(run)-d1", now: .now()).map(\.mvpd) == ["MVPD-A"])
        #expect(try await a.store.removeProfiles(serviceProvider: "REF30", device: "\(run)-d4", mvpd: nil, now: .now()).isEmpty)
        let removed = try await a.store.removeProfiles(serviceProvider: "REF30", mvpd: "MVPD-A", attribute: "userID", value: "u1-\(run)")
        #expect(removed == 2)
        for device in ["d1", "d2"] {
            #expect(try await b.store.profiles(serviceProvider: "REF30", device: "\(run)-\(device)", now: .now()).isEmpty)
        }
        #expect(try await b.store.profiles(serviceProvider: "REF30", device: "\(run)-d3", now: .now()).count == 1)
        // a's removal reaches b's directory through saml_profile_removals within its bound.
        var gone = false
        for _ in 0..<100 where !gone {
            gone = b.store.hasLiveProfile(serviceProvider: "REF30", device: "\(run)-d2", mvpd: "MVPD-A", now: .now()) == false
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(gone)
    }

    @Test("a profile attached to a consume is kept in its transaction when it is recorded, and not when it is refused")
    func profileWithConsume() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let device = "device-\(UUID().uuidString)"
        func profile(_ device: String) -> StoredProfile {
            StoredProfile(
                serviceProvider: "REF30", device: device, mvpd: "MVPD-A", json: Array(#"{"d":"\#(device)"}"#.utf8),
                notAfter: .now() + .seconds(300))
        }
        let assertion = Self.assertion()
        #expect(
            try await a.store.consume(request: Self.request(), assertion: assertion, now: .now(), keeping: profile(device)) == .accepted)
        #expect(try await a.store.profiles(serviceProvider: "REF30", device: device, now: .now()).map(\.json) == [profile(device).json])
        // The same assertion on the other instance (no memory of it there): a replay, and its profile is not kept.
        #expect(
            try await b.store.consume(request: Self.request(), assertion: assertion, now: .now(), keeping: profile(device + "-b"))
                == .replayed)
        #expect(try await b.store.profiles(serviceProvider: "REF30", device: device + "-b", now: .now()).isEmpty)
        // An answered request: refused, not kept either.
        let request = Self.request()
        #expect(try await a.store.consume(request: request, assertion: Self.assertion(), now: .now()) == .accepted)
        #expect(
            try await b.store.consume(request: request, assertion: Self.assertion(), now: .now(), keeping: profile(device + "-c"))
                == .requestAnswered)
        #expect(try await b.store.profiles(serviceProvider: "REF30", device: device + "-c", now: .now()).isEmpty)
    }

    @Test("a multi-host URL: a host that refuses connections is skipped, the next one serves")
    func multiHostSkipsDeadHost() async throws {
        let live = try PostgresStateStore.Configuration(url: Self.url!)
        // A port nothing listens on (bound and closed: refused at once).
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(socket, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        let deadPort = Int(UInt16(bigEndian: address.sin_port))
        close(socket)
        let url = Self.url!.replacingOccurrences(of: "@\(live.host):\(live.port)", with: "@127.0.0.1:\(deadPort),\(live.host):\(live.port)")
        #expect(url != Self.url!)
        let a = try await Self.instance(url: url)
        defer { a.task.cancel() }
        #expect(a.store.configuration.endpoints.count == 2 && a.store.configuration.targetSessionAttributes == .readWrite)
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
    }

    @Test("target_session_attrs=read-write: a server that refuses writes is never used (store.unavailable), as libpq")
    func readWriteRefusesReadOnly() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        // A role whose sessions are read-only, as a standby's are.
        let role = "saml_ro_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await a.store.firstValue(unsafeSQL: "CREATE ROLE \(role) LOGIN SUPERUSER")
        _ = try await a.store.firstValue(unsafeSQL: "ALTER ROLE \(role) SET default_transaction_read_only = on")
        let live = try PostgresStateStore.Configuration(url: Self.url!)
        let readOnly = Self.url!.replacingOccurrences(of: "//\(live.username)@", with: "//\(role)@")
        // read-write: never connected; primary and any: connected (not in recovery), and the write fails
        // closed. Either way nothing is accepted, readiness fails, and the store recovers once the server
        // accepts writes.
        for attributes in ["read-write", "primary", "any"] {
            let b = try await Self.instance(
                url: readOnly + (readOnly.contains("?") ? "&" : "?") + "target_session_attrs=\(attributes)", timeout: .seconds(1),
                prepare: false)
            defer { b.task.cancel() }
            let outcome = await Self.outcome {
                try await b.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now())
            }
            #expect(outcome == "store.unavailable", "\(attributes)")
            let check = await Self.outcome {
                try await b.store.checkHealth()
                return .accepted
            }
            // Not ready: the schema was never prepared from it (prepare() cannot run read-only), and for primary
            // and any every login failed since, which readiness reports too.
            #expect(check == "store.unavailable", "\(attributes)")
        }
        _ = try await a.store.firstValue(unsafeSQL: "ALTER ROLE \(role) SET default_transaction_read_only = off")
        let d = try await Self.instance(url: readOnly + (readOnly.contains("?") ? "&" : "?") + "target_session_attrs=read-write")
        defer { d.task.cancel() }
        #expect(try await d.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
    }

    @Test("5,000 distinct responses through two instances: all accepted")
    func manyDistinct() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let outcomes = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var outcomes: [String] = []
                    for index in stride(from: worker, to: 5_000, by: 16) {
                        let store = index % 2 == 0 ? a.store : b.store
                        outcomes.append(
                            await Self.outcome {
                                try await store.consume(request: Self.request(), assertion: Self.assertion(), now: .now())
                            })
                    }
                    return outcomes
                }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(outcomes.count == 5_000)
        #expect(outcomes.allSatisfy { $0 == "accepted" }, "\(Set(outcomes))")
    }

    @Test("expired rows disappear in the background, while consumes go on; live rows stay")
    func expiry() async throws {
        let a = try await Self.instance(cleanup: .milliseconds(300))
        defer { a.task.cancel() }
        let issuer = "https://expiry-\(UUID().uuidString).example.com"
        for _ in 0..<50 {
            _ = try await a.store.consume(request: nil, assertion: Self.assertion(issuer: issuer, lifetime: .seconds(-1)), now: .now())
        }
        for _ in 0..<5 { _ = try await a.store.consume(request: Self.request(), assertion: Self.assertion(issuer: issuer), now: .now()) }
        // The clean-up may have started already (every 300 ms): live rows all there, expired ones at most all.
        #expect(try await Self.rows(a.store, issuer: issuer, expired: false) == 5)
        #expect(try await Self.rows(a.store, issuer: issuer, expired: true) <= 50)
        var accepted = 0
        let deadline = ContinuousClock.now + .seconds(10)
        var expired = 1
        while ContinuousClock.now < deadline, expired > 0 {
            if try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted { accepted += 1 }
            try await Task.sleep(for: .milliseconds(20))
            expired = try await Self.rows(a.store, issuer: issuer, expired: true)
        }
        #expect(try await Self.rows(a.store, issuer: issuer, expired: true) == 0)
        #expect(try await Self.rows(a.store, issuer: issuer, expired: false) == 5)
        #expect(accepted > 0)
    }

    @Test("two instances removing expired rows at once: every expired row removed once, live rows untouched")
    func cleanupOneAtATime() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        _ = try await a.store.removeExpired()  // what earlier tests left
        let issuer = "https://cleanup-\(UUID().uuidString).example.com"
        _ = try await a.store.firstValue(
            unsafeSQL: """
                INSERT INTO saml_consumed (issuer, assertion_id, request_id, expires_at)
                SELECT '\(issuer)', 'expired-' || n, NULL, now() - interval '1 hour' FROM generate_series(1, 25000) AS n
                """)
        _ = try await a.store.firstValue(
            unsafeSQL: """
                INSERT INTO saml_consumed (issuer, assertion_id, request_id, expires_at)
                SELECT '\(issuer)', 'live-' || n, 'cleanup-live-' || n || '-\(issuer)', now() + interval '1 hour' FROM generate_series(1, 100) AS n
                """)
        async let first = a.store.removeExpired()
        async let second = b.store.removeExpired()
        let removed = try await [first, second]
        #expect(removed.reduce(0, +) == 25_000, "\(removed)")
        #expect(try await Self.rows(a.store, issuer: issuer, expired: true) == 0)
        #expect(try await Self.rows(a.store, issuer: issuer, expired: false) == 100)
    }

    @Test(
        "a statement slower than the deadline: store.unavailable at the deadline; the server ends it and the connection serves the next operation at once"
    )
    func slowStatement() async throws {
        // One connection: the next operation needs the very connection the slow statement held.
        let a = try await Self.instance(timeout: .milliseconds(500), connections: 1)
        defer { a.task.cancel() }
        let clock = ContinuousClock()
        let started = clock.now
        let slow = await Self.outcome {
            _ = try await a.store.firstValue(unsafeSQL: "SELECT 'slept' FROM pg_sleep(5)")
            return .accepted
        }
        let failedAfter = clock.now - started
        #expect(slow == "store.unavailable")
        #expect(failedAfter < .seconds(1), "\(failedAfter)")
        let next = clock.now
        try await a.store.checkHealth()
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        #expect(clock.now - next < .seconds(1), "\(clock.now - next)")
        // Ended by the server (statement_timeout), not left sleeping there.
        let sleeping = try await a.store.firstValue(
            unsafeSQL:
                "SELECT count(*)::text FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(5)%' AND pid <> pg_backend_pid()"
        )
        #expect(sleeping == "0")
    }

    @Test(
        "the database stopped mid-run: every consume fails closed with store.unavailable, then recovers by itself",
        .enabled(if: PostgresEnvironment.control != nil))
    func databaseOutage() async throws {
        let a = try await Self.instance(timeout: .seconds(1)), b = try await Self.instance(timeout: .seconds(1))
        defer { a.task.cancel(); b.task.cancel() }
        var pending: [(IssuedRequestID, UsedAssertion)] = (0..<20).map { _ in (Self.request(), Self.assertion()) }
        let (request, assertion) = pending.removeFirst()
        #expect(try await a.store.consume(request: request, assertion: assertion, now: .now()) == .accepted)
        try Self.pgctl("stop")
        var outage: [String] = []
        for index in 0..<10 {
            let store = index % 2 == 0 ? a.store : b.store
            let (request, assertion) = pending.removeFirst()
            outage.append(await Self.outcome { try await store.consume(request: request, assertion: assertion, now: .now()) })
        }
        #expect(outage.allSatisfy { $0 == "store.unavailable" }, "\(outage)")
        try Self.pgctl("start")
        // The pools reconnect by themselves; nothing was recorded during the outage.
        var recovered: [String] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while !pending.isEmpty, ContinuousClock.now < deadline {
            let (request, assertion) = pending[0]
            let store = pending.count % 2 == 0 ? a.store : b.store
            let outcome = await Self.outcome { try await store.consume(request: request, assertion: assertion, now: .now()) }
            if outcome == "store.unavailable" {
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
            recovered.append(outcome)
            pending.removeFirst()
        }
        #expect(recovered.count == 9)
        #expect(recovered.allSatisfy { $0 == "accepted" }, "\(recovered)")
    }

    @Test(
        "a replay this process saw recorded is refused without the database; anything else fails closed while it is away",
        .enabled(if: PostgresEnvironment.control != nil))
    func knownReplayWithoutRoundTrip() async throws {
        let a = try await Self.instance(timeout: .seconds(1))
        defer { a.task.cancel() }
        let assertion = Self.assertion()
        #expect(try await a.store.consume(request: Self.request(), assertion: assertion, now: .now()) == .accepted)
        try Self.pgctl("stop")
        defer { try? Self.pgctl("start") }
        #expect(try await a.store.consume(request: Self.request(), assertion: assertion, now: .now()) == .replayed)
        #expect(
            await Self.outcome { try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) }
                == "store.unavailable")
        // Past its expiry the process no longer answers for it: the database does (unavailable here).
        #expect(
            await Self.outcome { try await a.store.consume(request: Self.request(), assertion: assertion, now: .now() + .seconds(301)) }
                == "store.unavailable")
    }

    @Test(
        "prepare(retryingFor:) waits for a database that starts a second later",
        .enabled(if: PostgresEnvironment.control != nil))
    func prepareWaits() async throws {
        try Self.pgctl("stop")
        var restarted = false
        defer { if !restarted { try? Self.pgctl("start") } }
        let a = try await Self.instance(timeout: .seconds(1), prepare: false)
        defer { a.task.cancel() }
        let clock = ContinuousClock()
        let started = clock.now
        let preparing = Task { try await a.store.prepare(retryingFor: .seconds(30)) }
        try await Task.sleep(for: .seconds(1))
        try Self.pgctl("start")
        restarted = true
        try await preparing.value
        #expect(clock.now - started < .seconds(20))
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        // A limit that is too short gives up with the last error.
        try Self.pgctl("stop")
        restarted = false
        let b = try await Self.instance(timeout: .milliseconds(300), prepare: false)
        defer { b.task.cancel() }
        let gaveUp = await Self.outcome {
            try await b.store.prepare(retryingFor: .seconds(1))
            return .accepted
        }
        #expect(gaveUp == "store.unavailable")
        try Self.pgctl("start")
        restarted = true
    }

    @Test(
        "TLS, sslmode=verify-full with the CA that signed the server's certificate (by DNS name and by IP address)",
        .enabled(if: PostgresEnvironment.tlsURL != nil))
    func verifyFull() async throws {
        let byName = PostgresEnvironment.tlsURL!
        for url in [byName, byName.replacingOccurrences(of: "@localhost:", with: "@127.0.0.1:")] {
            let a = try await Self.instance(url: url)
            defer { a.task.cancel() }
            #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
            #expect(try await a.store.firstValue(unsafeSQL: "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == "true")
        }
    }

    @Test(
        "TLS, sslmode=verify-full with a CA that did not sign the server's certificate: fails closed (store.unavailable)",
        .enabled(if: PostgresEnvironment.tlsURL != nil && PostgresEnvironment.otherCA != nil))
    func verifyFullWrongCA() async throws {
        let url = PostgresEnvironment.tlsURL!
        let wrongCA = url.replacingOccurrences(
            of: #"sslrootcert=[^&]*"#, with: "sslrootcert=\(PostgresEnvironment.otherCA!)", options: .regularExpression)
        #expect(wrongCA != url)
        for bad in [wrongCA, wrongCA.replacingOccurrences(of: "@localhost:", with: "@127.0.0.1:")] {
            let a = try await Self.instance(url: bad, timeout: .seconds(1), prepare: false)
            defer { a.task.cancel() }
            let prepared = await Self.outcome {
                try await a.store.prepare()
                return .accepted
            }
            #expect(prepared == "store.unavailable")
            let consumed = await Self.outcome {
                try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now())
            }
            #expect(consumed == "store.unavailable")
        }
    }

    @Test("TLS, sslmode=require (the certificate not checked) and the default, prefer: encrypted")
    func requireAndPrefer() async throws {
        for url in [Self.url! + "?sslmode=require", Self.url!] {
            let a = try await Self.instance(url: url)
            defer { a.task.cancel() }
            #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
            let ssl = try await a.store.firstValue(unsafeSQL: "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            // prefer falls back to plaintext only when the server offers no TLS (scripts/postgres/postgres-tests turns it on).
            #expect(ssl == "true" || (PostgresEnvironment.tlsURL == nil && !url.contains("sslmode")))
        }
        let plain = try await Self.instance(url: Self.url! + "?sslmode=disable")
        defer { plain.task.cancel() }
        #expect(try await plain.store.firstValue(unsafeSQL: "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == "false")
    }

    /// Stops or starts the server (the pg_ctl command of scripts/postgres/postgres-tests), its output discarded.
    static func pgctl(_ action: String) throws {
        let status = system("\(PostgresEnvironment.control!) \(action) >/dev/null 2>&1 </dev/null")
        #expect(status == 0, "pg_ctl \(action)")
    }
}

@Suite("PostgreSQL configuration")
struct PostgresConfigurationTests {
    typealias Configuration = PostgresStateStore.Configuration
    static let caFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("TestVectors/keys/ecdsa-p256.cert.pem").path

    /// The message of the configuration error `url` gives (never the password).
    static func refusal(_ url: String) -> String? {
        do {
            _ = try Configuration(url: url)
            return nil
        } catch let error as SAMLError {
            #expect(error.code == .configurationInvalid)
            #expect(!error.message.contains("secret"), "\(error.message)")
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("postgres:// URLs are read; other forms are configuration errors")
    func urls() throws {
        let configuration = try Configuration(url: "postgres://saml:secret@127.0.0.1:5433/tokens")
        #expect(configuration.host == "127.0.0.1" && configuration.port == 5433 && configuration.username == "saml")
        #expect(configuration.password == "secret" && configuration.database == "tokens")
        #expect(configuration.sslMode == .prefer, "libpq's default")
        #expect(configuration.sslRootCertificatePath == nil)
        #expect(Self.refusal("mysql://x:secret@h/db") != nil)
    }

    @Test(
        "libpq's multi-host URLs: every host in order, ports, IPv6 in brackets, target_session_attrs (read-write by default with several)")
    func multiHostURLs() throws {
        let several = try Configuration(url: "postgres://saml:secret@db1.example.com:5433,db2.example.com,[::1]:6000/tokens")
        #expect(
            several.endpoints == [
                .init(host: "db1.example.com", port: 5433), .init(host: "db2.example.com", port: 5432), .init(host: "::1", port: 6000),
            ])
        #expect(several.targetSessionAttributes == .readWrite, "a state store writes: with several hosts it looks for the writable one")
        #expect(several.host == "db1.example.com" && several.port == 5433 && several.database == "tokens")
        let one = try Configuration(url: "postgres://saml@db.example.com/tokens")
        #expect(one.targetSessionAttributes == .any, "libpq's default")
        for value in Configuration.TargetSessionAttributes.allCases {
            let configuration = try Configuration(url: "postgres://saml@a,b/tokens?target_session_attrs=\(value.rawValue)")
            #expect(configuration.targetSessionAttributes == value)
        }
        let encoded = try Configuration(url: "postgres://sa%40ml:p%2Fw@db/my%20db")
        #expect(encoded.username == "sa@ml" && encoded.password == "p/w" && encoded.database == "my db")
    }

    @Test(
        "multi-host forms that cannot be honoured: configuration errors",
        arguments: [
            "postgres://saml@a,,b/db", "postgres://saml@a:0/db", "postgres://saml@a:70000/db", "postgres://saml@a:x/db",
            "postgres://saml@[::1/db",
            "postgres://saml@/db", "postgres://@a/db", "postgres://saml@a b/db", "postgres://saml@a/db?target_session_attrs=standby",
            "postgres://saml@a/db?target_session_attrs=read-only", "postgres://saml@a/db?target_session_attrs=prefer-standby",
            "postgres://saml@a/db?target_session_attrs=READ-WRITE",
            "postgres://saml@a/db?target_session_attrs=any&target_session_attrs=any",
            "postgres://saml:secret@" + Array(repeating: "h", count: 17).joined(separator: ",") + "/db",
        ])
    func multiHostRefused(url: String) {
        #expect(Self.refusal(url) != nil, "\(url) accepted")
    }

    @Test("every sslmode libpq knows that postgres-nio can honour", arguments: Configuration.SSLMode.allCases)
    func sslModes(mode: Configuration.SSLMode) throws {
        let configuration = try Configuration(url: "postgresql://saml:secret@db.example.com/tokens?sslmode=\(mode.rawValue)")
        #expect(configuration.sslMode == mode)
        #expect(configuration.sslRootCertificatePath == nil)
        _ = try configuration.makeClientTLS()
    }

    @Test("sslrootcert: a PEM file for require (then verify-ca, as libpq), verify-ca and verify-full; system: the system's roots")
    func rootCertificate() throws {
        for (mode, expected) in [("require", Configuration.SSLMode.verifyCA), ("verify-ca", .verifyCA), ("verify-full", .verifyFull)] {
            let configuration = try Configuration(
                url: "postgres://saml:secret@db.example.com/tokens?sslmode=\(mode)&sslrootcert=\(Self.caFile)")
            #expect(configuration.sslMode == expected)
            #expect(configuration.sslRootCertificatePath == Self.caFile)
        }
        let system = try Configuration(url: "postgres://saml@db.example.com/tokens?sslrootcert=system&sslmode=verify-full")
        #expect(system.sslMode == .verifyFull && system.sslRootCertificatePath == nil)
    }

    @Test(
        "unknown sslmode values, allow, parameters that would be ignored, repeated or empty ones: configuration errors",
        arguments: [
            "sslmode=allow", "sslmode=VERIFY-FULL", "sslmode=", "sslmode", "sslmode=verify_full", "sslmode=require&sslmode=disable",
            "sslmode=disable&sslrootcert=CA", "sslrootcert=CA", "sslmode=prefer&sslrootcert=CA", "sslmode=verify-full&sslrootcert=",
            "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem", "sslmode=verify-full&sslrootcert=\(#filePath)", "sslcert=/tmp/c.pem",
            "sslkey=/tmp/k.pem", "password=secret", "application_name=x", "connect_timeout=5", "sslnegotiation=direct", "x",
        ])
    func refused(query: String) {
        let message = Self.refusal(
            "postgres://saml:secret@db.example.com/tokens?\(query.replacingOccurrences(of: "=CA", with: "=\(Self.caFile)"))")
        #expect(message != nil, "\(query) accepted")
    }

    @Test("the deadline becomes the server's statement_timeout, in milliseconds, never 0 (none)")
    func statementTimeout() throws {
        var configuration = try Configuration(url: "postgres://saml@db.example.com/tokens")
        #expect(configuration.statementTimeoutMilliseconds == 2000)
        configuration.timeout = .milliseconds(500)
        #expect(configuration.statementTimeoutMilliseconds == 500)
        configuration.timeout = .microseconds(10)
        #expect(configuration.statementTimeoutMilliseconds == 1)
    }

    @Test("under CI the database tests are not skipped")
    func notSkippedInCI() {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            #expect(PostgresEnvironment.url != nil, "SAML_POSTGRES_URL: run through scripts/postgres/postgres-tests")
            #expect(PostgresEnvironment.control != nil, "SAML_POSTGRES_CTL: run through scripts/postgres/postgres-tests")
            #expect(PostgresEnvironment.tlsURL != nil, "SAML_POSTGRES_TLS_URL: run through scripts/postgres/postgres-tests")
            #expect(PostgresEnvironment.otherCA != nil, "SAML_POSTGRES_OTHER_CA: run through scripts/postgres/postgres-tests")
        }
    }
}
