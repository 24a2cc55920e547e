import AppleSSO
import Foundation
import Logging
import NIOSSL
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
///   the pool reconnects by itself when the database is back. The same deadline is every connection's
///   `statement_timeout`: postgres-nio does not cancel a statement whose task is cancelled (its
///   connection stays busy until the server answers), so the server ends a statement the client gave up
///   on, and the connection returns to the pool.
/// - TLS as libpq's `sslmode` (``Configuration/SSLMode``; `verify-full` with `sslrootcert` across any
///   network you do not control).
///
/// Start ``run()`` in a long-running task (or as a swift-service-lifecycle service), then call
/// ``prepare()`` (or ``prepare(retryingFor:)`` at start-up) once before use.
public final class PostgresStateStore: SAMLStateStore, ProfileStore, Sendable {
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
        /// TLS to the database, as libpq's `sslmode`. Default ``SSLMode/prefer`` (libpq's default).
        public var sslMode: SSLMode = .prefer
        /// A PEM file of the certificate authorities that may sign the server's certificate (libpq's
        /// `sslrootcert`), for ``SSLMode/verifyCA`` and ``SSLMode/verifyFull``; nil: the system's trust roots.
        public var sslRootCertificatePath: String?

        /// libpq's `sslmode` values that postgres-nio can honour (`allow`, plaintext first, cannot be).
        public enum SSLMode: String, Sendable, CaseIterable {
            /// Plaintext only.
            case disable
            /// TLS when the server offers it, else plaintext; the certificate is not checked (protects
            /// against a passive eavesdropper only).
            case prefer
            /// TLS or no connection; the certificate is not checked (as libpq, unless a root certificate is
            /// given: then as ``verifyCA``).
            case require
            /// TLS, the certificate signed by a trusted authority; any host name.
            case verifyCA = "verify-ca"
            /// TLS, the certificate signed by a trusted authority and naming the host (DNS name, or IP
            /// address for an IP host). Use this across any network you do not control.
            case verifyFull = "verify-full"
        }

