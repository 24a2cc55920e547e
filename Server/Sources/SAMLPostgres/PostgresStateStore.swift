import AppleSSO
import Foundation
import Logging
import PostgresNIO
import SAML
import ServiceLifecycle
import Synchronization

/// A ``SAMLStateStore`` in PostgreSQL, shared by every instance of a service: outstanding requests and
/// used assertion IDs, and the profiles of successful exchanges.
///
/// - Consuming a request and recording its assertion happen together or not at all, in one statement:
///   two instances can never both accept. Concurrent consumes and profile saves share one transaction
///   (group commit, ``GroupCommit``): one commit, and with a synchronous standby one wait for it, carries
///   up to ``Configuration/maximumBatch`` logins, and each is answered only once that commit is confirmed.
///   A small batch waits up to ``Configuration/batchWindow`` (20 ms) for more while logins arrive more often than that. One
///   round trip a batch: a procedure runs the statement and commits, then answers.
/// - A replay this process has seen recorded is refused without a round trip (``Configuration/recentlyUsedCapacity``).
/// - The schema is created and versioned by ``prepare()`` (a transaction under an advisory lock, so that
///   instances starting together do not race); `saml_schema_migrations` records the applied versions.
/// - Expired rows are deleted in short batches by a background loop inside ``run()``; requests never
///   wait for it.
/// - ``Configuration/maximumConnections`` connections (``StoreLanes``), each to the first server of the
///   URL's host list that accepts writes (libpq's `target_session_attrs`), replaced after any failure:
///   after a failover they reach the promoted server without a restart. Every operation has a deadline
///   (``Configuration/timeout``), its wait for a connection included. When the database is
///   unreachable, read-only, slow past the deadline or failing, the operation throws
///   ``SAMLError/Code/storeUnavailable`` (HTTP 503), so verification fails closed. The same deadline is
///   every connection's `statement_timeout`.
/// - TLS as libpq's `sslmode` (``Configuration/SSLMode``; `verify-full` with `sslrootcert` across any
///   network you do not control).
///
/// A swift-service-lifecycle `Service`, as postgres-nio's `PostgresClient` is: run it in the application's
/// `ServiceGroup` (or ``run()`` in a long-running task), and call ``prepare()`` (or
/// ``prepare(retryingFor:)`` at start-up) once before use; operations submitted before ``run()`` starts
/// wait for it, within their deadline. It ends on the group's graceful shutdown, after the services listed
/// after it (the HTTP server) have drained. The schema and its
/// migrations are in PostgresStateStore+Schema.swift, the URL's parser in PostgresURL.swift.
///
/// **Why not postgres-nio's `PostgresClient`.** Its pool connects to one host: it has no libpq host list
/// with `target_session_attrs`, which lets every instance find the promoted primary after a failover
/// without a proxy in front of the database. It has no deadline per operation, its wait for a connection
/// included, which is what makes a slow database fail a login closed within ``Configuration/timeout``.
/// And group commit needs one connection to carry many callers' writes in one transaction as soon as the
/// previous one commits, which this store's lanes (``StoreLanes``) and queue (``StoreQueue``) do: 1,481
/// commits for 10,000 logins against 4,814 one at a time, each commit a wait for the synchronous standby
/// (docs/benchmarks-history.md, "Scale-out on PostgreSQL"). A `PostgresClient` with a host list and
/// `target_session_attrs`, and a per-query deadline, would let the lanes become a client's leased
/// connections (`withConnection`) with group commit on top.
public final class PostgresStateStore: ProfileKeepingStateStore, ProfileStore, ProfilePresence, Service, Sendable {
    /// The schema version this code writes and reads, and the oldest it still runs beside.
    public static let schemaVersion = 6

