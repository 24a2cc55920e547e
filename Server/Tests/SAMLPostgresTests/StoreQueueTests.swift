import AppleSSO
import Foundation
import SAML
import Testing

@testable import SAMLPostgres

/// The store's queue without a database: what one transaction takes, what waits, what fails closed.
@Suite("PostgreSQL store queue")
struct StoreQueueTests {
    static func consume(_ id: String, request: String? = nil, deadline: Duration = .seconds(2)) -> StoreOperation {
        StoreOperation(
            .consume(
                UsedAssertion(issuer: "https://idp.example.com", id: id, expiry: .now() + .seconds(300)),
                request.map { IssuedRequestID(id: $0, expiry: .now() + .seconds(300)) }, nil),
            deadline: .now + deadline, servesRequest: true)
    }

    static func ids(_ work: StoreQueue.Work?) -> [String] {
        guard case .batch(let operations, _) = work else { return [] }
        return operations.compactMap {
            if case .consume(let assertion, _, _) = $0.kind { return assertion.id }
            return nil
        }
    }

    @Test("one transaction never carries two writes of one assertion or one request: the second waits, in order, for the next")
    func duplicatesWait() async throws {
        let queue = StoreQueue(capacity: 100, maximumBatch: 8)
        for operation in [
            Self.consume("a"), Self.consume("a"), Self.consume("b", request: "r"), Self.consume("c", request: "r"), Self.consume("d"),
        ] {
            try queue.submit(operation)
        }
        #expect(Self.ids(await queue.next()) == ["a", "b", "d"])
        queue.batchFinished()
        #expect(Self.ids(await queue.next()) == ["a", "c"])
    }

    @Test("while a batch is in flight the next writes wait for it, unless half a batch waits; then they go at once")
    func oneBatchInFlight() async throws {
        let queue = StoreQueue(capacity: 100, maximumBatch: 4)
        try queue.submit(Self.consume("first"))
        #expect(Self.ids(await queue.next()) == ["first"])
        try queue.submit(Self.consume("second"))
        let waiting = Task { await queue.next() }
        try await Task.sleep(for: .milliseconds(50))
        // One write waits (less than half of 4): the lane is still idle. A second makes half a batch.
        try queue.submit(Self.consume("third"))
        #expect(Self.ids(await waiting.value) == ["second", "third"])
        queue.batchFinished()
        queue.batchFinished()
        try queue.submit(Self.consume("fourth"))
        #expect(Self.ids(await queue.next()) == ["fourth"], "nothing in flight: a lone write goes at once")
    }

    static func waits(_ work: StoreQueue.Work?) -> Bool {
        if case .batch(_, let waits) = work { return waits }
        return false
    }

    @Test("the batching window: a small batch waits while writes arrive more often than the window; a quiet store's never waits")
    func batchingWindow() async throws {
        let queue = StoreQueue(capacity: 100, maximumBatch: 8, batchWindow: .milliseconds(50), batchTarget: 4)
        // Quiet: a lone write goes at once, and does not wait (no rate yet).
        try queue.submit(Self.consume("lone"))
        let lone = await queue.next()
        #expect(Self.ids(lone) == ["lone"] && !Self.waits(lone))
        queue.batchFinished()
        // Writes arriving far more often than the window (back to back): the mean gap falls below it.
        for number in 0..<40 {
            try queue.submit(Self.consume("busy-\(number)"))
            if number % 8 == 7 {
                _ = await queue.next()
                queue.batchFinished()
            }
        }
        try queue.submit(Self.consume("c", request: "r"))
        let small = await queue.next()
        guard case .batch(let taken, waits: true) = small else {
            Issue.record("expected a batch told to wait")
            return
        }
        // Arriving during the window: a write sharing the batch's request stays for the next batch, in order.
        try queue.submit(Self.consume("d", request: "r"))
        try queue.submit(Self.consume("e"))
        try queue.submit(Self.consume("f"))
        let joined = queue.more(for: taken)
        #expect(Self.ids(.batch(taken + joined, waits: false)) == ["c", "e", "f"])
        queue.batchFinished()
        // A batch of the target size does not wait.
        try queue.submit(Self.consume("g"))
        try queue.submit(Self.consume("h"))
        try queue.submit(Self.consume("i"))
        let full = await queue.next()
        #expect(Self.ids(full) == ["d", "g", "h", "i"] && !Self.waits(full))
        queue.batchFinished()
        // The rate decides, not the batches: writes taken one at a time as they come, each in a batch of its
        // own, but arriving back to back; once their mean gap is below the window, the next small batch waits.
        let steady = StoreQueue(capacity: 100, maximumBatch: 8, batchWindow: .milliseconds(50), batchTarget: 4)
        var lastWaits = false
        for number in 0..<40 {
            try steady.submit(Self.consume("steady-\(number)"))
            lastWaits = Self.waits(await steady.next())
            steady.batchFinished()
        }
        #expect(lastWaits)
        // After a pause longer than the window's several times over, the mean gap climbs back above the
        // window: a lone write goes at once. (Measured on the queue that was busy above, so that the
        // case would fail if the estimate never came back up.)
        try await Task.sleep(for: .milliseconds(500))
        try queue.submit(Self.consume("after-pause"))
        let afterPause = await queue.next()
        #expect(Self.ids(afterPause) == ["after-pause"] && !Self.waits(afterPause))
        queue.batchFinished()
        // A window of zero never waits, however fast the writes come: back to back, each taken alone.
        let off = StoreQueue(capacity: 100, maximumBatch: 8, batchWindow: .zero, batchTarget: 4)
        for number in 0..<40 {
            try off.submit(Self.consume("x-\(number)"))
            #expect(!Self.waits(await off.next()))
            off.batchFinished()
        }
    }

