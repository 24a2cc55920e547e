import DequeModule
import SAML
import Synchronization

/// Assertions this process knows to be recorded as used in the database (it recorded them, or the
/// database refused them as replays), until their expiry: a replay of one is refused without a round
/// trip or a write. Only the database's committed answers enter it, and only for responses whose
/// signature verified, so it never accepts and an attacker cannot fill it without valid responses. At
/// most `capacity` entries; the oldest go first.
final class RecentlyUsedAssertions: Sendable {
    private struct Key: Hashable {
        var issuer: String
        var id: String
    }

    private struct State {
        var expiries: [Key: SAMLInstant] = [:]
        var order: Deque<Key> = []
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// Whether `assertion` is known used at `now` (its expiry not passed yet).
    func contains(_ assertion: UsedAssertion, now: SAMLInstant) -> Bool {
        guard capacity > 0 else { return false }
        return state.withLock { $0.expiries[Key(issuer: assertion.issuer, id: assertion.id)].map { $0 > now } ?? false }
    }

    /// Remembers `assertion` as used until its expiry.
    func insert(_ assertion: UsedAssertion) {
        guard capacity > 0 else { return }
        let key = Key(issuer: assertion.issuer, id: assertion.id)
        state.withLock { state in
            if state.expiries.updateValue(assertion.expiry, forKey: key) == nil { state.order.append(key) }
            while state.order.count > capacity, let oldest = state.order.popFirst() { state.expiries[oldest] = nil }
        }
    }
}
