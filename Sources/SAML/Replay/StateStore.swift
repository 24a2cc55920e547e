import Synchronization

/// The state several verifier instances must share: which requests are outstanding (sent, not yet
/// answered) and which assertions were used. A ``ReplayCache`` that also keeps outstanding requests.
///
/// With ``SAMLResponseVerifier/ReplayProtection/store(_:unsolicited:)`` the verifier accepts a response
/// only if its signed `InResponseTo` names an outstanding request, which is consumed in the same atomic
/// step that records the assertion ID: two instances can never both accept one response, nor two
/// responses to one request. Implementations: ``InMemoryStateStore`` (one process), and the PostgreSQL
/// store of the `SAMLPostgres` product (`Server/` package) for several instances.
///
/// A store that cannot answer must throw (``SAMLError/Code/storeUnavailable``, or any error, which the
/// verifier reports as that code): verification then fails closed.
public protocol SAMLStateStore: ReplayCache {
    /// Records `requestID` as outstanding until `expiry`.
    func recordOutstandingRequest(_ requestID: String, expiry: SAMLInstant) async throws

    /// In one atomic step: consumes the outstanding request `requestID` (it must be recorded, not yet
    /// consumed and not expired at `now`) and records `assertionID` as used until `expiry`.
    func consume(request requestID: String, assertion assertionID: String, expiry: SAMLInstant, now: SAMLInstant) async throws
        -> StateStoreOutcome
}

/// What ``SAMLStateStore/consume(request:assertion:expiry:now:)`` found.
public enum StateStoreOutcome: Sendable, Hashable {
    /// The request was outstanding and is now consumed; the assertion is recorded.
    case accepted
    /// No such outstanding request: never issued, expired, or already answered. Nothing recorded.
    case requestNotOutstanding
    /// The assertion was used before.
    case replayed
}

/// A bounded, in-process ``SAMLStateStore`` (the embedded default: one instance, nothing to install).
/// Fails closed when full of live entries (``SAMLError/Code/replayCacheFull``).
public final class InMemoryStateStore: SAMLStateStore {
    private struct State {
        var outstanding: [String: SAMLInstant] = [:]
        var used: [String: SAMLInstant] = [:]
    }

    private let state = Mutex(State())
    /// The most entries of each kind kept at once.
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    public func recordOutstandingRequest(_ requestID: String, expiry: SAMLInstant) async throws {
        let now = SAMLInstant.now()
        try state.withLock { state in
            try Self.makeRoom(&state.outstanding, capacity: capacity, now: now, what: "outstanding request")
            state.outstanding[requestID] = expiry
        }
    }

    public func consume(request requestID: String, assertion assertionID: String, expiry: SAMLInstant, now: SAMLInstant) async throws
        -> StateStoreOutcome
    {
        try state.withLock { state in
            if let used = state.used[assertionID], used > now { return .replayed }
            guard let until = state.outstanding[requestID], until > now else { return .requestNotOutstanding }
            try Self.makeRoom(&state.used, capacity: capacity, now: now, what: "assertion ID")
            state.outstanding[requestID] = nil
            state.used[assertionID] = expiry
            return .accepted
        }
    }

    public func insertIfAbsent(_ id: String, expiry: SAMLInstant, now: SAMLInstant) async throws -> Bool {
        try state.withLock { state in
            if let used = state.used[id], used > now { return false }
            try Self.makeRoom(&state.used, capacity: capacity, now: now, what: "assertion ID")
            state.used[id] = expiry
            return true
        }
    }

    private static func makeRoom(_ entries: inout [String: SAMLInstant], capacity: Int, now: SAMLInstant, what: String) throws {
        guard entries.count >= capacity else { return }
        entries = entries.filter { $0.value > now }
        guard entries.count < capacity else {
            throw SAMLError(.replayCacheFull, "expected room for one more \(what), found all \(capacity) still valid")
        }
    }
}
