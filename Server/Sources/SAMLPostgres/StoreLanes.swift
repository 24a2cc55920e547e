import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import SAML
import Synchronization

/// The store's connections: ``PostgresStateStore/Configuration/maximumConnections`` lanes, each one
/// connection running one piece of work at a time from the ``StoreQueue``.
///
/// A lane connects when it first has work, to the first server of the host list that matches
/// `target_session_attrs` (libpq's rule), and keeps the connection until anything fails on it: then it
/// closes it, and its next work connects again, going through the host list from the start. So after
/// a failover the lanes find the promoted server by themselves, and in between every operation fails
/// closed (``SAMLError/Code/storeUnavailable``).
///
/// Deadlines are kept by one sweep (every tenth of the deadline, at most 100 ms), not a timer per
/// operation: it answers `store.unavailable` to every operation past its deadline, queued or running,
/// and closes the connection of a lane whose work has run past the deadline (postgres-nio would
/// otherwise wait for the server's answer).
final class StoreLanes: Sendable {
    let configuration: PostgresStateStore.Configuration
    let queue: StoreQueue
    private let logger: Logger
    private let connectionIDs = Atomic<Int>(0)
    private let tls: Result<PostgresConnection.Configuration.TLS, SAMLError>
    private let lanes: [Lane]
    /// Since when operations fail, how many did, and whether that was logged; and when the last warning
    /// was: the operator's log says when the store starts failing and when it answers again, once each
    /// (at most one warning in 10 s when it flaps: a full volume fails writes while reads succeed), not
    /// once per refused login.
    private let outage = Mutex<
        (
            current: (since: ContinuousClock.Instant, last: ContinuousClock.Instant, failures: Int, logged: Bool)?,
            warned: ContinuousClock.Instant?
        )
    >((nil, nil))

    init(configuration: PostgresStateStore.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        queue = StoreQueue(
            capacity: configuration.maximumQueue, maximumBatch: configuration.maximumBatch, batchWindow: configuration.batchWindow,
            batchTarget: configuration.batchTarget)
        lanes = (0..<max(1, configuration.maximumConnections)).map { _ in
            Lane(executor: LaneExecutor(MultiThreadedEventLoopGroup.singleton.next()))
        }
        do {
            tls = .success(try configuration.makeClientTLS())
        } catch {
            tls = .failure(SAMLError(.configurationInvalid, "expected a usable TLS configuration for PostgreSQL, found NIOSSL refusing it"))
        }
    }

    /// The failure of an operation past its deadline.
    var timeoutFailure: SAMLError {
        SAMLError(
            .storeUnavailable, "expected PostgreSQL to answer within \(configuration.timeout), found no answer: refused, not accepted")
    }

