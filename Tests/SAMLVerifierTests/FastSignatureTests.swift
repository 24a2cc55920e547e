import Foundation
@_spi(Stages) import SAML
import Testing

/// The RSA signature transforms of fast_signature.c keep an OpenSSL context per key and thread: a
/// context must answer for its own key only, whatever the order of keys on a thread, past the number of
/// contexts a thread keeps, and with keys freed and loaded again between verifications.
/// (FastCanonicalizationTests compare their verdicts with xmlsec's own transforms on every vector.)
@Suite("RSA verification with prepared contexts")
struct FastSignatureTests {
    static func key(_ name: String) throws -> [TrustedKey] {
        try TrustedKey.all(pem: Array(Data(contentsOf: Vector.root.appendingPathComponent("keys/\(name).cert.pem"))))
    }

    static func verdict(_ vector: Vector, keys: [TrustedKey]) throws -> Verdict {
        var configuration = try vector.configuration()
        configuration.trustedKeys = keys
        let verifier = try SAMLResponseVerifier(configuration)
        return Verdict {
            let parsed = try vector.bytes.withUnsafeBytes { try verifier.parse($0) }
            _ = try verifier.verifySignatures(parsed)
        }
    }

    @Test("each key gets its own verdict, in any order, on one thread")
    func keysInTurn() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let wrong = ["attacker-rsa-2048", "rsa-4096", "metadata-signer-rsa-2048", "ecdsa-p256"]
        // More keys in turn than a thread keeps contexts for (16), each loaded again every round (a new
        // OpenSSL key each time: 9 a round, and the response's own certificate tried for each wrong one),
        // then the same keys kept across rounds.
        var kept: [String: [TrustedKey]] = [:]
        for round in 0..<4 {
            for name in wrong + ["rsa-2048"] + wrong.reversed() {
                let keys = round == 3 ? try kept[name] ?? Self.key(name) : try Self.key(name)
                kept[name] = keys
                let verdict = try Self.verdict(vector, keys: keys)
                if name == "rsa-2048" {
                    #expect(verdict == .valid, "round \(round)")
                } else {
                    #expect(verdict != .valid, "round \(round), key \(name): \(verdict)")
                }
            }
        }
        // The right key after a wrong one, and a wrong one after the right one, with both kept.
        let right = try Self.key("rsa-2048")
        let attacker = try Self.key("attacker-rsa-2048")
        for _ in 0..<3 {
            let verdict = try Self.verdict(vector, keys: attacker)
            #expect(verdict == .invalid("signature.untrusted-key"), "\(verdict)")
            #expect(try Self.verdict(vector, keys: right) == .valid)
        }
        // A wrong key first among the trusted ones, then the right one: both tried on one document.
        #expect(try Self.verdict(vector, keys: attacker + right) == .valid)
    }

    @Test("a changed SignatureValue or SignedInfo fails with the prepared context as with xmlsec's")
    func tamperedSignature() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let text = String(decoding: vector.bytes, as: UTF8.self)
        let value = try #require(text.range(of: "<ds:SignatureValue>"))
        let signedInfo = try #require(text.range(of: "<ds:SignedInfo>"))
        var changedValue = Array(vector.bytes)
        let at = text.utf8.distance(from: text.startIndex, to: value.upperBound) + 10
        changedValue[at] = changedValue[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        var changedSignedInfo = Array(vector.bytes)
        changedSignedInfo.insert(contentsOf: Array(" ".utf8), at: text.utf8.distance(from: text.startIndex, to: signedInfo.upperBound))
        let configuration = try vector.configuration()
        let verifier = try SAMLResponseVerifier(configuration)
        for bytes in [changedValue, changedSignedInfo] {
            let (fast, stock) = FastCanonicalizationTests.verdicts(bytes, verifier: verifier)
            #expect(fast == stock)
            #expect(fast != .valid)
        }
        let (fast, stock) = FastCanonicalizationTests.verdicts(vector.bytes, verifier: verifier)
        #expect(fast == .valid && stock == .valid)
    }
}
