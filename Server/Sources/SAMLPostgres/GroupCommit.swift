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
/// Two round trips a batch: the statement alone, in an implicit transaction, and then ``Committed``.
/// postgres-nio ends a statement's rows at `CommandComplete`, before the implicit transaction commits at
/// `Sync`, so the rows alone would acknowledge an uncommitted write. The next query on the connection is
/// written only after the server's `ReadyForQuery`, which follows a successful commit; a commit that
/// fails sends an error after `CommandComplete`, on which postgres-nio closes the connection, and
/// ``Committed`` then fails (the batch fails closed). postgres-nio writes one query at a time, so
/// `BEGIN`, the statement and `COMMIT` were three round trips.
///
/// The batch's operations share no key (``StoreQueue`` keeps duplicates for the next batch), so
/// each recorded row answers exactly one operation. Rows are written in key order, so that two batches
/// sharing keys wait for each other instead of deadlocking.
enum GroupCommit {
    static func run(_ operations: [StoreOperation], on connection: PostgresConnection, logger: Logger) async throws {
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
        for try await (n, inserted, used, expired, answered, forgettable) in try await connection.execute(statement, logger: logger) {
            let index = Int(n) - 1
            guard consumes.indices.contains(index), outcomes[index] == nil else { continue }
            // The statement reads the table as it was when it started: a row another transaction
            // committed meanwhile can refuse an insert that none of these explain (nil: read again below).
            outcomes[index] =
                inserted
                ? .accepted
                : used ? .replayed : expired ? .requestExpired : answered ? .requestAnswered : forgettable ? .assertionExpired : nil
            if inserted { recorded += 1 }
        }
        for try await _ in try await connection.execute(Committed(), logger: logger) {}
        // Refused by a row committed while the statement ran: why, read now (refused either way).
        for index in consumes.indices where outcomes[index] == nil {
            outcomes[index] = try await reason(consumes[index].assertion, consumes[index].request, on: connection, logger: logger)
        }
        for (index, consume) in consumes.enumerated() {
            consume.operation.finish(.success(.outcome(outcomes[index] ?? .requestAnswered)))
        }
        saves.forEach { $0.finish(.success(.saved)) }
        logger.trace(
            "batch committed", metadata: ["consumes": "\(consumes.count)", "recorded": "\(recorded)", "profiles": "\(profiles.count)"])
    }

    /// The batch's statement, prepared once per connection (parsed and planned once: the connections
    /// set `plan_cache_mode = force_generic_plan`): arrays of the consumes' and the saves' columns in, one
    /// row per consume out (its ordinal, recorded, assertion used before, request expired, request
    /// answered before, the assertion past its expiry by the database's clock). No assertion is recorded
    /// past its own expiry by the database's clock, whatever its request's: an instance whose clock is
    /// behind would accept it, and its replay once the clean-up had removed the row. The lookups are
    /// `LATERAL ... LIMIT 1` rather than `EXISTS`: a generic plan made
    /// while the table is empty would otherwise hash the whole table for each batch once it has grown
    /// (measured: 37 ms a batch at 50,000 rows instead of 0.15 ms).
    struct Statement: PostgresPreparedStatement {
        typealias Row = (Int64, Bool, Bool, Bool, Bool, Bool)
        static let name = "swift_saml_group_commit_v4"
        static let sql = """
            WITH input AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[], $12::int8[])
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
                FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::int8[], $11::int8[])
                    AS p(sp, device, mvpd, profile, expiry, consume)
                LEFT JOIN input i ON i.n = p.consume
                LEFT JOIN inserted ins ON ins.issuer = i.issuer AND ins.assertion_id = i.assertion_id
                WHERE p.consume = 0 OR ins.issuer IS NOT NULL
                ORDER BY p.sp, p.device, p.mvpd
                ON CONFLICT (service_provider, device, mvpd) DO UPDATE
                    SET profile = EXCLUDED.profile, expires_at = EXCLUDED.expires_at, saved_xid = EXCLUDED.saved_xid)
            SELECT i.n, ins.issuer IS NOT NULL, used.x IS NOT NULL,
                i.request_id <> '' AND to_timestamp(i.request_expiry::float8 / 1000) <= now(), answered.x IS NOT NULL,
                to_timestamp(i.assertion_expiry::float8 / 1000) <= now()
            FROM input i LEFT JOIN inserted ins ON ins.issuer = i.issuer AND ins.assertion_id = i.assertion_id
            LEFT JOIN LATERAL (
                SELECT 1 AS x FROM saml_consumed c WHERE c.issuer = i.issuer AND c.assertion_id = i.assertion_id LIMIT 1) used ON true
            LEFT JOIN LATERAL (
                SELECT 1 AS x FROM saml_consumed c WHERE i.request_id <> '' AND c.request_id = i.request_id LIMIT 1) answered ON true
            ORDER BY i.n
            """

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

    /// Answered only once the statement before it on the connection has committed (see ``GroupCommit``).
    struct Committed: PostgresPreparedStatement {
        typealias Row = Bool
        static let name = "swift_saml_committed"
        static let sql = "SELECT true"
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
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
