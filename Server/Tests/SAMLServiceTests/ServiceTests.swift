import AppleSSO
import Foundation
import Logging
import SAML
import SAMLLoad
import SAMLService
import SAMLTestSupport
import Testing

/// The service over real HTTP on loopback, with the in-memory store.
@Suite("Token Exchange service")
struct ServiceTests {
    @Test("configuration: every MVPD and Apple's picker lists")
    func configuration() async throws {
        try await Service.with { port in
            let answer = try await Service.send(port, "/api/v2/REF30/configuration", method: "GET")
            #expect(answer.status == 200)
            let object = Service.json(answer)
            // MVPD-C has platform SSO but no identity provider here: not offered in Apple's picker.
            #expect(object["supportedAccountProviderIdentifiers"] as? [String] == ["ProviderA", "ProviderB"])
            #expect(object["featuredAccountProviderIdentifiers"] as? [String] == ["ProviderB"])
            #expect((object["mvpds"] as? [[String: Any]])?.map { $0["id"] as? String } == ["MVPD-A", "MVPD-B", "MVPD-C"])
            // What it answers reads back as the same configuration, but the authorization policies: who may
            // watch what is the service's business, not the apps'.
            let read = try MVPDConfiguration.decode(answer.body)
            var file = try MVPDConfiguration.decode(
                Array(try Data(contentsOf: URL(fileURLWithPath: "\(Service.vectors)/exchange/mvpd-configuration.json"))))
            #expect(file.mvpds.contains { $0.authorization != nil } && !answer.text.contains("authorization"))
            for index in file.mvpds.indices { file.mvpds[index].authorization = nil }
            #expect(read == file)
            #expect(try await Service.send(port, "/api/v2/OTHER/configuration", method: "GET").status == 400)
        }
    }

    @Test("the partner flow: partner_profile, a 201 profile, then the same response refused as a replay")
    func partnerFlow() async throws {
        try await Service.with { port in
            let status = Service.pfs("ProviderA")
            let session = try await Service.session(port, status.headerValue)
            #expect(session.status == 200)
            let object = Service.json(session)
            #expect(object["actionName"] as? String == "partner_profile")
            #expect(object["actionType"] as? String == "direct")
            #expect(object["reasonType"] as? String == "none")
            let authentication = try #require(object["authenticationRequest"] as? [String: Any])
            #expect(authentication["type"] as? String == "saml")
            #expect(authentication["attributesNames"] as? [String] == ["NameID", "uid", "householdId"])
            let xml = String(decoding: Data(base64Encoded: authentication["request"] as? String ?? "") ?? Data(), as: UTF8.self)
            #expect(xml.contains("samlp:AttributeQuery") && xml.contains("https://saml.sp.auth.adobe.com</saml:Issuer>"))
            let id = try #require(session.partnerRequestID)

            let request = Service.exchange(try Service.response(Service.mvpdA, to: id, nameID: "subscriber-77"), status)
            let accepted = try await Service.send(port, request)
            #expect(accepted.status == 201)
            let profile = try #require((Service.json(accepted)["profiles"] as? [String: Any])?["MVPD-A"] as? [String: Any])
            #expect(profile["issuer"] as? String == "Apple" && profile["type"] as? String == "appleSSO")
            let attributes = try #require(profile["attributes"] as? [String: Any])
            #expect((attributes["userID"] as? [String: Any])?["value"] as? String == "subscriber-77")
            #expect((attributes["householdID"] as? [String: Any])?["value"] as? String == "hh-7731")

            let replay = try await Service.send(port, request)
            #expect(replay.status == 400)
            #expect(Service.json(replay)["code"] as? String == "invalid_parameter_saml_response")
            #expect(Service.detailCode(replay) == "replay.detected")

            // A response to no request of this service is refused (unsolicited).
            let unsolicited = try await Service.send(port, Service.exchange(try Service.response(Service.mvpdA, to: nil), status))
            #expect(Service.detailCode(unsolicited) == "in-response-to.unsolicited")
            // A response to a request never issued.
            let unknown = try await Service.send(port, Service.exchange(try Service.response(Service.mvpdA, to: "_never-issued"), status))
            #expect(Service.detailCode(unknown) == "in-response-to.not-outstanding")
        }
    }

