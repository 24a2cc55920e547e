/// Keys ordered by the instant each expires: the soonest in O(1), a push or a pop in O(log n). The
/// in-memory stores find what has expired, and what expires first, without scanning every entry.
package struct ExpiryHeap<Key: Hashable>: Sendable where Key: Sendable {
    package struct Entry: Sendable {
        package var expiry: Int64
        package var key: Key
    }

    /// A binary min-heap on `expiry`.
    private var entries: [Entry] = []

    package init() {}

    package var count: Int { entries.count }

    /// The entry that expires first.
    package var first: Entry? { entries.first }

    package mutating func push(_ key: Key, expiry: SAMLInstant) {
        entries.append(Entry(expiry: expiry.millisecondsSinceEpoch, key: key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].expiry < entries[parent].expiry else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the entry that expires first.
    @discardableResult
    package mutating func popFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        let first = entries[0]
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            let right = left + 1
            let child = right < entries.count && entries[right].expiry < entries[left].expiry ? right : left
            guard entries[child].expiry < entries[parent].expiry else { break }
            entries.swapAt(child, parent)
            parent = child
        }
        return first
    }

    /// Keeps only the entries `isCurrent` accepts (for a heap whose keys can be replaced or removed
    /// outside it), in O(n): call it when stale entries outnumber the current ones, so that its cost is
    /// amortised over the pushes that made them.
    package mutating func retain(where isCurrent: (Entry) -> Bool) {
        let kept = entries.filter(isCurrent)
        entries = []
        entries.reserveCapacity(kept.count)
        for entry in kept { push(entry.key, expiry: SAMLInstant(millisecondsSinceEpoch: entry.expiry)) }
    }
}