        public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
        }

        /// `postgres://user[:password]@host[:port]/database[?sslmode=...&sslrootcert=/path/ca.pem]` (also
        /// `postgresql://`). `sslmode` is one of libpq's `disable`, `prefer` (default), `require`,
        /// `verify-ca`, `verify-full`; `sslrootcert` (a readable PEM file, or `system`) needs `require`
        /// or stronger. Any other parameter, a repeated one or another value is a configuration error,
        /// never ignored. Messages never quote the URL.
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
            var seen: Set<String> = []
            var rootCertificate: String?
            var mode: SSLMode?
            for item in components.queryItems ?? [] {
                guard seen.insert(item.name).inserted else {
                    throw SAMLError(.configurationInvalid, "expected each URL parameter of the store at most once, found one repeated")
                }
                switch item.name {
                case "sslmode":
                    guard let value = item.value.flatMap(SSLMode.init(rawValue:)) else {
                        throw SAMLError(
                            .configurationInvalid,
                            "expected sslmode disable, prefer, require, verify-ca or verify-full in the store URL, found another value")
                    }
                    mode = value
                case "sslrootcert":
                    guard let value = item.value, !value.isEmpty else {
                        throw SAMLError(
                            .configurationInvalid, "expected a file path or system for sslrootcert in the store URL, found none")
                    }
                    rootCertificate = value
                default:
                    throw SAMLError(
                        .configurationInvalid,
                        "expected only sslmode and sslrootcert as parameters of the store URL, found another (not ignored: it could weaken the connection)"
                    )
                }
            }
            sslMode = mode ?? .prefer
            if let rootCertificate {
                guard sslMode != .disable && sslMode != .prefer else {
                    throw SAMLError(
                        .configurationInvalid,
                        "expected sslmode require, verify-ca or verify-full with sslrootcert, found \(sslMode.rawValue) (the certificate would not be checked)"
                    )
                }
                // libpq: require with a root certificate verifies the chain, as verify-ca.
                if sslMode == .require { sslMode = .verifyCA }
                if rootCertificate != "system" {
                    guard let certificates = try? NIOSSLCertificate.fromPEMFile(rootCertificate), !certificates.isEmpty else {
                        throw SAMLError(
                            .configurationInvalid,
                            "expected a readable PEM file of CA certificates for sslrootcert, found none at that path")
                    }
                    sslRootCertificatePath = rootCertificate
                }
            }
        }

        /// postgres-nio's TLS setting for ``sslMode`` (NIOSSL client configuration: TLS 1.2 or later).
        package var clientTLS: PostgresClient.Configuration.TLS {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let sslRootCertificatePath { tls.trustRoots = .file(sslRootCertificatePath) }
            switch sslMode {
            case .disable:
                return .disable
            case .prefer:
                tls.certificateVerification = .none
                return .prefer(tls)
            case .require:
                tls.certificateVerification = .none
                return .require(tls)
            case .verifyCA:
                tls.certificateVerification = .noHostnameVerification
                return .require(tls)
            case .verifyFull:
                tls.certificateVerification = .fullVerification
                return .require(tls)
            }
        }

        /// The server-side `statement_timeout` (ms) for the deadline: at least 1 (0 would mean none).
        package var statementTimeoutMilliseconds: Int64 {
            let (seconds, attoseconds) = timeout.components
            return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
    }

    /// The schema version this code writes and reads, and the oldest it still runs beside.
    public static let schemaVersion = 3

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
            password: configuration.password, database: configuration.database, tls: configuration.clientTLS)
        // The deadline on the server too: postgres-nio never cancels a running statement (a query whose
        // task is cancelled still holds its connection until the server answers), so a statement that
        // outlives the deadline is ended by the server, and its connection returns to the pool.
        clientConfiguration.options.additionalStartupParameters = [
            ("statement_timeout", "\(configuration.statementTimeoutMilliseconds)"),
            ("idle_in_transaction_session_timeout", "\(configuration.statementTimeoutMilliseconds * 2)"),
        ]
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
        try await bounded("prepare the schema") {
            try await self.client.withTransaction(logger: self.logger) { connection in
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
            }
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

    /// One statement, committed on its own: the row is inserted only if the request's expiry is after
    /// the database's clock and neither the request nor the assertion is recorded (an expired row not
    /// yet removed still counts: refused, never accepted twice). A refusal then reads why.
    public func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        let requestExpiry = request?.expiry.millisecondsSinceEpoch
        let rowExpiry = max(assertion.expiry.millisecondsSinceEpoch, requestExpiry ?? 0)
        let requestID = request?.id
        return try await bounded("record an accepted response") {
            let rows = try await self.client.query(
                """
                INSERT INTO saml_consumed (issuer, assertion_id, request_id, expires_at)
                SELECT \(assertion.issuer), \(assertion.id), \(requestID), to_timestamp(\(rowExpiry)::double precision / 1000)
                WHERE \(requestExpiry)::bigint IS NULL OR to_timestamp(\(requestExpiry)::double precision / 1000) > now()
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: self.logger)
            for try await _ in rows { return StateStoreOutcome.accepted }
            let reasons = try await self.client.query(
                """
                SELECT EXISTS (SELECT 1 FROM saml_consumed WHERE issuer = \(assertion.issuer) AND assertion_id = \(assertion.id)),
                       \(requestExpiry)::bigint IS NOT NULL AND to_timestamp(\(requestExpiry)::double precision / 1000) <= now()
                """, logger: self.logger)
            for try await (used, expired) in reasons.decode((Bool, Bool).self) {
                if used { return .replayed }
                if expired { return .requestExpired }
            }
            return .requestAnswered
        }
    }

    /// Keeps a profile (schema 3's `saml_profiles`), replacing the device's previous one for the MVPD.
    public func save(_ profile: StoredProfile) async throws {
        let json = String(decoding: profile.json, as: UTF8.self)
        let expiry = profile.notAfter.millisecondsSinceEpoch
        try await bounded("save a profile") {
            let rows = try await self.client.query(
                """
                INSERT INTO saml_profiles (service_provider, device, mvpd, profile, expires_at)
                VALUES (\(profile.serviceProvider), \(profile.device), \(profile.mvpd), \(json), to_timestamp(\(expiry)::double precision / 1000))
                ON CONFLICT (service_provider, device, mvpd) DO UPDATE SET profile = EXCLUDED.profile, expires_at = EXCLUDED.expires_at
                """, logger: self.logger)
            for try await _ in rows {}
        }
    }

    /// The device's profiles still valid by the database's clock.
    public func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        try await bounded("read profiles") {
            let rows = try await self.client.query(
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
        try await bounded("check the connection") {
            let rows = try await self.client.query("SELECT 1", logger: self.logger)
            for try await _ in rows {}
        }
    }

    /// How many accepted responses are recorded (expired ones included until the clean-up removes them).
    public func count() async throws -> Int {
        try await bounded("count rows") {
            let rows = try await self.client.query("SELECT count(*) FROM saml_consumed", logger: self.logger)
            var result = 0
            for try await value in rows.decode(Int64.self) { result = Int(value) }
            return result
        }
    }

    /// Runs one SQL statement of the caller's under the store's deadline; returns the first column of
    /// the first row as text, if any. For tests (a slow statement, the connection's TLS state).
    package func firstValue(unsafeSQL sql: String) async throws -> String? {
        try await bounded("run a statement") {
            var result: String?
            for try await value in try await self.client.query(PostgresQuery(unsafeSQL: sql), logger: self.logger).decode(String?.self)
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
        try await bounded("remove expired rows") {
            try await self.client.withConnection { connection in
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
