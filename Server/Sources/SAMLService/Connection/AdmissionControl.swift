import DequeModule
import SAML
import Synchronization

/// At most `limit` verifications at once, at most `queue` more waiting (first come, first served);
/// beyond that a request is refused at once, so that a burst costs a bounded amount of memory and
/// latency and the service answers `503` with `Retry-After` instead of slowing every login down.
///
/// A slot bounds the CPU work of a request (decoding, parsing, the signature), not its wait for the
/// shared store: a request gives its slot up when it reaches the store (``Slot/release()``: the Token
/// Exchange hands it to the verifier as `RequestExpectations.willRecord`), where the store's own queue and
/// deadline bound it. Otherwise each instance would run at most `limit` logins at once however fast it
/// verifies, paced by the database's round trips.
final class AdmissionControl: Sendable {
    /// One admitted request's slot, given back once: when the request reaches the store, or at its end.
    final class Slot: Sendable {
        private let control: AdmissionControl
        private let held = Atomic<Bool>(true)

        init(_ control: AdmissionControl) { self.control = control }

        /// What a verification hands the verifier so that the slot is given up when the response reaches
        /// the store (`RequestExpectations.willRecord`).
        static func givenUpAtTheStore(_ slot: Slot?) -> SAMLResponseVerifier.RequestExpectations {
            var expectations = SAMLResponseVerifier.RequestExpectations()
            if let slot { expectations.willRecord = { slot.release() } }
            return expectations
        }

        func release() {
            if held.exchange(false, ordering: .acquiringAndReleasing) { control.release() }
        }
    }

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

    /// Runs `body` with its slot once one is free (the slot is given back when `body` returns, if `body`
    /// has not given it up before); nil, without running it, when every slot and the queue are taken.
    func run<T: Sendable>(_ body: (Slot) async -> T) async -> T? {
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
        let slot = Slot(self)
        defer { slot.release() }
        return await body(slot)
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
