import Foundation
import SAML
import SAMLMockIdP
import Testing

/// Outstanding requests and replay detection through a ``SAMLStateStore`` (in memory here; the
/// PostgreSQL store runs the same protocol against a real server in the Server/ package's tests).
@Suite("Outstanding requests")
struct StateStoreTests {
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:00:00Z")!
    static let provider = try! MockIdentityProvider(
        privateKeyPEM: Array(try! Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.key.pem"))),
        certificatePEM: Array(try! Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.cert.pem"))))

    static func verifier(_ store: any SAMLStateStore, unsolicited: SAMLResponseVerifier.UnsolicitedResponses = .refuse) throws
        -> SAMLResponseVerifier
    {
        var configuration = SAMLResponseVerifier.Configuration(
            identityProvider: try IdentityProvider(
                entityID: "https://idp.mvpd.example.com",
                keys: try TrustedKey.all(pem: Array(Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.cert.pem"))))),
            audience: .equals("https://saml.sp.auth.adobe.com"), destination: .skip, replay: .store(store, unsolicited: unsolicited))
        configuration.clock = FixedClock(now + .seconds(1))
        return try SAMLResponseVerifier(configuration)
    }

    static func response(answering requestID: String?) throws -> [UInt8] {
        var template = MockIdentityProvider.Template()
        template.inResponseTo = requestID
        return try provider.response(template, issuedAt: now, placement: .assertion)
    }

    @Test("a response is accepted once, only for an outstanding request; unknown, expired and answered ones are refused")
    func outstandingRequestsConsumedOnce() async throws {
        let store = InMemoryStateStore()
        let verifier = try Self.verifier(store)
        let request = try SAMLRequest(
            issuer: "https://saml.sp.auth.adobe.com", destination: "https://idp.mvpd.example.com/sso", issuedAt: Self.now)
        try await store.recordOutstandingRequest(request.id, expiry: Self.now + .seconds(300))
        let first = try Self.response(answering: request.id)
        let accepted = try await verifier.verify(first)
        #expect(accepted.inResponseTo == request.id)
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(first) }
        // A second, different response to the same request: the request is answered already.
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: request.id))
        }
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: "_never-issued"))
        }
        try await store.recordOutstandingRequest("_expired", expiry: Self.now)
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: "_expired"))
        }
    }

    @Test("unsolicited responses are refused unless allowed explicitly, and then still checked for replay")
    func unsolicited() async throws {
        let store = InMemoryStateStore()
        let unsolicited = try Self.response(answering: nil)
        await #expect(throws: SAMLError(.inResponseToUnsolicited, "")) { _ = try await Self.verifier(store).verify(unsolicited) }
        let allowing = try Self.verifier(store, unsolicited: .allow)
        let response = try await allowing.verify(unsolicited)
        #expect(response.skippedChecks.contains("unsolicited"))
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await allowing.verify(unsolicited) }
    }
}
