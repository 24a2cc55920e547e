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
            replay: .cache(InMemoryReplayCache())
        )
        configuration.signaturePolicy = placement == .both ? .both : placement == .assertion ? .assertion : .response
        configuration.clock = FixedClock(now)
        let verifier = try SAMLResponseVerifier(configuration)

        let xml = try provider.response(template, issuedAt: now, placement: placement)
        let encoded = try Cookbook.encode(utf8: xml)
        let decoded = try SAMLResponseDecoder().decode(encoded)
        let response = try await verifier.verify(decoded.bytes)
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
