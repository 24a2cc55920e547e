import Logging
import PostgresNIO
import SAML

/// The store's schema: created, versioned and upgraded by ``PostgresStateStore/prepare()``.
extension PostgresStateStore {
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
            if current < 4 {
                // The transaction that wrote each profile, which the profile directory follows
                // (ProfileDirectory). The column and its default are additive and instant: rows written
                // before keep NULL, which only the directory's load reads; the default fills new rows,
                // and the group commit sets it when it replaces a profile. The index is built under this
                // transaction's lock and deadline: on a table of more than a few hundred thousand
                // profiles, create both beforehand (docs/service.md, "Several instances on PostgreSQL").
                try await connection.query("ALTER TABLE saml_profiles ADD COLUMN IF NOT EXISTS saved_xid bigint", logger: self.logger)
                try await connection.query(
                    "ALTER TABLE saml_profiles ALTER COLUMN saved_xid SET DEFAULT (pg_current_xact_id()::text::bigint)",
                    logger: self.logger)
                try await connection.query(
                    "CREATE INDEX IF NOT EXISTS saml_profiles_saved ON saml_profiles (saved_xid)", logger: self.logger)
                try await connection.query(
                    "INSERT INTO saml_schema_migrations (version, minimum_reader) VALUES (4, 2)", logger: self.logger)
            }
            // The group commit's procedure (GroupCommit): its statement and its COMMIT in one call, so that
            // a batch is one round trip. Additive: schema-4 code runs beside it. Created again when it is
            // missing from a schema that records version 5 (a dump restored without routines, another
            // search_path), since every batch needs it; never replaced: a change to it takes a new name.
            var procedure = false
            for try await found in try await connection.query(
                "SELECT to_regproc('swift_saml_group_commit_v5') IS NOT NULL", logger: self.logger
            ).decode(Bool.self) {
                procedure = found
            }
            if !procedure {
                try await connection.query(PostgresQuery(unsafeSQL: GroupCommit.procedureSQL), logger: self.logger)
            }
            if current < 5 {
                try await connection.query(
                    "INSERT INTO saml_schema_migrations (version, minimum_reader) VALUES (5, 2)", logger: self.logger)
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
}
