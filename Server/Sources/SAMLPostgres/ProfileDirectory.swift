import Logging
import PostgresNIO
import SAML
import Synchronization

/// Which devices have a live profile, in memory, in step with `saml_profiles` as every instance writes it:
/// `sessions/sso` asks it instead of the database (``PostgresStateStore/hasLiveProfile(serviceProvider:device:mvpd:now:)``),
/// so that a question from a caller who has proven nothing costs the shared primary nothing.
///
/// **How it keeps in step.** Every profile row carries the transaction that wrote it (`saved_xid`, schema
/// 4). At start the directory reads every live profile, in pages of ``pageSize`` (2,000) in key order; then,
/// every ``PostgresStateStore/Configuration/profileDirectoryInterval``, it reads the rows written by the
/// transactions its previous read could not see: those at or after that snapshot's `xmax`, and those
/// still running then (its `xip` list). So each row is read once, a transaction that commits late
/// (waiting for a synchronous standby, or slow) is found by the next read after it commits, however late,
/// and a transaction left open for hours (`idle in transaction`) costs one more index probe a read, not a
/// re-read of everything since it began. There is no notification to lose, and no lock on the write path
/// (`NOTIFY` would serialise every commit, synchronous-standby wait included). After a failover the
/// promoted server continues the same transaction numbers.
///
/// **The bound.** An answer from memory is given only while the last read that succeeded started less
/// than ``staleAfter`` ago (4 intervals: 1 s by default); the read saw every commit before it started. So
/// a profile saved by another instance is answered "no profile" here for at most ``staleAfter``; past it
/// (the database away or slow), the directory answers nil and the caller reads the database, bounded as
/// before. A profile whose write is lost in a failover (committed on the old primary, never replicated)
/// may be answered "has a profile" here until it expires.
///
/// **Memory.** At most ``capacity`` entries, each a keyed 64-bit hash of (service provider, device, MVPD)
/// with this process's random seed, and the profile's expiry: about 40 bytes. Expired entries are dropped
/// once a minute. When the live profiles outnumber the capacity, the directory turns itself off (logged
/// once) and every question reads the database, as without it; a restart with a larger capacity turns it
/// back on.
///
/// Rows written by code older than schema 4 get the column's default on insert but keep their old
/// `saved_xid` when that code replaces a profile: during a rolling upgrade from it, a replaced profile may
/// be answered with its previous expiry here.
final class ProfileDirectory: Sendable {
    /// The rows of one page of the load, each page a store operation under its deadline.
    let pageSize: Int
    /// The most changed rows one read takes; more than that since the last read (a long outage, a bulk
    /// import), and the directory loads again, page by page.
    let changesLimit: Int

    let capacity: Int
    let interval: Duration
    var staleAfter: Duration { interval * 4 }
    private let logger: Logger

    private struct State {
        var entries: [Int: Int64] = [:]
        /// What the last read could not see (nil until loaded, and while reloading).
        var cursor: Cursor?
        /// When the last read that succeeded started.
        var synchronised: ContinuousClock.Instant?
        var overflowed = false
        var swept = ContinuousClock.now

        /// Drops the entries expired at `now` (milliseconds).
        mutating func sweep(_ now: Int64) {
            entries = entries.filter { $0.value > now }
            swept = .now
        }
    }

    private let state = Mutex(State())

    init(capacity: Int, interval: Duration, pageSize: Int = 2_000, changesLimit: Int = 50_000, logger: Logger) {
        self.capacity = max(1, capacity)
        self.interval = max(interval, .milliseconds(10))
        self.pageSize = max(1, pageSize)
        self.changesLimit = max(1, changesLimit)
        self.logger = logger
    }

    /// A snapshot's horizon: the first transaction it could not see (`xmax`) and those running then (`xip`).
    struct Cursor: Sendable {
        var xmax: Int64
        var running: [Int64]
    }

    static func key(_ serviceProvider: String, _ device: String, _ mvpd: String) -> Int {
        var hasher = Hasher()
        hasher.combine(serviceProvider)
        hasher.combine(device)
        hasher.combine(mvpd)
        return hasher.finalize()
    }

    /// The answer from memory, or nil when it cannot be trusted now.
    func hasLiveProfile(serviceProvider: String, device: String, mvpd: String, now: SAMLInstant) -> Bool? {
        let key = Self.key(serviceProvider, device, mvpd)
        return state.withLock { state in
            guard !state.overflowed, state.cursor != nil, let synchronised = state.synchronised,
                ContinuousClock.now - synchronised <= staleAfter
            else { return nil }
            guard let expiry = state.entries[key] else { return false }
            return expiry > now.millisecondsSinceEpoch
        }
    }

    /// Entries held (expired ones included until the next sweep).
    var count: Int { state.withLock { $0.entries.count } }

    /// Whether it turned itself off (over its capacity).
    var isOff: Bool { state.withLock { $0.overflowed } }

