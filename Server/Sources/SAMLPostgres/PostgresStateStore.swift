import Foundation
import Logging
import PostgresNIO
import SAML
import Synchronization

/// A ``SAMLStateStore`` in PostgreSQL, shared by every instance of a service: outstanding requests and
/// used assertion IDs.
///
/// - Every operation is one atomic statement (consuming a request and recording the assertion are one
///   transaction that is rolled back unless both happen): two instances can never both accept.
/// - The schema is created and versioned by ``prepare()`` (a transaction under an advisory lock, so that
///   instances starting together do not race); `saml_schema_version` records the applied version.
/// - Expired rows are deleted in short batches by a background loop inside ``run()``; requests never
///   wait for it.
/// - A pool of connections (postgres-nio's `PostgresClient`); every operation has a deadline
///   (``Configuration/timeout``). When the database is unreachable, slow past the deadline or fails,
///   the operation throws ``SAMLError/Code/storeUnavailable`` (HTTP 503), so verification fails closed;
///   the pool reconnects by itself when the database is back.
///
/// Start ``run()`` in a long-running task (or as a swift-service-lifecycle service), then call
/// ``prepare()`` once before use.
public final class PostgresStateStore: SAMLStateStore, Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String?
        /// The deadline of one operation, connection wait included. Default 2 s.
        public var timeout: Duration = .seconds(2)
        /// The most connections in the pool. Default 10.
        public var maximumConnections = 10
        /// How often expired rows are deleted. Default 60 s.
        public var cleanupInterval: Duration = .seconds(60)
        /// TLS to the database. Default `.disable` (loopback or a private network; use `.require` across
        /// an untrusted one).
        public var tls: PostgresClient.Configuration.TLS = .disable

        public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
        }

        /// `postgres://user[:password]@host[:port]/database` (also `postgresql://`).
        public init(url: String) throws {
            guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql",
                let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
            else {
                throw SAMLError(.configurationInvalid, "expected postgres://user[:password]@host[:port]/database, found another form")
            }
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            self.init(
                host: host, port: components.port ?? 5432, username: user, password: components.password,
                database: database.isEmpty ? nil : database)
        }
    }

    /// The schema version this code writes and reads.
    public static let schemaVersion = 1

    public let configuration: Configuration
    private let client: PostgresClient
    private let logger: Logger

    public init(
        _ configuration: Configuration, logger: Logger = Logger(label: "swift-saml.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.logger = logger
        var clientConfiguration = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: configuration.tls)
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectTimeout = configuration.timeout
        clientConfiguration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
    }

    /// Runs the connection pool and the clean-up of expired rows until the task is cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.configuration.cleanupInterval)
                    guard !Task.isCancelled else { return }
                    do {
                        _ = try await self.removeExpired(now: .now())
                    } catch {
                        self.logger.debug(
                            "expired rows not removed this round", metadata: ["error": "\(String(reflecting: type(of: error)))"])
                    }
                }
            }
        }
    }

    /// Creates or upgrades the schema (idempotent; safe when several instances start at once).
    public func prepare() async throws {
        try await bounded("prepare the schema") {
            try await self.client.withTransaction(logger: self.logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(7320161)", logger: self.logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS saml_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                    logger: self.logger)
                var current = 0
                for try await version in try await connection.query(
                    "SELECT coalesce(max(version), 0) FROM saml_schema_version", logger: self.logger
                )
                .decode(Int.self) {
                    current = version
                }
                guard current <= Self.schemaVersion else {
                    throw SAMLError(
                        .configurationInvalid,
                        "expected schema version at most \(Self.schemaVersion), found \(current) (a newer release wrote it)")
                }
                if current < 1 {
                    try await connection.query(
                        "CREATE TABLE saml_outstanding_requests (id text PRIMARY KEY, expires_at bigint NOT NULL)", logger: self.logger)
                    try await connection.query(
                        "CREATE INDEX saml_outstanding_requests_expiry ON saml_outstanding_requests (expires_at)", logger: self.logger)
                    try await connection.query(
                        "CREATE TABLE saml_used_assertions (id text PRIMARY KEY, expires_at bigint NOT NULL)", logger: self.logger)
                    try await connection.query(
                        "CREATE INDEX saml_used_assertions_expiry ON saml_used_assertions (expires_at)", logger: self.logger)
                    try await connection.query("INSERT INTO saml_schema_version (version) VALUES (1)", logger: self.logger)
                }
            }
        }
    }

    public func recordOutstandingRequest(_ requestID: String, expiry: SAMLInstant) async throws {
        let expires = expiry.millisecondsSinceEpoch
        _ = try await bounded("record an outstanding request") {
            try await self.client.query(
                """
                INSERT INTO saml_outstanding_requests (id, expires_at) VALUES (\(requestID), \(expires))
                ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at
                """, logger: self.logger)
        }
    }

    public func insertIfAbsent(_ id: String, expiry: SAMLInstant, now: SAMLInstant) async throws -> Bool {
        let expires = expiry.millisecondsSinceEpoch
        let current = now.millisecondsSinceEpoch
        return try await bounded("record an assertion ID") {
            // Inserted, or an expired row with the same ID replaced: one row back. A live one: none.
            let rows = try await self.client.query(
                """
                INSERT INTO saml_used_assertions (id, expires_at) VALUES (\(id), \(expires))
                ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE saml_used_assertions.expires_at <= \(current)
                RETURNING id
                """, logger: self.logger)
            var inserted = false
            for try await _ in rows.decode(String.self) { inserted = true }
            return inserted
        }
    }

    public func consume(request requestID: String, assertion assertionID: String, expiry: SAMLInstant, now: SAMLInstant) async throws
        -> StateStoreOutcome
    {
        let expires = expiry.millisecondsSinceEpoch
        let current = now.millisecondsSinceEpoch
        return try await bounded("consume an outstanding request") {
            struct Rollback: Error { var outcome: StateStoreOutcome }
            do {
                return try await self.client.withTransaction(logger: self.logger) { connection -> StateStoreOutcome in
                    let rows = try await connection.query(
                        """
                        WITH consumed AS (
                            DELETE FROM saml_outstanding_requests WHERE id = \(requestID) AND expires_at > \(current) RETURNING id
                        ), used AS (
                            INSERT INTO saml_used_assertions (id, expires_at) SELECT \(assertionID), \(expires) FROM consumed
                            ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE saml_used_assertions.expires_at <= \(current)
                            RETURNING id
                        )
                        SELECT (SELECT count(*) FROM consumed), (SELECT count(*) FROM used)
                        """, logger: self.logger)
                    var consumed: Int64 = 0
                    var used: Int64 = 0
                    for try await (c, u) in rows.decode((Int64, Int64).self) {
                        consumed = c
                        used = u
                    }
                    if consumed == 1, used == 1 { return .accepted }
                    // Nothing may stay consumed unless the assertion was recorded: roll back, then say why.
                    let replayed = try await Self.isUsed(assertionID, now: current, connection: connection, logger: self.logger)
                    throw Rollback(outcome: replayed ? .replayed : .requestNotOutstanding)
                }
            } catch let rollback as Rollback {
                return rollback.outcome
            } catch let error as PostgresTransactionError {
                // The closure's Rollback, rolled back cleanly: its outcome. Anything else fails closed.
                if let rollback = error.closureError as? Rollback, error.rollbackError == nil { return rollback.outcome }
                throw error
            }
        }
    }

    private static func isUsed(_ id: String, now: Int64, connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT id FROM saml_used_assertions WHERE id = \(id) AND expires_at > \(now)", logger: logger)
        var found = false
        for try await _ in rows.decode(String.self) { found = true }
        return found
    }

    /// Whether the database answers within the deadline (`SELECT 1`); throws `store.unavailable` otherwise.
    /// For readiness probes.
    public func checkHealth() async throws {
        try await bounded("check the connection") {
            let rows = try await self.client.query("SELECT 1", logger: self.logger)
            for try await _ in rows {}
        }
    }

    /// How many rows each table holds (expired ones included until the clean-up removes them).
    public func counts() async throws -> (outstandingRequests: Int, usedAssertions: Int) {
        try await bounded("count rows") {
            let rows = try await self.client.query(
                "SELECT (SELECT count(*) FROM saml_outstanding_requests), (SELECT count(*) FROM saml_used_assertions)", logger: self.logger)
            var result = (0, 0)
            for try await (a, b) in rows.decode((Int64, Int64).self) { result = (Int(a), Int(b)) }
            return result
        }
    }

    /// Deletes rows that expired before `now`, in batches of at most 10,000; returns how many.
    @discardableResult
    public func removeExpired(now: SAMLInstant) async throws -> Int {
        let current = now.millisecondsSinceEpoch
        var removed = 0
        for table in ["saml_outstanding_requests", "saml_used_assertions"] {
            while true {
                let batch: Int = try await bounded("remove expired rows") {
                    let rows = try await self.client.query(
                        PostgresQuery(
                            unsafeSQL: """
                                WITH gone AS (DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE expires_at <= $1 LIMIT 10000) RETURNING 1)
                                SELECT count(*) FROM gone
                                """, binds: try Self.binds(current)), logger: self.logger)
                    var count: Int64 = 0
                    for try await value in rows.decode(Int64.self) { count = value }
                    return Int(count)
                }
                removed += batch
                if batch < 10_000 { break }
            }
        }
        return removed
    }

    private static func binds(_ value: Int64) throws -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(value)
        return binds
    }

    /// Runs `body` with the configured deadline; anything but a `SAMLError` becomes `store.unavailable`.
    private func bounded<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = configuration.timeout
        do {
            // A race between the operation and the deadline that returns as soon as either ends: a query
            // stuck on a dead connection is abandoned (and cancelled), not waited for.
            return try await Deadline.race(timeout, body) {
                SAMLError(.storeUnavailable, "expected PostgreSQL to \(what) within \(timeout), found no answer: refused, not accepted")
            }
        } catch let error as SAMLError {
            logger.debug("state store failed", metadata: ["code": "\(error.code)"])
            throw error
        } catch {
            let kind = (error as? PSQLError).map { "\($0.code)" } ?? String(reflecting: type(of: error))
            logger.debug("state store failed", metadata: ["error": "\(kind)"])
            throw SAMLError(.storeUnavailable, "expected PostgreSQL to \(what), found it failing (\(kind)): refused, not accepted")
        }
    }
}

/// Runs an operation against a deadline.
enum Deadline {
    static func race<T: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T, onTimeout: @escaping @Sendable () -> Error
    ) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.state.withLock { $0.0 = continuation }
                let work = Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    race.finish(.failure(onTimeout()))
                }
                race.state.withLock { $0.1 = [work, timer] }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// The state of one race: the continuation, resumed once, and the two tasks to cancel then.
private final class Race<T: Sendable>: Sendable {
    let state = Mutex<(CheckedContinuation<T, Error>?, [Task<Void, Never>])>((nil, []))

    func finish(_ result: Result<T, Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, Error>?, [Task<Void, Never>]) in
            let taken = state.0
            state.0 = nil
            return (taken, state.1)
        }
        guard let continuation else { return }
        continuation.resume(with: result)
        tasks.forEach { $0.cancel() }
    }
}
