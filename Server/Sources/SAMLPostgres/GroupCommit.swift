import AppleSSO
import Logging
import PostgresNIO
import SAML

/// Consumes and profile saves of many requests in one transaction: one statement records them all and
/// says, per consume, whether it was recorded and why not (a profile that goes with a consume is kept
/// only when the consume is recorded); the operations are answered only once the transaction has
/// committed, so nothing is acknowledged before its commit (with a synchronous standby: before the
/// standby has it too).
///
/// One round trip a batch: a `CALL` of the schema's procedure (``procedureSQL``), which runs the statement,
/// commits (`COMMIT` inside the procedure: with a synchronous standby, after the standby has flushed it)
/// and only then returns its one row, the outcomes. So the row itself is the proof of the commit. A
/// plain statement would not do: postgres-nio ends a statement's rows at `CommandComplete`, before an
/// implicit transaction commits at `Sync`, and it writes one query at a time, so the proof would be a
/// second round trip (as it was before schema 5) and `BEGIN`, the statement and `COMMIT` three. A
/// commit that fails inside the procedure is an error instead of the row: the batch fails closed.
///
/// The batch's operations share no key (``StoreQueue`` keeps duplicates for the next batch), so
/// each recorded row answers exactly one operation. Rows are written in key order, so that two batches
/// sharing keys wait for each other instead of deadlocking.
enum GroupCommit {
    static func run(_ operations: [StoreOperation], on connection: PostgresConnection, statementTimeout: Duration, logger: Logger)
        async throws
    {
        var consumes: [(operation: StoreOperation, assertion: UsedAssertion, request: IssuedRequestID?)] = []
        // Profiles: saved on their own (consume 0), or with the consume of that ordinal when it is recorded.
        var profiles: [(profile: StoredProfile, consume: Int64)] = []
        var saves: [StoreOperation] = []
        // An operation answered already (its caller's deadline passed while it waited) is not written:
        // its caller was told 503, and its retry must not find it recorded.
        for operation in operations where !operation.isFinished {
            switch operation.kind {
            case .consume(let assertion, let request, let profile):
                consumes.append((operation, assertion, request))
                if let profile { profiles.append((profile, Int64(consumes.count))) }
            case .save(let profile):
                saves.append(operation)
                profiles.append((profile, 0))
            case .job: continue
            }
        }
        if consumes.isEmpty && profiles.isEmpty { return }
        let statement = Statement(
            issuers: consumes.map(\.assertion.issuer), assertionIDs: consumes.map(\.assertion.id),
            requestIDs: consumes.map { $0.request?.id ?? "" },
            requestExpiries: consumes.map { $0.request?.expiry.millisecondsSinceEpoch ?? 0 },
            rowExpiries: consumes.map { max($0.assertion.expiry.millisecondsSinceEpoch, $0.request?.expiry.millisecondsSinceEpoch ?? 0) },
            serviceProviders: profiles.map(\.profile.serviceProvider), devices: profiles.map(\.profile.device),
            mvpds: profiles.map(\.profile.mvpd), profiles: profiles.map { String(decoding: $0.profile.json, as: UTF8.self) },
            profileExpiries: profiles.map(\.profile.notAfter.millisecondsSinceEpoch), profileConsumes: profiles.map(\.consume),
            assertionExpiries: consumes.map(\.assertion.expiry.millisecondsSinceEpoch))
        var outcomes = [StateStoreOutcome?](repeating: nil, count: consumes.count)
        var recorded = 0
        var answered = false
        let clock = ContinuousClock()
        let sent = clock.now
        for try await codes in try await connection.execute(statement, logger: logger) {
            answered = true
            for (index, code) in (codes ?? []).enumerated() where consumes.indices.contains(index) {
                // The statement reads the table as it was when it started: a row another transaction
                // committed meanwhile can refuse an insert that none of these explain (nil: read again below).
                outcomes[index] = Outcome(rawValue: code)?.outcome
                if code == Outcome.accepted.rawValue { recorded += 1 }
            }
        }
        guard answered else {
            throw SAMLError(.storeUnavailable, "expected the group commit's row after its commit, found none: refused, not accepted")
        }
        // A cancel during the wait for the synchronous standby ends the wait with a warning, not an
        // error: the procedure goes on and returns its row, committed on this server only. The
        // connection's own `statement_timeout` is such a cancel, and it runs from when the server got
        // the call, after `sent`: a row that took that long may not be on the standby (grey-failures'
        // cut-off standby), so it proves nothing and the batch fails closed. Believed only within
        // three quarters of it: the server's timer follows its wall clock, which may step. (A cancel
        // sent by hand, `pg_cancel_backend`, would not be seen: PostgreSQL documents that it
        // acknowledges such a commit; docs/service.md.)
        guard clock.now - sent < statementTimeout * 3 / 4 else {
            throw SAMLError(
                .storeUnavailable,
                "expected the group commit within three quarters of the statement timeout (\(statementTimeout)), found it answered later, perhaps without the synchronous standby: refused, not accepted"
            )
        }
        // Answered at once: a slower read below must not let a committed login's deadline pass.
        for (index, consume) in consumes.enumerated() {
            if let outcome = outcomes[index] { consume.operation.finish(.success(.outcome(outcome))) }
        }
        saves.forEach { $0.finish(.success(.saved)) }
        // Refused by a row committed while the statement ran: why, read now (refused either way).
        for index in consumes.indices where outcomes[index] == nil {
            let outcome = try await reason(consumes[index].assertion, consumes[index].request, on: connection, logger: logger)
            consumes[index].operation.finish(.success(.outcome(outcome)))
        }
        logger.trace(
            "batch committed", metadata: ["consumes": "\(consumes.count)", "recorded": "\(recorded)", "profiles": "\(profiles.count)"])
    }

