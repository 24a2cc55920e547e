import Foundation
import Testing

@testable import SAML

/// The request IDs' HMAC-SHA-256 from a key made ready once: RFC 4231's answers, and one key used from
/// several threads at once (each MAC works on its own copy of the ready state).
@Suite("HMAC-SHA-256 from a ready key")
struct ReadyHMACKeyTests {
    static func hex(_ bytes: [UInt8]?) -> String? { bytes?.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "RFC 4231 test cases 1, 2 and 6 (a key shorter than, and one longer than, SHA-256's block)",
        arguments: [
            ([UInt8](repeating: 0x0B, count: 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (
                [UInt8](repeating: 0xAA, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
        ])
    func knownAnswers(key: [UInt8], data: String, expected: String) {
        let ready = ReadyHMACKey(key)
        #expect(Self.hex(ready.mac(Array(data.utf8))) == expected)
        // The ready state is copied, never consumed: the same input gives the same MAC again.
        #expect(Self.hex(ready.mac(Array(data.utf8))) == expected)
    }

    @Test("one key, eight threads at once: every MAC is the one computed alone")
    func concurrentUse() {
        let ready = ReadyHMACKey(Array("swift-saml concurrent HMAC key of 32 bytes".utf8))
        let inputs = (0..<64).map { Array("request \($0)".utf8) }
        let expected = inputs.map { ready.mac($0) }
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<500 {
                let index = (thread * 7 + round) % inputs.count
                if ready.mac(inputs[index]) != expected[index] { mismatches.withLock { $0 += 1 } }
            }
        }
        #expect(expected.allSatisfy { $0?.count == 32 })
        #expect(mismatches.withLock { $0 } == 0)
    }
}
