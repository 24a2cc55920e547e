import AppleSSO
import Foundation
import SAML
import SAMLMockIdP
import Testing

@Suite("Mock MVPD")
struct MockIdentityProviderTests {
    static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Vector.root.appendingPathComponent(path)))
    }

    @Test(
        "generated responses verify for every key type and placement, also after the cookbook's encoding",
        arguments: ["rsa-2048", "ecdsa-p256"], MockIdentityProvider.Placement.allCases
    )
    func generatedResponsesVerify(key: String, placement: MockIdentityProvider.Placement) async throws {
        let provider = try MockIdentityProvider(
            privateKeyPEM: try Self.file("keys/\(key).key.pem"), certificatePEM: try Self.file("keys/\(key).cert.pem"))
        var template = MockIdentityProvider.Template()
        template.destination = "https://sp.example.com/acs"
        template.inResponseTo = "_request-1"
        template.attributes = [("uid", ["u-1"]), ("zip", ["10001", "10002"]), ("note", ["<&\">"])]
        let now = SAMLInstant.now()
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: try Self.file("keys/\(key).cert.pem")),
            issuer: .equals(template.issuer), audience: .equals(template.audience),
            destination: .equals("https://sp.example.com/acs"), inResponseTo: .equals("_request-1"),
            replay: .assertions(InMemoryStateStore())
        )
        configuration.signaturePolicy = placement == .both ? .both : placement == .assertion ? .assertion : .response
        configuration.clock = FixedClock(now)
        let verifier = try SAMLResponseVerifier(configuration)

        let xml = try provider.response(template, issuedAt: now, placement: placement)
        let encoded = try Cookbook.encode(utf8: xml)
        let decoded = try SAMLResponseDecoder().decode(encoded)
        let response = try await verifier.verify(decoded.bytes)
        #expect(response.repairs.isEmpty)  // compact, unwrapped: nothing for recovery to do
        #expect(try response.fields(["uid", "zip", "note", "NameID"])["note"] == ["<&\">"])
        #expect(response.assertion.notOnOrAfter == now + .seconds(300))

        // Fresh IDs: a second response is not a replay of the first.
        let second = try provider.response(template, issuedAt: now, placement: placement)
        #expect(second != xml)
        _ = try await verifier.verify(second)
    }

    @Test("a private key that cannot be loaded is a configuration error")
    func rejectsBadKey() {
        #expect(throws: SAMLError(.configurationInvalidKey, "")) {
            _ = try MockIdentityProvider(privateKeyPEM: Array("nope".utf8), certificatePEM: [])
        }
    }
}

@Suite("Encrypted assertions")
struct EncryptedAssertionTests {
    @Test(
        "the mock MVPD's encrypted responses decrypt and verify, for every signature placement",
        arguments: MockIdentityProvider.Placement.allCases)
    func mockEncryptedResponsesVerify(placement: MockIdentityProvider.Placement) async throws {
        let provider = try MockIdentityProvider(
            privateKeyPEM: try MockIdentityProviderTests.file("keys/rsa-2048.key.pem"),
            certificatePEM: try MockIdentityProviderTests.file("keys/rsa-2048.cert.pem"))
        let recipient = try TrustedKey(pem: try MockIdentityProviderTests.file("keys/sp-rsa-2048.cert.pem"))
        let now = SAMLInstant.now()
        let xml = try provider.response(MockIdentityProvider.Template(), issuedAt: now, placement: placement, encryptingFor: recipient)
        #expect(String(decoding: xml, as: UTF8.self).contains("EncryptedAssertion"))
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: try MockIdentityProviderTests.file("keys/rsa-2048.cert.pem")),
            issuer: .equals("https://idp.mvpd.example.com"), audience: .equals("https://saml.sp.auth.adobe.com"),
            destination: .skip, inResponseTo: .skip, replay: .skip)
        configuration.clock = FixedClock(now)
        #expect(throws: SAMLError(.decryptionNoKey, "")) {
            _ = try SAMLResponseVerifier(configuration).verifyWithoutReplayCheck(xml, at: now)
        }
        configuration.decryptionKeys = [
            try DecryptionKey(pem: try MockIdentityProviderTests.file("keys/attacker-rsa-2048.key.pem")),
            try DecryptionKey(pem: try MockIdentityProviderTests.file("keys/sp-rsa-2048.key.pem")),
        ]
        let response = try await SAMLResponseVerifier(configuration).verify(xml)
        #expect(response.assertion.nameID?.value == "subscriber-0042")
        #expect(response.signedParts == (placement == .both ? [.response, .assertion] : placement == .assertion ? .assertion : .response))
    }

    @Test("a refused legacy algorithm names the switch and the API option")
    func legacyRefusalNamesTheOptIn() throws {
        let vector = Vector.named("encrypted-assertion-rsa15-aes128cbc")
        let error = try #require(throws: SAMLError.self) { try vector.verify() }
        #expect(error.code == .decryptionAlgorithmNotAllowed)
        #expect(error.message.contains("--allow-legacy-encryption"))
        #expect(error.message.contains("EncryptionAlgorithmPolicy.allowingLegacy"))
    }

    @Test("200 seeded bit flips in the ciphertexts end in a typed verdict, never in acceptance")
    func corruptedCiphertexts() throws {
        let vector = Vector.named("encrypted-assertion-oaep-aes256gcm")
        let verifier = try SAMLResponseVerifier(vector.configuration())
        let original = vector.bytes
        // The bytes of every CipherValue: the wrapped session key and the GCM ciphertext with its tag.
        var positions: [Int] = []
        let text = Array(original)
        let open = Array("<xenc:CipherValue>".utf8)
        var index = 0
        while index + open.count < text.count {
            if Array(text[index..<index + open.count]) == open {
                var cursor = index + open.count
                while text[cursor] != UInt8(ascii: "<") {
                    positions.append(cursor)
                    cursor += 1
                }
                index = cursor
            }
            index += 1
        }
        #expect(positions.count > 400)
        var state: UInt64 = 0xE1C
        var accepted: [Int] = []
        for round in 0..<200 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var bytes = original
            let position = positions[Int((state >> 33) % UInt64(positions.count))]
            bytes[position] ^= UInt8(1 << Int((state >> 20) % 8))
            let verdict = Verdict { _ = try verifier.verifyWithoutReplayCheck(bytes, at: vector.instant) }
            // Flipping a Base64 symbol into another whose extra bits are unused decodes to the same bytes;
            // only a change of the decoded ciphertext counts.
            if verdict == .valid, Self.decodedCipherValues(bytes) != Self.decodedCipherValues(original) { accepted.append(round) }
        }
        // GCM is authenticated and OAEP checks its padding: changed ciphertext never gives a valid response.
        #expect(accepted.isEmpty, "\(accepted)")
    }

    static func decodedCipherValues(_ bytes: [UInt8]) -> [Data?] {
        String(decoding: bytes, as: UTF8.self).components(separatedBy: "<xenc:CipherValue>").dropFirst().map {
            Data(base64Encoded: String($0.prefix { $0 != "<" }))
        }
    }
}
