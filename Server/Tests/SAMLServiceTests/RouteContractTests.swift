import AppleSSO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SAML
import Synchronization
import Testing

@testable import SAMLLoad
@testable import SAMLService

/// Each middleware's contract and each API family's refusals through Hummingbird's router test client
/// (no sockets): the methods a path answers, the order of 401, 415 and 413, REST API v1's formats.
@Suite("Route contracts")
struct RouteContractTests {
    /// Every API route with the methods it answers.
    static let routes: [(uri: String, allowed: [HTTPRequest.Method])] = [
        ("/api/v2/REF30/sessions/sso/Apple", [.post]), ("/api/v2/REF30/profiles/sso/Apple", [.post]),
        ("/api/v2/REF30/profiles", [.get]), ("/api/v2/REF30/profiles/MVPD-A", [.get]), ("/api/v2/REF30/configuration", [.get]),
        ("/api/v2/REF30/saml/metadata", [.get]), ("/api/v1/tokens/authn", [.post]), ("/api/v1/tokens/authn.xml", [.post]),
        ("/api/v1/config/REF30", [.get]),
        ("/api/v1/REF30/profile-requests/MVPD-A", [.get]), ("/api/v2/REF30/decisions/preauthorize/MVPD-A", [.post]),
        ("/api/v2/REF30/decisions/authorize/MVPD-A", [.post]), ("/api/v2/REF30/logout/MVPD-A", [.get]), ("/api/v2/REF30/logout", [.get]),
        ("/api/v2/REF30/media-tokens/keys", [.get]),
    ]
    static let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head, .options]

    static func application(bearer: [String] = ["token"], limit: Int? = nil, store: (any SAMLStateStore)? = nil) throws
        -> some ApplicationProtocol
    {
        var configuration = Service.configuration()
        configuration.bearerTokens = bearer
        if let limit { configuration.maximumBodyBytes = limit }
        return try ServiceApplication.buildApplication(configuration: configuration, store: store, logger: Service.quiet)
    }

    static func object(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any] ?? [:]
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .authorization: "Bearer token"]

    @Test("every other method of every route: 405 with the route's own Allow, after the bearer token; HEAD without a body")
    func methodNotAllowed() async throws {
        try await Self.application().test(.router) { client in
            for (uri, allowed) in Self.routes {
                for method in Self.methods where !allowed.contains(method) {
                    let anonymous = try await client.execute(uri: uri, method: method)
                    let public_ = uri.hasSuffix("/saml/metadata") || uri.hasSuffix("/media-tokens/keys")
                    #expect(anonymous.status == (public_ ? .methodNotAllowed : .unauthorized), "\(method) \(uri)")
                    let answer = try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer token"])
                    #expect(answer.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(answer.headers[.allow] == allowed.map(\.rawValue).joined(separator: ", "), "\(method) \(uri)")
                    if method == .head {
                        #expect(answer.body.readableBytes == 0, "\(uri)")
                    } else if uri.hasSuffix(".xml") {
                        #expect(Self.text(answer).contains("<status>405</status>"), "\(method) \(uri)")
                    } else {
                        let object = Self.object(answer)
                        let v1 = uri.hasPrefix("/api/v1/")
                        #expect(object["code"] as? String == (v1 ? "internal_error" : "method_not_allowed"), "\(method) \(uri)")
                        #expect(object["status"] as? Int == 405 && object["trace"] is String, "\(method) \(uri)")
                    }
                }
            }
        }
    }

    @Test("the decisions: 401, then 415 for anything but JSON, then 413, then the endpoint's own checks")
    func decisionsRefusalOrder() async throws {
        try await Self.application(limit: 64).test(.router) { client in
            for uri in ["/api/v2/REF30/decisions/preauthorize/MVPD-A", "/api/v2/REF30/decisions/authorize/MVPD-A"] {
                let unauthenticated = try await client.execute(uri: uri, method: .post, headers: [.contentType: "text/plain"])
                #expect(unauthenticated.status == .unauthorized, "\(uri)")
                let form = try await client.execute(uri: uri, method: .post, headers: Self.form, body: ByteBuffer(string: "resources=a"))
                #expect(form.status == .unsupportedMediaType && Self.object(form)["code"] as? String == "unsupported_media_type")
                let json: HTTPFields = [.contentType: "application/json; charset=utf-8", .authorization: "Bearer token"]
                let large = try await client.execute(
                    uri: uri, method: .post, headers: json,
                    body: ByteBuffer(string: #"{"resources": ["\#(String(repeating: "a", count: 100))"]}"#))
                #expect(large.status == .contentTooLarge, "\(uri)")
                let small = try await client.execute(
                    uri: uri, method: .post, headers: json, body: ByteBuffer(string: #"{"resources": ["a"]}"#))
                #expect(small.status == .badRequest && Self.object(small)["code"] as? String == "invalid_header_device_identifier")
            }
        }
    }

    @Test("401, then 415, then 413, then the endpoint's own checks, on every POST route, v1's in its format")
    func refusalOrder() async throws {
        try await Self.application(limit: 16).test(.router) { client in
            for uri in ["/api/v2/REF30/sessions/sso/Apple", "/api/v2/REF30/profiles/sso/Apple", "/api/v1/tokens/authn"] {
                let v1 = uri.hasPrefix("/api/v1/")
                let unauthenticated = try await client.execute(
                    uri: uri, method: .post, headers: [.contentType: "text/plain", .contentLength: "100000"], body: ByteBuffer())
                #expect(unauthenticated.status == .unauthorized, "\(uri)")
                #expect(
                    Self.object(unauthenticated)["code"] as? String == (v1 ? "internal_error" : "invalid_access_token_service_provider"))
                #expect(Self.object(unauthenticated)["action"] as? String == "application-registration")
                let plain = try await client.execute(
                    uri: uri, method: .post, headers: [.contentType: "text/plain", .authorization: "Bearer token"],
                    body: ByteBuffer(string: String(repeating: "a", count: 100)))
                #expect(plain.status == .unsupportedMediaType, "\(uri)")
                #expect(Self.object(plain)["code"] as? String == (v1 ? "internal_error" : "unsupported_media_type"))
                // Announced, then found while reading (no Content-Length: chunked).
                var announced = Self.form
                announced[.contentLength] = "100"
                let large = try await client.execute(
                    uri: uri, method: .post, headers: announced, body: ByteBuffer(string: String(repeating: "a", count: 100)))
                #expect(large.status == .contentTooLarge, "\(uri)")
                #expect(Self.object(large)["code"] as? String == (v1 ? "internal_error" : "request_too_large"))
                let found = try await client.execute(
                    uri: uri, method: .post, headers: Self.form, body: ByteBuffer(string: String(repeating: "a", count: 100)))
                #expect(found.status == .contentTooLarge, "\(uri)")
                // Within the limit, the endpoint decides: a missing device identifier or SAML response is a 400.
                let small = try await client.execute(uri: uri, method: .post, headers: Self.form, body: ByteBuffer(string: "a=b"))
                #expect(small.status == .badRequest, "\(uri)")
            }
        }
    }

    @Test("REST API v1 with bearer tokens: 401, 415 and 413 in v1's code and in XML when asked by Accept, suffix or parameter")
    func v1Refusals() async throws {
        try await Self.application(limit: 16).test(.router) { client in
            for (uri, headers) in [
                ("/api/v1/config/REF30", [HTTPField.Name.accept: "application/xml"]), ("/api/v1/config/REF30.xml", [:]),
                ("/api/v1/config/REF30?format=xml", [:]), ("/api/v1/REF30/profile-requests/MVPD-A.xml?deviceType=iOS", [:]),
                ("/api/v1/REF30/profile-requests/MVPD-A?deviceType=iOS", [.accept: "application/json;q=0.5, application/xml"]),
                ("/api/v1/config/REF30.xml/", [:]),
            ] as [(String, HTTPFields)] {
                let refused = try await client.execute(uri: uri, method: .get, headers: headers)
                #expect(refused.status == .unauthorized, "\(uri)")
                #expect(refused.headers[.contentType]?.hasPrefix("application/xml") == true, "\(uri)")
                let text = Self.text(refused)
                #expect(text.contains("<code>internal_error</code>") && text.contains("<status>401</status>"), "\(uri): \(text)")
                #expect(text.contains("<action>application-registration</action>"), "\(uri)")
            }
            var xml = Self.form
            xml[.accept] = "application/xml"
            xml[.contentType] = "text/plain"
            let suffixed = try await client.execute(uri: "/api/v1/tokens/authn.xml", method: .post, body: ByteBuffer(string: "a=b"))
            #expect(suffixed.status == .unauthorized && Self.text(suffixed).contains("<status>401</status>"))
            var token = Self.form
            token[.accept] = "application/json"
            let refusedXML = try await client.execute(
                uri: "/api/v1/tokens/authn.xml", method: .post, headers: token, body: ByteBuffer(string: "a=b"))
            #expect(refusedXML.status == .badRequest && Self.text(refusedXML).contains("<error>"))
            let plain = try await client.execute(uri: "/api/v1/tokens/authn", method: .post, headers: xml, body: ByteBuffer(string: "a=b"))
            #expect(plain.status == .unsupportedMediaType && Self.text(plain).contains("<status>415</status>"))
            xml[.contentType] = "application/x-www-form-urlencoded"
            let large = try await client.execute(
                uri: "/api/v1/tokens/authn", method: .post, headers: xml, body: ByteBuffer(string: String(repeating: "a", count: 100)))
            #expect(large.status == .contentTooLarge && Self.text(large).contains("<status>413</status>"))
            // JSON unless XML is asked for; q=0 is "not acceptable".
            let json = try await client.execute(
                uri: "/api/v1/config/REF30", method: .get, headers: [.accept: "application/json, application/xml;q=0"])
            #expect(json.status == .unauthorized && Self.object(json)["code"] as? String == "internal_error")
        }
    }

    @Test("REST API v1 answers with a bearer token and without any configured: JSON and XML, .xml on every route")
    func v1Answers() async throws {
        for bearer in [["token"], []] {
            try await Self.application(bearer: bearer).test(.router) { client in
                let authorization: HTTPFields = [.authorization: "Bearer token"]
                let json = try await client.execute(uri: "/api/v1/config/REF30", method: .get, headers: authorization)
                #expect(json.status == .ok && json.headers[.contentType]?.hasPrefix("application/json") == true)
                let xml = try await client.execute(uri: "/api/v1/config/REF30.xml", method: .get, headers: authorization)
                #expect(xml.status == .ok && xml.headers[.contentType]?.hasPrefix("application/xml") == true)
                // The suffix is not part of the MVPD's id.
                let request = try await client.execute(
                    uri: "/api/v1/REF30/profile-requests/MVPD-A.xml?deviceType=iOS", method: .get, headers: authorization)
                #expect(request.status == .ok && request.headers[.contentType] == "application/octet-stream", "\(bearer)")
                let unknown = try await client.execute(
                    uri: "/api/v1/REF30/profile-requests/NOPE.json?deviceType=iOS", method: .get, headers: authorization)
                #expect(unknown.status == .badRequest && Self.object(unknown)["code"] as? String == "unknown_integration")
            }
        }
    }

    @Test("a store that fails: v1's exchange answers 503 service_unavailable in XML with Retry-After")
    func v1Unavailable() async throws {
        try await Self.application(bearer: [], store: FailingStore()).test(.router) { client in
            let issued = try await client.execute(uri: "/api/v1/REF30/profile-requests/MVPD-B?deviceType=tvOS", method: .get)
            let decoded = String(decoding: try #require(Data(base64Encoded: Data(issued.body.readableBytesView))), as: UTF8.self)
            let start = try #require(decoded.range(of: " ID=\""))
            let id = String(decoded[start.upperBound...].prefix { $0 != "\"" })
            let exchange = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: try Service.response(Service.mvpdB, to: id), requestor: "REF30", deviceID: "device-v1",
                mvpd: "MVPD-B", deviceType: .tvOS)
            let answer = try await client.execute(
                uri: exchange.path, method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .accept: "application/xml"],
                body: ByteBuffer(bytes: exchange.body))
            #expect(answer.status == .serviceUnavailable && answer.headers[.retryAfter] == "1")
            #expect(Self.text(answer).contains("<code>service_unavailable</code>"))
        }
    }

    @Test(
        "v1's content negotiation: q honoured, the most specific range weighs, XML only when asked for",
        arguments: [
            (nil, ServiceRequestContext.V1Format.json), ("application/xml", .xml), ("application/json", .json), ("*/*", .json),
            ("application/*", .json), ("application/xml, */*", .xml), ("application/json, application/xml", .xml),
            ("application/json, application/xml;q=0", .json), ("application/xml;q=0.5, application/json;q=0.9", .json),
            ("application/json;q=0.1, application/xml;q=0.2", .xml), ("application/xml;q=0, */*", .json),
            ("text/html", .json), ("APPLICATION/XML", .xml), ("application/xml;q=bogus", .json), ("application/xml ; q=1.0", .xml),
            ("*/*;q=0.1, application/xml;q=0", .json),
        ] as [(String?, ServiceRequestContext.V1Format)])
    func negotiation(accept: String?, expected: ServiceRequestContext.V1Format) {
        #expect(V1FormatMiddleware.negotiate(accept) == expected)
    }

    @Test(
        "q by RFC 9110's qvalue only: 0 to 1 with at most three decimals",
        arguments: [
            ("1", 1.0), ("0", 0), ("0.5", 0.5), ("1.000", 1), ("1.", 1), ("0.", 0), ("0.125", 0.125), ("1.001", nil), ("2", nil),
            (".5", nil), ("nan", nil), ("inf", nil), ("0x1", nil), ("0.1234", nil), ("-0", nil), ("", nil), ("1e0", nil),
        ] as [(String, Double?)])
    func qvalues(text: String, expected: Double?) {
        #expect(V1FormatMiddleware.qvalue(Substring(text)) == expected)
    }

    @Test("the format parameter over the path's suffix over Accept")
    func formatPrecedence() {
        #expect(V1FormatMiddleware.format(query: "json", path: "/api/v1/config/REF30.xml", accept: "application/xml") == .json)
        #expect(V1FormatMiddleware.format(query: nil, path: "/api/v1/config/REF30.XML", accept: "application/json") == .xml)
        // Trailing slashes are not a segment, however many (bytes: a String stripped one at a time was quadratic).
        #expect(
            V1FormatMiddleware.format(query: nil, path: "/api/v1/config/REF30.Xml" + String(repeating: "/", count: 16_000), accept: nil)
                == .xml)
        #expect(V1FormatMiddleware.format(query: nil, path: String(repeating: "/", count: 3), accept: "application/xml") == .xml)
        #expect(V1FormatMiddleware.format(query: nil, path: "/api/v1/config/REF30.json/", accept: "application/xml") == .json)
        #expect(V1FormatMiddleware.format(query: nil, path: "/api/v1/config/REF30.json", accept: "application/xml") == .json)
        #expect(V1FormatMiddleware.stripped("MVPD-A.xml") == "MVPD-A" && V1FormatMiddleware.stripped("REF30.JSON") == "REF30")
        #expect(V1FormatMiddleware.stripped("MVPD-A") == "MVPD-A" && V1FormatMiddleware.stripped(nil) == "")
    }

    @Test("a Token Exchange waiting for the store has given its verification slot up: with one slot and no queue, another is admitted")
    func slotGivenUpAtTheStore() async throws {
        var configuration = Service.configuration()
        configuration.maximumConcurrentVerifications = 1
        configuration.verificationQueue = 0
        let store = GatedStore()
        let application = try ServiceApplication.buildApplication(configuration: configuration, store: store, logger: Service.quiet)
        try await application.test(.router) { client in
            let status = Service.pfs(Service.mvpdA.providerID)
            let session = try await client.execute(
                uri: "/api/v2/REF30/sessions/sso/Apple", method: .post,
                headers: ServiceRouterTests.form([HTTPField.Name("AP-Partner-Framework-Status")!: status.headerValue]),
                body: ByteBuffer(string: "domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example"))
            let parsed = HTTPConnection.Answer(status: Int(session.status.code), headers: [], body: Array(session.body.readableBytesView))
            let request = Service.exchange(try Service.response(Service.mvpdA, to: try #require(parsed.partnerRequestID)), status)
            var headers: HTTPFields = [:]
            for header in request.headers { headers.append(HTTPField(name: HTTPField.Name(header.name)!, value: header.value)) }
            let first = Task {
                try await client.execute(uri: request.path, method: .post, headers: headers, body: ByteBuffer(bytes: request.body))
            }
            await store.reached()
            // The one slot is free while the first waits for its store: a second is verified (and refused on its own merits).
            let second = try await client.execute(
                uri: request.path, method: .post, headers: headers, body: ByteBuffer(string: "SAMLResponse=bm90IGEgcmVzcG9uc2U%3D"))
            #expect(second.status == .badRequest, "\(second.status)")
            store.open()
            #expect(try await first.value.status == .created)
        }
    }

    /// The lines a logger wrote, with their metadata.
    final class Lines: Sendable {
        let written = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
    }

    struct Recorder: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.written.withLock { $0.append(("\(event.message)", event.metadata ?? [:])) }
        }
    }

    @Test(
        "one access-log line per API answer (405 and 401 included) with status and code; the verdict metric on verifying routes, never for a 405"
    )
    func answerMiddleware() async throws {
        let lines = Lines()
        let metrics = ServiceMetrics()
        var configuration = Service.configuration()
        configuration.bearerTokens = ["token"]
        let application = try ServiceApplication.buildApplication(
            configuration: configuration, metrics: metrics, logger: Logger(label: "test") { _ in Recorder(lines: lines) })
        try await application.test(.router) { client in
            _ = try await client.execute(uri: "/api/v2/REF30/profiles/sso/Apple", method: .post)
            // Method probes, without a token and with one: answered and logged, never verdicts.
            _ = try await client.execute(uri: "/api/v2/REF30/profiles/sso/Apple", method: .delete)
            _ = try await client.execute(uri: "/api/v1/tokens/authn", method: .get)
            _ = try await client.execute(uri: "/api/v2/REF30/profiles/sso/Apple", method: .get, headers: [.authorization: "Bearer token"])
            _ = try await client.execute(uri: "/api/v2/REF30/configuration", method: .get, headers: [.authorization: "Bearer token"])
            _ = try await client.execute(uri: "/api/v1/config/REF30.xml", method: .get)
        }
        let access = lines.written.withLock { $0 }.filter { $0.message.contains(" /api/") }
        let seen = access.map { "\($0.message) \($0.metadata["status"] ?? "?") \($0.metadata["code"] ?? "?")" }
        #expect(
            seen == [
                "POST /api/v2/{serviceProvider}/profiles/sso/{partner} 401 invalid_access_token_service_provider",
                "DELETE /api/v2/{serviceProvider}/profiles/sso/{partner} 401 invalid_access_token_service_provider",
                "GET /api/v1/tokens/authn 401 invalid_access_token_service_provider",
                "GET /api/v2/{serviceProvider}/profiles/sso/{partner} 405 method_not_allowed",
                "GET /api/v2/{serviceProvider}/configuration 200 ok",
                "GET /api/v1/config/{requestor} 401 invalid_access_token_service_provider",
            ])
        #expect(access.allSatisfy { $0.metadata["latency_us"] != nil })
        let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
        let verdicts = exposition.split(separator: "\n").filter { $0.hasPrefix("saml_token_exchange_verdicts_total{") }
        #expect(verdicts.count == 1 && verdicts[0].contains("invalid_access_token_service_provider"), "\(verdicts)")
        #expect(verdicts.allSatisfy { $0.contains(#"endpoint="profiles/sso""#) })
    }
}
