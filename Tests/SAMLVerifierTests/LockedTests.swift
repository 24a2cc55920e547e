import Foundation
import Testing

@testable import SAML

/// `Locked` under contention: every holder sees the previous one's writes. Under ThreadSanitizer
/// (scripts/ci/sanitizer-tests) this is also the check that a hand-over through the kernel's wait is seen
/// by it: the threads contend for the lock all the time, so many hand-overs go that way. (The same test
/// over a plain `Mutex` gets a "Swift access race" report there, with the count right.)
@Suite("Locked")
struct LockedTests {
    @Test("four threads contending for one lock: no update lost, no report")
    func contended() async throws {
        let counter = Shared()
        let threads = 4, rounds = 20_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<threads {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread.detachNewThread {
                            for _ in 0..<rounds { counter.value.withLock { $0 += 1 } }
                            done.resume()
                        }
                    }
                }
            }
        }
        #expect(counter.value.withLock { $0 } == threads * rounds)
    }

    final class Shared: Sendable {
        let value = Locked(0)
    }
}
