import Testing

@testable import SAML

/// The protocol checks on plain values (``ResponseContent``), with no XML and no C: what each rule
/// accepts and the code and message of what it refuses.
@Suite("Policies on plain values")
struct PolicyTests {
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:01:00Z")!
    static let context = ValidationContext(now: now, skew: .seconds(180))

    static func instant(
        _ text: String, _ element: String = "saml:SubjectConfirmationData", _ attribute: String = "NotOnOrAfter"
    ) -> ResponseContent.Instant {
        ResponseContent.Instant(text: text, element: element, attribute: attribute)
    }

    static func bearer(recipient: String? = "https://sp/acs", notOnOrAfter: String? = "2026-11-21T12:05:00Z", inResponseTo: String? = "_r1")
        -> ResponseContent.Confirmation
    {
        ResponseContent.Confirmation(
            method: SubjectConfirmationPolicy.bearer,
            data: .init(recipient: recipient, notBefore: nil, notOnOrAfter: notOnOrAfter.map { instant($0) }, inResponseTo: inResponseTo))
    }

    @Test("a bearer confirmation: accepted, or refused with the code of what is missing or wrong")
    func subjectConfirmation() throws {
        func code(_ confirmations: [ResponseContent.Confirmation], recipients: [String]? = ["https://sp/acs"]) -> String {
            do {
                _ = try SubjectConfirmationPolicy.check(
                    confirmations, recipients: recipients, inResponseTo: .equals("_r1"), context: Self.context)
                return "valid"
            } catch let error as SAMLError {
                return error.code.identifier
            } catch {
                return "\(error)"
            }
        }
        #expect(code([Self.bearer()]) == "valid")
        #expect(code([]) == "subject-confirmation.missing")
        #expect(code([Self.bearer(recipient: nil)]) == "subject-confirmation.incomplete")
        #expect(code([Self.bearer(recipient: nil)], recipients: nil) == "valid")
        #expect(code([Self.bearer(recipient: "https://elsewhere")]) == "subject-confirmation.recipient-mismatch")
        #expect(code([Self.bearer(notOnOrAfter: nil)]) == "subject-confirmation.incomplete")
        #expect(code([Self.bearer(notOnOrAfter: "2026-11-21T11:00:00Z")]) == "subject-confirmation.expired")
        #expect(code([Self.bearer(notOnOrAfter: "yesterday")]) == "time.malformed")
        #expect(code([Self.bearer(inResponseTo: "_other")]) == "subject-confirmation.in-response-to-mismatch")
        // One satisfying confirmation suffices; otherwise the first failure is reported.
        #expect(code([Self.bearer(recipient: "https://elsewhere"), Self.bearer()]) == "valid")
        #expect(
            code([ResponseContent.Confirmation(method: "urn:oasis:names:tc:SAML:2.0:cm:holder-of-key", data: nil)])
                == "subject-confirmation.missing")
    }

    @Test("status, issuer, destination and audience refusals name what was expected and found")
    func messages() throws {
        let status = try #require(throws: SAMLError.self) {
            try StatusPolicy.check(.init(code: "urn:oasis:names:tc:SAML:2.0:status:Responder", subcode: "urn:x:sub", message: "down"))
        }
        #expect(status.code == .statusNotSuccess)
        #expect(status.message.contains("Responder") && status.message.contains("urn:x:sub") && status.message.contains("down"))
        #expect(throws: SAMLError.self) { try StatusPolicy.check(nil) }

        let format = try #require(throws: SAMLError.self) {
            try IssuerPolicy.check(
                response: nil, assertion: .init(value: "https://idp", format: "urn:x:other"), expected: .equals("https://idp"))
        }
        #expect(format.code == .issuerFormat)
        #expect(throws: Never.self) {
            try IssuerPolicy.check(
                response: .init(value: "https://idp", format: IssuerPolicy.entityFormat),
                assertion: .init(value: "https://idp", format: nil), expected: .equals(" https://idp "))
        }

        #expect(throws: Never.self) {
            try DestinationPolicy.check(destination: nil, responseSigned: false, expected: .equals("https://sp"))
        }
        let missing = try #require(throws: SAMLError.self) {
            try DestinationPolicy.check(destination: nil, responseSigned: true, expected: .equals("https://sp"))
        }
        #expect(missing.code == .destinationMissing)

        let audience = try #require(throws: SAMLError.self) {
            try AudiencePolicy.check(
                .init(notBefore: nil, notOnOrAfter: nil, audienceRestrictions: [["a"], ["b"]]), expected: .equals("a"))
        }
        #expect(audience.code == .audienceMismatch)
        #expect(audience.message.contains("\"b\""))
    }

    @Test("time windows and IssueInstant: skew on both sides, malformed instants named by where they were")
    func time() throws {
        let conditions = ResponseContent.Conditions(
            notBefore: Self.instant("2026-11-21T12:03:00Z", "saml:Conditions", "NotBefore"), notOnOrAfter: nil, audienceRestrictions: [])
        #expect(throws: Never.self) { try TimeWindowPolicy.checkConditions(conditions, context: Self.context) }
        let late = ResponseContent.Conditions(
            notBefore: Self.instant("2026-11-21T12:05:00Z", "saml:Conditions", "NotBefore"), notOnOrAfter: nil, audienceRestrictions: [])
        #expect(throws: SAMLError.self) { try TimeWindowPolicy.checkConditions(late, context: Self.context) }
        let malformed = try #require(throws: SAMLError.self) {
            try TimeWindowPolicy.checkIssueInstant(
                Self.instant("2026-13-01T00:00:00Z", "saml:Assertion", "IssueInstant"), of: "saml:Assertion",
                maximumAge: nil, context: Self.context)
        }
        #expect(malformed.code == .timeMalformed)
        #expect(malformed.message.contains("saml:Assertion/@IssueInstant"))
        let old = try #require(throws: SAMLError.self) {
            try TimeWindowPolicy.checkIssueInstant(
                Self.instant("2026-11-21T11:00:00Z"), of: "saml:Assertion", maximumAge: .seconds(600), context: Self.context)
        }
        #expect(old.code == .timeIssueInstant)
    }

    @Test("fields: Name only (never FriendlyName), the first attribute of a name, NameID, empty values missing")
    func fieldsLookup() throws {
        func attribute(_ name: String, _ friendlyName: String?, _ values: [String]) -> SAMLAttribute {
            SAMLAttribute(
                name: name, friendlyName: friendlyName, nameFormat: nil,
                attributeValues: values.map { SAMLAttributeValue(string: $0, content: .text, type: nil) })
        }
        let assertion = VerifiedAssertion(
            id: "_a", issuer: "idp", issueInstant: Self.now,
            nameID: NameID(value: "n-1", format: nil, nameQualifier: nil, spNameQualifier: nil),
            sessionIndex: nil, authnInstant: nil, notBefore: nil, notOnOrAfter: nil, audiences: [],
            attributes: [
                attribute("urn:oid:1", "zip", ["by friendly name"]), attribute("zip", nil, ["by name"]),
                attribute("uid", "mail", ["first"]), attribute("uid", nil, ["second"]), attribute("blank", "other", ["  "]),
                attribute("other", nil, ["x"]), attribute("NameID", nil, ["not the subject's"]),
            ])
        let response = VerifiedResponse(
            responseID: "_r", responseIssuer: nil, destination: nil, inResponseTo: nil, signedParts: [.assertion],
            signingKeyFingerprint: "", assertion: assertion, skippedChecks: [])
        let fields = try response.fields(["zip", "uid", "mail", "NameID", "other", "uid", "blank", "absent"], allowMissing: true)
        #expect(fields.values.map(\.name) == ["zip", "uid", "NameID", "other", "uid"])
        #expect(fields["zip"] == ["by name"])
        #expect(fields["uid"] == ["first"])
        #expect(fields["NameID"] == ["n-1"])
        #expect(fields["other"] == ["x"])
        // "mail" is only a FriendlyName (SAML Core 2.7.3.1: never used for processing).
        #expect(fields.missing == ["mail", "blank", "absent"])
        let refusal = try #require(throws: SAMLError.self) { try response.fields(["mail", "absent"]) }
        #expect(refusal.code == .fieldsMissing)
        #expect(refusal.message.contains("\"mail\" is only the FriendlyName of the attribute \"uid\": ask for that Name"))
        #expect(!refusal.message.contains("\"absent\" is only"))
        // A long list (hashed rather than compared in turn) finds the same.
        let padding = (0..<20).map { "padding-\($0)" }
        let long = try response.fields(
            ["zip", "uid", "mail", "NameID", "other", "uid", "blank", "absent"] + padding, allowMissing: true)
        #expect(long.values.map(\.name) == fields.values.map(\.name))
        #expect(long.values.map(\.values) == fields.values.map(\.values))
        #expect(long.missing == fields.missing + padding)
    }
}
