import DequeModule
import Synchronization

/// At most `limit` verifications at once, at most `queue` more waiting (first come, first served);
/// beyond that a request is refused at once, so that a burst costs a bounded amount of memory and
/// latency and the service answers `503` with `Retry-After` instead of slowing every login down.
final class AdmissionControl: Sendable {
    private struct State {
        var running = 0
        var waiting = Deque<CheckedContinuation<Void, Never>>()
    }

    let limit: Int
    let queue: Int
    private let state = Mutex(State())

    init(limit: Int, queue: Int) {
        self.limit = max(1, limit)
        self.queue = max(0, queue)
    }

    private enum Entry { case run, wait, refuse }

    /// Runs `body` once a slot is free; nil, without running it, when every slot and the queue are taken.
    func run<T: Sendable>(_ body: () async -> T) async -> T? {
        let entry = state.withLock { state -> Entry in
            if state.running < limit {
                state.running += 1
                return .run
            }
            return state.waiting.count < queue ? .wait : .refuse
        }
        switch entry {
        case .refuse:
            return nil
        case .wait:
            await withCheckedContinuation { continuation in
                let admitted = state.withLock { state -> Bool in
                    // A slot may have freed between the two locks.
                    if state.running < limit {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        case .run:
            break
        }
        defer { release() }
        return await body()
    }

    /// Hands the slot to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let first = state.waiting.popFirst() { return first }
            state.running -= 1
            return nil
        }
        next?.resume()
    }
}
