import Foundation
import InMemoryTracing
import SAML
import SAMLMockIdP
import Testing
import Tracing

/// The verifier's spans (``SAMLResponseVerifier/Configuration/tracer``): one per phase, children of the
/// caller's span, a refusal's code and never the response's content.
@Suite("Verification spans")
struct VerificationSpanTests {
    static func verifier(_ tracer: InMemoryTracer?, store: any SAMLStateStore = InMemoryStateStore()) throws -> SAMLResponseVerifier {
        var configuration = try StateStoreTests.configuration(store, unsolicited: .allow, at: StateStoreTests.now + .seconds(1))
        configuration.tracer = tracer
        return try SAMLResponseVerifier(configuration)
    }

    /// Verifies `xml` inside a `request` span; returns the finished spans and the request span's ID.
    static func traced(_ xml: [UInt8], _ tracer: InMemoryTracer, _ verifier: SAMLResponseVerifier) async -> (
        spans: [FinishedInMemorySpan], parent: String, error: SAMLError?
    ) {
        let parent = tracer.startSpan("request", ofKind: .server)
        var failure: SAMLError?
        await ServiceContext.$current.withValue(parent.context) {
            do {
                _ = try await verifier.verify(xml)
            } catch {
                failure = error as? SAMLError
            }
        }
        parent.end()
        return (tracer.popFinishedSpans(), parent.spanID, failure)
    }

    @Test("an accepted response: parse, signature, validate and the store's consume, each a child of the caller's span")
    func acceptedSpans() async throws {
        let tracer = InMemoryTracer()
        var template = MockIdentityProvider.Template()
        template.nameID = "subscriber-name-id-7731"
        template.attributes = [("householdId", ["household-secret-5521"])]
        let xml = try StateStoreTests.provider.response(template, issuedAt: StateStoreTests.now, placement: .assertion)
        let (spans, parent, error) = await Self.traced(xml, tracer, try Self.verifier(tracer))
        #expect(error == nil)
        let phases = spans.filter { $0.operationName != "request" }
        #expect(phases.map(\.operationName) == ["saml.parse", "saml.signature", "saml.validate", "saml.store.consume"])
        #expect(phases.allSatisfy { $0.parentSpanID == parent })
        #expect(phases.last?.attributes["saml.store.outcome"]?.toSpanAttribute() == "accepted")
        #expect(phases.allSatisfy { $0.status == nil && $0.errors.isEmpty })
        let everything = spans.map { "\($0.operationName) \($0.attributes) \($0.events)" }.joined()
        #expect(!everything.contains("subscriber-name-id-7731") && !everything.contains("household-secret-5521"))
    }

    @Test("a refusal: the failing phase carries the code and an error status, never the message; later phases do not run")
    func refusedSpans() async throws {
        let tracer = InMemoryTracer()
        let verifier = try Self.verifier(tracer)
        let xml = try StateStoreTests.provider.response(.init(), issuedAt: StateStoreTests.now, placement: .assertion)
        // Tampered after signing: the digest no longer matches.
        let text = String(decoding: xml, as: UTF8.self)
        let tampered = Array(
            text.replacingOccurrences(of: "https://saml.sp.auth.adobe.com</saml:Audience>", with: "https://evil.example</saml:Audience>")
                .utf8)
        #expect(tampered != xml)
        let (spans, parent, error) = await Self.traced(tampered, tracer, verifier)
        let code = try #require(error).code.identifier
        let phases = spans.filter { $0.operationName != "request" }
        #expect(phases.map(\.operationName) == ["saml.parse", "saml.signature"])
        let signature = try #require(phases.last)
        #expect(signature.parentSpanID == parent)
        #expect(signature.attributes["saml.error.code"]?.toSpanAttribute() == .string(code))
        #expect(signature.status?.code == .error && signature.status?.message == code)
        #expect(signature.errors.isEmpty, "the error (and its message) is not recorded")
        #expect(!"\(signature.attributes)".contains("evil.example"))

        // A replay: the store's span says so.
        let fresh = try StateStoreTests.provider.response(.init(), issuedAt: StateStoreTests.now, placement: .assertion)
        _ = await Self.traced(fresh, tracer, verifier)
        let (again, _, replay) = await Self.traced(fresh, tracer, verifier)
        #expect(replay?.code == .replayDetected)
        let consume = try #require(again.first { $0.operationName == "saml.store.consume" })
        #expect(consume.attributes["saml.error.code"]?.toSpanAttribute() == nil)
        #expect(consume.attributes["saml.store.outcome"]?.toSpanAttribute() == "replayed")
    }

    @Test("an encrypted assertion adds saml.decrypt, a sibling of the other phases")
    func decryptionSpan() async throws {
        let tracer = InMemoryTracer()
        let keyPEM = Array(try Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.key.pem")))
        let certificatePEM = Array(try Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.cert.pem")))
        var configuration = try Self.verifier(tracer).configuration
        configuration.decryptionKeys = [try DecryptionKey(pem: keyPEM)]
        let verifier = try SAMLResponseVerifier(configuration)
        let xml = try StateStoreTests.provider.response(
            .init(), issuedAt: StateStoreTests.now, placement: .response, encryptingFor: try TrustedKey.all(pem: certificatePEM)[0])
        let (spans, parent, error) = await Self.traced(xml, tracer, verifier)
        #expect(error == nil)
        let phases = spans.filter { $0.operationName != "request" }
        #expect(phases.map(\.operationName) == ["saml.parse", "saml.decrypt", "saml.signature", "saml.validate", "saml.store.consume"])
        #expect(phases.allSatisfy { $0.parentSpanID == parent })
    }

    @Test("without a tracer nothing is traced (the caller's tracer sees only its own span)")
    func noTracer() async throws {
        let tracer = InMemoryTracer()
        let xml = try StateStoreTests.provider.response(.init(), issuedAt: StateStoreTests.now, placement: .assertion)
        let (spans, _, error) = await Self.traced(xml, tracer, try Self.verifier(nil))
        #expect(error == nil)
        #expect(spans.map(\.operationName) == ["request"])
    }
}
