import AppleSSO
import Foundation
import SAML
import SAMLLoad
import Testing

/// The service as a client written from Adobe Pass's API pages uses it (AdobeDocs/pass.en,
/// help/authentication/integration-guide-programmers/): each test names the page it follows.
@Suite("Adobe Pass REST API contract")
struct AdobePassContractTests {
    static let headers: [(String, String)] = [
        ("AP-Device-Identifier", "fingerprint \(Service.deviceValue)"),
        (
            "X-Device-Info",
            Data(#"{"model":"AppleTV6,2","osName":"tvOS","osVersion":"18.1","version":"1","connectionType":"wifi"}"#.utf8)
                .base64EncodedString()
        ),
    ]

    /// rest-api-v2-configuration-apis-retrieve-configuration-for-specific-service-provider.md
    @Test("GET configuration: requestor {id, name, domains, mvpds}, device, time; each MVPD's fields and types")
    func configuration() async throws {
        try await Service.with { port in
            let answer = try await Service.send(port, "/api/v2/REF30/configuration", method: "GET", headers: Self.headers)
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true)
            let object = Service.json(answer)
            let requestor = try #require(object["requestor"] as? [String: Any])
            #expect(requestor["id"] as? String == "REF30" && requestor["name"] is String && requestor["domains"] is [Any])
            let mvpds = try #require(requestor["mvpds"] as? [[String: Any]])
            #expect(mvpds.count == (object["mvpds"] as? [Any])?.count)
            #expect(object["device"] as? String == "tvOS")
            #expect((object["time"] as? Int).map { abs($0 - Int(SAMLInstant.now().millisecondsSinceEpoch)) < 60_000 } == true)
            let a = try #require(mvpds.first { $0["id"] as? String == "MVPD-A" })
            for flag in ["isTempPass", "isProxy", "enablePlatformServices", "displayInPlatformPicker", "enforcePlatformPermissions"] {
                #expect(a[flag] is Bool, "\(flag)")
            }
            #expect(
                a["displayName"] is String && a["boardingStatus"] as? String == "SUPPORTED"
                    && a["platformMappingId"] as? String == "ProviderA")
            // MVPD-C has no identity provider here: not offered in Apple's picker.
            #expect((object["supportedAccountProviderIdentifiers"] as? [String])?.contains("ProviderC") == false)
            #expect((object["supportedAccountProviderIdentifiers"] as? [String])?.contains("ProviderA") == true)
            // What the cookbook's code reads back: the MVPD list under requestor, through the library's decoder.
            #expect(try MVPDConfiguration.decode(answer.body).mvpds.map(\.id).contains("MVPD-A"))
        }
    }

    /// features-standard/error-reporting/enhanced-error-codes.md ("Structure", "REST API v2"), and the
    /// "405 Method Not Allowed" row of every v2 page.
    @Test("errors: action, status, code, message, helpUrl, trace; details only when there is one; 405 with Allow")
    func errors() async throws {
        var configuration = Service.configuration()
        configuration.bearerTokens = ["token"]
        try await Service.with(configuration) { port in
            let unauthorized = try await Service.send(port, "/api/v2/REF30/configuration", method: "GET")
            #expect(unauthorized.status == 401)
            let object = Service.json(unauthorized)
            #expect(object["code"] as? String == "invalid_access_token_service_provider")
            #expect(object["action"] as? String == "application-registration" && object["status"] as? Int == 401)
            #expect(object["helpUrl"] as? String == EnhancedError.helpURL && (object["trace"] as? String)?.count == 36)
            #expect(object["message"] is String && object["details"] == nil)
            let bearer = [("Authorization", "Bearer token")] + Self.headers
            let unknown = Service.json(try await Service.send(port, "/api/v2/OTHER/configuration", method: "GET", headers: bearer))
            #expect(unknown["code"] as? String == "invalid_parameter_service_provider" && unknown["action"] as? String == "none")
            for (method, path, allowed) in [
                ("POST", "/api/v2/REF30/configuration", "GET"), ("GET", "/api/v2/REF30/sessions/sso/Apple", "POST"),
                ("DELETE", "/api/v2/REF30/profiles", "GET"), ("PUT", "/api/v2/REF30/profiles/sso/Apple", "POST"),
                ("GET", "/api/v1/tokens/authn", "POST"), ("HEAD", "/api/v2/REF30/configuration", "GET"),
            ] {
                let answer = try await Service.send(port, path, method: method, headers: bearer)
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(answer.header("Allow") == allowed)
                #expect(method == "HEAD" || Service.json(answer)["status"] as? Int == 405)
            }
        }
    }

    /// rest-api-v2-profiles-apis-retrieve-profiles.md, -retrieve-profile-for-specific-mvpd.md, and
    /// -retrieve-profile-using-partner-authentication-response.md (the profile's fields).
    @Test("profiles: kept after the exchange for the device, with the MVPD's authentication TTL; empty for another device")
    func profiles() async throws {
        var configuration = Service.configuration()
        configuration.mvpdAuthenticationTTLs = ["MVPD-B": .seconds(7200)]
        try await Service.with(configuration) { port in
            let device = Service.newDevice()
            let created = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdB, device: device))
            #expect(created.status == 201)
            let profile = try #require((Service.json(created)["profiles"] as? [String: Any])?["MVPD-B"] as? [String: Any])
            let notBefore = try #require(profile["notBefore"] as? Int)
            #expect(profile["notAfter"] as? Int == notBefore + 7_200_000)
            #expect(profile["issuer"] as? String == "Apple" && profile["type"] as? String == "appleSSO")
            #expect(profile["attributes"] is [String: Any])
            // The appleSSO profile comes with a valid partner framework status for its MVPD only.
            let headers = [
                ("AP-Device-Identifier", "fingerprint \(device)"), ("AP-Partner-Framework-Status", Service.pfs("ProviderB").headerValue),
            ]
            for path in ["/api/v2/REF30/profiles", "/api/v2/REF30/profiles/MVPD-B"] {
                let answer = try await Service.send(port, path, method: "GET", headers: headers)
                #expect(answer.status == 200)
                let profiles = try #require(Service.json(answer)["profiles"] as? [String: Any])
                #expect(profiles.keys.sorted() == ["MVPD-B"], "\(path)")
                #expect((profiles["MVPD-B"] as? [String: Any])?["notAfter"] as? Int == notBefore + 7_200_000)
            }
            let none = try await Service.send(port, "/api/v2/REF30/profiles/MVPD-A", method: "GET", headers: headers)
            #expect(none.status == 200 && (Service.json(none)["profiles"] as? [String: Any])?.isEmpty == true)
            for status in [Service.pfs("ProviderB", access: .denied).headerValue, Service.pfs("ProviderA").headerValue, "garbage"] {
                let signedOut = [("AP-Device-Identifier", "fingerprint \(device)"), ("AP-Partner-Framework-Status", status)]
                let answer = try await Service.send(port, "/api/v2/REF30/profiles", method: "GET", headers: signedOut)
                #expect(answer.status == 200 && (Service.json(answer)["profiles"] as? [String: Any])?.isEmpty == true)
            }
            // Without the header: the device's profiles as kept.
            let plain = try await Service.send(
                port, "/api/v2/REF30/profiles", method: "GET", headers: [("AP-Device-Identifier", "fingerprint \(device)")])
            #expect((Service.json(plain)["profiles"] as? [String: Any])?.keys.sorted() == ["MVPD-B"])
            let other = try await Service.send(port, "/api/v2/REF30/profiles", method: "GET", headers: Self.headers)
            #expect((Service.json(other)["profiles"] as? [String: Any])?.isEmpty == true)
            let unknown = try await Service.send(port, "/api/v2/REF30/profiles/NOPE", method: "GET", headers: headers)
            #expect(unknown.status == 400 && Service.json(unknown)["code"] as? String == "invalid_parameter_mvpd")
            let noDevice = try await Service.send(port, "/api/v2/REF30/profiles", method: "GET")
            #expect(noDevice.status == 400 && Service.json(noDevice)["code"] as? String == "invalid_header_device_identifier")
        }
    }

    /// legacy/rest-api-v1/apis/provide-mvpd-list.md, retrieve-profilerequest.md and token-exchange.md: the
    /// whole v1 flow, and rest-api-reference.md's response formats.
    @Test("REST API v1: configuration in JSON and XML, a profile request, then the token exchange it answers; XML errors")
    func legacyFlow() async throws {
        try await Service.with { port in
            let json = try await Service.send(port, "/api/v1/config/REF30", method: "GET")
            #expect(json.status == 200)
            #expect(try MVPDConfiguration.decode(json.body).mvpds.first { $0.id == "MVPD-B" }?.platformMappingId == "ProviderB")
            let xml = try await Service.send(port, "/api/v1/config/REF30", method: "GET", headers: [("Accept", "application/xml")])
            #expect(xml.header("Content-Type")?.hasPrefix("application/xml") == true)
            #expect(try MVPDConfiguration.decode(xml.body).mvpds.map(\.id) == MVPDConfiguration.decode(json.body).mvpds.map(\.id))
            #expect(
                try await Service.send(port, "/api/v1/config/REF30.xml", method: "GET").header("Content-Type")?.hasPrefix("application/xml")
                    == true)

            let request = try await Service.send(port, "/api/v1/REF30/profile-requests/MVPD-B?deviceType=tvOS", method: "GET")
            #expect(request.status == 200 && request.header("Content-Type") == "application/octet-stream")
            let decoded = String(decoding: try #require(Data(base64Encoded: Data(request.body))), as: UTF8.self)
            let start = try #require(decoded.range(of: " ID=\""))
            let id = String(decoded[start.upperBound...].prefix { $0 != "\"" })
            let exchange = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: try Service.response(Service.mvpdB, to: id), requestor: "REF30", deviceID: "device-v1",
                mvpd: "MVPD-B", deviceType: .tvOS)
            #expect(try await Service.send(port, exchange).status == 204)
            // Answered once.
            #expect(try await Service.send(port, exchange).status == 400)

            let badType = try await Service.send(port, "/api/v1/REF30/profile-requests/MVPD-B?deviceType=Roku", method: "GET")
            #expect(badType.status == 400 && Service.json(badType)["code"] as? String == "invalid_device_info")
            let unknown = try await Service.send(
                port, "/api/v1/REF30/profile-requests/NOPE?deviceType=iOS", method: "GET", headers: [("Accept", "application/xml")])
            let text = String(decoding: unknown.body, as: UTF8.self)
            #expect(unknown.status == 400 && text.contains("<code>unknown_integration</code>") && text.contains("<status>400</status>"))
            let otherRequestor = try await Service.send(port, "/api/v1/config/OTHER?format=xml", method: "GET")
            #expect(String(decoding: otherRequestor.body, as: UTF8.self).contains("<code>invalid_requestor</code>"))
        }
    }
}
