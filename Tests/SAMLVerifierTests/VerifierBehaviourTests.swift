import Foundation
import SAML
import Testing

@Suite("Verifier behaviour")
struct VerifierBehaviourTests {
    let typical = Vector.named("typical-rsa2048-assertion-signed")

    @Test("extracts requiredMetadataFields in order, every value of multi-valued attributes, and NameID")
    func extractsRequiredFields() throws {
        let response = try typical.verify()
        let fields = try response.fields(["uid", "NameID", "zip", "channelId"])
        #expect(fields.values.map(\.name) == ["uid", "NameID", "zip", "channelId"])
        #expect(fields["zip"] == ["10001", "10002"])
        #expect(fields["channelId"] == ["espn", "hbo", "kanal-5 Grüße"])
        #expect(fields["NameID"] == ["subscriber-0042"])
        #expect(response.assertion.nameID?.format == "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent")
        #expect(response.assertion.issuer == "https://idp.mvpd.example.com")
        #expect(response.assertion.sessionIndex == "_session-1")
        #expect(response.assertion.authnInstant == SAMLInstant(xmlDateTime: "2026-11-21T11:58:30Z"))
        #expect(response.assertion.notOnOrAfter == SAMLInstant(xmlDateTime: "2026-11-21T12:05:00Z"))
        #expect(response.assertion.audiences == ["https://saml.sp.auth.adobe.com"])
        #expect(response.signedParts == .assertion)
        #expect(response.skippedChecks == .replay)
    }

