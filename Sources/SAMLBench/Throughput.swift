import Dispatch
import SAML

/// Measured throughput of one body on some threads.
public struct Throughput: Sendable {
    public let threads: Int
    public let operations: Int
    public let seconds: Double

    public var perSecond: Double { Double(operations) / seconds }
    /// Wall-clock microseconds per operation, per thread.
    public var microsecondsPerOperation: Double { seconds * 1_000_000 * Double(threads) / Double(operations) }

    /// Runs `body` on `threads` threads for a warm-up, then for `seconds`, and counts completed calls.
    /// The first error thrown by any thread ends the measurement and is rethrown.
    public static func measure(threads: Int, seconds: Double, warmUp: Double = 0.3, body: @escaping @Sendable () throws -> Void) throws
        -> Throughput
    {
        _ = try run(threads: threads, seconds: warmUp, body: body)
        return try run(threads: threads, seconds: seconds, body: body)
    }

    private static func run(threads: Int, seconds: Double, body: @escaping @Sendable () throws -> Void) throws -> Throughput {
        let counts = Counters(threads)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        DispatchQueue.concurrentPerform(iterations: threads) { index in
            var done = 0
            do {
                while clock.now < deadline {
                    try body()
                    done += 1
                }
            } catch {
                counts.fail(error)
            }
            counts.set(index, done)
        }
        let elapsed = clock.now - start
        if let error = counts.error { throw error }
        let (whole, fraction) = elapsed.components
        return Throughput(threads: threads, operations: max(counts.total, 1), seconds: Double(whole) + Double(fraction) / 1e18)
    }
}

/// Per-thread counts and the first error.
private final class Counters: Sendable {
    private let state: Locked<([Int], (any Error)?)>

    init(_ threads: Int) {
        state = Locked((Array(repeating: 0, count: threads), nil))
    }

    func set(_ index: Int, _ value: Int) { state.withLock { $0.0[index] = value } }
    func fail(_ error: any Error) { state.withLock { if $0.1 == nil { $0.1 = error } } }
    var total: Int { state.withLock { $0.0.reduce(0, +) } }
    var error: (any Error)? { state.withLock { $0.1 } }
}
