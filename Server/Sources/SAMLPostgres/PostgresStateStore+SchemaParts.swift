import Logging
import PostgresNIO
import SAML

/// The parts of the schema every login needs, found in the catalog, created where missing, and named
/// for readiness when they cannot be.
///
/// **Drift.** A schema that records its version but lost a part (a DBA's clean-up, `pg_restore --clean`,
/// a dump restored without routines, a trigger disabled, a down-migration) is repaired: by
/// ``prepare()`` at start-up, and while running by the lanes when a batch fails for an undefined
/// function, table or column (the batch is then retried once) and by ``checkHealth()``, at most once per
/// ``StoreLanes/repairInterval`` per instance. Only what is missing is created (DDL takes its table's lock
/// even when there is nothing to do, and needs its owner's rights), under `lock_timeout`. `saml_consumed`
/// is never recreated once a schema recorded it (`replayTable` false): an empty replay table would accept
/// again the assertions the lost one held, so logins fail closed, readiness names the table, and
/// ``prepare()`` refuses to start until an operator restores it (docs/service.md, "Failures"). A column
/// dropped from `saml_consumed`, or a column of another type, is not repaired either: readiness names it.
extension PostgresStateStore {
    /// What the catalog says of each part: the names of those missing (as readiness reports them).
    struct Parts {
        var missing: Set<String>
        /// Every missing part, in a stable order, for a message.
        var description: String { missing.sorted().joined(separator: ", ") }
    }

    /// The parts and how each is found; the order of ``creation`` creates each after what it needs.
    static let partQueries: [(name: String, present: String)] =
        [
            ("table saml_consumed", "to_regclass('saml_consumed') IS NOT NULL"),
            ("index saml_consumed_expiry", "to_regclass('saml_consumed_expiry') IS NOT NULL"),
            ("table saml_profiles", "to_regclass('saml_profiles') IS NOT NULL"),
            ("index saml_profiles_expiry", "to_regclass('saml_profiles_expiry') IS NOT NULL"),
            ("column saml_profiles.saved_xid", column("saml_profiles", "saved_xid")),
            (
                "default of saml_profiles.saved_xid",
                // Missing only once the column is there (a pass creates the column, the next its default).
                "NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('saml_profiles') AND attname = 'saved_xid' AND NOT attisdropped) OR EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('saml_profiles') AND attname = 'saved_xid' AND atthasdef)"
            ),
            ("index saml_profiles_saved", "to_regclass('saml_profiles_saved') IS NOT NULL"),
            ("table saml_profile_removals", "to_regclass('saml_profile_removals') IS NOT NULL"),
            ("index saml_profile_removals_xid", "to_regclass('saml_profile_removals_xid') IS NOT NULL"),
            ("index saml_profile_removals_at", "to_regclass('saml_profile_removals_at') IS NOT NULL"),
            ("function swift_saml_profile_touched_v6", "to_regproc('swift_saml_profile_touched_v6') IS NOT NULL"),
            ("function swift_saml_profile_removed_v6", "to_regproc('swift_saml_profile_removed_v6') IS NOT NULL"),
            ("function swift_saml_profile_truncated_v6", "to_regproc('swift_saml_profile_truncated_v6') IS NOT NULL"),
            ("trigger swift_saml_profile_touched", trigger("swift_saml_profile_touched")),
            ("trigger swift_saml_profile_removed", trigger("swift_saml_profile_removed")),
            ("trigger swift_saml_profile_truncated", trigger("swift_saml_profile_truncated")),
            ("procedure swift_saml_group_commit_v5", "to_regproc('swift_saml_group_commit_v5') IS NOT NULL"),
        ] + requiredColumns.map { ("column \($0.table).\($0.column)", column($0.table, $0.column)) }

    /// The columns a login reads and writes, which drift may drop (reported; only `saved_xid` is added back).
    static let requiredColumns: [(table: String, column: String)] = [
        ("saml_consumed", "issuer"), ("saml_consumed", "assertion_id"), ("saml_consumed", "request_id"), ("saml_consumed", "expires_at"),
        ("saml_profiles", "service_provider"), ("saml_profiles", "device"), ("saml_profiles", "mvpd"), ("saml_profiles", "profile"),
        ("saml_profiles", "expires_at"),
    ]

