/// What the in-memory stores keep of an identifier: 128 bits of two SipHash-1-3 values (Swift's
/// `Hasher`, keyed by the process's random seed), so that an entry has a fixed, small size whatever the
/// identifier's length (docs/service.md, "The in-memory store"). Two different identifiers collide with
/// a probability of about n²/2¹²⁹ for n entries; a collision can only refuse a login (as a replay),
/// never accept one, and the key, unknown outside the process, leaves an attacker nothing to aim at.
package struct ReplayKey: Hashable, Sendable {
    private let high: Int
    private let low: Int

    /// The key of `value` in `namespace` (an issuer: one IdP's IDs never make another's look replayed).
    package init(_ value: String, in namespace: String = "") {
        var first = Hasher()
        first.combine(0 as UInt8)
        first.combine(namespace)
        first.combine(value)
        var second = Hasher()
        second.combine(1 as UInt8)
        second.combine(namespace)
        second.combine(value)
        high = first.finalize()
        low = second.finalize()
    }
}