    /// Runs the lanes and the deadline sweep until the task is cancelled; then queued operations fail closed.
    func run() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for (number, lane) in lanes.enumerated() {
                    group.addTask(executorPreference: lane.executor) { await self.work(lane, number: number) }
                }
                group.addTask { await self.sweep() }
            }
        } onCancel: {
            queue.close()
        }
    }

    /// Every tenth of the deadline (at most 100 ms): operations past their deadline are answered, and
    /// the connection of a lane whose work outlived the deadline is closed. The sweep itself never waits
    /// for the network: a close that hangs (a server cut off mid-query) must not stop the deadlines of
    /// everything queued behind it (measured: `scripts/postgres/grey-failures cut-instance` held logins
    /// past the deadline, then accepted them, while it did).
    private func sweep() async {
        let interval = min(.milliseconds(100), configuration.timeout / 10)
        let clock = ContinuousClock()
        while !Task.isCancelled {
            try? await clock.sleep(for: max(interval, .milliseconds(1)))
            let now = clock.now
            queue.expire(now: now, timeoutFailure)
            for lane in lanes {
                let (expired, stuck) = lane.overdue(now: now, timeout: configuration.timeout)
                expired.forEach { $0.finish(.failure(timeoutFailure)) }
                let serving = expired.filter(\.servesRequest).count
                if serving > 0 { failing("no answer within \(configuration.timeout)", operations: serving) }
                if stuck { lane.abandon() }
            }
        }
    }

    /// One lane: takes work, runs it on its connection, answers its operations.
    private func work(_ lane: Lane, number: Int) async {
        while var work = await queue.next() {
            if case .batch(let batch, waits: true) = work {
                // A small batch while writes arrive often: the writes that arrive within the window join it, up to the
                // target. Tracked meanwhile, so that the deadline sweep sees it.
                lane.started(batch)
                await queue.fill(batch.count)
                work = .batch(batch + queue.more(for: batch), waits: false)
            }
            let operations: [StoreOperation]
            switch work {
            case .batch(let batch, _): operations = batch
            case .job(let operation): operations = [operation]
            }
            lane.started(operations)
            let serves = operations.contains(where: \.servesRequest)
            var failed: SAMLError?
            let isBatch: Bool
            if case .batch = work { isBatch = true } else { isBatch = false }
            do {
                do {
                    try await run(work, on: lane)
                } catch  where Self.isSchemaDrift(error) && isBatch && mayRepair() {
                    // The schema lost a part (a dropped procedure, table or column): repaired by this lane
                    // (one repair per interval across the lanes), and the batch retried once on a new
                    // connection. Past the interval's repair, the same drift fails fast: nothing to retry.
                    logger.error(
                        "schema drift: a store operation found a part of the schema missing; preparing it again and retrying once",
                        metadata: ["failure": "\(Self.kind(error))"])
                    await lane.drop()
                    let live = try await lane.current { try await self.connect(on: lane.executor.eventLoop) }
                    try await PostgresStateStore.repairSchema(on: live, logger: logger)
                    // Only with time left: a retry the deadline cuts short could commit after its 503.
                    guard operations.contains(where: { !$0.isFinished && $0.deadline - ContinuousClock.now > configuration.timeout / 2 })
                    else { throw error }
                    try await run(work, on: lane)
                }
            } catch {
                // Whatever failed, the connection's state is unknown (a transaction may be open, the
                // server may be gone or read-only now): close it; the next work connects again.
                let failure = Self.storeError(error)
                failed = failure
                logger.debug("store work failed: connection closed", metadata: ["lane": "\(number)", "code": "\(failure.code)"])
                if serves { failing(Self.kind(error), operations: operations.count) }
                if isBatch {
                    writes.withLock {
                        $0 = $0 ?? (ContinuousClock.now, ContinuousClock.now); $0?.last = ContinuousClock.now
                    }
                }
                await lane.drop()
                operations.forEach { $0.finish(.failure(failure)) }
            }
            if failed == nil, isBatch { writes.withLock { $0 = nil } }
            lane.finished()
            if case .batch = work { queue.batchFinished() }
            if failed == nil, serves { answered() }
        }
        await lane.drop()
    }

    /// Runs `work` on the lane's connection (connecting first when it has none), answering its operations.
    private func run(_ work: StoreQueue.Work, on lane: Lane) async throws {
        let live = try await lane.current { try await self.connect(on: lane.executor.eventLoop) }
        switch work {
        case .batch(let operations, _):
            try await GroupCommit.run(
                operations, on: live, statementTimeout: .milliseconds(configuration.statementTimeoutMilliseconds), logger: self.logger)
        case .job(let operation):
            guard case .job(let body) = operation.kind else { break }
            operation.finish(.success(.value(try await body(live))))
        }
    }

    /// The least time between two repairs of the schema (``PostgresStateStore/ensureSchema(on:replayTable:logger:)``).
    static let repairInterval: Duration = .seconds(10)
    private let lastRepair = Mutex<ContinuousClock.Instant?>(nil)

    /// Whether a repair may run now (none within ``repairInterval``); taking the turn when it may.
    func mayRepair() -> Bool {
        let now = ContinuousClock.now
        return lastRepair.withLock { last in
            if let previous = last, now - previous < Self.repairInterval { return false }
            last = now
            return true
        }
    }

    /// An error of a schema that lost a part: an undefined function (`42883`), table (`42P01`) or
    /// column (`42703`).
    static func isSchemaDrift(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "42883" || state == "42P01" || state == "42703"
    }

    /// Since when the batches (the logins' writes) have all failed, and when the last one did.
    private let writes = Mutex<(since: ContinuousClock.Instant, last: ContinuousClock.Instant)?>(nil)

    /// How long the logins' writes have all been failing, when the last failed within the last 10 s and
    /// none succeeded since (readiness then fails: no login would be recorded); nil otherwise. Reads do
    /// not count (a full volume fails writes while reads succeed). An instance without traffic becomes
    /// ready again 10 s after its last failure, so that the balancer tries it again.
    var failingWrites: Duration? {
        let now = ContinuousClock.now
        return writes.withLock { writes in
            guard let writes, now - writes.last < .seconds(10) else { return nil }
            return now - writes.since
        }
    }

    /// Operations failed closed (`kind`: PostgreSQL's SQLSTATE, the error's type, or the deadline): the
    /// first failure after a good answer is logged at `warning`.
    private func failing(_ kind: String, operations: Int) {
        let now = ContinuousClock.now
        let log = outage.withLock { outage -> Bool in
            if outage.current != nil {
                outage.current!.failures += operations
                outage.current!.last = now
                return false
            }
            let log = outage.warned.map { now - $0 >= .seconds(10) } ?? true
            outage.current = (now, now, operations, log)
            if log { outage.warned = now }
            return log
        }
        if log {
            logger.warning(
                "PostgreSQL store failing: logins refused (503 store.unavailable) until it answers again",
                metadata: ["failure": "\(kind)", "hosts": "\(configuration.endpoints.count)"])
        }
    }

    /// An operation succeeded: the end of an outage whose start was logged is logged at `notice`.
    private func answered() {
        let ended = outage.withLock { outage in
            let ended = outage.current
            outage.current = nil
            return ended
        }
        guard let ended, ended.logged else { return }
        logger.notice(
            "PostgreSQL store answering again",
            metadata: [
                "outage_seconds": "\(String(format: "%.1f", (ContinuousClock.now - ended.since) / .seconds(1)))",
                "operations_refused": "\(ended.failures)",
            ])
    }

    /// A connection to the first server of the host list that matches `target_session_attrs`.
    private func connect(on eventLoop: any EventLoop) async throws -> PostgresConnection {
        let tls = try self.tls.get()
        var found: [String] = []
        for (index, endpoint) in configuration.endpoints.enumerated() {
            let connection: PostgresConnection
            do {
                let configuration = configuration.connection(to: endpoint, tls: tls)
                let id = connectionIDs.add(1, ordering: .relaxed).newValue
                connection = try await Self.within(self.configuration.timeout) { [logger] in
                    try await PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger)
                }
            } catch {
                found.append("host \(index + 1): \(Self.kind(error))")
                continue
            }
            do {
                if try await matches(connection) {
                    await report(connection, host: index + 1)
                    return connection
                }
                found.append("host \(index + 1): not \(configuration.targetSessionAttributes.rawValue)")
            } catch {
                found.append("host \(index + 1): \(Self.kind(error))")
            }
            try? await connection.close()
        }
        logger.debug("no PostgreSQL server to connect to", metadata: ["hosts": "\(found.joined(separator: "; "))"])
        throw SAMLError(
            .storeUnavailable,
            "expected a \(configuration.targetSessionAttributes.rawValue) PostgreSQL server among \(configuration.endpoints.count) host(s), found none (\(found.joined(separator: "; "))): refused, not accepted"
        )
    }

    /// `connect`'s connection, or a timeout failure once `timeout` has passed. postgres-nio's
    /// `connectTimeout` bounds the TCP handshake only: a server (or a middlebox) that accepts and then
    /// never answers the startup would hold a lane for ever. A connection that arrives after the timeout
    /// is closed.
    static func within(_ timeout: Duration, _ connect: @escaping @Sendable () async throws -> PostgresConnection) async throws
        -> PostgresConnection
    {
        let race = ConnectRace()
        return try await withCheckedThrowingContinuation { continuation in
            race.begin(continuation)
            Task {
                do {
                    let connection = try await connect()
                    if !race.finish(with: .success(connection)) { try? await connection.close() }
                } catch {
                    _ = race.finish(with: .failure(error))
                }
            }
            Task {
                try? await Task.sleep(for: timeout)
                _ = race.finish(
                    with: .failure(
                        SAMLError(.storeUnavailable, "expected PostgreSQL to accept a connection within \(timeout), found no answer")))
            }
        }
    }

    /// Whether the server matches `target_session_attrs` (libpq's checks).
    /// Logs, once per connection, whether it negotiated TLS (the server's own view, `pg_stat_ssl`: with
    /// `sslmode=prefer` a server without TLS gets plaintext, silently otherwise), and tells
    /// ``PostgresStateStore/Configuration/connectionObserver``.
    private func report(_ connection: PostgresConnection, host: Int) async {
        var encrypted: Bool?
        if let rows = try? await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger) {
            do {
                for try await value in rows.decode(Bool.self) { encrypted = value }
            } catch {
                encrypted = nil
            }
        }
        let tls = encrypted.map { $0 ? "yes" : "no" } ?? "unknown"
        let metadata: Logger.Metadata = ["host": "\(host)", "tls": "\(tls)", "sslmode": "\(configuration.sslMode.rawValue)"]
        if encrypted == false && configuration.sslMode != .disable {
            logger.warning(
                "PostgreSQL connection without TLS: the server offers none (sslmode=prefer fell back to plaintext)", metadata: metadata)
        } else {
            logger.info("PostgreSQL connection", metadata: metadata)
        }
        configuration.connectionObserver?(tls)
    }

    private func matches(_ connection: PostgresConnection) async throws -> Bool {
        switch configuration.targetSessionAttributes {
        case .any:
            return true
        case .readWrite:
            for try await value in try await connection.query("SHOW transaction_read_only", logger: logger).decode(String.self) {
                return value == "off"
            }
            return false
        case .primary:
            for try await value in try await connection.query("SELECT pg_is_in_recovery()", logger: logger).decode(Bool.self) {
                return !value
            }
            return false
        }
    }

    /// A `SAMLError` stays (the deadline's, a schema this release cannot run against); anything else
    /// becomes `store.unavailable`.
    static func storeError(_ error: any Error) -> SAMLError {
        if let error = error as? SAMLError { return error }
        return SAMLError(.storeUnavailable, "expected PostgreSQL to answer, found it failing (\(kind(error))): refused, not accepted")
    }

    /// The kind of a failure for logs: PostgreSQL's code, or the error's type; never a message that could
    /// hold data.
    static func kind(_ error: any Error) -> String {
        // The store's own errors (no server to connect to, the deadline) say what was expected and found,
        // never the URL or the password.
        if let error = error as? SAMLError { return "\(error.code.identifier): \(error.message)" }
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState].map { "SQLSTATE \($0)" } ?? "\(error.code)"
        }
        return String(reflecting: type(of: error))
    }
}