    /// Reads what changed every ``interval`` until cancelled; a failed read is retried at the next one.
    func follow(_ store: PostgresStateStore) async {
        while !Task.isCancelled {
            do {
                try await synchronise(store)
            } catch {
                logger.debug("profile directory not read this round", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// One read: every live profile when not loaded yet (or when too much changed since the last read),
    /// else the rows changed since.
    func synchronise(_ store: PostgresStateStore) async throws {
        let (cursor, overflowed) = state.withLock { ($0.cursor, $0.overflowed) }
        if overflowed { return }
        let started = ContinuousClock.now
        if let cursor {
            let page = try await store.withConnection("read changed profiles") { connection in
                try await Self.read(
                    ChangesStatement(xmax: cursor.xmax, running: cursor.running, limit: Int64(self.changesLimit + 1)), on: connection,
                    store.logger)
            }
            if page.rows.count > changesLimit {
                // Too much changed at once (a long outage): load again, page by page.
                state.withLock { $0.cursor = nil }
                return try await load(store)
            }
            apply(page.rows, cursor: page.cursor, started: started)
        } else {
            try await load(store)
        }
    }

    private func load(_ store: PostgresStateStore) async throws {
        let started = ContinuousClock.now
        var after = ("", "", "")
        var cursor: Cursor?
        while true {
            let from = after
            let page = try await store.withConnection("load profiles") { connection in
                try await Self.read(
                    PageStatement(serviceProvider: from.0, device: from.1, mvpd: from.2, limit: Int64(self.pageSize)), on: connection,
                    store.logger)
            }
            // The first page's snapshot: everything committed before it is in the pages, unless changed
            // since, and then read by the first read of changes.
            if cursor == nil { cursor = page.cursor }
            guard apply(page.rows, cursor: nil, started: nil) else { return }
            guard page.rows.count == pageSize, let last = page.rows.last else { break }
            after = (last.serviceProvider, last.device, last.mvpd)
        }
        apply([], cursor: cursor, started: started)
        logger.info("profile directory loaded", metadata: ["profiles": "\(count)"])
    }

    /// Records `rows`, and when `cursor` is given, that the directory is in step as of `started`. False
    /// once over capacity (the directory is then off).
    @discardableResult
    private func apply(_ rows: [Row], cursor: Cursor?, started: ContinuousClock.Instant?) -> Bool {
        let now = SAMLInstant.now().millisecondsSinceEpoch
        let (on, turnedOff) = state.withLock { state -> (Bool, Bool) in
            if state.overflowed { return (false, false) }
            if ContinuousClock.now - state.swept > .seconds(60) { state.sweep(now) }
            for row in rows {
                let key = Self.key(row.serviceProvider, row.device, row.mvpd)
                if state.entries[key] == nil, state.entries.count >= capacity {
                    state.sweep(now)
                    if state.entries.count >= capacity {
                        state.overflowed = true
                        state.entries = [:]
                        return (false, true)
                    }
                }
                state.entries[key] = row.expiry
            }
            if let cursor, let started {
                state.cursor = cursor
                state.synchronised = started
            }
            return (true, false)
        }
        if turnedOff {
            logger.warning(
                "profile directory off: more live profiles than its capacity; sessions/sso reads the database",
                metadata: ["capacity": "\(capacity)"])
        }
        return on
    }

    struct Row {
        var serviceProvider, device, mvpd: String
        var expiry: Int64
    }

    /// Runs `statement`: its snapshot's horizon, and its rows.
    private static func read(_ statement: some Statement, on connection: PostgresConnection, _ logger: Logger)
        async throws -> (cursor: Cursor, rows: [Row])
    {
        var cursor = Cursor(xmax: 0, running: [])
        var rows: [Row] = []
        for try await (xmax, running, serviceProvider, device, mvpd, expiry) in try await connection.execute(statement, logger: logger) {
            cursor = Cursor(xmax: xmax, running: running)
            if let serviceProvider, let device, let mvpd, let expiry {
                rows.append(Row(serviceProvider: serviceProvider, device: device, mvpd: mvpd, expiry: expiry))
            }
        }
        return (cursor, rows)
    }

    /// The directory's reads: its snapshot's horizon (`xmax`, the `xip` list), then a profile's key and
    /// expiry per row, or NULLs in the one row when there are none. `select` completes the statement
    /// with the profiles' lateral subquery, as `p`.
    protocol Statement: PostgresPreparedStatement where Row == (Int64, [Int64], String?, String?, String?, Int64?) {
        static var profiles: String { get }
    }

    static func select(_ profiles: String) -> String {
        """
        SELECT s.xmax, s.xip, p.service_provider, p.device, p.mvpd, (extract(epoch FROM p.expires_at) * 1000)::bigint
        FROM (SELECT pg_snapshot_xmax(c)::text::bigint AS xmax, ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(c) x) AS xip
            FROM pg_current_snapshot() c) s
        LEFT JOIN LATERAL (\(profiles)) p ON true
        """
    }

    /// Live profiles after a key, in key order (the primary key's index), with the snapshot's horizon
    /// (one row of NULLs when there are none).
    struct PageStatement: Statement {
        static let name = "swift_saml_profile_page_v1"
        static let profiles = """
            SELECT service_provider, device, mvpd, expires_at FROM saml_profiles
            WHERE (service_provider, device, mvpd) > ($1, $2, $3) AND expires_at > now()
            ORDER BY service_provider, device, mvpd LIMIT $4
            """

        var serviceProvider, device, mvpd: String
        var limit: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(serviceProvider)
            bindings.append(device)
            bindings.append(mvpd)
            bindings.append(limit)
            return bindings
        }
    }

    /// Profiles written by transactions the previous snapshot could not see (at or after its `xmax`, or
    /// running then: the `saved_xid` index), expired ones too (a profile replaced by an expired one must
    /// stop counting), with this snapshot's horizon.
    struct ChangesStatement: Statement {
        static let name = "swift_saml_profile_changes_v1"
        static let profiles = """
            SELECT service_provider, device, mvpd, expires_at FROM saml_profiles
            WHERE saved_xid >= $1 OR saved_xid = ANY($2::bigint[]) LIMIT $3
            """

        var xmax: Int64
        var running: [Int64]
        var limit: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(xmax)
            bindings.append(running)
            bindings.append(limit)
            return bindings
        }
    }
}

extension ProfileDirectory.Statement {
    static var sql: String { ProfileDirectory.select(profiles) }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
