import AppleSSO
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import SAML
import SAMLPostgres
import Testing

/// The profile directory (`ProfileDirectory`): `sessions/sso`'s question answered from memory, in step
/// with every instance's saves. In the store's suite (serialized: one of its tests stops the server).
extension PostgresStateStoreTests {
    static func profile(_ device: String, mvpd: String = "MVPD-A", lifetime: Duration = .seconds(3600)) -> StoredProfile {
        StoredProfile(serviceProvider: "REF30", device: device, mvpd: mvpd, json: Array(#"{"d":1}"#.utf8), notAfter: .now() + lifetime)
    }

    static func presence(_ store: PostgresStateStore, _ device: String, mvpd: String = "MVPD-A") -> Bool? {
        store.hasLiveProfile(serviceProvider: "REF30", device: device, mvpd: mvpd, now: .now())
    }

    /// Waits up to `limit` for `condition`; how long it took, or nil.
    static func within(_ limit: Duration, _ condition: () async throws -> Bool) async rethrows -> Duration? {
        let clock = ContinuousClock()
        let started = clock.now
        while clock.now - started < limit {
            if try await condition() { return clock.now - started }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test("profile directory: a profile saved on one instance is answered from another's memory within a second; others: no")
    func directoryFollowsOtherInstances() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let device = "directory-\(UUID().uuidString)"
        // Loaded: an unknown device is answered "no" from memory, not nil.
        #expect(await Self.within(.seconds(5)) { Self.presence(b.store, device) == false } != nil)
        try await a.store.save(Self.profile(device))
        let seen = await Self.within(.seconds(5)) { Self.presence(b.store, device) == true }
        #expect(seen != nil && seen! < .seconds(1), "seen after \(String(describing: seen))")
        #expect(Self.presence(b.store, device, mvpd: "MVPD-B") == false)
        // Kept with a consume, in its transaction: followed the same way.
        let other = "directory-\(UUID().uuidString)"
        #expect(
            try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now(), keeping: Self.profile(other))
                == .accepted)
        #expect(await Self.within(.seconds(1)) { Self.presence(b.store, other) == true } != nil)
        // Replaced by one that has expired: no.
        try await a.store.firstValue(
            unsafeSQL:
                "UPDATE saml_profiles SET expires_at = now() - interval '1 second', saved_xid = pg_current_xact_id()::text::bigint WHERE device = '\(other)' RETURNING 'x'"
        )
        #expect(await Self.within(.seconds(1)) { Self.presence(b.store, other) == false } != nil)
    }

    @Test("profile directory: a transaction left open holds nothing back, and what it wrote is seen once it commits")
    func directoryPastAnOpenTransaction() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let url = try PostgresStateStore.Configuration(url: Self.url!)
        let logger = Logger(label: "test")
        let open = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: .init(
                host: url.endpoints[0].host, port: url.endpoints[0].port, username: url.username, password: url.password,
                database: url.database, tls: .disable), id: 1, logger: logger)
        #expect(await Self.within(.seconds(5)) { Self.presence(b.store, "open-unknown") == false } != nil)
        let late = "late-\(UUID().uuidString)"
        try await open.query("BEGIN", logger: logger)
        try await open.query(
            """
            INSERT INTO saml_profiles (service_provider, device, mvpd, profile, expires_at)
            VALUES ('REF30', \(late), 'MVPD-A', '{}', now() + interval '1 hour')
            """, logger: logger)
        // Meanwhile other profiles are followed as usual.
        for _ in 0..<3 {
            let device = "open-\(UUID().uuidString)"
            try await a.store.save(Self.profile(device))
            #expect(await Self.within(.seconds(1)) { Self.presence(b.store, device) == true } != nil)
        }
        #expect(Self.presence(b.store, late) == false)
        // Committed seconds after its transaction began: found by the next read.
        try await open.query("COMMIT", logger: logger)
        #expect(await Self.within(.seconds(1)) { Self.presence(b.store, late) == true } != nil)
        try await open.close()
    }

    @Test(
        "profile directory: loaded in pages at start (rows from before schema 4 included); a burst of more changes than one read takes is loaded again"
    )
    func directoryLoadsInPages() async throws {
        let tag = "page-\(UUID().uuidString)"
        // Written as code before schema 4 wrote them: no saved_xid.
        try await insert(25_000, tag: "\(tag)-old", savedXID: "NULL")
        let a = try await Self.instance(directoryChangesLimit: 10_000)
        defer { a.task.cancel() }
        #expect(await Self.within(.seconds(10)) { Self.presence(a.store, "\(tag)-old-17777") == true } != nil)
        #expect(Self.presence(a.store, "\(tag)-old-1") == true && Self.presence(a.store, "\(tag)-old-25000") == true)
        // 25,000 at once while it follows: more changes than it reads at once, so it loads again.
        try await insert(25_000, tag: "\(tag)-new", savedXID: "DEFAULT")
        #expect(await Self.within(.seconds(10)) { Self.presence(a.store, "\(tag)-new-24999") == true } != nil)
        #expect(Self.presence(a.store, "\(tag)-new-3") == true && Self.presence(a.store, "\(tag)-old-3") == true)
        try await bulk("DELETE FROM saml_profiles WHERE device LIKE '\(tag)%' RETURNING 'x'")
    }

    /// `count` live profiles for devices `tag-1`...`tag-count`, in one statement.
    private func insert(_ count: Int, tag: String, savedXID: String) async throws {
        try await bulk(
            """
            WITH rows AS (INSERT INTO saml_profiles (service_provider, device, mvpd, profile, expires_at, saved_xid)
            SELECT 'REF30', '\(tag)-' || n, 'MVPD-A', '{}', now() + interval '1 hour', \(savedXID == "DEFAULT" ? "pg_current_xact_id()::text::bigint" : savedXID)
            FROM generate_series(1, \(count)) n RETURNING 1) SELECT count(*)::text FROM rows
            """)
    }

    /// A statement over tens of thousands of rows (the removal of 50,000 profiles writes as many rows of
    /// `saml_profile_removals` through the trigger), with 20 s to answer: more than the default 2 s, which
    /// a loaded machine running the suites in parallel passed (CI, 2026-12-07).
    private func bulk(_ sql: String) async throws {
        let a = try await Self.instance(timeout: .seconds(20))
        defer { a.task.cancel() }
        try await a.store.firstValue(unsafeSQL: sql)
    }

    @Test("profile directory: over its capacity it turns itself off and answers nothing (reads go to the database)")
    func directoryOverCapacity() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        try await a.store.save(Self.profile("capacity-\(UUID().uuidString)"))
        try await a.store.save(Self.profile("capacity-\(UUID().uuidString)"))
        let small = try await Self.instance(directoryCapacity: 1)
        defer { small.task.cancel() }
        try await Task.sleep(for: .seconds(1))
        #expect(Self.presence(small.store, "capacity-unknown") == nil)
        let off = try await Self.instance(directoryCapacity: 0)
        defer { off.task.cancel() }
        #expect(Self.presence(off.store, "capacity-unknown") == nil)
    }

    @Test(
        "profile directory: while the database is away it answers nothing after its bound, then follows again by itself; another server start loads it again",
        .enabled(if: PostgresEnvironment.control != nil))
    func directoryStepsAsideWhenOutOfStep() async throws {
        let a = try await Self.instance(timeout: .milliseconds(500)), b = try await Self.instance(timeout: .milliseconds(500))
        defer { a.task.cancel(); b.task.cancel() }
        #expect(await Self.within(.seconds(5)) { Self.presence(b.store, "away-unknown") == false } != nil)
        try Self.pgctl("stop")
        // The bound: 4 intervals of 250 ms since the last read that succeeded.
        let aside = await Self.within(.seconds(3)) { Self.presence(b.store, "away-unknown") == nil }
        #expect(aside != nil && aside! <= .milliseconds(1_100), "\(String(describing: aside))")
        try Self.pgctl("start")
        let device = "away-\(UUID().uuidString)"
        #expect(await Self.within(.seconds(30)) { (try? await a.store.save(Self.profile(device))) != nil } != nil)
        #expect(await Self.within(.seconds(10)) { Self.presence(b.store, device) == true } != nil)
        // Another server's transaction numbers may repeat ones already passed (a promoted standby): after
        // the restart the directory loaded everything again, so a row numbered far behind its horizon
        // (as such a server would write it) is there.
        let repeated = "repeated-\(UUID().uuidString)"
        // (Schema 6's trigger gives every insert its own transaction: it is set aside for this one row.)
        try await a.store.firstValue(
            unsafeSQL: """
                DO $d$ BEGIN
                    ALTER TABLE saml_profiles DISABLE TRIGGER swift_saml_profile_touched;
                    INSERT INTO saml_profiles (service_provider, device, mvpd, profile, expires_at, saved_xid)
                    VALUES ('REF30', '\(repeated)', 'MVPD-A', '{}', now() + interval '1 hour', 1);
                    ALTER TABLE saml_profiles ENABLE ALWAYS TRIGGER swift_saml_profile_touched;
                END $d$
                """)
        #expect(await Self.within(.seconds(2)) { Self.presence(b.store, repeated) == true } == nil)
        try Self.pgctl("stop")
        try Self.pgctl("start")
        #expect(await Self.within(.seconds(30)) { Self.presence(b.store, repeated) == true } != nil)
    }
}
