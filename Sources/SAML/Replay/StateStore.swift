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
    /// for a shared one) and not answered before; the assertion's own expiry must be after the store's
    /// clock (past it, a shared store may already have forgotten the assertion, so recording it could
    /// not stop its replay: an instance whose clock is behind the others' gets
    /// ``StateStoreOutcome/assertionExpired``). Then both are recorded: the request until its expiry, the
    /// assertion until its own. Nothing is recorded unless both are.
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
    /// The assertion's expiry (``UsedAssertion/expiry``) has passed by the store's clock: the verifier's
    /// clock is behind the store's, and a shared store may already have removed the assertion's entry.
    /// Nothing recorded.
    case assertionExpired
}

/// A bounded, in-process ``SAMLStateStore`` (the embedded default: one instance, nothing to install).
/// Its entries come only from responses whose signature verified, and each is kept only until the
/// verifier would refuse its response anyway (``UsedAssertion/expiry``, ``IssuedRequestID/expiry``).
/// Expired entries are dropped in expiry order as time passes (`ExpiringEntries`), so a login costs the
/// same at any occupancy. Full of live entries, it fails closed (``SAMLError/Code/replayCacheFull``).
///
/// An entry takes about 100 bytes whatever the identifiers' length (94 measured by
/// `saml bench --occupancy`): a 128-bit `ReplayKey`, its expiry, its place in the expiry order and the
/// tables' spare room (docs/service.md, "The in-memory store").
public final class InMemoryStateStore: SAMLStateStore {
    /// One instance's peak login rate for the whole retention window, with headroom: 3,000 logins a second
    /// (the service on two cores measured 2,400-2,800) for 780 s (a `maximumAge` of 600 s, the default
    /// before 60 s, plus the default `clockSkew`, 180 s), 2.34 million, rounded up: with the defaults (240 s,
    /// or the service's 300 s request lifetime) over twice the headroom. About 300 MB of each kind when full.
    public static let defaultCapacity = 3_000_000

    private struct State {
        var answered: ExpiringEntries<ReplayKey>
        var used: ExpiringEntries<ReplayKey>
    }

    private let state: Locked<State>
    /// The most entries of each kind kept at once.
    public let capacity: Int

    /// - Parameter capacity: the most entries of each kind (assertion IDs, answered requests) kept at once.
    public init(capacity: Int = InMemoryStateStore.defaultCapacity) {
        self.capacity = max(1, capacity)
        state = Locked(State(answered: ExpiringEntries(capacity: capacity), used: ExpiringEntries(capacity: capacity)))
    }

    public func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        let key = ReplayKey(assertion.id, in: assertion.issuer)
        let requestKey = request.map { ReplayKey($0.id) }
        return try state.withLock { state in
            state.used.purge(now: now)
            if state.used.contains(key, now: now) { return .replayed }
            if let request, let requestKey {
                guard request.expiry > now else { return .requestExpired }
                state.answered.purge(now: now)
                if state.answered.contains(requestKey, now: now) { return .requestAnswered }
                guard state.answered.count < state.answered.capacity else { throw Self.full("answered request", capacity: capacity) }
            }
            guard assertion.expiry > now else { return .assertionExpired }
            guard state.used.count < state.used.capacity else { throw Self.full("assertion ID", capacity: capacity) }
            if let request, let requestKey { _ = state.answered.insert(requestKey, expiry: request.expiry, now: now) }
            _ = state.used.insert(key, expiry: assertion.expiry, now: now)
            return .accepted
        }
    }

    /// How many live entries each kind holds (expired ones are dropped at the next consumption).
    public var counts: (answeredRequests: Int, usedAssertions: Int) {
        state.withLock { ($0.answered.count, $0.used.count) }
    }

    /// The error of a store full of live entries: it names what to change.
    static func full(_ what: String, capacity: Int) -> SAMLError {
        SAMLError(
            .replayCacheFull,
            "expected room for one more \(what), found all \(capacity) still valid (raise the in-memory store's capacity, the service's memoryStoreCapacity, or use a shared store)"
        )
    }
}