    /// A consume's outcome as the procedure returns it, one `smallint` per consume in order.
    enum Outcome: Int16 {
        case accepted = 0, replayed, requestExpired, requestAnswered, assertionExpired
        /// Refused by a row that none of the statement's reads explain: read again after the commit.
        case unexplained

        var outcome: StateStoreOutcome? {
            switch self {
            case .accepted: .accepted
            case .replayed: .replayed
            case .requestExpired: .requestExpired
            case .requestAnswered: .requestAnswered
            case .assertionExpired: .assertionExpired
            case .unexplained: nil
            }
        }
    }

    /// The schema's procedure (created by ``PostgresStateStore/prepare()``, schema 5): arrays of the
    /// consumes' and the saves' columns in, one statement, `COMMIT`, then the outcomes out, one per
    /// consume in order (``Outcome``). No assertion is recorded past its own expiry by the database's
    /// clock, whatever its request's: an instance whose clock is behind would accept it, and its replay
    /// once the clean-up had removed the row. The lookups are `LATERAL ... LIMIT 1` rather than
    /// `EXISTS`: a generic plan made while the table is empty would otherwise hash the whole table for
    /// each batch once it has grown (measured: 37 ms a batch at 50,000 rows instead of 0.15 ms); the
    /// connections set `plan_cache_mode = force_generic_plan`, which the procedure's plans follow too.
    static let procedureSQL = """
        CREATE OR REPLACE PROCEDURE swift_saml_group_commit_v5(
            text[], text[], text[], int8[], int8[], text[], text[], text[], text[], int8[], int8[], int8[],
            INOUT outcomes int2[] DEFAULT NULL)
        LANGUAGE plpgsql AS $procedure$
        BEGIN
            WITH input AS (
                SELECT * FROM unnest($1, $2, $3, $4, $5, $12)
                    WITH ORDINALITY AS i(issuer, assertion_id, request_id, request_expiry, row_expiry, assertion_expiry, n)),
            inserted AS (
                INSERT INTO saml_consumed (issuer, assertion_id, request_id, expires_at)
                SELECT issuer, assertion_id, nullif(request_id, ''), to_timestamp(row_expiry::float8 / 1000) FROM input
                WHERE (request_id = '' OR to_timestamp(request_expiry::float8 / 1000) > now())
                    AND to_timestamp(assertion_expiry::float8 / 1000) > now()
                ORDER BY issuer, assertion_id
                ON CONFLICT DO NOTHING RETURNING issuer, assertion_id),
            saved AS (
                INSERT INTO saml_profiles (service_provider, device, mvpd, profile, expires_at)
                SELECT p.sp, p.device, p.mvpd, p.profile, to_timestamp(p.expiry::float8 / 1000)
                FROM unnest($6, $7, $8, $9, $10, $11) AS p(sp, device, mvpd, profile, expiry, consume)
                LEFT JOIN input i ON i.n = p.consume
                LEFT JOIN inserted ins ON ins.issuer = i.issuer AND ins.assertion_id = i.assertion_id
                WHERE p.consume = 0 OR ins.issuer IS NOT NULL
                ORDER BY p.sp, p.device, p.mvpd
                ON CONFLICT (service_provider, device, mvpd) DO UPDATE
                    SET profile = EXCLUDED.profile, expires_at = EXCLUDED.expires_at, saved_xid = EXCLUDED.saved_xid)
            SELECT coalesce(array_agg(
                    CASE WHEN ins.issuer IS NOT NULL THEN 0
                        WHEN used.x IS NOT NULL THEN 1
                        WHEN i.request_id <> '' AND to_timestamp(i.request_expiry::float8 / 1000) <= now() THEN 2
                        WHEN answered.x IS NOT NULL THEN 3
                        WHEN to_timestamp(i.assertion_expiry::float8 / 1000) <= now() THEN 4
                        ELSE 5 END::int2 ORDER BY i.n), '{}')
            INTO outcomes
            FROM input i LEFT JOIN inserted ins ON ins.issuer = i.issuer AND ins.assertion_id = i.assertion_id
            LEFT JOIN LATERAL (
                SELECT 1 AS x FROM saml_consumed c WHERE c.issuer = i.issuer AND c.assertion_id = i.assertion_id LIMIT 1) used ON true
            LEFT JOIN LATERAL (
                SELECT 1 AS x FROM saml_consumed c WHERE i.request_id <> '' AND c.request_id = i.request_id LIMIT 1) answered ON true;
            COMMIT;
        END
        $procedure$
        """