    public let configuration: Configuration
    private let lanes: StoreLanes
    private let recentlyUsed: RecentlyUsedAssertions
    /// Which devices have a live profile (nil when ``Configuration/profileDirectoryCapacity`` is 0).
    let directory: ProfileDirectory?
    /// Set once ``prepare()`` has made the schema: the profile directory starts reading only then (its
    /// first read would otherwise find no table, and say so).
    let prepared = Atomic<Bool>(false)
    let logger: Logger

    public init(
        _ configuration: Configuration, logger: Logger = Logger(label: "swift-saml.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.logger = logger
        lanes = StoreLanes(configuration: configuration, logger: logger)
        recentlyUsed = RecentlyUsedAssertions(capacity: configuration.recentlyUsedCapacity)
        directory =
            configuration.profileDirectoryCapacity > 0
            ? ProfileDirectory(
                capacity: configuration.profileDirectoryCapacity, interval: configuration.profileDirectoryInterval,
                changesLimit: configuration.profileDirectoryChangesLimit, logger: logger) : nil
    }

    /// Runs the connections and the clean-up of expired rows until the task is cancelled or, in a
    /// `ServiceGroup`, shut down gracefully; then operations still queued fail closed.
    public func run() async {
        await cancelWhenGracefulShutdown { await self.runUntilCancelled() }
    }

    private func runUntilCancelled() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.lanes.run() }
            if let directory { group.addTask { await directory.follow(self) } }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.configuration.cleanupInterval)
                    guard !Task.isCancelled else { return }
                    do {
                        _ = try await self.removeExpired()
                    } catch {
                        self.logger.debug(
                            "expired rows not removed this round", metadata: ["error": "\(String(reflecting: type(of: error)))"])
                    }
                }
            }
        }
    }

    /// Recorded with the other consumes of the moment in one transaction (``GroupCommit``): the row is
    /// inserted only if the request's expiry is after the database's clock and neither the request nor
    /// the assertion is recorded (an expired row not yet removed still counts: refused, never accepted
    /// twice); answered after the commit. A replay this process has seen recorded is refused at once.
    public func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        try await consume(request: request, assertion: assertion, profile: nil, now: now)
    }

    /// ``consume(request:assertion:now:)`` and, in the same transaction, `profile` when the consume is
    /// recorded.
    public func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, keeping profile: StoredProfile)
        async throws -> StateStoreOutcome
    {
        try await consume(request: request, assertion: assertion, profile: profile, now: now)
    }

    private func consume(request: IssuedRequestID?, assertion: UsedAssertion, profile: StoredProfile?, now: SAMLInstant) async throws
        -> StateStoreOutcome
    {
        if recentlyUsed.contains(assertion, now: now) { return .replayed }
        guard
            case .outcome(let outcome) = try await perform(
                "record an accepted response", .consume(assertion, request, profile), servesRequest: true)
        else {
            throw SAMLError(.storeUnavailable, "expected an outcome from the PostgreSQL store, found another answer: refused, not accepted")
        }
        if outcome == .accepted || outcome == .replayed { recentlyUsed.insert(assertion) }
        if outcome == .accepted, let profile { noteSaved(profile) }
        return outcome
    }

    /// Keeps a profile (schema 3's `saml_profiles`), replacing the device's previous one for the MVPD;
    /// saved with the other writes of the moment in one transaction.
    public func save(_ profile: StoredProfile) async throws {
        _ = try await perform("save a profile", .save(profile), servesRequest: true)
        noteSaved(profile)
    }

    private func noteSaved(_ profile: StoredProfile) {
        directory?.noteSaved(
            serviceProvider: profile.serviceProvider, device: profile.device, mvpd: profile.mvpd, notAfter: profile.notAfter)
    }

    /// From the profile directory's memory (``ProfileDirectory``): whether `device` has a profile for
    /// `mvpd` valid at `now` by this instance's clock, in step with every instance's saves within
    /// ``Configuration/profileDirectoryInterval`` (4 of them at most, else nil); nil also while it loads,
    /// when it is off or over its capacity: then read ``profiles(serviceProvider:device:now:)``.
    public func hasLiveProfile(serviceProvider: String, device: String, mvpd: String, now: SAMLInstant) -> Bool? {
        directory?.hasLiveProfile(serviceProvider: serviceProvider, device: device, mvpd: mvpd, now: now)
    }

    /// The profile directory's entries (expired ones included until swept) and capacity (0 once it has
    /// turned itself off); nil when it is off by configuration.
    public var profileDirectoryOccupancy: (entries: Int, capacity: Int)? {
        directory.map { ($0.count, $0.isOff ? 0 : $0.capacity) }
    }

    /// The device's profiles still valid by the database's clock: one prepared statement (parsed and
    /// planned once per connection, an index probe on the primary key's first two columns).
    public func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        try await withConnection("read profiles", servesRequest: true) { connection in
            let rows = try await connection.execute(
                ProfilesStatement(serviceProvider: serviceProvider, device: device), logger: self.logger)
            var result: [StoredProfile] = []
            for try await (mvpd, profile, expiry) in rows {
                result.append(
                    StoredProfile(
                        serviceProvider: serviceProvider, device: device, mvpd: mvpd, json: Array(profile.utf8),
                        notAfter: SAMLInstant(millisecondsSinceEpoch: expiry)))
            }
            return result
        }
    }

    /// The profile read of ``profiles(serviceProvider:device:now:)``: `sessions/sso` sends it for
    /// anonymous callers, so it is prepared rather than parsed and planned on every call.
    struct ProfilesStatement: PostgresPreparedStatement {
        typealias Row = (String, String, Int64)
        static let name = "swift_saml_profiles_v1"
        static let sql = """
            SELECT mvpd, profile, (extract(epoch FROM expires_at) * 1000)::bigint FROM saml_profiles
            WHERE service_provider = $1 AND device = $2 AND expires_at > now() ORDER BY mvpd
            """

        var serviceProvider: String
        var device: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(serviceProvider)
            bindings.append(device)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Whether a login could be served now, for readiness probes: ``prepare()`` has finished; the database
    /// answers within the deadline; the schema has what a login needs (the procedure, the tables, their columns: from the
    /// catalog), repairing what it can when it lacks something (``ensureSchema(on:replayTable:logger:)``,
    /// at most once per ``StoreLanes/repairInterval``); and the logins have not all been failing (the last
    /// operation a request waited for failed within the last 10 s, and none has succeeded since). Throws
    /// `store.unavailable` naming what is wrong otherwise.
    public func checkHealth() async throws {
        guard prepared.load(ordering: .acquiring) else {
            throw SAMLError(.storeUnavailable, "expected the schema prepared, found prepare() not finished yet")
        }
        var missing = try await missingParts()
        if !missing.missing.isEmpty, lanes.mayRepair() {
            logger.error(
                "schema drift: parts a login needs are missing; repairing what can be", metadata: ["missing": "\(missing.description)"])
            _ = try await withConnection("repair the schema") { connection in
                try await Self.repairSchema(on: connection, logger: self.logger)
            }
            missing = try await missingParts()
        }
        guard missing.missing.isEmpty else {
            throw SAMLError(.storeUnavailable, "expected the schema a login needs, found missing: \(missing.description)")
        }
        if let failing = lanes.failingWrites {
            throw SAMLError(
                .storeUnavailable, "expected logins to be recorded in PostgreSQL, found every one failing for \(failing)")
        }
    }

    /// What a login needs that the schema lacks.
    private func missingParts() async throws -> Parts {
        try await withConnection("check the schema") { connection in
            try await Self.parts(on: connection, logger: self.logger)
        }
    }

    /// How many accepted responses are recorded (expired ones included until the clean-up removes them).
    public func count() async throws -> Int {
        try await withConnection("count rows") { connection in
            let rows = try await connection.query("SELECT count(*) FROM saml_consumed", logger: self.logger)
            var result = 0
            for try await value in rows.decode(Int64.self) { result = Int(value) }
            return result
        }
    }

    /// Runs one SQL statement of the caller's under the store's deadline; returns the first column of
    /// the first row as text, if any. For tests (a slow statement, the connection's TLS state).
    package func firstValue(unsafeSQL sql: String) async throws -> String? {
        try await withConnection("run a statement") { connection in
            var result: String?
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: self.logger).decode(String?.self)
            where result == nil {
                result = value
            }
            return result
        }
    }

    /// Deletes rows that expired (database clock), at most 10 batches of 10,000 per call, each batch
    /// committed on its own; returns how many. One instance at a time: an instance that finds the
    /// clean-up lock (a session advisory lock) taken skips the round.
    @discardableResult
    public func removeExpired() async throws -> Int {
        try await withConnection("remove expired rows") { connection in
            var locked = false
            for try await value in try await connection.query("SELECT pg_try_advisory_lock(7320162)", logger: self.logger)
                .decode(Bool.self)
            {
                locked = value
            }
            guard locked else { return 0 }
            var removed = 0
            do {
                for _ in 0..<10 {
                    // Abandoned by the deadline: stop between batches (postgres-nio would run them all).
                    try Task.checkCancellation()
                    let rows = try await connection.query(
                        """
                        WITH gone AS (DELETE FROM saml_consumed WHERE ctid IN (SELECT ctid FROM saml_consumed WHERE expires_at <= now() LIMIT 10000) RETURNING 1)
                        SELECT count(*) FROM gone
                        """, logger: self.logger)
                    var count: Int64 = 0
                    for try await value in rows.decode(Int64.self) { count = value }
                    removed += Int(count)
                    if count < 10_000 { break }
                }
                let profiles = try await connection.query(
                    """
                    WITH gone AS (DELETE FROM saml_profiles WHERE ctid IN (SELECT ctid FROM saml_profiles WHERE expires_at <= now() LIMIT 10000) RETURNING 1)
                    SELECT count(*) FROM gone
                    """, logger: self.logger)
                for try await value in profiles.decode(Int64.self) { removed += Int(value) }
                // The removals the profile directories follow, kept an hour (ProfileDirectory.removalsKept),
                // in batches as the rest.
                for _ in 0..<10 {
                    try Task.checkCancellation()
                    let rows = try await connection.query(
                        """
                        WITH gone AS (DELETE FROM saml_profile_removals WHERE ctid IN (SELECT ctid FROM saml_profile_removals WHERE removed_at < now() - interval '1 hour' LIMIT 10000) RETURNING 1)
                        SELECT count(*) FROM gone
                        """, logger: self.logger)
                    var count: Int64 = 0
                    for try await value in rows.decode(Int64.self) { count = value }
                    if count < 10_000 { break }
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7320162)", logger: self.logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(7320162)", logger: self.logger)
            return removed
        }
    }

    /// Runs `body` on one of the store's connections, as a job of its own.
    func withConnection<T: Sendable>(
        _ what: String, servesRequest: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard case .value(let value) = try await perform(what, .job(body), servesRequest: servesRequest), let result = value as? T else {
            throw SAMLError(.storeUnavailable, "expected PostgreSQL to \(what), found another answer: refused, not accepted")
        }
        return result
    }

    /// Queues an operation and waits for its answer within the configured deadline (the wait for a
    /// connection included); anything but a `SAMLError` becomes `store.unavailable`.
    private func perform(_ what: String, _ kind: StoreOperation.Kind, servesRequest: Bool) async throws -> StoreOperation.Answer {
        do {
            // Answered by a lane, or at the deadline by the lanes' sweep (queued or running).
            return try await StoreOperation(kind, deadline: .now + configuration.timeout, servesRequest: servesRequest).wait(
                submittingTo: lanes.queue)
        } catch {
            let failure = StoreLanes.storeError(error)
            logger.debug("state store failed", metadata: ["operation": "\(what)", "code": "\(failure.code)"])
            throw failure
        }
    }
}
