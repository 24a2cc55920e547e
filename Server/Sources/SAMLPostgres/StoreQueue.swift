import DequeModule
import SAML
import Synchronization

/// The operations waiting for a connection, oldest first, and the lanes waiting for work. Consumes and
/// profile saves are taken together, up to a batch, for one transaction; jobs are taken one at a time.
/// Bounded: beyond ``capacity`` waiting operations, a new one fails closed at once.
///
/// Group commit: while one batch is in flight, the writes that arrive wait for it and go together in
/// the next one, unless half a batch is already waiting (then another lane takes them at once). So a
/// quiet store answers each write with one transaction without delay, and a busy one spends one commit
/// on many writes instead of one connection's commit on each.
///
/// The batching window: when writes arrive, on average, more often than ``batchWindow`` (the store has
/// company coming) and the next batch would carry fewer than ``batchTarget``, its lane waits
/// (``fill(_:)``) until enough writes to reach the target are queued, or ``batchWindow`` has passed,
/// whichever comes first, and takes the writes that arrived meanwhile (``more(for:)``) into the same
/// transaction. A commit costs the database far more than a row (BENCHMARKS.md), so fewer, fuller commits
/// leave more of a shared machine to everything else. The rate, not the last batch, decides: at a few
/// hundred logins a second per instance each login would otherwise get a commit of its own, which is
/// where a commit costs the most a login. A quiet store (writes further apart than the window) never
/// waits. Between the two, from one write a window (50 a second per instance at 20 ms) to the target's
/// worth in one window (about 300 a second), a small batch waits the whole window: that is where each
/// wait saves the most commits, and where it costs the most latency (BENCHMARKS.md: at 165 logins a
/// second per instance, 4.0 logins a commit and p99 26.5 ms). Above, batches reach the target sooner.
final class StoreQueue: Sendable {
    /// What a lane takes: a batch of writes for one transaction, or one job.
    enum Work: Sendable {
        /// Writes for one transaction; `waits`: the lane waits ``batchWindow`` and adds ``more(for:)``
        /// (writes arrive more often than the window, and this batch is small).
        case batch([StoreOperation], waits: Bool)
        case job(StoreOperation)
    }

    private struct State {
        var writes: Deque<(sequence: UInt64, operation: StoreOperation)> = []
        var jobs: Deque<(sequence: UInt64, operation: StoreOperation)> = []
        var sequence: UInt64 = 0
        var idleLanes: [CheckedContinuation<Void, Never>] = []
        var closed = false
        var writeBatchesInFlight = 0
        /// When the last write arrived, and the mean gap between writes (an exponential moving average,
        /// each gap counted at most a second): the rate that says whether a small batch has company coming.
        var lastArrival: ContinuousClock.Instant?
        var meanGap: Duration = .seconds(1)
        /// The lanes filling their batch (``fill(_:)``): the number of queued writes that ends the wait,
        /// and the lane's continuation.
        var filling: [UInt64: (needed: Int, lane: CheckedContinuation<Void, Never>)] = [:]
        var fillings: UInt64 = 0
        var count: Int { writes.count + jobs.count }
    }

    let capacity: Int
    let maximumBatch: Int
    /// The longest a batch smaller than ``batchTarget`` waits for more writes while writes arrive more
    /// often than this; zero: never.
    let batchWindow: Duration
    /// The batch size below which a batch waits for ``batchWindow``.
    let batchTarget: Int
    private let state = Mutex(State())

    init(capacity: Int, maximumBatch: Int, batchWindow: Duration = .zero, batchTarget: Int = 1) {
        self.capacity = max(1, capacity)
        self.maximumBatch = max(1, maximumBatch)
        self.batchWindow = min(max(.zero, batchWindow), .milliseconds(50))
        self.batchTarget = min(max(1, batchTarget), self.maximumBatch)
    }

