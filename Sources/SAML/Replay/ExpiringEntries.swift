/// A bounded set of keys, each kept until its expiry: what the in-memory stores remember (assertion IDs,
/// answered requests). Expired keys are dropped in expiry order as time passes (``ExpiryHeap``), so that
/// an insertion costs O(log n) amortised whatever the occupancy: no scan of every entry, no cliff when
/// the set fills. Full of live keys, an insertion is refused: a store must fail closed rather than forget
/// a key that still guards something.
package struct ExpiringEntries<Key: Hashable & Sendable>: Sendable {
    package enum Insertion: Sendable, Equatable {
        case inserted
        /// The key is present and has not expired.
        case present
        /// Every one of ``capacity`` keys is live.
        case full
    }

    private var expiries: [Key: Int64] = [:]
    private var heap = ExpiryHeap<Key>()
    package let capacity: Int

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Live keys (expired ones are dropped at the next ``purge(now:)``).
    package var count: Int { expiries.count }

    /// Whether `key` is present and has not expired at `now`.
    package func contains(_ key: Key, now: SAMLInstant) -> Bool {
        expiries[key].map { $0 > now.millisecondsSinceEpoch } ?? false
    }

    /// Drops every key whose expiry is at or before `now`.
    package mutating func purge(now: SAMLInstant) {
        let limit = now.millisecondsSinceEpoch
        while let first = heap.first, first.expiry <= limit {
            heap.popFirst()
            // A key is in the heap once, with the expiry it has in `expiries` (see insert).
            if expiries[first.key] == first.expiry { expiries[first.key] = nil }
        }
    }

    /// Inserts `key` until `expiry`, after dropping what has expired at `now`.
    package mutating func insert(_ key: Key, expiry: SAMLInstant, now: SAMLInstant) -> Insertion {
        purge(now: now)
        if expiries[key] != nil { return .present }
        guard expiries.count < capacity else { return .full }
        guard expiry > now else { return .inserted }
        expiries[key] = expiry.millisecondsSinceEpoch
        heap.push(key, expiry: expiry)
        return .inserted
    }
}