    /// REST API v2, "Retrieve partner authentication request" (rest-api-v2-partner-single-sign-on-apis-
    /// retrieve-partner-authentication-request.md): `actionName` / `actionType` / `reasonType`, `sessionId`
    /// and `serviceProvider` on every answer, `url` and `code` on the fallbacks, `missingParameters` on
    /// `resume`, `authenticationRequest` on `partner_profile`, `authorize` once the device has a profile.
    @Test("sessions/sso: the decision table of the API page, with its fields, and path errors")
    func sessionFallbacks() async throws {
        try await Service.with { port in
            func reason(_ header: String?, body: String = "domainName=a.example&redirectUrl=https%3A%2F%2Fa.example%2Fdone")
                async throws -> (String?, String?)
            {
                let answer = try await Service.session(port, header, body: body)
                #expect(answer.status == 200)
                let object = Service.json(answer)
                #expect(object["actionName"] as? String != "partner_profile" || object["reasonType"] as? String == "none")
                #expect((object["sessionId"] as? String)?.isEmpty == false)
                #expect(object["serviceProvider"] as? String == "REF30")
                switch object["actionName"] as? String {
                case "authenticate":
                    #expect(object["actionType"] as? String == "interactive")
                    let code = try #require(object["code"] as? String)
                    #expect(code.count == 7)
                    #expect(
                        (object["url"] as? String)?.hasPrefix(
                            "/api/v2/authenticate/REF30/\(code)?domainName=a.example&redirectUrl=https%3A%2F%2Fa.example") == true)
                    let notBefore = (object["notBefore"] as? String).flatMap { Int64($0) }
                    let notAfter = (object["notAfter"] as? String).flatMap { Int64($0) }
                    #expect(notBefore != nil && notAfter.map { $0 - notBefore! } == 1_800_000)
                case "partner_profile":
                    #expect(object["actionType"] as? String == "direct")
                    #expect(object["url"] as? String == "/api/v2/REF30/profiles/sso/Apple")
                default:
                    break
                }
                return (object["reasonType"] as? String, object["actionName"] as? String)
            }
            // A missing or malformed header is pfs_fallback, not an error.
            #expect(try await reason(nil) == ("pfs_fallback", "authenticate"))
            #expect(try await reason("not base64 json") == ("pfs_fallback", "authenticate"))
            #expect(try await reason(Service.pfs("ProviderA", access: .denied).headerValue) == ("pfs_fallback", "authenticate"))
            #expect(try await reason(Service.pfs("ProviderA", access: .notDetermined).headerValue) == ("pfs_fallback", "authenticate"))
            #expect(try await reason(Service.pfs("ProviderA", access: nil).headerValue) == ("pfs_fallback", "authenticate"))
            #expect(try await reason(Service.pfs("ProviderZ").headerValue) == ("pfs_fallback", "authenticate"))
            #expect(try await reason(Service.pfs("ProviderA", expiresIn: -1000).headerValue) == ("pfs_fallback", "authenticate"))
            #expect(
                try await reason(
                    Service.pfs("ProviderA").headerValue, body: "mvpd=MVPD-B&domainName=a.example&redirectUrl=https%3A%2F%2Fa.example")
                    == ("pfs_fallback", "authenticate"))
            // MVPD-C has platform SSO but no identity provider in the trust file.
            #expect(try await reason(Service.pfs("ProviderC").headerValue) == ("configuration_fallback", "authenticate"))
            #expect(try await reason(Service.pfs("ProviderB").headerValue) == ("none", "partner_profile"))

