import Foundation
import SAML
import Testing

/// The rules that close the holes a hostile review found: caps before libxml2 parses, strict times,
/// attribute values as signed, configurable recipients. The signed cases are TestVectors (see the manifest);
/// these build the 1 MiB inputs in memory and check the rules one by one.
@Suite("Hardening")
struct HardeningTests {
    let typical = Vector.named("typical-rsa2048-assertion-signed")

    /// The typical vector with `insertion` placed right after `<saml:Subject` (inside its start tag) or
    /// replacing `marker`.
    func hostile(replacing marker: String, with insertion: String) -> [UInt8] {
        let text = String(decoding: typical.bytes, as: UTF8.self)
        return Array(text.replacingOccurrences(of: marker, with: insertion).utf8)
    }

    func verdict(_ bytes: [UInt8], _ adjust: (inout SAMLResponseVerifier.Configuration) -> Void = { _ in }) -> Verdict {
        Verdict {
            var configuration = try typical.configuration()
            adjust(&configuration)
            let verifier = try SAMLResponseVerifier(configuration)
            _ = try verifier.verifyWithoutReplayCheck(bytes, at: typical.instant)
        }
    }

    @Test(
        "1 MiB shaped to make libxml2 quadratic is refused by the pre-scan, with the cap's code",
        arguments: [
            "attributes on one element", "namespace declarations on one element", "namespace declarations everywhere",
            "attributes everywhere", "one huge text node", "deep nesting", "many elements", "namespace declarations in scope",
        ])
    func refusesHostileShapes(shape: String) throws {
        var insertion = ""
        var marker = "<saml:Subject>"
        switch shape {
        case "attributes on one element":
            insertion = "<saml:Subject" + (0..<150_000).map { " a\($0)=\"\"" }.joined() + ">"
        case "namespace declarations on one element":
            insertion = "<saml:Subject" + (0..<70_000).map { " xmlns:n\($0)=\"u\"" }.joined() + ">"
        case "namespace declarations everywhere":
            insertion = "<saml:Subject>" + (0..<12_000).map { _ in "<e xmlns:a=\"u\"/>" }.joined()
        case "attributes everywhere":
            insertion = "<saml:Subject>" + (0..<1_000).map { _ in "<e" + (0..<60).map { " a\($0)=\"\"" }.joined() + "/>" }.joined()
        case "one huge text node":
            marker = ">hh-7731<"
            insertion = ">" + String(repeating: "x", count: 900_000) + "<"
        case "deep nesting":
            insertion = "<saml:Subject>" + String(repeating: "<e>", count: 100) + String(repeating: "</e>", count: 100)
        case "namespace declarations in scope":
            // Within every per-element cap: 3 nested elements of 30 declarations, then leaves using the
            // first-declared prefix (libxml2 walks every declaration in scope to resolve each name).
            let open = (0..<3).map { level in "<e" + (0..<30).map { " xmlns:p\(level)x\($0)=\"u\"" }.joined() + ">" }.joined()
            insertion = "<saml:Subject>" + open + String(repeating: "<p0x0:l/>", count: 10_000) + String(repeating: "</e>", count: 3)
        default:
            insertion = "<saml:Subject>" + String(repeating: "<e/>", count: 25_000)
        }
        let bytes = hostile(replacing: marker, with: insertion)
        #expect(bytes.count < 1 << 20 + 1 << 19)
        #expect(verdict(bytes) { $0.parserLimits.maximumDocumentBytes = 2 << 20 } == .invalid("xml.limit-exceeded"))
    }

    @Test("entity references and declarations anywhere are refused before parsing")
    func refusesEntitiesAndDeclarations() {
        #expect(verdict(hostile(replacing: ">hh-7731<", with: ">&ext;<")) == .invalid("xml.entity-forbidden"))
        #expect(verdict(hostile(replacing: ">hh-7731<", with: ">&amp;&#x41;&lt;<")) == .invalid("signature.digest-mismatch"))
        #expect(verdict(hostile(replacing: "<saml:Subject>", with: "<!ELEMENT x ANY><saml:Subject>")) == .invalid("xml.doctype-forbidden"))
        #expect(verdict(hostile(replacing: "<saml:Subject>", with: "<saml:Subject a=\"unterminated>")) == .invalid("xml.malformed"))
    }