    private static func column(_ table: String, _ column: String) -> String {
        "to_regclass('\(table)') IS NULL OR EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('\(table)') AND attname = '\(column)' AND attnum > 0 AND NOT attisdropped)"
    }

    /// A trigger on `saml_profiles`, enabled always (`ENABLE ALWAYS`: it fires under
    /// `session_replication_role = replica` too, as a restore with `--disable-triggers` or a logical
    /// replication apply sets it).
    private static func trigger(_ name: String) -> String {
        "to_regclass('saml_profiles') IS NULL OR EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass('saml_profiles') AND tgname = '\(name)' AND NOT tgisinternal AND tgenabled = 'A')"
    }

    /// The one statement that finds which parts are missing.
    static let partsSQL =
        "SELECT array_remove(ARRAY[" + partQueries.map { "CASE WHEN \($0.present) THEN NULL ELSE '\($0.name)' END" }.joined(separator: ", ")
        + "]::text[], NULL)"

    static func parts(on connection: PostgresConnection, logger: Logger) async throws -> Parts {
        var missing: Set<String> = []
        for try await names in try await connection.query(PostgresQuery(unsafeSQL: partsSQL), logger: logger).decode([String].self) {
            missing = Set(names)
        }
        return Parts(missing: missing)
    }

    /// Creates what is missing (``Parts``), in the caller's transaction; `saml_consumed` only when
    /// `replayTable`. Returns what it created.
    @discardableResult
    static func ensureSchema(on connection: PostgresConnection, replayTable: Bool, logger: Logger) async throws -> [String] {
        var created: [String] = []
        // Three passes at most: a table created in the first has its column found missing in the second,
        // and the column's default in the third.
        for _ in 0..<3 {
            let missing = try await parts(on: connection, logger: logger).missing
            var createdNow = false
            for (part, statements) in creation where missing.contains(part) {
                if part == "table saml_consumed" && !replayTable { continue }
                for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                created.append(part)
                createdNow = true
            }
            if !createdNow { break }
        }
        return created
    }

