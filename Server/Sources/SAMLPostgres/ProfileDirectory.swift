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
/// still running then (its `xip` list), with a statement planned for those values (a prepared statement's
/// generic plan could scan the whole table). So a row is read about once (a row written during the load
/// may come again in the first read), a transaction that commits late (waiting for a synchronous standby,
/// or slow) is found by the next read after it commits, however late, and a transaction left open for
/// hours (`idle in transaction`) costs one more index probe a read, not a re-read of everything since it
/// began. There is no notification to lose, and no lock on the write path (`NOTIFY` would serialise every
/// commit, synchronous-standby wait included). Transaction numbers go on only on one server: when a read
/// finds another (its postmaster's start differs: a promoted standby, a restart, whose numbers may repeat
/// ones already passed), or a horizon that went back, or more changes than ``changesLimit``, the directory
/// loads everything again, into a new set that replaces the old one once complete.
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
    /// How long `saml_profile_removals` keeps a removal (``PostgresStateStore/removeExpired()``).
    static let removalsKept: Duration = .seconds(3600)
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

    /// A snapshot's horizon: the first transaction it could not see (`xmax`) and those running then
    /// (`xip`), on which server (its postmaster's start).
    struct Cursor: Sendable {
        var server: Int64
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

    /// A profile this instance has just recorded (its commit confirmed): answered from memory at once,
    /// instead of "no profile" until the next read finds it; the reads correct it as the database changes.
    func noteSaved(serviceProvider: String, device: String, mvpd: String, notAfter: SAMLInstant) {
        let key = Self.key(serviceProvider, device, mvpd)
        state.withLock { state in
            guard !state.overflowed, state.cursor != nil, state.entries.count < capacity else { return }
            state.entries[key] = notAfter.millisecondsSinceEpoch
        }
    }

    /// A profile this instance has just removed: answered "no profile" here at once; other instances
    /// learn it from `saml_profile_removals` at their next read.
    func noteRemoved(serviceProvider: String, device: String, mvpd: String) {
        let key = Self.key(serviceProvider, device, mvpd)
        _ = state.withLock { $0.entries.removeValue(forKey: key) }
    }

    /// Entries held (expired ones included until the next sweep).
    var count: Int { state.withLock { $0.entries.count } }

    /// Whether it turned itself off (over its capacity).
    var isOff: Bool { state.withLock { $0.overflowed } }

    /// Reads what changed every ``interval`` until cancelled; a failed read is retried at the next one.
    func follow(_ store: PostgresStateStore) async {
        // Not before the schema exists (prepare()): a read of a missing table is no news to anyone.
        while !Task.isCancelled, !store.prepared.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        while !Task.isCancelled {
            do {
                try await synchronise(store)
            } catch {
                logger.debug("profile directory not read this round", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// One read: every live profile when not loaded yet (or when too much changed since the last read,
    /// or the server is another one), else the rows changed since.
    func synchronise(_ store: PostgresStateStore) async throws {
        let (cursor, overflowed) = state.withLock { ($0.cursor, $0.overflowed) }
        if overflowed { return }
        let started = ContinuousClock.now
        guard let cursor else { return try await load(store) }
        // Not prepared: planned with the cursor's values, so that it probes the `saved_xid` index. A
        // prepared statement's generic plan (the connections force them) cannot tell a recent `xmax`
        // from any other value and may scan the whole table. Integers only: nothing to quote.
        // Removals are kept an hour (PostgresStateStore.removeExpired): a directory out of step for longer
        // may have missed some, and loads everything again.
        if let synchronised = state.withLock({ $0.synchronised }), started - synchronised > Self.removalsKept / 2 {
            logger.info("profile directory loading again", metadata: ["out_of_step_seconds": "\((started - synchronised) / .seconds(1))"])
            state.withLock { $0.cursor = nil }
            return try await load(store)
        }
        let running = cursor.running.map(String.init).joined(separator: ",")
        func changed(_ column: String) -> String {
            "\(column) >= \(cursor.xmax)" + (cursor.running.isEmpty ? "" : " OR \(column) IN (\(running))")
        }
        // The rows written (inserted, replaced, updated by anyone: schema 6's trigger sets saved_xid) and
        // the live profiles deleted (schema 6's saml_profile_removals), as of one snapshot. A removal reads
        // as an expiry at the epoch; a key both removed and written again is applied as written (the
        // table says what is there now).
        let sql = Self.select(
            """
            SELECT * FROM (SELECT service_provider, device, mvpd, expires_at FROM saml_profiles WHERE \(changed("saved_xid"))
                UNION ALL SELECT service_provider, device, mvpd, 'epoch'::timestamptz FROM saml_profile_removals WHERE \(changed("removed_xid"))
            ) changes LIMIT \(changesLimit + 1)
            """
        )
        let page = try await store.withConnection("read changed profiles") { connection in
            try await Self.read(connection.query(PostgresQuery(unsafeSQL: sql), logger: store.logger).decode(Self.Columns.self))
        }
        // Another server (a promoted standby, a restart: its transaction numbers may repeat ones already
        // passed), or too much changed at once (a long outage): load everything again.
        // A TRUNCATE of the profiles leaves the empty key among the removals (schema 6): everything again.
        let truncated = page.rows.contains { $0.expiry == 0 && $0.serviceProvider.isEmpty && $0.device.isEmpty && $0.mvpd.isEmpty }
        if page.cursor.server != cursor.server || page.cursor.xmax < cursor.xmax || page.rows.count > changesLimit || truncated {
            logger.info(
                "profile directory loading again",
                metadata: ["changed_server": "\(page.cursor.server != cursor.server)", "truncated": "\(truncated)"])
            state.withLock { $0.cursor = nil }
            return try await load(store)
        }
        apply(page.rows, cursor: page.cursor, started: started)
    }

    /// Every live profile, page by page, into a new set of entries that replaces the old one at the end.
    private func load(_ store: PostgresStateStore) async throws {
        let started = ContinuousClock.now
        // Taken before the first page: whatever the pages miss (written after it) the next read of changes
        // returns. Pages carry no horizon of their own.
        let horizon = try await store.withConnection("read the profiles' horizon") { connection in
            try await Self.read(connection.query(PostgresQuery(unsafeSQL: Self.horizon), logger: store.logger).decode(Self.Columns.self))
                .cursor
        }
        var entries: [Int: Int64] = [:]
        var after = ("", "", "")
        while true {
            let from = after
            let rows = try await store.withConnection("load profiles") { connection in
                var rows: [Row] = []
                for try await (serviceProvider, device, mvpd, expiry) in try await connection.execute(
                    PageStatement(serviceProvider: from.0, device: from.1, mvpd: from.2, limit: Int64(self.pageSize)), logger: store.logger)
                {
                    rows.append(Row(serviceProvider: serviceProvider, device: device, mvpd: mvpd, expiry: expiry))
                }
                return rows
            }
            for row in rows { entries[Self.key(row.serviceProvider, row.device, row.mvpd)] = row.expiry }
            if entries.count > capacity { return turnOff() }
            guard rows.count == pageSize, let last = rows.last else { break }
            after = (last.serviceProvider, last.device, last.mvpd)
        }
        state.withLock { state in
            state.entries = entries
            state.swept = .now
            state.cursor = horizon
            state.synchronised = started
        }
        logger.info("profile directory loaded", metadata: ["profiles": "\(entries.count)"])
    }

    /// Over capacity: off until a restart, its memory given back.
    private func turnOff() {
        state.withLock { state in
            state.overflowed = true
            state.entries = [:]
        }
        logger.warning(
            "profile directory off: more live profiles than its capacity; sessions/sso reads the database",
            metadata: ["capacity": "\(capacity)"])
    }

    /// Records `rows`, and that the directory is in step with `cursor` as of `started`. Expired entries
    /// are dropped once a minute, and when the rows would not fit otherwise (once per read).
    private func apply(_ rows: [Row], cursor: Cursor, started: ContinuousClock.Instant) {
        let now = SAMLInstant.now().millisecondsSinceEpoch
        let fits = state.withLock { state -> Bool in
            if state.overflowed { return true }
            if ContinuousClock.now - state.swept > .seconds(60) || state.entries.count + rows.count > capacity { state.sweep(now) }
            for row in rows where row.expiry == 0 { state.entries[Self.key(row.serviceProvider, row.device, row.mvpd)] = nil }
            for row in rows where row.expiry != 0 { state.entries[Self.key(row.serviceProvider, row.device, row.mvpd)] = row.expiry }
            state.cursor = cursor
            state.synchronised = started
            return state.entries.count <= capacity
        }
        if !fits { turnOff() }
    }

    struct Row {
        var serviceProvider, device, mvpd: String
        var expiry: Int64
    }

    /// A read's columns: the server (its postmaster's start, in microseconds), the snapshot's `xmax` and
    /// `xip` list, then a profile's key and expiry (NULLs in the one row when there are none).
    typealias Columns = (Int64, Int64, [Int64], String?, String?, String?, Int64?)

    /// A read's horizon and rows.
    private static func read<S: AsyncSequence>(_ columns: S) async throws -> (cursor: Cursor, rows: [Row]) where S.Element == Columns {
        var cursor = Cursor(server: 0, xmax: 0, running: [])
        var rows: [Row] = []
        for try await (server, xmax, running, serviceProvider, device, mvpd, expiry) in columns {
            cursor = Cursor(server: server, xmax: xmax, running: running)
            if let serviceProvider, let device, let mvpd, let expiry {
                rows.append(Row(serviceProvider: serviceProvider, device: device, mvpd: mvpd, expiry: expiry))
            }
        }
        return (cursor, rows)
    }

    /// The horizon alone (one row, no profile).
    static let horizon = select(
        "SELECT NULL::text AS service_provider, NULL::text AS device, NULL::text AS mvpd, NULL::timestamptz AS expires_at")

    /// `profiles` (a subquery of `service_provider, device, mvpd, expires_at`) with the statement's
    /// horizon on every row (``Columns``).
    static func select(_ profiles: String) -> String {
        """
        SELECT (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint, s.xmax, s.xip,
            p.service_provider, p.device, p.mvpd, (extract(epoch FROM p.expires_at) * 1000)::bigint
        FROM (SELECT pg_snapshot_xmax(c)::text::bigint AS xmax, ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(c) x) AS xip
            FROM pg_current_snapshot() c) s
        LEFT JOIN LATERAL (\(profiles)) p ON true
        """
    }

    /// Live profiles after a key, in key order (the primary key's index, whatever the parameters).
    struct PageStatement: PostgresPreparedStatement {
        typealias Row = (String, String, String, Int64)
        static let name = "swift_saml_profile_page_v1"
        static let sql = """
            SELECT service_provider, device, mvpd, (extract(epoch FROM expires_at) * 1000)::bigint FROM saml_profiles
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

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
