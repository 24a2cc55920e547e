import DequeModule
import SAML
import Synchronization

/// The operations waiting for a connection, oldest first, and the lanes waiting for work. Consumes and
/// profile saves are taken together, up to a batch, for one transaction; jobs are taken one at a time.
/// Bounded: beyond ``capacity`` waiting operations, a new one fails closed at once.
final class OperationQueue: Sendable {
    /// What a lane takes: a batch of writes for one transaction, or one job.
    enum Work: Sendable {
        case batch([StoreOperation])
        case job(StoreOperation)
    }

    private struct State {
        var writes: Deque<(sequence: UInt64, operation: StoreOperation)> = []
        var jobs: Deque<(sequence: UInt64, operation: StoreOperation)> = []
        var sequence: UInt64 = 0
        var idleLanes: [CheckedContinuation<Void, Never>] = []
        var closed = false
        var count: Int { writes.count + jobs.count }
    }

    let capacity: Int
    let maximumBatch: Int
    private let state = Mutex(State())

    init(capacity: Int, maximumBatch: Int) {
        self.capacity = max(1, capacity)
        self.maximumBatch = max(1, maximumBatch)
    }

    /// Queues an operation and wakes an idle lane; throws ``SAMLError/Code/storeUnavailable`` when the
    /// queue is full or closed (the store is not running).
    func submit(_ operation: StoreOperation) throws {
        let lane = try state.withLock { state -> CheckedContinuation<Void, Never>? in
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
            }
            return state.idleLanes.popLast()
        }
        lane?.resume()
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
                        if state.closed || state.count > 0 { return true }
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
            let lanes = state.idleLanes
            let left = state.writes.map(\.operation) + state.jobs.map(\.operation)
            state.idleLanes = []
            state.writes = []
            state.jobs = []
            return (lanes, left)
        }
        lanes.forEach { $0.resume() }
        for operation in left {
            operation.finish(
                .failure(SAMLError(.storeUnavailable, "expected the PostgreSQL store to be running, found it stopped: refused, not accepted")))
        }
    }

    private func take(_ state: inout State) -> Work? {
        // Operations whose callers gave up are dropped, not run.
        while let first = state.writes.first, first.operation.isFinished { state.writes.removeFirst() }
        while let first = state.jobs.first, first.operation.isFinished { state.jobs.removeFirst() }
        switch (state.writes.first, state.jobs.first) {
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
            return batch.isEmpty ? nil : .batch(batch)
        }
    }
}
