/// Bytes from the system's cryptographic random source (`SystemRandomNumberGenerator`: `getrandom` on
/// Linux), eight from each draw. `UInt8.random(in:using:)` draws once a byte: on Linux a system call each,
/// 16 for a request's nonce, which made the random source the largest single cost of an anonymous
/// `sessions/sso` (`perf record` of the service under the load harness, 2026-12-06: the kernel's
/// `crng_make_state` 3.8% of its CPU). A 16-byte draw took 5.8-7.1 µs byte by byte and 0.75-0.77 µs
/// eight at a time (the two loops compiled with `-O`, 100,000 draws each, 3 alternated rounds, one core).
package enum RandomBytes {
    package static func draw(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