            // Missing or invalid parameters: resume with the missing ones named.
            let resume = try await Service.session(port, Service.pfs("ProviderB").headerValue, body: "domainName=a.example")
            let resumed = Service.json(resume)
            #expect(resumed["actionName"] as? String == "resume" && resumed["actionType"] as? String == "direct")
            #expect(resumed["reasonType"] as? String == "missing_parameters_fallback")
            #expect(resumed["missingParameters"] as? [String] == ["redirectUrl"])
            #expect((resumed["url"] as? String)?.hasPrefix("/api/v2/REF30/sessions/") == true && resumed["code"] is String)
            let neither = Service.json(try await Service.session(port, Service.pfs("ProviderB").headerValue, body: "redirectUrl=nonsense"))
            #expect(neither["missingParameters"] as? [String] == ["domainName", "redirectUrl"])
            // Only an http(s) URL with a host can be where the basic flow sends a browser.
            for value in [
                "javascript%3Aalert(1)", "data%3Atext%2Fhtml%2Cx", "file%3A%2F%2F%2Fetc%2Fpasswd", "https%3A%2F%2F",
                "https%3A%2F%2Fa.example%2F%0D%0AX",
            ] {
                let invalid = Service.json(
                    try await Service.session(port, Service.pfs("ProviderB").headerValue, body: "domainName=a.example&redirectUrl=\(value)")
                )
                #expect(invalid["missingParameters"] as? [String] == ["redirectUrl"], "\(value)")
            }
            let badDomain = Service.json(
                try await Service.session(
                    port, Service.pfs("ProviderB").headerValue, body: "domainName=a%20b&redirectUrl=https%3A%2F%2Fa.example"))
            #expect(badDomain["missingParameters"] as? [String] == ["domainName"])

