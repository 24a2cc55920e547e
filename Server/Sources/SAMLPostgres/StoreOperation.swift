import AppleSSO
import PostgresNIO
import SAML
import Synchronization

/// One operation of the store waiting for a connection: a consume or a profile save (carried with others
/// in one transaction, ``GroupCommit``), or a job of its own (a read, the schema, the clean-up). Its
/// caller waits for ``wait(submittingTo:)``; it is answered once, by a lane or by the caller's own
/// cancellation (its deadline), whichever comes first; a lane skips an operation whose caller gave up.
final class StoreOperation: Sendable {
    enum Kind: Sendable {
        /// A consume, and the profile to keep with it when it is accepted.
        case consume(UsedAssertion, IssuedRequestID?, StoredProfile?)
        case save(StoredProfile)
        case job(@Sendable (PostgresConnection) async throws -> any Sendable)
    }

    enum Answer: Sendable {
        case outcome(StateStoreOutcome)
        case saved
        case value(any Sendable)
    }

    private enum State {
        case created
        case waiting(CheckedContinuation<Answer, Error>)
        case finished
    }

    let kind: Kind
    /// When the caller stops waiting: past it the operation is answered `store.unavailable` (by the
    /// lanes' sweep, whether it waits in the queue or runs), and skipped if still queued.
    let deadline: ContinuousClock.Instant
    /// Whether a request waits for it (a login's write, a device's profiles read): only those make the
    /// store's outage warning and readiness (the directory's reads, the clean-up and the probes do not:
    /// they cannot tell an operator that a request failed).
    let servesRequest: Bool
    private let state = Mutex(State.created)

    init(_ kind: Kind, deadline: ContinuousClock.Instant, servesRequest: Bool) {
        self.kind = kind
        self.deadline = deadline
        self.servesRequest = servesRequest
    }

    /// Whether the operation was answered already (its caller gave up, or a lane answered it).
    var isFinished: Bool {
        state.withLock {
            if case .finished = $0 { return true }
            return false
        }
    }

    /// Submits the operation and waits for its answer; cancellation (the caller's deadline) answers it
    /// with `CancellationError` and leaves it for the lanes to skip.
    func wait(submittingTo queue: StoreQueue) async throws -> Answer {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Answer, Error>) in
                let cancelled = state.withLock { state -> Bool in
                    guard case .created = state else { return true }
                    state = .waiting(continuation)
                    return false
                }
                if cancelled { return continuation.resume(throwing: CancellationError()) }
                do {
                    try queue.submit(self)
                } catch {
                    finish(.failure(error))
                }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    /// Answers the operation unless it was answered already.
    func finish(_ result: Result<Answer, Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Answer, Error>? in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(with: result)
    }

    /// The keys two operations of one transaction must not share: the assertion, the request, the
    /// profile's row (PostgreSQL refuses to update one row twice in a statement, and a duplicate insert
    /// would leave its two operations without a way to tell which one was recorded).
    var batchKeys: [String] {
        switch kind {
        case .consume(let assertion, let request, let profile):
            ["a\u{0}\(assertion.issuer)\u{0}\(assertion.id)"] + (request.map { ["r\u{0}\($0.id)"] } ?? [])
                + (profile.map { [Self.key($0)] } ?? [])
        case .save(let profile):
            [Self.key(profile)]
        case .job:
            []
        }
    }

    private static func key(_ profile: StoredProfile) -> String {
        "p\u{0}\(profile.serviceProvider)\u{0}\(profile.device)\u{0}\(profile.mvpd)"
    }
}
