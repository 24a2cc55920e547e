import Synchronization

/// Synchronization's `Mutex`, with the hand-over between its holders made visible to ThreadSanitizer:
/// what this package uses wherever it would use `Mutex`.
///
/// On Linux a contended `Mutex` waits in the kernel (`FUTEX_LOCK_PI`) from the standard library's
/// compiled code, which ThreadSanitizer does not see; a holder that got the lock that way looks to it as
/// if it had not synchronised with the previous one, and it reports a race that is not there
/// (scripts/ci/sanitizer-tests halts on the first report). Each holder here also reads an atomic with
/// acquire ordering on entry and writes it with release ordering on exit: two uncontended atomic
/// operations, which ThreadSanitizer reads as the hand-over the lock makes.
package struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>
    @usableFromInline let handOver = Atomic<Bool>(false)

    @inlinable
    package init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value, holding the lock. (Inlinable, as `Mutex`'s own: each use is
    /// specialised where it is written.)
    @inlinable
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in
            _ = handOver.load(ordering: .acquiring)
            defer { handOver.store(false, ordering: .releasing) }
            return try body(&value)
        }
    }
}
