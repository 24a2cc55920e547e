import Foundation
import SAML
import SAMLMockIdP
import Testing

/// How long the in-memory stores keep what guards a login: until the verifier would refuse the response
/// anyway, never a millisecond less; and the expiry order that keeps a login's cost flat at any occupancy.
@Suite("Retention and the in-memory stores")
struct RetentionTests {
    static let issued = StateStoreTests.now

    /// A store that records what it was asked to keep, over the in-memory one.
    final class Recording: SAMLStateStore {
        let base = InMemoryStateStore()
        let expiries = Locked<[SAMLInstant]>([])

        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
            expiries.withLock { $0.append(assertion.expiry) }
            return try await base.consume(request: request, assertion: assertion, now: now)
        }
    }

    static func verifier(_ store: any SAMLStateStore, at now: SAMLInstant, maximumAge: Duration? = .seconds(600)) throws
        -> SAMLResponseVerifier
    {
        var configuration = try StateStoreTests.configuration(store, unsolicited: .allow, at: now)
        configuration.maximumAge = maximumAge
        configuration.clockSkew = .seconds(180)
        return try SAMLResponseVerifier(configuration)
    }

    static func response(lifetime: Duration) throws -> [UInt8] {
        var template = MockIdentityProvider.Template()
        template.lifetime = lifetime
        return try StateStoreTests.provider.response(template, issuedAt: issued, placement: .assertion)
    }

    @Test("an hour-long assertion is kept for the maximum age plus the skew (and 1 ms), not for the hour")
    func boundByMaximumAge() async throws {
        let store = Recording()
        _ = try await Self.verifier(store, at: Self.issued + .seconds(1)).verify(try Self.response(lifetime: .seconds(3600)))
        #expect(store.expiries.withLock { $0 } == [Self.issued + .seconds(780) + .milliseconds(1)])
    }

    @Test("a short assertion is kept until its NotOnOrAfter plus the skew; without a maximum age, until its NotOnOrAfter")
    func boundByNotOnOrAfter() async throws {
        let short = Recording()
        _ = try await Self.verifier(short, at: Self.issued + .seconds(1)).verify(try Self.response(lifetime: .seconds(300)))
        #expect(short.expiries.withLock { $0 } == [Self.issued + .seconds(480)])
        let unbounded = Recording()
        _ = try await Self.verifier(unbounded, at: Self.issued + .seconds(1), maximumAge: nil).verify(
            try Self.response(lifetime: .seconds(3600)))
        #expect(unbounded.expiries.withLock { $0 } == [Self.issued + .seconds(3780)])
    }

    @Test("a replay at the last instant the maximum age accepts is refused as a replay; a millisecond later, by its age")
    func replayAtTheLastInstantOfTheAge() async throws {
        let store = InMemoryStateStore()
        let response = try Self.response(lifetime: .seconds(3600))
        let last = Self.issued + .seconds(780)
        _ = try await Self.verifier(store, at: last).verify(response)
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await Self.verifier(store, at: last).verify(response) }
        await #expect(throws: SAMLError(.timeIssueInstant, "")) {
            _ = try await Self.verifier(store, at: last + .milliseconds(1)).verify(response)
        }
    }

    @Test("a replay at the last instant NotOnOrAfter accepts is refused as a replay; at NotOnOrAfter plus the skew, as expired")
    func replayAtTheLastInstantOfTheWindow() async throws {
        let store = InMemoryStateStore()
        let response = try Self.response(lifetime: .seconds(300))
        let last = Self.issued + .seconds(480) - .milliseconds(1)
        _ = try await Self.verifier(store, at: last).verify(response)
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await Self.verifier(store, at: last).verify(response) }
        await #expect(throws: SAMLError.self) { _ = try await Self.verifier(store, at: last + .milliseconds(1)).verify(response) }
        let refused = await #expect(throws: SAMLError.self) {
            _ = try await Self.verifier(store, at: last + .milliseconds(1)).verify(response)
        }
        #expect(refused?.code != .replayDetected)
    }

    @Test("full of live entries the store fails closed; as they expire, in order, room returns")
    func capacityAndExpiryOrder() async throws {
        let store = InMemoryStateStore(capacity: 3)
        let now = Self.issued
        for (index, seconds) in [30, 10, 20].enumerated() {
            let outcome = try await store.consume(
                request: nil, assertion: UsedAssertion(issuer: "i", id: "a\(index)", expiry: now + .seconds(Int64(seconds))), now: now)
            #expect(outcome == .accepted)
        }
        await #expect(throws: SAMLError(.replayCacheFull, "")) {
            _ = try await store.consume(request: nil, assertion: UsedAssertion(issuer: "i", id: "x", expiry: now + .seconds(60)), now: now)
        }
        // At 10 s the first to expire ("a1") leaves: one more fits; "a0" (30 s) and "a2" (20 s) are still replays.
        let later = now + .seconds(10)
        #expect(
            try await store.consume(request: nil, assertion: UsedAssertion(issuer: "i", id: "x", expiry: now + .seconds(60)), now: later)
                == .accepted)
        #expect(
            try await store.consume(request: nil, assertion: UsedAssertion(issuer: "i", id: "a0", expiry: now + .seconds(30)), now: later)
                == .replayed)
        #expect(
            try await store.consume(request: nil, assertion: UsedAssertion(issuer: "i", id: "a2", expiry: now + .seconds(20)), now: later)
                == .replayed)
        #expect(store.counts.usedAssertions == 3)
        // The same ID from another issuer is another key.
        await #expect(throws: SAMLError(.replayCacheFull, "")) {
            _ = try await store.consume(
                request: nil, assertion: UsedAssertion(issuer: "j", id: "a0", expiry: now + .seconds(60)), now: later)
        }
    }

    @Test("the expiry heap gives back every key in expiry order")
    func heapOrder() {
        var generator = SystemRandomNumberGenerator()
        var heap = ExpiryHeap<Int>()
        var expiries: [Int64] = []
        for key in 0..<2000 {
            let expiry = Int64.random(in: 0..<500, using: &generator)
            expiries.append(expiry)
            heap.push(key, expiry: SAMLInstant(millisecondsSinceEpoch: expiry))
        }
        var popped: [Int64] = []
        while let entry = heap.popFirst() {
            #expect(expiries[entry.key] == entry.expiry)
            popped.append(entry.expiry)
        }
        #expect(popped == expiries.sorted())
        heap.push(1, expiry: SAMLInstant(millisecondsSinceEpoch: 5))
        heap.push(2, expiry: SAMLInstant(millisecondsSinceEpoch: 3))
        heap.retain { $0.key == 1 }
        #expect(heap.count == 1 && heap.first?.key == 1)
    }
}