/// A lane's connection, kept while it works and replaced after any failure, and the work it runs.
private final class Lane: Sendable {
    /// The event loop of the lane's connection, which its task prefers.
    let executor: LaneExecutor

    init(executor: LaneExecutor) { self.executor = executor }

    private struct State {
        var connection: PostgresConnection?
        var busy: (since: ContinuousClock.Instant, operations: [StoreOperation])?
    }

    private let state = Mutex(State())

    /// The open connection, or a new one from `connect`.
    func current(_ connect: () async throws -> PostgresConnection) async throws -> PostgresConnection {
        if let open = state.withLock({ $0.connection }), !open.isClosed { return open }
        let new = try await connect()
        state.withLock { $0.connection = new }
        return new
    }

    func started(_ operations: [StoreOperation]) { state.withLock { $0.busy = (ContinuousClock.now, operations) } }
    func finished() { state.withLock { $0.busy = nil } }

    /// The operations of the lane's work past their own deadline, which the sweep answers while the work
    /// goes on (an operation that queued for most of its deadline must not get a whole deadline more once
    /// a lane takes it: measured, `grey-failures cut-instance` accepted such logins 2.9 s after they
    /// arrived, on a 2-s deadline, once the lane's new connection got through); and whether the work
    /// itself has run longer than `timeout`, when all of its operations are answered and it is no
    /// longer tracked (its connection is then closed).
    func overdue(now: ContinuousClock.Instant, timeout: Duration) -> (expired: [StoreOperation], stuck: Bool) {
        state.withLock { state in
            guard let busy = state.busy else { return ([], false) }
            if now - busy.since > timeout {
                state.busy = nil
                return (busy.operations, true)
            }
            return (busy.operations.filter { $0.deadline <= now && !$0.isFinished }, false)
        }
    }

    /// Forgets the connection and closes it without waiting for the close (the deadline sweep's way).
    func abandon() {
        if let old = take() { Task { try? await old.close() } }
    }

    /// Closes the connection, if any.
    func drop() async {
        try? await take()?.close()
    }

    /// The connection, forgotten: the next work connects again.
    private func take() -> PostgresConnection? {
        state.withLock { state in
            defer { state.connection = nil }
            return state.connection
        }
    }
}

/// The first of a connection attempt and its timeout to finish resumes the continuation; the other is
/// told it lost.
private final class ConnectRace: Sendable {
    private let continuation = Mutex<CheckedContinuation<PostgresConnection, any Error>?>(nil)

    func begin(_ continuation: CheckedContinuation<PostgresConnection, any Error>) { self.continuation.withLock { $0 = continuation } }

    /// Resumes with `result` if nothing did yet; false when something already had.
    func finish(with result: Result<PostgresConnection, any Error>) -> Bool {
        let waiting = continuation.withLock { state in
            let waiting = state
            state = nil
            return waiting
        }
        guard let continuation = waiting else { return false }
        continuation.resume(with: result)
        return true
    }
}
