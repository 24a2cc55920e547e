/// Remembers assertion IDs until they expire, so that a second use is refused (SAML Profiles 4.1.4.5).
///
/// Async so that a store shared by several server instances (a database, Redis) can implement it.
///
/// Deprecated: the verifier has one state protocol, ``SAMLStateStore``, for replay detection alone
/// (``SAMLResponseVerifier/ReplayProtection/assertions(_:)``) and for requests and assertions together.
@available(*, deprecated, message: "implement SAMLStateStore and use ReplayProtection.assertions(_:)")
public protocol ReplayCache: Sendable {
    /// Records `id` as used until `expiry`. Returns `false` if it was already recorded and has not expired.
    func insertIfAbsent(_ id: String, expiry: SAMLInstant, now: SAMLInstant) async throws -> Bool
}

/// A bounded, in-process ``ReplayCache``: each ID is kept until its expiry (`ExpiringEntries`: expired
/// IDs dropped in expiry order, an insertion O(log n) amortised at any occupancy). Full of IDs that have
/// not expired, an insertion is refused (fail closed) with ``SAMLError/Code/replayCacheFull``, rather than
/// forgetting an ID that is still valid.
@available(*, deprecated, message: "use InMemoryStateStore with ReplayProtection.assertions(_:)")
public final class InMemoryReplayCache: ReplayCache {
    private let entries: Locked<ExpiringEntries<ReplayKey>>
    /// The most IDs kept at once.
    public let capacity: Int

    /// - Parameter capacity: the most IDs kept at once (default ``InMemoryStateStore/defaultCapacity``).
    public init(capacity: Int = InMemoryStateStore.defaultCapacity) {
        self.capacity = max(1, capacity)
        entries = Locked(ExpiringEntries(capacity: capacity))
    }

    public func insertIfAbsent(_ id: String, expiry: SAMLInstant, now: SAMLInstant) async throws -> Bool {
        switch entries.withLock({ $0.insert(ReplayKey(id), expiry: expiry, now: now) }) {
        case .inserted: return true
        case .present: return false
        case .full: throw InMemoryStateStore.full("assertion ID", capacity: capacity)
        }
    }

    /// The number of IDs currently kept (expired ones included until the next insertion).
    public var count: Int { entries.withLock { $0.count } }
}
