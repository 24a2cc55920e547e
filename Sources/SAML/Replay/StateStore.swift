/// The state several verifier instances must share: which requests were answered and which assertions
/// were used.
///
/// With ``SAMLResponseVerifier/ReplayProtection/store(_:unsolicited:)`` the verifier accepts a response
/// only after ``consume(request:assertion:now:)`` recorded, in one atomic step, the request it answers
/// (at most once, only while it can still be answered) and its assertion (at most once per issuer): two
/// instances can never both accept one response, nor two responses to one request. Nothing is written
/// when a request is issued (``RequestIDAuthority`` IDs describe themselves), so the store grows only
/// with responses whose signature verified. Implementations: ``InMemoryStateStore`` (one process), and
/// the PostgreSQL store of the `SAMLPostgres` product (`Server/` package) for several instances.
///
/// A store that cannot answer must throw (``SAMLError/Code/storeUnavailable``, or any error, which the
/// verifier reports as that code): verification then fails closed.
public protocol SAMLStateStore: Sendable {
    /// In one atomic step, checked in this order: the assertion must not have been used (the same issuer
    /// and ID recorded and not expired at `now`); the request, when there is one, must still be
    /// answerable (its expiry after the store's clock: `now` for a store in this process, the database's
    /// for a shared one) and not answered before. Then both are recorded: the request until its expiry,
    /// the assertion until its own. Nothing is recorded unless both are.
    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome
}

/// A ``SAMLStateStore`` that records something made from the verified response in the same atomic step
/// as the assertion (for example the profile a Token Exchange keeps for `GET profiles`): both are
/// recorded, or neither. The verifier hands it ``SAMLResponseVerifier/RequestExpectations/attachment``'s
/// value.
public protocol SAMLAttachingStateStore: SAMLStateStore {
    /// ``SAMLStateStore/consume(request:assertion:now:)``, recording `attachment` too when, and only
    /// when, the outcome is ``StateStoreOutcome/accepted``. An attachment of a kind the store cannot
    /// keep is a configuration error (thrown), never silently dropped.
    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, attaching attachment: any Sendable) async throws
        -> StateStoreOutcome
}

/// An assertion to record as used: keyed by its issuer and its ID (one identity provider's IDs never
/// collide with another's), kept until `expiry`.
public struct UsedAssertion: Sendable, Hashable {
    public var issuer: String
    public var id: String
    public var expiry: SAMLInstant

    public init(issuer: String, id: String, expiry: SAMLInstant) {
        self.issuer = issuer
        self.id = id
        self.expiry = expiry
    }
}

/// What ``SAMLStateStore/consume(request:assertion:now:)`` found.
public enum StateStoreOutcome: Sendable, Hashable {
    /// The request (if any) and the assertion are now recorded.
    case accepted
    /// The assertion was used before. Nothing recorded.
    case replayed
    /// The request was answered before. Nothing recorded.
    case requestAnswered
    /// The request's expiry has passed by the store's clock. Nothing recorded.
    case requestExpired
}

/// A bounded, in-process ``SAMLStateStore`` (the embedded default: one instance, nothing to install).
/// Its entries come only from responses whose signature verified. Fails closed when full of live
/// entries (``SAMLError/Code/replayCacheFull``).
public final class InMemoryStateStore: SAMLStateStore {
    private struct State {
        var answered: [String: SAMLInstant] = [:]
        var used: [AssertionKey: SAMLInstant] = [:]
    }

    private struct AssertionKey: Hashable {
        var issuer: String
        var id: String
    }

    private let state = Locked(State())
    /// The most entries of each kind kept at once.
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    public func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        let key = AssertionKey(issuer: assertion.issuer, id: assertion.id)
        return try state.withLock { state in
            if let used = state.used[key], used > now { return .replayed }
            if let request {
                guard request.expiry > now else { return .requestExpired }
                if let answered = state.answered[request.id], answered > now { return .requestAnswered }
                try Self.makeRoom(&state.answered, capacity: capacity, now: now, what: "answered request")
            }
            try Self.makeRoom(&state.used, capacity: capacity, now: now, what: "assertion ID")
            if let request { state.answered[request.id] = request.expiry }
            state.used[key] = assertion.expiry
            return .accepted
        }
    }

    /// How many entries each kind holds (expired ones included until room is made).
    public var counts: (answeredRequests: Int, usedAssertions: Int) {
        state.withLock { ($0.answered.count, $0.used.count) }
    }

    private static func makeRoom<Key>(_ entries: inout [Key: SAMLInstant], capacity: Int, now: SAMLInstant, what: String) throws {
        guard entries.count >= capacity else { return }
        entries = entries.filter { $0.value > now }
        guard entries.count < capacity else {
            throw SAMLError(.replayCacheFull, "expected room for one more \(what), found all \(capacity) still valid")
        }
    }
}
