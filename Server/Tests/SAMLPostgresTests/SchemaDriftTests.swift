import AppleSSO
import Foundation
import SAML
import SAMLPostgres
import Testing

/// A database that drifts under the store (issue 66): parts of the schema dropped while instances run,
/// readiness that says what a login needs, and the profile directory following deletions and expiry
/// changes whoever makes them. In the store's suite (serialized).
extension PostgresStateStoreTests {
    /// The code of what `checkHealth()` throws, and its message; nil when healthy.
    static func health(_ store: PostgresStateStore) async -> String? {
        do {
            try await store.checkHealth()
            return nil
        } catch let error as SAMLError {
            return "\(error.code.identifier): \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    @Test("a procedure dropped while instances run: the next batch repairs the schema and is retried; no login refused")
    func droppedProcedureRepaired() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        _ = try await a.store.firstValue(unsafeSQL: "DROP PROCEDURE swift_saml_group_commit_v5")
        // Both instances' next logins: each finds the procedure gone, the first repairs, both are retried.
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        #expect(try await b.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        #expect(await Self.health(a.store) == nil)
    }

    @Test("readiness checks what a login needs and repairs what it can: a dropped procedure, trigger or profile column comes back")
    func readinessRepairs() async throws {
        // Each repair is at most once per 10 s per instance: a fresh instance for each drift.
        for drift in [
            "DROP PROCEDURE swift_saml_group_commit_v5", "DROP TRIGGER swift_saml_profile_removed ON saml_profiles",
            "ALTER TABLE saml_profiles DROP COLUMN saved_xid CASCADE",
            "ALTER TABLE saml_profiles DISABLE TRIGGER swift_saml_profile_removed",
            "DROP TRIGGER swift_saml_profile_truncated ON saml_profiles",
        ] {
            let a = try await Self.instance()
            defer { a.task.cancel() }
            _ = try await a.store.firstValue(unsafeSQL: drift)
            #expect(await Self.health(a.store) == nil, "\(drift)")
            let triggers = try await a.store.firstValue(
                unsafeSQL:
                    "SELECT count(*)::text FROM pg_trigger WHERE tgrelid = 'saml_profiles'::regclass AND NOT tgisinternal AND tgenabled = 'A'"
            )
            #expect(triggers == "3", "\(drift)")
            #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        }
    }

    @Test("a dropped replay table is never recreated at run time: logins fail closed and readiness names it until prepare()")
    func droppedReplayTable() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        let kept = "saml_consumed_kept_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await a.store.firstValue(unsafeSQL: "ALTER TABLE saml_consumed RENAME TO \(kept)")
        // Put back, whatever happens below (only while it is still away: never drop the live table).
        var restored = false
        defer {
            if !restored {
                Task { _ = try? await a.store.firstValue(unsafeSQL: "ALTER TABLE IF EXISTS \(kept) RENAME TO saml_consumed") }
            }
        }
        let outcome = await Self.outcome { try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) }
        #expect(outcome == "store.unavailable")
        let health = await Self.health(a.store)
        #expect(health?.hasPrefix("store.unavailable") == true && health?.contains("saml_consumed") == true, "\(health ?? "healthy")")
        // Nor at a start: prepare() refuses, naming it.
        do {
            try await a.store.prepare()
            Issue.record("prepare() accepted a schema that lost its replay table")
        } catch let error as SAMLError {
            #expect(error.code == .configurationInvalid && error.message.contains("saml_consumed"), "\(error.message)")
        }
        #expect(try await a.store.firstValue(unsafeSQL: "SELECT coalesce(to_regclass('saml_consumed')::text, 'none')") == "none")
        // The operator puts it back: logins again, no restart.
        _ = try await a.store.firstValue(unsafeSQL: "ALTER TABLE \(kept) RENAME TO saml_consumed")
        restored = true
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        #expect(await Self.health(a.store) == nil)
    }