    /// The call of ``procedureSQL``, prepared once per connection.
    struct Statement: PostgresPreparedStatement {
        typealias Row = [Int16]?
        static let name = "swift_saml_group_commit_v5"
        static let sql = "CALL swift_saml_group_commit_v5($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL)"

        var issuers, assertionIDs, requestIDs: [String]
        var requestExpiries, rowExpiries: [Int64]
        var serviceProviders, devices, mvpds, profiles: [String]
        var profileExpiries, profileConsumes: [Int64]
        var assertionExpiries: [Int64]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 12)
            bindings.append(issuers)
            bindings.append(assertionIDs)
            bindings.append(requestIDs)
            bindings.append(requestExpiries)
            bindings.append(rowExpiries)
            bindings.append(serviceProviders)
            bindings.append(devices)
            bindings.append(mvpds)
            bindings.append(profiles)
            bindings.append(profileExpiries)
            bindings.append(profileConsumes)
            bindings.append(assertionExpiries)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Why a consume was refused, read after the fact: the assertion recorded, or the request.
    private static func reason(
        _ assertion: UsedAssertion, _ request: IssuedRequestID?, on connection: PostgresConnection, logger: Logger
    ) async throws -> StateStoreOutcome {
        let rows = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM saml_consumed WHERE issuer = \(assertion.issuer) AND assertion_id = \(assertion.id))
            """, logger: logger)
        for try await used in rows.decode(Bool.self) where used { return .replayed }
        return request == nil ? .replayed : .requestAnswered
    }
}