    @Test(
        "xs:dateTime: only real instants",
        arguments: [
            ("2026-11-31T12:00:00Z", false), ("2027-02-29T12:00:00Z", false), ("2028-02-29T12:00:00Z", true),
            ("2100-02-29T12:00:00Z", false), ("2000-02-29T12:00:00Z", true), ("2026-11-21T12:00:00-99:59", false),
            ("2026-11-21T12:00:00+00:60", false), ("2026-11-21T12:00:00+14:00", true), ("2026-11-21T12:00:00+14:01", false),
            ("2026-11-21T12:00:60Z", false), ("2026-11-21T12:60:00Z", false), ("2026-11-21T25:00:00Z", false),
            ("+2026-11-21T12:00:00Z", false), ("0000-01-01T00:00:00Z", false), ("2026-11-21T24:00:00Z", true),
            ("2026-11-21T24:00:01Z", false), ("2026-11-21T24:00:00.000Z", true), ("2026-11-21T24:00:00.5Z", false),
            ("2026-04-31T00:00:00Z", false), ("2026-12-31T23:59:59.999-14:00", true), ("2026-11-21T12:00:00Zx", false),
            ("2026-11-21T12:00:00.", false), ("2026-11-21T12:00:00+01", false), ("2026-11-21T12:00:00", true),
            (" \t2026-11-21T12:00:00Z\r\n", true), ("2026-11-21 12:00:00Z", false), ("2026-11-21T12:00:0Z", false), ("", false),
        ])
    func strictDateTimes(text: String, valid: Bool) {
        #expect((SAMLInstant(xmlDateTime: text) != nil) == valid, "\(text)")
    }

    @Test("24:00:00 is the first instant of the next day")
    func endOfDay() {
        #expect(SAMLInstant(xmlDateTime: "2026-11-21T24:00:00Z") == SAMLInstant(xmlDateTime: "2026-11-22T00:00:00Z"))
        // Zones, fractions (to the millisecond) and surrounding whitespace.
        #expect(SAMLInstant(xmlDateTime: " 2026-11-21T12:00:00.5+01:30\n")?.description == "2026-11-21T10:30:00.500Z")
        #expect(SAMLInstant(xmlDateTime: "2026-11-21T12:00:00.1239-00:15")?.description == "2026-11-21T12:15:00.123Z")
        #expect(SAMLInstant(xmlDateTime: "2026-11-21T12:00:00") == SAMLInstant(xmlDateTime: "2026-11-21T12:00:00Z"))
        #expect(SAMLInstant(xmlDateTime: "1970-01-01T00:00:01Z")?.millisecondsSinceEpoch == 1000)
    }

    @Test("attribute values come back as signed: a NameID's value, whitespace kept, kinds reported")
    func attributeValuesAsSigned() throws {
        let response = try Vector.named("attribute-values-as-signed").verify()
        let targeted = try #require(response.assertion.attributes.first { $0.friendlyName == "eduPersonTargetedID" })
        guard case .nameID(let nameID) = try #require(targeted.attributeValues.first).content else {
            Issue.record("expected the NameID kind, found \(targeted.attributeValues.map(\.content))")
            return
        }
        #expect(nameID.value == "tid-42")
        #expect(nameID.format == "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent")
        #expect(targeted.values == ["tid-42"])
        #expect(try response.fields([targeted.name])[targeted.name] == ["tid-42"])
        let empty = try #require(response.assertion.attributes.first { $0.name == "empty" })
        #expect(empty.attributeValues.allSatisfy { $0.isEmpty })
        let null = try #require(response.assertion.attributes.first { $0.name == "nil" })
        #expect(null.attributeValues.map(\.content) == [.null])
        #expect(throws: SAMLError(.fieldsMissing, "")) { try response.fields(["padded", "empty"]) }
    }

    @Test("recipients are configured apart from the destination; an empty list is a configuration error")
    func recipients() throws {
        let vector = Vector.named("recipient-is-sp-entity-id")
        #expect(Verdict { _ = try vector.verify { $0.recipients = .destination } } == .invalid("subject-confirmation.recipient-mismatch"))
        #expect(Verdict { _ = try vector.verify { $0.recipients = .skip } } == .valid)
        #expect(throws: SAMLError(.configurationInvalid, "")) {
            var configuration = try vector.configuration()
            configuration.recipients = .anyOf([])
            _ = try SAMLResponseVerifier(configuration)
        }
        let response = try vector.verify { $0.recipients = .skip }
        #expect(response.skippedChecks.contains(.recipient))
    }

    @Test("the verified InResponseTo and Destination come from signed parts only")
    func signedPartsOnly() throws {
        let assertionSigned = try typical.verify()
        #expect(assertionSigned.inResponseTo == "_aq-3f9a1b2c")  // the bearer confirmation's
        #expect(assertionSigned.destination == nil)  // the Response is not signed
        let responseSigned = try Vector.named("typical-rsa2048-response-signed").verify()
        #expect(responseSigned.destination == "https://sp.example.com/api/v2/REF30/profiles/sso/Apple")
    }

    @Test("an error Response reports its status codes and message")
    func errorResponseStatus() throws {
        let error = try #require(throws: SAMLError.self) { try Vector.named("status-error-without-assertion").verify() }
        #expect(error.code == .statusNotSuccess)
        #expect(error.message.contains("AuthnFailed") && error.message.contains("subscriber not entitled"))
    }

    @Test("a decryption failure says the same whatever went wrong, also on the default algorithms")
    func decryptionFailuresAlike() throws {
        let another = try #require(throws: SAMLError.self) { try Vector.named("encrypted-assertion-for-another-sp").verify() }
        let corrupted = try #require(throws: SAMLError.self) { try Vector.named("encrypted-assertion-corrupted-ciphertext").verify() }
        #expect(another.code == .decryptionFailed)
        #expect(another.description == corrupted.description)
    }
}