    /// Queues an operation and wakes an idle lane; throws ``SAMLError/Code/storeUnavailable`` when the
    /// queue is full or closed (the store is not running).
    func submit(_ operation: StoreOperation) throws {
        let lanes = try state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.closed else {
                throw SAMLError(.storeUnavailable, "expected the PostgreSQL store to be running, found it stopped: refused, not accepted")
            }
            guard state.count < capacity else {
                throw SAMLError(
                    .storeUnavailable,
                    "expected fewer than \(capacity) operations waiting for PostgreSQL, found the queue full: refused, not accepted")
            }
            state.sequence += 1
            if case .job = operation.kind {
                state.jobs.append((state.sequence, operation))
            } else {
                state.writes.append((state.sequence, operation))
                let now = ContinuousClock.now
                if let last = state.lastArrival { state.meanGap = (state.meanGap * 7 + min(now - last, .seconds(1))) / 8 }
                state.lastArrival = now
            }
            // An idle lane takes the work; and a lane filling its batch may now have enough.
            return [canTake(state) ? state.idleLanes.popLast() : nil, filled(&state)].compactMap { $0 }
        }
        lanes.forEach { $0.resume() }
    }

    /// A lane waiting to fill its batch that the queued writes now fill, taken out of the waiting.
    private func filled(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        guard !state.filling.isEmpty else { return nil }
        guard let (id, filling) = state.filling.first(where: { state.writes.count >= $0.value.needed }) else { return nil }
        state.filling[id] = nil
        return filling.lane
    }

    /// Waits until enough writes are queued to bring a batch of `size` to ``batchTarget``, or
    /// ``batchWindow`` has passed, or the queue closes; then the lane takes them with ``more(for:)``.
    func fill(_ size: Int) async {
        let needed = batchTarget - size
        guard needed > 0 else { return }
        let window = batchWindow
        // Started once the lane waits, so that it always finds the wait it ends (or none, if over). A
        // task's sleep on Swift's pool, not a timer on the lane's event loop: under load it ends somewhat
        // after the window, which is part of what fills batches. Measured (2026-11-30, two instances, 16
        // connections, alternated in one run): the event loop's timer, on time, gave 3.8 logins a
        // commit instead of 5.0, and saved only 3% of the instances' context switches.
        var timer: Task<Void, Never>?
        await withCheckedContinuation { (lane: CheckedContinuation<Void, Never>) in
            let id = state.withLock { state -> UInt64? in
                guard state.writes.count < needed, !state.closed else { return nil }
                state.fillings += 1
                state.filling[state.fillings] = (needed, lane)
                return state.fillings
            }
            guard let id else { return lane.resume() }
            timer = Task {
                try? await Task.sleep(for: window)
                self.state.withLock { $0.filling.removeValue(forKey: id) }?.lane.resume()
            }
        }
        timer?.cancel()
    }

    /// A batch of writes taken by ``next()`` is over (committed or failed): the writes that waited for it
    /// can go.
    func batchFinished() {
        let lane = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.writeBatchesInFlight -= 1
            return canTake(state) ? state.idleLanes.popLast() : nil
        }
        lane?.resume()
    }

    /// Whether a lane would find work: a job, or writes that may go now.
    private func canTake(_ state: State) -> Bool {
        !state.jobs.isEmpty
            || (!state.writes.isEmpty && (state.writeBatchesInFlight == 0 || state.writes.count >= max(1, maximumBatch / 2)))
    }

    /// The oldest work: a batch of writes starting with the oldest write (duplicates of a key already in
    /// the batch stay queued, in order, for the next one), or the oldest job; nil once closed.
    func next() async -> Work? {
        while true {
            enum Step {
                case work(Work)
                case closed
                case wait
            }
            let step = state.withLock { state -> Step in
                if state.closed { return .closed }
                if let work = take(&state) { return .work(work) }
                return .wait
            }
            switch step {
            case .work(let work): return work
            case .closed: return nil
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if state.closed || canTake(state) { return true }
                        state.idleLanes.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    /// Stops handing out work and wakes every idle lane; operations still queued fail closed.
    func close() {
        let (lanes, left) = state.withLock { state -> ([CheckedContinuation<Void, Never>], [StoreOperation]) in
            state.closed = true
            var lanes = state.idleLanes
            lanes += state.filling.values.map(\.lane)
            state.filling = [:]
            let left = state.writes.map(\.operation) + state.jobs.map(\.operation)
            state.idleLanes = []
            state.writes = []
            state.jobs = []
            return (lanes, left)
        }
        lanes.forEach { $0.resume() }
        for operation in left {
            operation.finish(
                .failure(
                    SAMLError(.storeUnavailable, "expected the PostgreSQL store to be running, found it stopped: refused, not accepted")))
        }
    }

    /// Answers every queued operation past its deadline (`store.unavailable`) and drops it.
    func expire(now: ContinuousClock.Instant, _ failure: SAMLError) {
        let expired = state.withLock { state -> [StoreOperation] in
            var expired: [StoreOperation] = []
            for queue in [\State.writes, \State.jobs] where state[keyPath: queue].contains(where: { $0.operation.deadline <= now }) {
                expired += state[keyPath: queue].filter { $0.operation.deadline <= now }.map(\.operation)
                state[keyPath: queue].removeAll { $0.operation.deadline <= now }
            }
            return expired
        }
        expired.forEach { $0.finish(.failure(failure)) }
    }

    private func take(_ state: inout State) -> Work? {
        // Operations whose callers gave up are dropped, not run.
        while let first = state.writes.first, first.operation.isFinished { state.writes.removeFirst() }
        while let first = state.jobs.first, first.operation.isFinished { state.jobs.removeFirst() }
        // Writes wait for the batch in flight unless half a batch is waiting.
        let writesMayGo = state.writeBatchesInFlight == 0 || state.writes.count >= max(1, maximumBatch / 2)
        switch (writesMayGo ? state.writes.first : nil, state.jobs.first) {
        case (nil, nil):
            return nil
        case (let write?, let job?) where job.sequence < write.sequence:
            state.jobs.removeFirst()
            return .job(job.operation)
        case (nil, _?):
            return .job(state.jobs.removeFirst().operation)
        default:
            var batch: [StoreOperation] = []
            var keys: Set<String> = []
            fill(&batch, keys: &keys, from: &state)
            guard !batch.isEmpty else { return nil }
            state.writeBatchesInFlight += 1
            // Company is coming when writes arrive, on average, more often than the window.
            let waits = batchWindow > .zero && batch.count < batchTarget && state.meanGap < batchWindow
            return .batch(batch, waits: waits)
        }
    }

    /// The writes queued since `batch` was taken that may join it (none sharing its keys, up to a batch).
    func more(for batch: [StoreOperation]) -> [StoreOperation] {
        state.withLock { state in
            var joined = batch
            var keys = Set(batch.flatMap(\.batchKeys))
            fill(&joined, keys: &keys, from: &state)
            return Array(joined[batch.count...])
        }
    }

    /// Moves the oldest writes into `batch` up to a batch, skipping those whose callers gave up; a write
    /// sharing a key with the batch stays queued, in order, for the next one.
    private func fill(_ batch: inout [StoreOperation], keys: inout Set<String>, from state: inout State) {
        var deferred: [(sequence: UInt64, operation: StoreOperation)] = []
        while batch.count < maximumBatch, let entry = state.writes.popFirst() {
            if entry.operation.isFinished { continue }
            let own = entry.operation.batchKeys
            if own.contains(where: keys.contains) {
                deferred.append(entry)
                // Past a few duplicates, leave the rest for the next batch as they are.
                if deferred.count >= maximumBatch { break }
                continue
            }
            keys.formUnion(own)
            batch.append(entry.operation)
        }
        for entry in deferred.reversed() { state.writes.prepend(entry) }
    }
}