    @Test("readiness fails while every login fails (the schema looks whole) and recovers once one succeeds")
    func readinessWhileLoginsFail() async throws {
        let a = try await Self.instance()
        defer { a.task.cancel() }
        let constraint = "swift_saml_test_refuse_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await a.store.firstValue(
            unsafeSQL: "ALTER TABLE saml_consumed ADD CONSTRAINT \(constraint) CHECK (issuer <> 'https://refused.example.com') NOT VALID")
        defer { Task { _ = try? await a.store.firstValue(unsafeSQL: "ALTER TABLE saml_consumed DROP CONSTRAINT IF EXISTS \(constraint)") } }
        let refused = await Self.outcome {
            try await a.store.consume(
                request: Self.request(), assertion: Self.assertion(issuer: "https://refused.example.com"), now: .now())
        }
        #expect(refused == "store.unavailable")
        // Reads that succeed meanwhile (a device's profiles) do not make it ready: no login is recorded.
        _ = try await a.store.profiles(serviceProvider: "REF30", device: "reader-\(UUID().uuidString)", now: .now())
        let health = await Self.health(a.store)
        #expect(health?.contains("every one failing") == true, "\(health ?? "healthy")")
        #expect(try await a.store.consume(request: Self.request(), assertion: Self.assertion(), now: .now()) == .accepted)
        #expect(await Self.health(a.store) == nil)
    }

    @Test("profile directory: an operator's delete, an update of expires_at and an insert are followed on every instance within a second")
    func directoryFollowsEveryChange() async throws {
        let a = try await Self.instance(), b = try await Self.instance()
        defer { a.task.cancel(); b.task.cancel() }
        let device = "drift-\(UUID().uuidString)"
        try await a.store.save(Self.profile(device))
        for store in [a.store, b.store] {
            #expect(await Self.within(.seconds(2)) { Self.presence(store, device) == true } != nil)
        }
        // A delete by someone else than the store (an operator, a retention job).
        _ = try await a.store.firstValue(unsafeSQL: "DELETE FROM saml_profiles WHERE device = '\(device)' RETURNING 'x'")
        for store in [a.store, b.store] {
            let gone = await Self.within(.seconds(2)) { Self.presence(store, device) == false }
            #expect(gone != nil && gone! < .seconds(1), "deleted: \(String(describing: gone))")
        }
        // Written again by SQL (saved_xid from the column's default), then ended by an update of its expiry
        // alone (saved_xid from the trigger).
        _ = try await a.store.firstValue(
            unsafeSQL:
                "INSERT INTO saml_profiles (service_provider, device, mvpd, profile, expires_at) VALUES ('REF30', '\(device)', 'MVPD-A', '{}', now() + interval '1 hour') RETURNING 'x'"
        )
        for store in [a.store, b.store] {
            #expect(await Self.within(.seconds(2)) { Self.presence(store, device) == true } != nil, "inserted")
        }
        _ = try await a.store.firstValue(
            unsafeSQL: "UPDATE saml_profiles SET expires_at = now() - interval '1 second' WHERE device = '\(device)' RETURNING 'x'")
        for store in [a.store, b.store] {
            let ended = await Self.within(.seconds(2)) { Self.presence(store, device) == false }
            #expect(ended != nil && ended! < .seconds(1), "ended: \(String(describing: ended))")
        }
        // Deleted and written again in one transaction: what the table holds wins.
        let again = "drift-\(UUID().uuidString)"
        try await a.store.save(Self.profile(again))
        #expect(await Self.within(.seconds(2)) { Self.presence(b.store, again) == true } != nil)
        _ = try await a.store.firstValue(
            unsafeSQL: """
                WITH gone AS (DELETE FROM saml_profiles WHERE device = '\(again)' RETURNING 1)
                SELECT 'x' FROM gone
                """)
        try await a.store.save(Self.profile(again))
        try await Task.sleep(for: .seconds(1))
        #expect(Self.presence(b.store, again) == true)
        // A change of key leaves the old key removed; a TRUNCATE makes every directory load again.
        let moved = "drift-\(UUID().uuidString)", movedTo = "drift-\(UUID().uuidString)"
        try await a.store.save(Self.profile(moved))
        #expect(await Self.within(.seconds(2)) { Self.presence(b.store, moved) == true } != nil)
        _ = try await a.store.firstValue(
            unsafeSQL: "UPDATE saml_profiles SET device = '\(movedTo)' WHERE device = '\(moved)' RETURNING 'x'")
        #expect(await Self.within(.seconds(2)) { Self.presence(b.store, moved) == false && Self.presence(b.store, movedTo) == true } != nil)
        let kept = "drift-\(UUID().uuidString)"
        try await a.store.save(Self.profile(kept))
        #expect(await Self.within(.seconds(2)) { Self.presence(b.store, kept) == true } != nil)
        let copy = "kept_profiles_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await a.store.firstValue(unsafeSQL: "CREATE TABLE \(copy) AS SELECT * FROM saml_profiles")
        _ = try await a.store.firstValue(unsafeSQL: "TRUNCATE saml_profiles")
        #expect(await Self.within(.seconds(3)) { Self.presence(b.store, kept) == false } != nil, "truncated")
        _ = try await a.store.firstValue(unsafeSQL: "INSERT INTO saml_profiles SELECT * FROM \(copy)")
        _ = try await a.store.firstValue(unsafeSQL: "DROP TABLE \(copy)")
        #expect(await Self.within(.seconds(3)) { Self.presence(b.store, kept) == true } != nil, "restored")
        // The clean-up of expired profiles leaves no removals behind (the trigger records live ones only).
        let expired = "drift-expired-\(UUID().uuidString)"
        try await a.store.save(Self.profile(expired, lifetime: .milliseconds(1)))
        try await Task.sleep(for: .milliseconds(50))
        try await a.store.removeExpired()
        #expect(try await a.store.firstValue(unsafeSQL: "SELECT count(*)::text FROM saml_profiles WHERE device = '\(expired)'") == "0")
        #expect(
            try await a.store.firstValue(unsafeSQL: "SELECT count(*)::text FROM saml_profile_removals WHERE device = '\(expired)'") == "0")
    }
}
