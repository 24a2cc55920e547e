/// Remembers assertion IDs until they expire, so that a second use is refused (SAML Profiles 4.1.4.5).
///
/// Async so that a store shared by several server instances (a database, Redis) can implement it.
public protocol ReplayCache: Sendable {
    /// Records `id` as used until `expiry`. Returns `false` if it was already recorded and has not expired.
    func insertIfAbsent(_ id: String, expiry: SAMLInstant, now: SAMLInstant) async throws -> Bool
}

/// A bounded, in-process ``ReplayCache``. When full, expired entries are dropped first; if none has
/// expired, the insertion is refused (fail closed) with ``SAMLError/Code/replayDetected``'s sibling
/// error, rather than forgetting an ID that is still valid.
public final class InMemoryReplayCache: ReplayCache {
    private struct State {
        var expiries: [String: SAMLInstant] = [:]
    }

    private let state = Locked(State())
    /// The most IDs kept at once.
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    public func insertIfAbsent(_ id: String, expiry: SAMLInstant, now: SAMLInstant) async throws -> Bool {
        try state.withLock { state in
            if let existing = state.expiries[id], existing > now {
                return false
            }
            if state.expiries.count >= capacity {
                state.expiries = state.expiries.filter { $0.value > now }
                guard state.expiries.count < capacity else {
                    throw SAMLError(.replayCacheFull, "expected room for one more assertion ID, found all \(capacity) still valid")
                }
            }
            state.expiries[id] = expiry
            return true
        }
    }

    /// The number of IDs currently kept (expired ones included until the next clean-up).
    public var count: Int { state.withLock { $0.expiries.count } }
}
