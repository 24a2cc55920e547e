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
            try await Self.ensureSchema(on: connection, replayTable: true, logger: self.logger)
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

    /// What every login needs, created where it is missing, in the caller's transaction (idempotent;
    /// nothing is replaced): the group commit's procedure (GroupCommit; never replaced: a change to it
    /// takes a new name), `saml_profiles` with its `saved_xid` column, default, indexes and trigger, the
    /// removals table the profile directory follows (schema 6), and, when `replayTable`, `saml_consumed`
    /// and its index.
    ///
    /// **Drift.** A schema that records its version but lost a part (a DBA's clean-up, `pg_restore
    /// --clean`, a dump restored without routines, a down-migration) is repaired here: by ``prepare()`` at
    /// start-up, and at run time by the lanes when a batch fails for an undefined function, table or column
    /// (then the batch is retried once) and by ``checkHealth()``, at most once per ``repairInterval``. At run
    /// time `saml_consumed` is never recreated (`replayTable` false): an empty replay table would accept
    /// again the assertions the lost one recorded, so logins fail closed and readiness names the table
    /// until an operator restores it or restarts an instance after `maximumAgeSeconds` +
    /// `clockSkewSeconds` (docs/service.md, "Failures"). A column dropped from `saml_consumed`, or a column
    /// of another type, is not repaired either: readiness names it.
    static func ensureSchema(on connection: PostgresConnection, replayTable: Bool, logger: Logger) async throws {
        if replayTable {
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS saml_consumed (
                    issuer text NOT NULL, assertion_id text NOT NULL, request_id text UNIQUE,
                    expires_at timestamptz NOT NULL, PRIMARY KEY (issuer, assertion_id))
                """, logger: logger)
            try await connection.query("CREATE INDEX IF NOT EXISTS saml_consumed_expiry ON saml_consumed (expires_at)", logger: logger)
        }
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS saml_profiles (
                service_provider text NOT NULL, device text NOT NULL, mvpd text NOT NULL, profile text NOT NULL,
                expires_at timestamptz NOT NULL, PRIMARY KEY (service_provider, device, mvpd))
            """, logger: logger)
        try await connection.query("CREATE INDEX IF NOT EXISTS saml_profiles_expiry ON saml_profiles (expires_at)", logger: logger)
        // The transaction that wrote each profile, which the profile directory follows (ProfileDirectory).
        // The column and its default are instant: rows written before keep NULL, which only the directory's
        // load reads. The index is built under this transaction's lock and deadline: on a table of more
        // than a few hundred thousand profiles, create it beforehand (docs/service.md).
        try await connection.query("ALTER TABLE saml_profiles ADD COLUMN IF NOT EXISTS saved_xid bigint", logger: logger)
        var hasDefault = false
        for try await found in try await connection.query(
            "SELECT atthasdef FROM pg_attribute WHERE attrelid = 'saml_profiles'::regclass AND attname = 'saved_xid'", logger: logger
        ).decode(Bool.self) {
            hasDefault = found
        }
        if !hasDefault {
            try await connection.query(
                "ALTER TABLE saml_profiles ALTER COLUMN saved_xid SET DEFAULT (pg_current_xact_id()::text::bigint)", logger: logger)
        }
        try await connection.query("CREATE INDEX IF NOT EXISTS saml_profiles_saved ON saml_profiles (saved_xid)", logger: logger)
        // Schema 6: whoever changes a profile (another instance, an operator, a retention job), the
        // directory sees it. An update gets its transaction as `saved_xid`; the deletion of a live profile
        // leaves a row in `saml_profile_removals` (a statement trigger: one insert per statement, and
        // none for the expired profiles the clean-up removes), kept an hour.
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS saml_profile_removals (
                service_provider text NOT NULL, device text NOT NULL, mvpd text NOT NULL,
                removed_xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint), removed_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        try await connection.query(
            "CREATE INDEX IF NOT EXISTS saml_profile_removals_xid ON saml_profile_removals (removed_xid)", logger: logger)
        try await connection.query(
            "CREATE INDEX IF NOT EXISTS saml_profile_removals_at ON saml_profile_removals (removed_at)", logger: logger)
        for (name, sql) in [("swift_saml_profile_touched_v6", Self.touchedSQL), ("swift_saml_profile_removed_v6", Self.removedSQL)] {
            var exists = false
            for try await found in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT to_regproc('\(name)') IS NOT NULL"), logger: logger
            ).decode(Bool.self) {
                exists = found
            }
            if !exists { try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
        }
        for (trigger, sql) in [
            (
                "swift_saml_profile_touched",
                "CREATE TRIGGER swift_saml_profile_touched BEFORE UPDATE ON saml_profiles FOR EACH ROW EXECUTE FUNCTION swift_saml_profile_touched_v6()"
            ),
            (
                "swift_saml_profile_removed",
                "CREATE TRIGGER swift_saml_profile_removed AFTER DELETE ON saml_profiles REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION swift_saml_profile_removed_v6()"
            ),
        ] {
            var exists = false
            for try await found in try await connection.query(
                PostgresQuery(
                    unsafeSQL:
                        "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'saml_profiles'::regclass AND tgname = '\(trigger)' AND NOT tgisinternal)"
                ), logger: logger
            ).decode(Bool.self) {
                exists = found
            }
            if !exists { try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
        }
        var procedure = false
        for try await found in try await connection.query(
            "SELECT to_regproc('swift_saml_group_commit_v5') IS NOT NULL", logger: logger
        ).decode(Bool.self) {
            procedure = found
        }
        if !procedure {
            try await connection.query(PostgresQuery(unsafeSQL: GroupCommit.procedureSQL), logger: logger)
        }
    }

    /// ``ensureSchema(on:replayTable:logger:)`` at run time, in its own transaction under the schema's
    /// advisory lock (instances repairing at once take turns), never recreating `saml_consumed`.
    static func repairSchema(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("BEGIN", logger: logger)
        try await connection.query("SELECT pg_advisory_xact_lock(7320161)", logger: logger)
        try await ensureSchema(on: connection, replayTable: false, logger: logger)
        try await connection.query("COMMIT", logger: logger)
        logger.notice("schema repaired (what a login needs and could be recreated: procedure, profile tables, triggers)")
    }

    static let touchedSQL = """
        CREATE OR REPLACE FUNCTION swift_saml_profile_touched_v6() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN
            NEW.saved_xid := pg_current_xact_id()::text::bigint;
            RETURN NEW;
        END
        $f$
        """

    static let removedSQL = """
        CREATE OR REPLACE FUNCTION swift_saml_profile_removed_v6() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN
            INSERT INTO saml_profile_removals (service_provider, device, mvpd)
                SELECT service_provider, device, mvpd FROM gone WHERE expires_at > now();
            RETURN NULL;
        END
        $f$
        """

    /// What a login needs that the schema lacks now, named (empty: nothing), from the catalog: the
    /// procedure, the tables and their columns. One statement, for readiness.
    static let missingSQL = """
        SELECT concat_ws(', ',
            CASE WHEN to_regproc('swift_saml_group_commit_v5') IS NULL THEN 'procedure swift_saml_group_commit_v5' END,
            (SELECT string_agg(t, ', ') FROM unnest(ARRAY['saml_consumed', 'saml_profiles', 'saml_profile_removals']) t
                WHERE to_regclass(t) IS NULL),
            (SELECT string_agg('trigger ' || g, ', ') FROM unnest(ARRAY['swift_saml_profile_touched', 'swift_saml_profile_removed']) g
                WHERE to_regclass('saml_profiles') IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgrelid = to_regclass('saml_profiles') AND tgname = g AND NOT tgisinternal)),
            (SELECT string_agg('function ' || f, ', ') FROM unnest(ARRAY['swift_saml_profile_touched_v6', 'swift_saml_profile_removed_v6']) f
                WHERE to_regproc(f) IS NULL),
            (SELECT string_agg(n.t || '.' || n.c, ', ') FROM (VALUES
                ('saml_consumed', 'issuer'), ('saml_consumed', 'assertion_id'), ('saml_consumed', 'request_id'),
                ('saml_consumed', 'expires_at'), ('saml_profiles', 'service_provider'), ('saml_profiles', 'device'),
                ('saml_profiles', 'mvpd'), ('saml_profiles', 'profile'), ('saml_profiles', 'expires_at'),
                ('saml_profiles', 'saved_xid')) AS n(t, c)
                WHERE to_regclass(n.t) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = to_regclass(n.t) AND a.attname = n.c AND a.attnum > 0 AND NOT a.attisdropped)))
        """

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