    @Test("filling a batch: the wait ends as soon as the writes reach the target, else when the window has passed, or at close")
    func fillEndsEarly() async throws {
        let clock = ContinuousClock()
        // A long window: only the writes reaching the target (3 more for a batch of 1) can end the wait in time.
        let queue = StoreQueue(capacity: 100, maximumBatch: 8, batchWindow: .seconds(30), batchTarget: 4)
        let started = clock.now
        async let filled: Void = queue.fill(1)
        try await Task.sleep(for: .milliseconds(20))
        for id in ["a", "b"] { try queue.submit(Self.consume(id)) }
        try await Task.sleep(for: .milliseconds(20))
        try queue.submit(Self.consume("c"))
        await filled
        #expect(clock.now - started < .seconds(10))
        // A short window with no writes: the wait ends when it passes.
        let short = StoreQueue(capacity: 100, maximumBatch: 8, batchWindow: .milliseconds(5), batchTarget: 4)
        let waited = await clock.measure { await short.fill(1) }
        #expect(waited >= .milliseconds(5) && waited < .seconds(10))
        // A batch at its target does not wait at all; nor does anything once the queue is closed.
        await queue.fill(4)
        let closing = StoreQueue(capacity: 100, maximumBatch: 8, batchWindow: .seconds(30), batchTarget: 4)
        async let closed: Void = closing.fill(1)
        try await Task.sleep(for: .milliseconds(20))
        closing.close()
        await closed
    }

    @Test("a batch's joiners never exceed the maximum batch")
    func moreIsBounded() async throws {
        let queue = StoreQueue(capacity: 100, maximumBatch: 3, batchWindow: .milliseconds(1), batchTarget: 3)
        try queue.submit(Self.consume("a"))
        guard case .batch(let taken, _) = await queue.next() else {
            Issue.record("expected a batch")
            return
        }
        for id in ["b", "c", "d", "e"] { try queue.submit(Self.consume(id)) }
        #expect(Self.ids(.batch(taken + queue.more(for: taken), waits: false)) == ["a", "b", "c"])
        queue.batchFinished()
        #expect(Self.ids(await queue.next()) == ["d", "e"])
    }

    @Test("past their deadline, queued operations fail closed and are never run; a full queue refuses at once; a closed one too")
    func deadlinesCapacityAndClose() async throws {
        let queue = StoreQueue(capacity: 2, maximumBatch: 4)
        let late = Self.consume("late", deadline: .milliseconds(10))
        try queue.submit(late)
        try queue.submit(Self.consume("on-time"))
        #expect(throws: SAMLError(.storeUnavailable, "")) { try queue.submit(Self.consume("one-too-many")) }
        try await Task.sleep(for: .milliseconds(20))
        queue.expire(now: .now, SAMLError(.storeUnavailable, "expected an answer in time, found none"))
        #expect(late.isFinished)
        #expect(Self.ids(await queue.next()) == ["on-time"])
        let queued = Self.consume("queued")
        try queue.submit(queued)
        queue.close()
        #expect(queued.isFinished, "closing answers what is queued (store.unavailable)")
        let after = await queue.next()
        #expect(after == nil)
        #expect(throws: SAMLError(.storeUnavailable, "")) { try queue.submit(Self.consume("after-close")) }
    }
}