    @Test("a signature xmlsec cannot process says why, in the libraries' words and without the document's bytes")
    func malformedSignatureCarriesTheReason() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        var text = String(decoding: vector.bytes, as: UTF8.self)
        let start = try #require(text.range(of: "<ds:SignatureValue>"))
        text.replaceSubrange(start.upperBound..<text.index(start.upperBound, offsetBy: 10), with: "!!!!******")
        let verifier = try SAMLResponseVerifier(try vector.configuration())
        let error = try #require(throws: SAMLError.self) {
            try verifier.verifyWithoutReplayCheck(Array(text.utf8), at: vector.instant)
        }
        #expect(error.code == .signatureMalformed)
        #expect(error.message.contains("xmlsec: xmlSecBase64CtxDecodeByte: invalid data"), "\(error.message)")
        #expect(!error.message.contains("!!!!"))
        // Collected per call: the next verification on this thread reports nothing of it.
        #expect(throws: Never.self) { _ = try vector.verify() }
    }

    @Test("lists every missing field, or returns them when the caller allows it")
    func reportsMissingFields() throws {
        let response = try typical.verify()
        let error = try #require(throws: SAMLError.self) { try response.fields(["uid", "guid", "MaxTVRating"]) }
        #expect(error.code == .fieldsMissing)
        #expect(error.message.contains("\"guid\"") && error.message.contains("\"MaxTVRating\""))
        let partial = try response.fields(["uid", "guid"], allowMissing: true)
        #expect(partial.missing == ["guid"])
        #expect(partial["uid"] == ["subscriber-0042"])
    }

    @Test("reads the NameID as its full text when a comment splits it")
    func readsFullTextAroundComments() throws {
        let response = try Vector.named("comment-in-nameid-signature-intact").verify()
        #expect(response.assertion.nameID?.value == "user@example.com.evil.example")
    }

    @Test("a second use of the same assertion is a replay")
    func detectsReplay() async throws {
        let store = InMemoryStateStore()
        let verifier = try SAMLResponseVerifier(typical.configuration(replay: .assertions(store)))
        _ = try await verifier.verify(typical.bytes)
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(typical.bytes) }
        #expect(store.counts.usedAssertions == 1)
        #expect(store.counts.answeredRequests == 0)
    }

    /// The replay cache is deprecated (``ReplayProtection/assertions(_:)`` replaces it) but still works.
    @available(*, deprecated)
    @Test("the deprecated replay cache still refuses a replay, forgets IDs after their expiry and fails closed when full")
    func replayCacheIsBounded() async throws {
        let verifier = try SAMLResponseVerifier(typical.configuration(replay: .cache(InMemoryReplayCache())))
        _ = try await verifier.verify(typical.bytes)
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(typical.bytes) }
        let cache = InMemoryReplayCache(capacity: 2)
        let t0 = SAMLInstant(millisecondsSinceEpoch: 1_000_000)
        #expect(try await cache.insertIfAbsent("a", expiry: t0 + .seconds(10), now: t0))
        #expect(try await cache.insertIfAbsent("b", expiry: t0 + .seconds(100), now: t0))
        #expect(try await cache.insertIfAbsent("a", expiry: t0 + .seconds(10), now: t0) == false)
        await #expect(throws: SAMLError(.replayCacheFull, "")) {
            _ = try await cache.insertIfAbsent("c", expiry: t0 + .seconds(10), now: t0 + .seconds(5))
        }
        // After "a" expired there is room again, and "a" may be used again.
        #expect(try await cache.insertIfAbsent("c", expiry: t0 + .seconds(30), now: t0 + .seconds(11)))
        #expect(try await cache.insertIfAbsent("b", expiry: t0 + .seconds(100), now: t0 + .seconds(12)) == false)
    }

    @Test("a verifier without a pinned key cannot be built")
    func refusesEmptyKeySet() throws {
        var configuration = try typical.configuration()
        configuration.trustedKeys = []
        #expect(throws: SAMLError(.configurationInvalidKey, "")) { _ = try SAMLResponseVerifier(configuration) }
        #expect(throws: SAMLError(.configurationInvalidKey, "")) { _ = try TrustedKey.all(pem: Array("not a pem".utf8)) }
    }

    @Test("with several pinned keys (rotation) any one of them verifies")
    func acceptsAnyPinnedKey() throws {
        let attacker = try TrustedKey.all(
            pem: Array(Data(contentsOf: Vector.root.appendingPathComponent("keys/attacker-rsa-2048.cert.pem"))))
        #expect(Verdict { _ = try typical.verify { $0.trustedKeys = attacker + $0.trustedKeys } } == .valid)
        // The response carries its (real) certificate, which is not among the pinned ones here.
        #expect(Verdict { _ = try typical.verify { $0.trustedKeys = attacker } } == .invalid("signature.untrusted-key"))
        let bare = Vector.named("no-keyinfo-assertion-signed")
        #expect(Verdict { _ = try bare.verify { $0.trustedKeys = attacker } } == .invalid("signature.invalid"))
    }

    @Test(
        "the signature policy decides which signatures are required",
        arguments: [
            ("typical-rsa2048-assertion-signed", SignaturePolicy.response, "signature.missing"),
            ("typical-rsa2048-assertion-signed", .both, "signature.missing"),
            ("typical-rsa2048-assertion-signed", .assertion, "valid"),
            ("typical-rsa2048-response-signed", .assertion, "signature.missing"),
            ("typical-rsa2048-response-signed", .responseOrAssertion, "valid"),
            ("typical-rsa2048-both-signed", .both, "valid"),
        ])
    func signaturePolicy(id: String, policy: SignaturePolicy, expected: String) {
        let verdict = Verdict { _ = try Vector.named(id).verify { $0.signaturePolicy = policy } }
        #expect(verdict == (expected == "valid" ? .valid : .invalid(expected)))
    }

    @Test("IssueInstant older than the maximum age is refused, and the age check can be turned off")
    func enforcesMaximumAge() {
        let later = SAMLInstant(xmlDateTime: "2026-11-21T12:04:30Z")!
        func verdict(maximumAge: Duration?) -> Verdict {
            Verdict {
                var configuration = try typical.configuration()
                configuration.maximumAge = maximumAge
                let verifier = try SAMLResponseVerifier(configuration)
                _ = try verifier.verifyWithoutReplayCheck(typical.bytes, at: later)
            }
        }
        #expect(verdict(maximumAge: .seconds(60)) == .invalid("time.issue-instant"))
        #expect(verdict(maximumAge: .seconds(600)) == .valid)
        #expect(verdict(maximumAge: nil) == .valid)
    }

    @Test("parser caps refuse deep nesting and huge element counts")
    func enforcesParserLimits() {
        #expect(Verdict { _ = try typical.verify { $0.parserLimits.maximumElements = 20 } } == .invalid("xml.limit-exceeded"))
        #expect(Verdict { _ = try typical.verify { $0.parserLimits.maximumDepth = 3 } } == .invalid("xml.limit-exceeded"))
        #expect(Verdict { _ = try typical.verify { $0.parserLimits.maximumDocumentBytes = 1000 } } == .invalid("xml.too-large"))
    }

    @Test("malformed XML is reported with its line and column")
    func malformedXMLNamesPosition() throws {
        let vector = Vector.named("malformed-truncated")
        let error = try #require(throws: SAMLError.self) { try vector.verify() }
        #expect(error.code == .xmlMalformed)
        #expect(error.message.contains("at line 17, column "))
    }

    @Test("parses and prints xs:dateTime values")
    func parsesDateTimes() {
        #expect(SAMLInstant(xmlDateTime: "1970-01-01T00:00:00Z")?.millisecondsSinceEpoch == 0)
        #expect(SAMLInstant(xmlDateTime: "2026-11-21T12:00:00.250Z")?.millisecondsSinceEpoch == 1_795_262_400_250)
        #expect(SAMLInstant(xmlDateTime: "2026-11-21T13:00:00+01:00") == SAMLInstant(xmlDateTime: "2026-11-21T12:00:00Z"))
        #expect(SAMLInstant(xmlDateTime: " 2026-11-21T12:00:00Z\n") != nil)
        for bad in ["", "2026-11-21", "2026-13-01T00:00:00Z", "2026-11-21T12:00:00Zjunk", "2026-11-21T12:00:00."] {
            #expect(SAMLInstant(xmlDateTime: bad) == nil, "\(bad)")
        }
        #expect(SAMLInstant(xmlDateTime: "2026-11-21T12:00:00.250Z")?.description == "2026-11-21T12:00:00.250Z")
        #expect(SAMLInstant(millisecondsSinceEpoch: -1000).description == "1969-12-31T23:59:59Z")
    }
}