    /// Each part's statements. A trigger part creates its trigger only when it is absent (ensureSchema
    /// enables one that is there but disabled).
    static let creation: [(part: String, statements: [String])] = [
        (
            "table saml_consumed",
            [
                """
                CREATE TABLE IF NOT EXISTS saml_consumed (
                    issuer text NOT NULL, assertion_id text NOT NULL, request_id text UNIQUE,
                    expires_at timestamptz NOT NULL, PRIMARY KEY (issuer, assertion_id))
                """
            ]
        ),
        ("index saml_consumed_expiry", ["CREATE INDEX IF NOT EXISTS saml_consumed_expiry ON saml_consumed (expires_at)"]),
        (
            "table saml_profiles",
            [
                """
                CREATE TABLE IF NOT EXISTS saml_profiles (
                    service_provider text NOT NULL, device text NOT NULL, mvpd text NOT NULL, profile text NOT NULL,
                    expires_at timestamptz NOT NULL, saved_xid bigint DEFAULT (pg_current_xact_id()::text::bigint),
                    PRIMARY KEY (service_provider, device, mvpd))
                """
            ]
        ),
        ("index saml_profiles_expiry", ["CREATE INDEX IF NOT EXISTS saml_profiles_expiry ON saml_profiles (expires_at)"]),
        // The transaction that wrote each profile, which the profile directory follows. Instant: rows
        // written before keep NULL, which only the directory's load reads. On a table of more than a few
        // hundred thousand profiles, create the index beforehand (docs/service.md).
        ("column saml_profiles.saved_xid", ["ALTER TABLE saml_profiles ADD COLUMN IF NOT EXISTS saved_xid bigint"]),
        (
            "default of saml_profiles.saved_xid",
            ["ALTER TABLE saml_profiles ALTER COLUMN saved_xid SET DEFAULT (pg_current_xact_id()::text::bigint)"]
        ),
        ("index saml_profiles_saved", ["CREATE INDEX IF NOT EXISTS saml_profiles_saved ON saml_profiles (saved_xid)"]),
        // Schema 6: whoever changes a profile, the directory sees it. An insert or update gets its
        // transaction as saved_xid; the deletion of a live profile, or a change of its key, leaves a row
        // here (kept an hour); a TRUNCATE leaves the empty key, which makes every directory load again.
        (
            "table saml_profile_removals",
            [
                """
                CREATE TABLE IF NOT EXISTS saml_profile_removals (
                    service_provider text NOT NULL, device text NOT NULL, mvpd text NOT NULL,
                    removed_xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
                    removed_at timestamptz NOT NULL DEFAULT clock_timestamp())
                """
            ]
        ),
        (
            "index saml_profile_removals_xid",
            ["CREATE INDEX IF NOT EXISTS saml_profile_removals_xid ON saml_profile_removals (removed_xid)"]
        ),
        ("index saml_profile_removals_at", ["CREATE INDEX IF NOT EXISTS saml_profile_removals_at ON saml_profile_removals (removed_at)"]),
        function(
            "swift_saml_profile_touched_v6",
            """
                NEW.saved_xid := pg_current_xact_id()::text::bigint;
                IF TG_OP = 'UPDATE' AND OLD.expires_at > now()
                    AND (OLD.service_provider, OLD.device, OLD.mvpd) IS DISTINCT FROM (NEW.service_provider, NEW.device, NEW.mvpd) THEN
                    INSERT INTO saml_profile_removals (service_provider, device, mvpd) VALUES (OLD.service_provider, OLD.device, OLD.mvpd);
                END IF;
                RETURN NEW;
            """),
        function(
            "swift_saml_profile_removed_v6",
            """
                INSERT INTO saml_profile_removals (service_provider, device, mvpd)
                    SELECT service_provider, device, mvpd FROM gone WHERE expires_at > now();
                RETURN NULL;
            """),
        function(
            "swift_saml_profile_truncated_v6",
            """
                INSERT INTO saml_profile_removals (service_provider, device, mvpd) VALUES ('', '', '');
                RETURN NULL;
            """),
        triggerCreation(
            "swift_saml_profile_touched",
            "BEFORE INSERT OR UPDATE ON saml_profiles FOR EACH ROW EXECUTE FUNCTION swift_saml_profile_touched_v6()"),
        triggerCreation(
            "swift_saml_profile_removed",
            "AFTER DELETE ON saml_profiles REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION swift_saml_profile_removed_v6()"
        ),
        triggerCreation(
            "swift_saml_profile_truncated",
            "AFTER TRUNCATE ON saml_profiles FOR EACH STATEMENT EXECUTE FUNCTION swift_saml_profile_truncated_v6()"),
        ("procedure swift_saml_group_commit_v5", [GroupCommit.procedureSQL]),
    ]

    /// A trigger function's part: `body` between `BEGIN` and `END`, run with the `search_path` of the
    /// schema's creation (a DBA's session with another one still finds the store's tables).
    private static func function(_ name: String, _ body: String) -> (part: String, statements: [String]) {
        (
            "function \(name)",
            [
                """
                CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $f$
                BEGIN
                \(body)
                END
                $f$
                """
            ]
        )
    }

    /// A trigger's part: created when absent, then enabled always (fires under `session_replication_role =
    /// replica`); a disabled one is enabled again.
    private static func triggerCreation(_ name: String, _ definition: String) -> (part: String, statements: [String]) {
        (
            "trigger \(name)",
            [
                """
                DO $d$ BEGIN
                    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'saml_profiles'::regclass AND tgname = '\(name)') THEN
                        CREATE TRIGGER \(name) \(definition);
                    END IF;
                    ALTER TABLE saml_profiles ENABLE ALWAYS TRIGGER \(name);
                END $d$
                """
            ]
        )
    }

    /// ``ensureSchema(on:replayTable:logger:)`` while running, in its own transaction under the schema's
    /// advisory lock (instances repairing at once take turns) and `lock_timeout`, never recreating
    /// `saml_consumed`. Returns what it created (logged at `notice` when anything).
    @discardableResult
    static func repairSchema(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.query("BEGIN", logger: logger)
        try await connection.query("SET LOCAL lock_timeout = '1s'", logger: logger)
        try await connection.query("SELECT pg_advisory_xact_lock(7320161)", logger: logger)
        let created = try await ensureSchema(on: connection, replayTable: false, logger: logger)
        try await connection.query("COMMIT", logger: logger)
        if !created.isEmpty { logger.notice("schema repaired", metadata: ["created": "\(created.joined(separator: ", "))"]) }
        return created
    }
}