            // A device with a valid profile for the MVPD: authorize.
            let device = Service.newDevice()
            let login = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdB, device: device))
            #expect(login.status == 201)
            let again = Service.json(try await Service.session(port, Service.pfs("ProviderB").headerValue, device: device))
            #expect(again["actionName"] as? String == "authorize" && again["actionType"] as? String == "direct")
            #expect(again["reasonType"] as? String == "authenticatedSSO" && again["mvpd"] as? String == "MVPD-B")
            #expect(again["url"] as? String == "/api/v2/REF30/decisions/authorize/MVPD-B")
            // Another device still gets the partner request.
            #expect(try await reason(Service.pfs("ProviderB").headerValue) == ("none", "partner_profile"))

            let form = Service.device + [("Content-Type", "application/x-www-form-urlencoded")]
            let otherSP = try await Service.send(port, "/api/v2/OTHER/sessions/sso/Apple", headers: form)
            #expect(otherSP.status == 400 && Service.json(otherSP)["code"] as? String == "invalid_parameter_service_provider")
            let otherPartner = try await Service.send(port, "/api/v2/REF30/sessions/sso/Roku", headers: form)
            #expect(otherPartner.status == 400 && Service.json(otherPartner)["code"] as? String == "invalid_parameter_partner")
        }
    }

    @Test("profiles/sso: every Enhanced Error Code with its status")
    func enhancedErrorCodes() async throws {
        try await Service.with { port in
            let status = Service.pfs(Service.mvpdA.providerID)
            let xml = try Service.response(Service.mvpdA, to: try await Service.session(port, status.headerValue).partnerRequestID)
            let good = Service.exchange(xml, status)
            func answer(_ request: HTTPRequestParts, replacing name: String? = nil, with value: String? = nil, body: [UInt8]? = nil)
                async throws -> (Int, String?, String?)
            {
                var request = request
                if let name {
                    request.headers.removeAll { $0.name == name }
                    if let value { request.headers.append(HTTPHeader(name, value)) }
                }
                if let body { request.body = body }
                let answer = try await Service.send(port, request)
                return (answer.status, Service.json(answer)["code"] as? String, Service.detailCode(answer))
            }
            let header = "AP-Partner-Framework-Status"
            #expect(try await answer(good, replacing: header) == (400, "invalid_header_pfs_permission_access_not_present", nil))
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderA", access: nil).headerValue)
                    == (400, "invalid_header_pfs_permission_access_not_present", nil))
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderA", access: .notDetermined).headerValue)
                    == (400, "invalid_header_pfs_permission_access_not_determined", nil))
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderA", access: .restricted).headerValue)
                    == (400, "invalid_header_pfs_permission_access_not_granted", nil))
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderZ").headerValue)
                    == (400, "invalid_header_pfs_provider_id_not_determined", nil))
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderA", expiresIn: -1).headerValue)
                    == (400, "invalid_header_pfs_provider_info_expired", nil))
            #expect(
                try await answer(good, replacing: header, with: "%%%")
                    == (400, "invalid_header_pfs_permission_access_not_present", "pfs.malformed-base64"))
            #expect(
                try await answer(good, body: good.body + Array("&mvpd=MVPD-B".utf8)) == (
                    400, "invalid_header_pfs_provider_id_mismatch", nil
                ))
            // The MVPD's response posted as another MVPD's: its issuer is not the one trusted there.
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderB").headerValue)
                    == (400, "invalid_parameter_saml_response", "issuer.mismatch"))
            #expect(
                try await answer(good, replacing: header, with: Service.pfs("ProviderC").headerValue) == (
                    500, "invalid_configuration_mvpd_platform_profile_exchange", "trust.unknown-mvpd"
                ))
            // Altered after signing.
            #expect(xml.contains("hh-7731"))
            let tampered = Service.exchange(xml.replacingOccurrences(of: "hh-7731", with: "hh-7732"), status)
            #expect(try await answer(tampered) == (400, "invalid_parameter_saml_response", "signature.digest-mismatch"))
            #expect(
                try await answer(good, body: Array("SAMLResponse=%%".utf8)) == (
                    400, "invalid_parameter_saml_response", "decode.invalid-percent-encoding"
                ))
            let missing = try await answer(good, body: Array("nothing=here&other=1".utf8))
            #expect(missing == (400, "invalid_parameter_saml_response", "decode.missing-field"), "\(missing)")
            // Device headers.
            #expect(try await answer(good, replacing: "AP-Device-Identifier") == (400, "invalid_header_device_identifier", nil))
            #expect(
                try await answer(good, replacing: "AP-Device-Identifier", with: "dGVzdA==") == (
                    400, "invalid_header_device_identifier", nil
                ))
            #expect(try await answer(good, replacing: "X-Device-Info", with: "not-json") == (400, "invalid_header_device_info", nil))
            // Path.
            var otherPartner = good
            otherPartner.path = "/api/v2/REF30/profiles/sso/Google"
            #expect(try await answer(otherPartner) == (400, "invalid_parameter_partner", nil))
            // None of the above consumed the request: the good one is still accepted, once.
            let last = try await answer(good)
            #expect(last.0 == 201, "\(last)")
        }
    }

    @Test("a store that fails makes every exchange fail closed with 503 and Retry-After, and readiness say so; sessions need no store")
    func failingStore() async throws {
        try await Service.with(store: FailingStore()) { port in
            let exchange = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdA))
            #expect(exchange.status == 503 && Service.detailCode(exchange) == "store.unavailable")
            #expect(Service.json(exchange)["code"] as? String == "service_unavailable")
            #expect(Service.json(exchange)["action"] as? String == "retry")
            #expect(exchange.headers.first { $0.name.lowercased() == "retry-after" }?.value == "1")
            #expect(try await Service.send(port, "/health/ready", method: "GET").status == 503)
            #expect(try await Service.send(port, "/health", method: "GET").status == 200)
        }
    }

    @Test("size limits: a body over the limit is 413, headers over the limit are refused")
    func sizeLimits() async throws {
        var configuration = Service.configuration()
        configuration.maximumBodyBytes = 64 * 1024
        try await Service.with(configuration) { port in
            var request = try await Service.freshExchange(port, Service.mvpdB)
            let original = request.body
            request.body = original + Array("&padding=".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 70 * 1024)
            let large = try await Service.send(port, request)
            #expect(large.status == 413 && Service.json(large)["code"] as? String == "request_too_large")
            #expect(Service.detailCode(large) == "decode.too-large")
            // Headers over 16 KiB: the connection is refused an answer (431 or closed), never a 2xx.
            var headers = request.headers
            headers.append(HTTPHeader("X-Padding", String(repeating: "b", count: 20 * 1024)))
            request.headers = headers
            request.body = original
            do {
                let answer = try await Service.send(port, request)
                #expect(answer.status >= 400)
            } catch {}
            request.headers.removeLast()
            #expect(try await Service.send(port, request).status == 201)
        }
    }

    @Test("REST API v1: 204 when verified, 400 otherwise; a request issued on v2 cannot be answered through v1")
    func legacy() async throws {
        var configuration = Service.configuration()
        configuration.allowUnsolicited = true
        try await Service.with(configuration) { port in
            let id = try await Service.session(port, Service.pfs("ProviderB").headerValue).partnerRequestID
            let crossover = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: try Service.response(Service.mvpdB, to: id), requestor: "REF30",
                deviceID: Service.deviceValue, mvpd: "MVPD-B", deviceType: .tvOS)
            let crossed = try await Service.send(port, crossover)
            #expect(crossed.status == 400 && Service.detailCode(crossed) == "in-response-to.wrong-api")
            // v1 issues no request here: an IdP-initiated response, allowed by this configuration.
            let response = try Service.response(Service.mvpdB, to: nil)
            let request = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: response, requestor: "REF30", deviceID: "device-1", mvpd: "MVPD-B", deviceType: .tvOS)
            let accepted = try await Service.send(port, request)
            #expect(accepted.status == 204 && accepted.body.isEmpty)
            let replay = try await Service.send(port, request)
            #expect(replay.status == 400 && Service.detailCode(replay) == "replay.detected")
            let wrongMVPD = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: response, requestor: "REF30", deviceID: "device-1", mvpd: "MVPD-A", deviceType: .iOS)
            #expect(Service.detailCode(try await Service.send(port, wrongMVPD)) == "issuer.mismatch")
            var missing = request
            missing.body = Array(
                String(decoding: request.body, as: UTF8.self).replacingOccurrences(of: "deviceId=device-1&", with: "").utf8)
            let refused = try await Service.send(port, missing)
            #expect(refused.status == 400 && Service.json(refused)["code"] as? String == "invalid_device_id")
            let otherRequestor = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: response, requestor: "OTHER", deviceID: "d", mvpd: "MVPD-B", deviceType: .iOS)
            #expect(Service.json(try await Service.send(port, otherRequestor))["code"] as? String == "invalid_requestor")
        }
    }

    @Test("bearer tokens, when configured, are required")
    func bearerTokens() async throws {
        var configuration = Service.configuration()
        configuration.bearerTokens = ["token"]
        try await Service.with(configuration) { port in
            var request = try await Service.freshExchange(port, Service.mvpdA)
            request.headers.removeAll { $0.name == "Authorization" }
            let refused = try await Service.send(port, request)
            #expect(refused.status == 401 && Service.json(refused)["code"] as? String == "invalid_access_token_service_provider")
            request.headers.append(HTTPHeader("Authorization", "Bearer token"))
            #expect(try await Service.send(port, request).status == 201)
        }
    }

    @Test("one log line per request with request id, MVPD, code and latency; no SAMLResponse or attribute value at info")
    func logs() async throws {
        let logs = CapturedLogs()
        try await Service.with(logger: logs.logger) { port in
            let request = try await Service.freshExchange(port, Service.mvpdA, nameID: "secret-subscriber-9")
            #expect(try await Service.send(port, request).status == 201)
            #expect(try await Service.send(port, request).status == 400)
        }
        let records = logs.records.withLock { $0 }
        let exchanges = records.filter { $0.message.contains("profiles/sso") }
        #expect(exchanges.count == 2)
        #expect(exchanges.map { $0.metadata["code"] } == ["ok", "replay.detected"])
        for record in exchanges {
            #expect(record.level == .info)
            #expect(record.metadata["mvpd"] == "MVPD-A", "\(record)")
            #expect(record.metadata["hb.request.id"] != nil && record.metadata["latency_us"] != nil)
        }
        for record in records where record.level >= .info {
            let text = record.message + record.metadata.values.joined()
            #expect(!text.contains("secret-subscriber-9") && !text.contains("hh-7731") && !text.contains("PHNhbWxw"))
        }
    }

    @Test("metrics: verdicts, latency and store latency by MVPD, requests issued and answered, store errors, in Prometheus text")
    func metrics() async throws {
        let metrics = ServiceMetrics()
        try await Service.with(metrics: metrics) { port in
            let request = try await Service.freshExchange(port, Service.mvpdB)
            _ = try await Service.send(port, request)
            _ = try await Service.send(port, request)
            let text = try await Service.send(port, "/metrics", method: "GET").text
            #expect(text.contains(#"saml_token_exchange_verdicts_total{endpoint="profiles/sso",code="ok",mvpd="MVPD-B"} 1"#))
            #expect(text.contains(#"saml_token_exchange_verdicts_total{endpoint="profiles/sso",code="replay.detected",mvpd="MVPD-B"} 1"#))
            #expect(text.contains(#"saml_token_exchange_duration_seconds_count{endpoint="profiles/sso",mvpd="MVPD-B"} 2"#))
            #expect(text.contains(#"saml_store_duration_seconds_count{operation="consume",mvpd="MVPD-B"} 2"#))
            #expect(text.contains(#"saml_requests_issued_total{mvpd="MVPD-B",api="v2"} 1"#))
            #expect(text.contains(#"saml_requests_answered_total{mvpd="MVPD-B",api="v2"} 1"#))
            #expect(text.contains("saml_http_request_duration_seconds_bucket"))
            #expect(text.contains(#"saml_sso_sessions_total{action="partner_profile",reason="none"} 1"#))
        }
        try await Service.with(store: FailingStore(), metrics: metrics) { port in
            _ = try await Service.send(port, try await Service.freshExchange(port, Service.mvpdA))
            #expect(
                try await Service.send(port, "/metrics", method: "GET").text.contains(
                    #"saml_store_errors_total{operation="consume"} 1"#))
        }
    }

    @Test("metric labels name configured MVPDs only, whatever MVPDs requests name")
    func metricLabelsBounded() async throws {
        let metrics = ServiceMetrics()
        try await Service.with(metrics: metrics) { port in
            for index in 0..<20 {
                let name = "EVIL-\(index)-\(UInt32.random(in: 0...UInt32.max))"
                // A header naming an unknown provider, a form field naming an unknown MVPD, a path naming one.
                var request = try await Service.freshExchange(port, Service.mvpdA)
                request.headers = request.headers.map { header in
                    header.name == "AP-Partner-Framework-Status" ? HTTPHeader(header.name, Service.pfs(name).headerValue) : header
                }
                _ = try await Service.send(port, request)
                var named = try await Service.freshExchange(port, Service.mvpdA)
                named.body += Array("&mvpd=\(name)".utf8)
                _ = try await Service.send(port, named)
                _ = try await Service.session(port, Service.pfs(name).headerValue, body: "mvpd=\(name)")
                _ = try await Service.send(
                    port, "/api/v2/REF30/profiles/\(name)", method: "GET", headers: Service.device + [("Authorization", "Bearer token")])
            }
            let text = try await Service.send(port, "/metrics", method: "GET").text
            #expect(!text.contains("EVIL"))
            let configured = Set(Service.mvpds.map(\.id) + ["none"])
            let labels = Set(text.matches(of: /mvpd="([^"]*)"/).map { String($0.output.1) })
            #expect(!labels.isEmpty && labels.isSubset(of: configured), "\(labels)")
        }
    }

    @Test("the load harness, briefly: every kind sent, every answer as expected, each assertion accepted once")
    func loadHarness() async throws {
        try await Service.with { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 300
            options.connections = 4
            options.replayShare = 0.15
            options.tamperedShare = 0.1
            options.wrongMVPDShare = 0.1
            options.wrongMVPDRequestShare = 0.08
            options.wrongDeviceShare = 0.08
            options.v1CrossoverShare = 0.08
            let report = try await LoadHarness.run(options)
            #expect(report.passed && report.wrong == 0, "\(report.table)")
            #expect(report.lines.allSatisfy { $0.sent > 0 && $0.asExpected == $0.sent }, "\(report.table)")
            #expect(report.settleChecked == report.lines[0].asExpected)
        }
    }
}

