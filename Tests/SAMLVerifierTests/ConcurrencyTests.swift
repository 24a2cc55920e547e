import SAML
import Testing

@Suite("Concurrent verification")
struct ConcurrencyTests {
    @Test("one verifier checks thousands of responses from many tasks, every verdict right")
    func stress() async throws {
        let valid = Vector.named("typical-rsa2048-assertion-signed")
        let tampered = Vector.named("tampered-attribute-value")
        let wrapped = Vector.named("xsw-second-assertion-before-signed")
        let verifier = try SAMLResponseVerifier(valid.configuration())
        let inputs = [
            (valid.bytes, Verdict.valid), (tampered.bytes, .invalid("signature.digest-mismatch")),
            (wrapped.bytes, .invalid("assertion.multiple")),
        ]
        let now = valid.instant
        let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<300 {
                        let (bytes, expected) = inputs[(task + round) % inputs.count]
                        let verdict = Verdict { _ = try verifier.verifyWithoutReplayCheck(bytes, at: now) }
                        if verdict != expected { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }
}
