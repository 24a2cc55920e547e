import AppleSSO
import Foundation
import SAML
import Testing

@Suite("AP-Partner-Framework-Status")
struct PartnerFrameworkStatusTests {
    /// The documented sample (Adobe Pass REST API v2 appendix, as digested in docs section 4).
    static let documentedJSON = """
        {"frameworkPermissionInfo": {"accessStatus": "granted"},
         "frameworkProviderInfo": {"id": "Cablevision", "expirationDate": "1735689600000"}}
        """
    static var documentedHeader: String { Data(documentedJSON.utf8).base64EncodedString() }

    static let configuration = MVPDConfiguration(mvpds: [
        MVPD(
            id: "Cablevision-MVPD", enablePlatformServices: true, boardingStatus: .supported, displayInPlatformPicker: true,
            platformMappingId: "Cablevision", requiredMetadataFields: ["uid"]),
        MVPD(
            id: "Other", enablePlatformServices: true, boardingStatus: .picker, displayInPlatformPicker: true, platformMappingId: "OtherTV"),
    ])
    static let beforeExpiry = SAMLInstant(millisecondsSinceEpoch: 1_735_689_599_000)

    @Test("decodes the documented sample")
    func decodesDocumentedSample() throws {
        let status = try PartnerFrameworkStatus(headerValue: Self.documentedHeader)
        #expect(status.accessStatus == .granted)
        #expect(status.providerID == "Cablevision")
        #expect(status.expirationMilliseconds == 1_735_689_600_000)
        #expect(status.permissionError == nil)
        #expect(try status.validate(configuration: Self.configuration, requestedMVPD: nil, now: Self.beforeExpiry).id == "Cablevision-MVPD")
    }

    @Test("encodes to Base64 of JSON with the expiration as a string, and decodes back")
    func roundTrips() throws {
        let status = PartnerFrameworkStatus(
            accessStatus: .denied, providerID: "OtherTV", expirationMilliseconds: 42,
            permissionError: .init(code: "VSA403", message: "denied"))
        let json = try JSONSerialization.jsonObject(with: Data(base64Encoded: status.headerValue)!) as? [String: [String: Any]]
        #expect(json?["frameworkProviderInfo"]?["expirationDate"] as? String == "42")
        #expect(try PartnerFrameworkStatus(headerValue: status.headerValue) == status)
    }

    @Test(
        "gives each documented outcome",
        arguments: [
            (
                #"{"frameworkPermissionInfo":{},"frameworkProviderInfo":{"id":"Cablevision"}}"#, nil as String?,
                "invalid_header_pfs_permission_access_not_present"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"notDetermined"},"frameworkProviderInfo":{"id":"Cablevision"}}"#, nil,
                "invalid_header_pfs_permission_access_not_determined"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"denied"},"frameworkProviderInfo":{"id":"Cablevision"}}"#, nil,
                "invalid_header_pfs_permission_access_not_granted"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"restricted"},"frameworkProviderInfo":{"id":"Cablevision"}}"#, nil,
                "invalid_header_pfs_permission_access_not_granted"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"Unknown"}}"#, nil,
                "invalid_header_pfs_provider_id_not_determined"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{}}"#, nil,
                "invalid_header_pfs_provider_id_not_determined"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"Cablevision"}}"#, "Other",
                "invalid_header_pfs_provider_id_mismatch"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"Cablevision","expirationDate":"1000"}}"#,
                nil, "invalid_header_pfs_provider_info_expired"
            ),
            (
                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"Cablevision","expirationDate":"1735689600000"}}"#,
                "Cablevision-MVPD", "ok"
            ),
        ])
    func outcomes(json: String, requested: String?, expected: String) throws {
        let status = try PartnerFrameworkStatus(headerValue: Data(json.utf8).base64EncodedString())
        do {
            _ = try status.validate(configuration: Self.configuration, requestedMVPD: requested, now: Self.beforeExpiry)
            #expect(expected == "ok")
        } catch {
            #expect(error.rawValue == expected)
        }
    }

    @Test("malformed Base64 and malformed JSON get their own codes")
    func malformedHeaders() {
        #expect(throws: SAMLError(.pfsMalformedBase64, "")) { _ = try PartnerFrameworkStatus(headerValue: "not base64!") }
        #expect(throws: SAMLError(.pfsMalformedJSON, "")) {
            _ = try PartnerFrameworkStatus(headerValue: Data("[1,2]".utf8).base64EncodedString())
        }
        #expect(throws: SAMLError(.pfsMalformedJSON, "")) {
            _ = try PartnerFrameworkStatus(
                headerValue: Data(#"{"frameworkProviderInfo":{"expirationDate":"soon"}}"#.utf8).base64EncodedString())
        }
        // Two readers could disagree on which of two same-named members counts: neither is read.
        #expect(throws: SAMLError(.pfsMalformedJSON, "")) {
            _ = try PartnerFrameworkStatus(
                headerValue: Data(#"{"frameworkProviderInfo":{"id":"A","id":"B"}}"#.utf8).base64EncodedString())
        }
    }
}

@Suite("AP-Partner-Framework-Status decoding errors")
struct PartnerFrameworkStatusErrorTests {
    @Test(
        "a member of the wrong type is named, with the type expected",
        arguments: [
            (#"{"frameworkPermissionInfo": "granted"}"#, "expected frameworkPermissionInfo to be an object"),
            (#"{"frameworkPermissionInfo": {"accessStatus": 1}}"#, "expected frameworkPermissionInfo.accessStatus to be a string"),
            (
                #"{"frameworkProviderInfo": {"expirationDate": 1735689600000}}"#,
                "expected frameworkProviderInfo.expirationDate to be a string"
            ),
            (#"{"frameworkProviderInfo": {"error": {"code": 5}}}"#, "expected frameworkProviderInfo.error.code to be a string"),
            (#"{"frameworkProviderInfo": {"error": []}}"#, "expected frameworkProviderInfo.error to be an object"),
        ])
    func typeMismatch(json: String, message: String) {
        let header = Data(json.utf8).base64EncodedString()
        #expect {
            try PartnerFrameworkStatus(headerValue: header)
        } throws: { error in
            (error as? SAMLError)?.code == .pfsMalformedJSON && (error as? SAMLError)?.message.hasPrefix(message) == true
        }
    }

    @Test("HTTP whitespace around the value is ignored; a JSON array or text is not an object")
    func whitespaceAndShapes() throws {
        let status = PartnerFrameworkStatus(accessStatus: .granted, providerID: "P", expirationMilliseconds: 5)
        #expect(try PartnerFrameworkStatus(headerValue: " \t" + status.headerValue + " ") == status)
        for json in ["[]", "\"x\"", "{"] {
            #expect(throws: SAMLError.self) { try PartnerFrameworkStatus(headerValue: Data(json.utf8).base64EncodedString()) }
        }
        #expect(throws: SAMLError.self) { try PartnerFrameworkStatus(headerValue: "   ") }
    }
}