@Suite("Service configuration")
struct ServiceConfigurationTests {
    @Test("read from a file, with paths relative to it, and overridden by the environment")
    func load() async throws {
        let configuration = try await ServiceConfiguration.load(
            contentsOf: "\(Service.vectors)/exchange/service.json",
            environment: ["SAML_SERVICE_PORT": "9999", "SAML_SERVICE_STORE": "postgres://u@h/d"])
        #expect(configuration.serviceProvider == "REF30")
        #expect(configuration.trustPath.hasSuffix("exchange/trust.json") && FileManager.default.fileExists(atPath: configuration.trustPath))
        #expect(configuration.port == 9999 && configuration.store == "postgres://u@h/d")
        #expect(configuration.featuredMVPDs == ["MVPD-B", "MVPD-A"])
        await #expect(throws: SAMLError.self) { try await ServiceConfiguration.load(contentsOf: "/nonexistent.json") }
        await #expect(throws: SAMLError.self) {
            try await ServiceConfiguration.load(
                contentsOf: "\(Service.vectors)/exchange/service.json", environment: ["SAML_SERVICE_PORT": "x"])
        }
    }

    @Test("numbers 0 and 1 are numbers and true/false booleans; secrets come from files or the environment, never quoted")
    func secretsAndNumbers() async throws {
        let folder = try TemporaryFiles.folder("saml-config")
        let key = String(repeating: "ab", count: 32)
        try "1:\(key)\n2:\(String(repeating: "cd", count: 32))\n".write(
            to: folder.appendingPathComponent("keys"), atomically: true, encoding: .utf8)
        try "s3cret, with a comma\n".write(to: folder.appendingPathComponent("password"), atomically: true, encoding: .utf8)
        try "token-a\ntoken-b\n".write(to: folder.appendingPathComponent("tokens"), atomically: true, encoding: .utf8)
        for secret in ["keys", "password", "tokens"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.appendingPathComponent(secret).path)
        }
        let json = """
            {"serviceProvider": "REF30", "mvpdConfiguration": "\(Service.vectors)/exchange/mvpd-configuration.json",
             "trust": "\(Service.vectors)/exchange/trust.json", "storeConnections": 1, "headerTimeoutSeconds": 1,
             "storeBatchWindowMilliseconds": 2.5, "verificationQueue": 0, "allowUnsolicited": true, "requestKeysFile": "keys", "storePasswordFile": "password",
             "bearerTokensFile": "tokens"}
            """
        try json.write(to: folder.appendingPathComponent("service.json"), atomically: true, encoding: .utf8)
        let path = folder.appendingPathComponent("service.json").path
        let configuration = try await ServiceConfiguration.load(contentsOf: path, environment: [:])
        #expect(configuration.storeConnections == 1 && configuration.headerTimeout == .seconds(1) && configuration.verificationQueue == 0)
        #expect(configuration.allowUnsolicited && configuration.storeBatchWindow == .microseconds(2500))
        #expect(configuration.requestKeys.map(\.id) == [1, 2])
        #expect(configuration.storePassword == "s3cret, with a comma")
        #expect(configuration.bearerTokens == ["token-a", "token-b"])
        let environment = try await ServiceConfiguration.load(
            contentsOf: path,
            environment: [
                "SAML_SERVICE_REQUEST_KEYS": "9:\(key)", "SAML_SERVICE_BEARER_TOKENS": "x,y", "SAML_SERVICE_STORE_PASSWORD": "pw",
            ])
        #expect(environment.requestKeys.map(\.id) == [9] && environment.bearerTokens == ["x", "y"] && environment.storePassword == "pw")
        do {
            _ = try await ServiceConfiguration.load(
                contentsOf: path, environment: ["SAML_SERVICE_REQUEST_KEYS": "1:abcd-not-hex-secret-value"])
            Issue.record("a malformed key was accepted")
        } catch let error as SAMLError {
            #expect(error.code == .configurationInvalid && !error.message.contains("abcd"))
        }
        // A misspelt member is refused, not ignored; a value of the wrong type names its member only.
        let misspelt = json.replacingOccurrences(of: #""bearerTokensFile""#, with: #""bearerTokenFile""#)
        let mistyped = json.replacingOccurrences(of: #""allowUnsolicited": true"#, with: #""allowUnsolicited": "yes""#)
        let window = json.replacingOccurrences(of: #""storeBatchWindowMilliseconds": 2.5"#, with: #""storeBatchWindowMilliseconds": 51"#)
        for (broken, member) in [(misspelt, "bearerTokenFile"), (mistyped, "allowUnsolicited"), (window, "storeBatchWindowMilliseconds")] {
            try broken.write(to: folder.appendingPathComponent("broken.json"), atomically: true, encoding: .utf8)
            do {
                _ = try await ServiceConfiguration.load(contentsOf: folder.appendingPathComponent("broken.json").path, environment: [:])
                Issue.record("\(member) was accepted")
            } catch let error as SAMLError {
                #expect(error.code == .configurationInvalid && error.message.contains(member), "\(error.message)")
            }
        }
        // A shared store needs shared keys: refused at start-up without them.
        var shared = Service.configuration(store: "postgres://saml@127.0.0.1:1/none")
        shared.requestKeys = []
        #expect(throws: SAMLError(.configurationInvalid, "")) {
            _ = try TokenExchangeService(
                configuration: shared, store: InMemoryStateStore(), metrics: ServiceMetrics(), logger: Service.quiet)
        }
    }
}
