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
            // Versions 2 (saml_consumed), 3 (saml_profiles), 4 (its saved_xid), 5 (the group commit's
            // procedure) and 6 (the directory's removals and triggers) are each additive (the code of any
            // of them runs beside the others), and all created by ensureSchema, which also repairs
            // whatever part of them went missing.
            // A DDL statement waits for its table's lock behind any reader (a pg_dump): bounded, and then
            // retried as a store that does not answer yet.
            try await connection.query("SET LOCAL lock_timeout = '2s'", logger: self.logger)
            // A schema that recorded saml_consumed and lost it is not given an empty one: that would accept
            // again the assertions the lost table held (docs/service.md, "Failures").
            if current >= 2, try await Self.parts(on: connection, logger: self.logger).missing.contains("table saml_consumed") {
                throw SAMLError(
                    .configurationInvalid,
                    "expected saml_consumed in a schema that recorded version \(current), found it missing: restore it, or create it empty once maximumAgeSeconds + 2 x clockSkewSeconds have passed since its last acceptance (docs/service.md, \"Failures\")"
                )
            }
            try await Self.ensureSchema(on: connection, replayTable: current < 2, logger: self.logger)
            if current < Self.schemaVersion {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "INSERT INTO saml_schema_migrations (version, minimum_reader) SELECT v, 2 FROM generate_series(\(max(2, current + 1)), \(Self.schemaVersion)) v"
                    ), logger: self.logger)
                self.logger.notice("schema migrated", metadata: ["from": "\(current)", "to": "\(Self.schemaVersion)"])
            }
            try await connection.query("COMMIT", logger: self.logger)
        }
        prepared.store(true, ordering: .releasing)
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
