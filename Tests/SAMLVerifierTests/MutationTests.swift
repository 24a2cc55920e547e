import SAML
import Testing

/// Seeded mutations of a valid response: every one must end in a verdict (no crash, no hang), and none
/// that alters the signed Assertion may be accepted.
@Suite("Mutations of a valid response")
struct MutationTests {
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static let vector = Vector.named("typical-rsa2048-assertion-signed")

    /// The byte range of the Assertion outside its ds:Signature: everything there is covered by the digest.
    static func signedRange(_ bytes: [UInt8]) -> (Range<Int>, Range<Int>) {
        let text = String(decoding: bytes, as: UTF8.self)
        let start = text.utf8.distance(from: text.startIndex, to: text.range(of: "<saml:Assertion")!.lowerBound)
        let end = text.utf8.distance(from: text.startIndex, to: text.range(of: "</saml:Assertion>")!.upperBound)
        let signatureStart = text.utf8.distance(from: text.startIndex, to: text.range(of: "<ds:Signature")!.lowerBound)
        let signatureEnd = text.utf8.distance(from: text.startIndex, to: text.range(of: "</ds:Signature>")!.upperBound)
        return (start..<signatureStart, signatureEnd..<end)
    }

    @Test("500 seeded mutations each end in a verdict; none inside the signed Assertion is accepted")
    func mutationsAreRejectedOrHarmless() throws {
        let original = Self.vector.bytes
        let verifier = try SAMLResponseVerifier(Self.vector.configuration())
        let (before, after) = Self.signedRange(original)
        var generator = Generator(state: 0x5EED)
        var acceptedInsideSigned: [String] = []
        var verdicts: [String: Int] = [:]
        for round in 0..<500 {
            var bytes = original
            var touchedSigned = false
            let kind = round % 6
            switch kind {
            case 0:  // bit flip inside the signed part
                let index =
                    generator.next(2) == 0
                    ? before.lowerBound + generator.next(before.count) : after.lowerBound + generator.next(after.count)
                bytes[index] ^= UInt8(1 << generator.next(8))
                touchedSigned = true
            case 1:  // bit flip anywhere
                let index = generator.next(bytes.count)
                bytes[index] ^= UInt8(1 << generator.next(8))
                touchedSigned = before.contains(index) || after.contains(index)
            case 2:  // truncation
                bytes.removeSubrange(generator.next(bytes.count)...)
                touchedSigned = true
            case 3:  // a duplicated span
                let start = generator.next(bytes.count)
                let span = bytes[start..<min(bytes.count, start + 1 + generator.next(400))]
                let at = generator.next(bytes.count)
                bytes.insert(contentsOf: span, at: at)
                touchedSigned = before.contains(at) || after.contains(at)
            case 4:  // entity expansion prepended
                bytes =
                    Array(
                        "<!DOCTYPE r [<!ENTITY a \"\(String(repeating: "x", count: 1000))\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>".utf8
                    ) + bytes
                touchedSigned = true
            default:  // deep nesting or a huge value inside an attribute value
                let marker = Array("hh-7731".utf8)
                let index = (0..<bytes.count - marker.count).first { Array(bytes[$0..<$0 + marker.count]) == marker }!
                let payload =
                    generator.next(2) == 0
                    ? String(repeating: "<a>", count: 5000) + String(repeating: "</a>", count: 5000)
                    : String(repeating: "V", count: 200_000 + generator.next(100_000))
                bytes.insert(contentsOf: Array(payload.utf8), at: index)
                touchedSigned = true
            }
            let verdict = Verdict { _ = try verifier.verifyWithoutReplayCheck(bytes, at: Self.vector.instant) }
            verdicts[verdict.description, default: 0] += 1
            if verdict == .valid, touchedSigned, bytes != original {
                acceptedInsideSigned.append("round \(round) kind \(kind)")
            }
        }
        #expect(acceptedInsideSigned.isEmpty, "\(acceptedInsideSigned)")
        #expect(verdicts.count > 3, "\(verdicts)")
    }
}
