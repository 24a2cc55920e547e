import AppleSSO
import Foundation
import Logging
import PostgresNIO
import SAML

/// A ``SAMLStateStore`` in PostgreSQL, shared by every instance of a service: outstanding requests and
/// used assertion IDs, and the profiles of successful exchanges.
///
/// - Consuming a request and recording its assertion happen together or not at all, in one statement:
///   two instances can never both accept. Concurrent consumes and profile saves share one transaction
///   (group commit, ``GroupCommit``): one commit, and with a synchronous standby one wait for it, carries
///   up to ``Configuration/maximumBatch`` logins, and each is answered only after `COMMIT` returns.
///   While the store is busy, a small batch waits ``Configuration/batchWindow`` (1 ms) for more.
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
/// Start ``run()`` in a long-running task (or as a swift-service-lifecycle service), then call
/// ``prepare()`` (or ``prepare(retryingFor:)`` at start-up) once before use.
public final class PostgresStateStore: SAMLAttachingStateStore, ProfileStore, Sendable {
    /// The schema version this code writes and reads, and the oldest it still runs beside.
    public static let schemaVersion = 3

    public let configuration: Configuration
    private let lanes: StoreLanes
    private let recentlyUsed: RecentlyUsedAssertions
    private let logger: Logger

    public init(
        _ configuration: Configuration, logger: Logger = Logger(label: "swift-saml.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.logger = logger
        lanes = StoreLanes(configuration: configuration, logger: logger)
        recentlyUsed = RecentlyUsedAssertions(capacity: configuration.recentlyUsedCapacity)
    }

    /// Runs the connections and the clean-up of expired rows until the task is cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.lanes.run() }
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

    /// Creates or upgrades the schema (idempotent; safe when several instances start at once: one
    /// transaction under an advisory lock).
    ///
    /// Versions are recorded in `saml_schema_migrations` (version, and the oldest code version that can
    /// still run against it); this code runs against any schema whose `minimum_reader` is at most
    /// ``schemaVersion``. Version 2 adds `saml_consumed` beside the tables of version 1, which stay (and
    /// `saml_schema_version` stays at 1), so that instances of the previous release keep running during
    /// a rolling upgrade: each release accepts only responses to requests it issued, nothing is ever
    /// accepted twice, and a login whose session and exchange reach different releases is refused once
    /// and retried by the app.
    public func prepare() async throws {
        try await withConnection("prepare the schema") { connection in
            // One transaction; a failure closes the connection, which rolls it back.
            try await connection.query("BEGIN", logger: self.logger)
            try await connection.query("SELECT pg_advisory_xact_lock(7320161)", logger: self.logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS saml_schema_migrations (
                    version integer PRIMARY KEY, minimum_reader integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """,
                logger: self.logger)
            var current = 0
            var minimumReader = 0
            for try await (version, reader) in try await connection.query(
                "SELECT coalesce(max(version), 0), coalesce(max(minimum_reader), 0) FROM saml_schema_migrations", logger: self.logger
            )
            .decode((Int, Int).self) {
                current = version
                minimumReader = reader
            }
            guard minimumReader <= Self.schemaVersion else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected a schema this release (version \(Self.schemaVersion)) can run against, found version \(current) requiring \(minimumReader)"
                )
            }
            if current < 2 {
                // One row per accepted response: its request (NULL for an unsolicited response) and its
                // assertion, each unique, kept until both have expired (database clock).
                try await connection.query(
                    """
                    CREATE TABLE saml_consumed (
                        issuer text NOT NULL, assertion_id text NOT NULL, request_id text UNIQUE,
                        expires_at timestamptz NOT NULL, PRIMARY KEY (issuer, assertion_id))
                    """, logger: self.logger)
                try await connection.query("CREATE INDEX saml_consumed_expiry ON saml_consumed (expires_at)", logger: self.logger)
                try await connection.query(
                    "INSERT INTO saml_schema_migrations (version, minimum_reader) VALUES (2, 2)", logger: self.logger)
            }
            if current < 3 {
                // The profiles of successful exchanges (REST API v2 `profiles`), one per service provider,
                // device and MVPD, until their notAfter. Additive: schema-2 code runs beside it.
                try await connection.query(
                    """
                    CREATE TABLE saml_profiles (
                        service_provider text NOT NULL, device text NOT NULL, mvpd text NOT NULL, profile text NOT NULL,
                        expires_at timestamptz NOT NULL, PRIMARY KEY (service_provider, device, mvpd))
                    """, logger: self.logger)
                try await connection.query("CREATE INDEX saml_profiles_expiry ON saml_profiles (expires_at)", logger: self.logger)
                try await connection.query(
                    "INSERT INTO saml_schema_migrations (version, minimum_reader) VALUES (3, 2)", logger: self.logger)
            }
            try await connection.query("COMMIT", logger: self.logger)
        }
    }

    /// ``prepare()``, retried while the database does not answer (it may start after this process, as
    /// in a deployment that starts both at once): waits 0.25 s after the first failure, doubling up to
    /// 4 s, for at most `limit` in all, then throws the last error. Each failure is logged at warning
    /// (its code and message, which never hold the URL or the password). A schema this release cannot run
    /// against (``SAMLError/Code/configurationInvalid``) is not retried.
    public func prepare(retryingFor limit: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        var delay: Duration = .milliseconds(250)
        var attempt = 1
        while true {
            do {
                try await prepare()
                if attempt > 1 { logger.info("schema prepared", metadata: ["attempt": "\(attempt)"]) }
                return
            } catch let error as SAMLError where error.code == .storeUnavailable {
                try Task.checkCancellation()
                let wait = min(delay, deadline - clock.now)
                guard wait > .zero else {
                    logger.error(
                        "the database did not answer in time: giving up",
                        metadata: ["attempt": "\(attempt)", "code": "\(error.code)", "limit": "\(limit)"])
                    throw error
                }
                logger.warning(
                    "the database does not answer yet: retrying",
                    metadata: ["attempt": "\(attempt)", "code": "\(error.code)", "error": "\(error.message)", "retry_in": "\(wait)"])
                try await Task.sleep(for: wait)
                delay = min(delay * 2, .seconds(4))
                attempt += 1
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

    /// ``consume(request:assertion:now:)`` and, in the same transaction, the profile `attachment` (a
    /// ``AppleSSO/StoredProfile``; anything else is a configuration error) when the consume is recorded.
    public func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, attaching attachment: any Sendable)
        async throws -> StateStoreOutcome
    {
        guard let profile = attachment as? StoredProfile else {
            throw SAMLError(
                .configurationInvalid, "expected a StoredProfile to keep with an accepted response in PostgreSQL, found another attachment")
        }
        return try await consume(request: request, assertion: assertion, profile: profile, now: now)
    }

    private func consume(request: IssuedRequestID?, assertion: UsedAssertion, profile: StoredProfile?, now: SAMLInstant) async throws
        -> StateStoreOutcome
    {
        if recentlyUsed.contains(assertion, now: now) { return .replayed }
        guard case .outcome(let outcome) = try await perform("record an accepted response", .consume(assertion, request, profile)) else {
            throw SAMLError(.storeUnavailable, "expected an outcome from the PostgreSQL store, found another answer: refused, not accepted")
        }
        if outcome == .accepted || outcome == .replayed { recentlyUsed.insert(assertion) }
        return outcome
    }

    /// Keeps a profile (schema 3's `saml_profiles`), replacing the device's previous one for the MVPD;
    /// saved with the other writes of the moment in one transaction.
    public func save(_ profile: StoredProfile) async throws {
        _ = try await perform("save a profile", .save(profile))
    }

    /// The device's profiles still valid by the database's clock.
    public func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        try await withConnection("read profiles") { connection in
            let rows = try await connection.query(
                """
                SELECT mvpd, profile, (extract(epoch FROM expires_at) * 1000)::bigint FROM saml_profiles
                WHERE service_provider = \(serviceProvider) AND device = \(device) AND expires_at > now() ORDER BY mvpd
                """, logger: self.logger)
            var result: [StoredProfile] = []
            for try await (mvpd, profile, expiry) in rows.decode((String, String, Int64).self) {
                result.append(
                    StoredProfile(
                        serviceProvider: serviceProvider, device: device, mvpd: mvpd, json: Array(profile.utf8),
                        notAfter: SAMLInstant(millisecondsSinceEpoch: expiry)))
            }
            return result
        }
    }

    /// Whether the database answers within the deadline (`SELECT 1`); throws `store.unavailable` otherwise.
    /// For readiness probes.
    public func checkHealth() async throws {
        try await withConnection("check the connection") { connection in
            let rows = try await connection.query("SELECT 1", logger: self.logger)
            for try await _ in rows {}
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
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7320162)", logger: self.logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(7320162)", logger: self.logger)
            return removed
        }
    }

    /// Runs `body` on one of the store's connections, as a job of its own.
    private func withConnection<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard case .value(let value) = try await perform(what, .job(body)), let result = value as? T else {
            throw SAMLError(.storeUnavailable, "expected PostgreSQL to \(what), found another answer: refused, not accepted")
        }
        return result
    }

    /// Queues an operation and waits for its answer within the configured deadline (the wait for a
    /// connection included); anything but a `SAMLError` becomes `store.unavailable`.
    private func perform(_ what: String, _ kind: StoreOperation.Kind) async throws -> StoreOperation.Answer {
        do {
            // Answered by a lane, or at the deadline by the lanes' sweep (queued or running).
            return try await StoreOperation(kind, deadline: .now + configuration.timeout).wait(submittingTo: lanes.queue)
        } catch {
            let failure = StoreLanes.storeError(error)
            logger.debug("state store failed", metadata: ["operation": "\(what)", "code": "\(failure.code)"])
            throw failure
        }
    }
}
