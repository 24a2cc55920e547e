import AppleSSO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SAML
import SAMLMediaToken
import SAMLMockIdP
import SAMLTestSupport
import Synchronization
import Testing

@testable import SAMLLoad
@testable import SAMLService

/// REST API v2's decisions and logout through the router: the cookbook's last two phases after a real
/// login (a response the mock MVPD signs for the request `sessions/sso` issued).
@Suite("Decisions and logout")
struct DecisionsLogoutTests {
    static let pfsName = HTTPField.Name("AP-Partner-Framework-Status")!
    static let deviceName = HTTPField.Name("AP-Device-Identifier")!

    /// The bundled configuration with MVPD-A's `channels` attribute required and its policy: `trailers`
    /// for everyone, and the channels the MVPD signed.
    static func configuration() throws -> ServiceConfiguration {
        let directory = try TemporaryFiles.folder("decisions")
        let document = """
            {"requestor": {"id": "REF30", "mvpds": [
             {"id": "MVPD-A", "enablePlatformServices": true, "boardingStatus": "SUPPORTED", "displayInPlatformPicker": true,
              "platformMappingId": "ProviderA", "requiredMetadataFields": ["NameID", "uid", "channels"],
              "authorization": {"allow": ["trailers"], "attribute": "channels", "separator": ","}},
             {"id": "MVPD-B", "enablePlatformServices": true, "boardingStatus": "SUPPORTED", "displayInPlatformPicker": true,
              "platformMappingId": "ProviderB", "requiredMetadataFields": ["NameID", "uid"]}]}}
            """
        let path = directory.appendingPathComponent("mvpd-configuration.json").path
        try Data(document.utf8).write(to: URL(fileURLWithPath: path))
        var configuration = Service.configuration()
        configuration.mvpdConfigurationPath = path
        return configuration
    }

    static func headers(device: String, pfs: PartnerFrameworkStatus?, json: Bool = false) -> HTTPFields {
        var fields: HTTPFields = [deviceName: "fingerprint \(device)"]
        if let pfs { fields[pfsName] = pfs.headerValue }
        fields[.contentType] = json ? "application/json" : "application/x-www-form-urlencoded"
        return fields
    }

    /// A whole login of `device` as `mvpd`, its response carrying `channels`.
    static func login(_ client: some TestClientProtocol, _ mvpd: LoadMVPD, device: String, channels: String = "news,sports") async throws {
        let status = Service.pfs(mvpd.providerID)
        let session = try await client.execute(
            uri: "/api/v2/REF30/sessions/sso/Apple", method: .post, headers: headers(device: device, pfs: status),
            body: ByteBuffer(string: "domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example"))
        let answer = HTTPConnection.Answer(status: Int(session.status.code), headers: [], body: Array(session.body.readableBytesView))
        var template = MockIdentityProvider.Template()
        template.issuer = mvpd.issuer
        template.inResponseTo = answer.partnerRequestID
        template.attributes.append(("channels", [channels]))
        let response = String(
            decoding: try mvpd.identityProvider.response(template, issuedAt: .now(), placement: .assertion), as: UTF8.self)
        let request = Service.exchange(response, status, device: device)
        var fields: HTTPFields = [:]
        for header in request.headers { fields.append(HTTPField(name: HTTPField.Name(header.name)!, value: header.value)) }
        let exchanged = try await client.execute(uri: request.path, method: .post, headers: fields, body: ByteBuffer(bytes: request.body))
        try #require(exchanged.status == .created)
    }

    static func decide(
        _ client: some TestClientProtocol, _ kind: String, _ resources: [String], device: String, mvpd: String = "MVPD-A",
        pfs: PartnerFrameworkStatus? = Service.pfs("ProviderA")
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: ["resources": resources])
        let response = try await client.execute(
            uri: "/api/v2/REF30/decisions/\(kind)/\(mvpd)", method: .post, headers: headers(device: device, pfs: pfs, json: true),
            body: ByteBuffer(bytes: Array(body)))
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]) ?? [:])
    }

    static func decisions(_ object: [String: Any]) -> [[String: Any]] { object["decisions"] as? [[String: Any]] ?? [] }

    @Test(
        "preauthorize: a Permit or Deny per resource by the MVPD's policy over the signed attribute; authorize: a media token the verifier accepts"
    )
    func cookbookDecisions() async throws {
        let application = try ServiceApplication.buildApplication(configuration: try Self.configuration(), logger: Service.quiet)
        try await application.test(.router) { client in
            let device = Service.newDevice()
            try await Self.login(client, Service.mvpdA, device: device)
            let (status, object) = try await Self.decide(client, "preauthorize", ["trailers", "news", "movies"], device: device)
            let items = Self.decisions(object)
            #expect(status == .ok && items.map { $0["authorized"] as? Bool } == [true, true, false])
            #expect(items.map { $0["resource"] as? String } == ["trailers", "news", "movies"])
            #expect(
                items.allSatisfy {
                    $0["serviceProvider"] as? String == "REF30" && $0["mvpd"] as? String == "MVPD-A" && $0["source"] as? String == "mvpd"
                })
            #expect(items.allSatisfy { $0["token"] == nil })
            let error = try #require(items[2]["error"] as? [String: Any])
            #expect(
                error["code"] as? String == "preauthorization_denied_by_mvpd" && error["status"] as? Int == 403
                    && error["action"] as? String == "none")

            let (authorized, permit) = try await Self.decide(client, "authorize", ["sports"], device: device)
            let decision = try #require(Self.decisions(permit).first)
            #expect(authorized == .ok && decision["authorized"] as? Bool == true)
            let token = try #require(decision["token"] as? [String: Any])
            let serialized = try #require(token["serializedToken"] as? String)
            let notBefore = try #require(token["notBefore"] as? Int64)
            #expect((token["notAfter"] as? Int64).map { $0 - notBefore } == 300_000)
            let keys = try await client.execute(uri: "/api/v2/REF30/media-tokens/keys", method: .get)
            #expect(keys.headers[.contentType] == "application/jwk-set+json")
            let verifier = try await MediaTokenVerifier(jwks: Array(keys.body.readableBytesView), issuer: "REF30")
            let verified = try await verifier.verify(
                serialized, resource: "sports", mvpd: "MVPD-A", device: "fingerprint \(device)")
            #expect(verified.resource == "sports")
            await #expect(throws: MediaTokenError.self) { try await verifier.verify(serialized, resource: "news") }
            await #expect(throws: MediaTokenError.self) { try await verifier.verify(serialized, resource: "sports", now: Date() + 400) }

            let (_, denied) = try await Self.decide(client, "authorize", ["movies"], device: device)
            let deny = try #require(Self.decisions(denied).first)
            #expect(deny["authorized"] as? Bool == false && deny["token"] == nil)
            #expect((deny["error"] as? [String: Any])?["code"] as? String == "authorization_denied_by_mvpd")
        }
    }

    @Test("the partner framework status is read again: not granted, expired, another provider or absent is a Deny with its code")
    func partnerFramework() async throws {
        let application = try ServiceApplication.buildApplication(configuration: try Self.configuration(), logger: Service.quiet)
        try await application.test(.router) { client in
            let device = Service.newDevice()
            try await Self.login(client, Service.mvpdA, device: device)
            let cases: [(PartnerFrameworkStatus?, String)] = [
                (Service.pfs("ProviderA", access: .denied), "invalid_header_pfs_permission_access_not_granted"),
                (Service.pfs("ProviderA", expiresIn: -1000), "invalid_header_pfs_provider_info_expired"),
                (Service.pfs("ProviderB"), "invalid_header_pfs_provider_id_mismatch"),
                (nil, "invalid_header_pfs_permission_access_not_present"),
            ]
            for (pfs, code) in cases {
                let (status, object) = try await Self.decide(client, "authorize", ["trailers"], device: device, pfs: pfs)
                let item = try #require(Self.decisions(object).first)
                #expect(status == .ok && item["authorized"] as? Bool == false && item["token"] == nil, "\(code)")
                #expect((item["error"] as? [String: Any])?["code"] as? String == code)
            }
        }
    }

    @Test("refused before any decision: no profile, an unknown MVPD, resources that do not read or are too many, another media type")
    func refusals() async throws {
        let application = try ServiceApplication.buildApplication(configuration: try Self.configuration(), logger: Service.quiet)
        try await application.test(.router) { client in
            let stranger = Service.newDevice()
            let (missing, object) = try await Self.decide(client, "preauthorize", ["trailers"], device: stranger)
            #expect(
                missing == .forbidden && object["code"] as? String == "authenticated_profile_missing"
                    && object["action"] as? String == "authentication")
            let (unknown, other) = try await Self.decide(client, "authorize", ["trailers"], device: stranger, mvpd: "MVPD-Z")
            #expect(unknown == .badRequest && other["code"] as? String == "invalid_parameter_mvpd")
            let (many, tooMany) = try await Self.decide(client, "preauthorize", (1...6).map { "r\($0)" }, device: stranger)
            #expect(many == .forbidden && tooMany["code"] as? String == "too_many_resources")
            let (two, twice) = try await Self.decide(client, "authorize", ["a", "b"], device: stranger)
            #expect(two == .forbidden && twice["code"] as? String == "too_many_resources")
            for body in [
                #"{"resources": []}"#, #"{"resources": "a"}"#, #"{"resources": [1]}"#, #"{"resources": [""]}"#, "[",
                #"{"resource": ["a"]}"#, #"{"resources": ["a\u0001"]}"#,
                #"{"resources": ["\#(String(repeating: "x", count: 4097))"]}"#,
            ] {
                let response = try await client.execute(
                    uri: "/api/v2/REF30/decisions/preauthorize/MVPD-A", method: .post,
                    headers: Self.headers(device: stranger, pfs: nil, json: true), body: ByteBuffer(string: body))
                let code = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])?["code"]
                #expect(response.status == .badRequest && code as? String == "invalid_parameter_resources", "\(body.prefix(40))")
            }
            let form = try await client.execute(
                uri: "/api/v2/REF30/decisions/authorize/MVPD-A", method: .post, headers: Self.headers(device: stranger, pfs: nil),
                body: ByteBuffer(string: "resources=a"))
            #expect(form.status == .unsupportedMediaType)
            let get = try await client.execute(uri: "/api/v2/REF30/decisions/authorize/MVPD-A", method: .get, headers: [:])
            #expect(get.status == .methodNotAllowed && get.headers[.allow] == "POST")
        }
    }

    /// An authorizer that fails, answers after the deadline, or answers late and ignores its cancellation
    /// (a blocking client of the MVPD's service).
    struct Failing: ResourceAuthorizer {
        let delay: Duration?
        var heedsCancellation = true
        func decide(_ query: AuthorizationQuery) async throws -> [ResourceDecision] {
            guard let delay else { throw SAMLError(.storeUnavailable, "expected the MVPD's authorization service, found none") }
            if heedsCancellation {
                try await Task.sleep(for: delay)
            } else {
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(delay.components.seconds))) { continuation.resume() }
                }
            }
            return query.resources.map { .permit($0) }
        }
    }

    @Test(
        "an authorizer that fails or is late denies every resource (network_received_error, retry): fail closed",
        arguments: [Failing(delay: nil), Failing(delay: .seconds(5)), Failing(delay: .seconds(4), heedsCancellation: false)])
    func authorizerFailure(authorizer: Failing) async throws {
        var configuration = try Self.configuration()
        configuration.authorizationTimeout = .milliseconds(200)
        let application = try ServiceApplication.buildApplication(
            configuration: configuration, authorizer: authorizer, logger: Service.quiet)
        try await application.test(.router) { client in
            let device = Service.newDevice()
            try await Self.login(client, Service.mvpdA, device: device)
            let started = ContinuousClock.now
            let (status, object) = try await Self.decide(client, "authorize", ["trailers"], device: device)
            let item = try #require(Self.decisions(object).first)
            #expect(status == .ok && item["authorized"] as? Bool == false && item["token"] == nil)
            let error = try #require(item["error"] as? [String: Any])
            #expect(error["code"] as? String == "network_received_error" && error["action"] as? String == "retry")
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    /// Counts its calls and answers none of them (ignoring its cancellation) until ``release()``: however
    /// slowly a loaded machine runs the test, no call ends within it.
    final class Hung: ResourceAuthorizer {
        let calls = Atomic<Int>(0)
        private let waiting = Mutex<(released: Bool, continuations: [CheckedContinuation<Void, Never>])>((false, []))
        func decide(_ query: AuthorizationQuery) async throws -> [ResourceDecision] {
            calls.add(1, ordering: .relaxed)
            await withCheckedContinuation { continuation in
                let released = waiting.withLock { state in
                    if !state.released { state.continuations.append(continuation) }
                    return state.released
                }
                if released { continuation.resume() }
            }
            return []
        }
        /// Ends every call, those to come included.
        func release() {
            let continuations = waiting.withLock { state in
                state.released = true
                defer { state.continuations = [] }
                return state.continuations
            }
            for continuation in continuations { continuation.resume() }
        }
    }

    @Test("a hung authorizer: at most 256 calls run at once, past their deadlines included; beyond, a Deny without a call")
    func hungAuthorizer() async throws {
        var configuration = try Self.configuration()
        configuration.authorizationTimeout = .milliseconds(5)
        let hung = Hung()
        defer { hung.release() }
        let application = try ServiceApplication.buildApplication(configuration: configuration, authorizer: hung, logger: Service.quiet)
        try await application.test(.router) { client in
            let device = Service.newDevice()
            try await Self.login(client, Service.mvpdA, device: device)
            for _ in 0..<(DecisionsController.maximumAuthorizations + 20) {
                let (status, object) = try await Self.decide(client, "authorize", ["trailers"], device: device)
                let item = try #require(Self.decisions(object).first)
                #expect(status == .ok && (item["error"] as? [String: Any])?["code"] as? String == "network_received_error")
            }
            #expect(hung.calls.load(ordering: .relaxed) == DecisionsController.maximumAuthorizations)
        }
    }

    @Test("logout: partner_logout for the appleSSO profile, then nothing of it anywhere; invalid without one; every MVPD at once")
    func logout() async throws {
        let application = try ServiceApplication.buildApplication(configuration: try Self.configuration(), logger: Service.quiet)
        try await application.test(.router) { client in
            let device = Service.newDevice()
            try await Self.login(client, Service.mvpdA, device: device)
            try await Self.login(client, Service.mvpdB, device: device)
            let headers: HTTPFields = [Self.deviceName: "fingerprint \(device)"]
            func get(_ uri: String) async throws -> (HTTPResponse.Status, [String: Any]) {
                let response = try await client.execute(uri: uri, method: .get, headers: headers)
                return (
                    response.status,
                    (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]) ?? [:]
                )
            }
            let (noURL, refused) = try await get("/api/v2/REF30/logout/MVPD-A")
            #expect(noURL == .badRequest && refused["code"] as? String == "invalid_parameter_redirect_url")
            let (badURL, _) = try await get("/api/v2/REF30/logout/MVPD-A?redirectUrl=javascript%3Aalert(1)")
            #expect(badURL == .badRequest)
            let (unknown, other) = try await get("/api/v2/REF30/logout/MVPD-Z?redirectUrl=https%3A%2F%2Fapp.example")
            #expect(unknown == .badRequest && other["code"] as? String == "invalid_parameter_mvpd")

            let (status, object) = try await get("/api/v2/REF30/logout/MVPD-A?redirectUrl=https%3A%2F%2Fapp.example")
            let logouts = try #require(object["logouts"] as? [String: [String: String]])
            #expect(
                status == .ok
                    && logouts == ["MVPD-A": ["actionName": "partner_logout", "actionType": "partner_interactive", "mvpd": "MVPD-A"]])
            let (_, profiles) = try await get("/api/v2/REF30/profiles")
            #expect((profiles["profiles"] as? [String: Any]).map { Array($0.keys) } == ["MVPD-B"])
            let (missing, _) = try await Self.decide(client, "authorize", ["trailers"], device: device)
            #expect(missing == .forbidden)
            let (_, again) = try await get("/api/v2/REF30/logout/MVPD-A?redirectUrl=https%3A%2F%2Fapp.example")
            #expect(
                again["logouts"] as? [String: [String: String]] == [
                    "MVPD-A": ["actionName": "invalid", "actionType": "none", "mvpd": "MVPD-A"]
                ])
            let (_, all) = try await get("/api/v2/REF30/logout?redirectUrl=https%3A%2F%2Fapp.example")
            #expect((all["logouts"] as? [String: Any]).map { Array($0.keys) } == ["MVPD-B"])
            let (_, none) = try await get("/api/v2/REF30/logout?redirectUrl=https%3A%2F%2Fapp.example")
            #expect((none["logouts"] as? [String: Any])?.isEmpty == true)
        }
    }

    @Test("an operator signs a device out, or a subscriber out of every device, through the admin route; logged without the identifier")
    func adminSignOut() async throws {
        let configuration = try Self.configuration()
        let stores = ServiceStores.memory(configuration)
        let service = try TokenExchangeService(
            configuration: configuration, stores: stores, metrics: ServiceMetrics(), logger: Service.quiet, tracer: nil)
        let now = SAMLInstant.now()
        func profile(_ device: String, _ mvpd: String, user: String) -> StoredProfile {
            let json = #"{"attributes":{"userID":{"state":"plain","value":"\#(user)"}},"type":"appleSSO"}"#
            return StoredProfile(
                serviceProvider: "REF30", device: device, mvpd: mvpd, json: Array(json.utf8), notAfter: now + .seconds(600))
        }
        for (device, mvpd, user) in [
            ("fingerprint d1", "MVPD-A", "u1"), ("fingerprint d2", "MVPD-A", "u1"), ("fingerprint d3", "MVPD-B", "u2"),
        ] {
            try await stores.profiles.save(profile(device, mvpd, user: user))
        }
        let router = Router(context: BasicRequestContext.self)
        AdminSignOut(service: service, credentials: Credentials(bearer: [], admin: ["admin-token"])).addRoute(to: router)
        try await Application(router: router).test(.router) { client in
            func post(_ body: String, token: String = "admin-token") async throws -> (HTTPResponse.Status, String) {
                let response = try await client.execute(
                    uri: "/admin/sign-out", method: .post, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(string: body))
                return (response.status, String(buffer: response.body))
            }
            let unauthorized = try await post(#"{"device": "fingerprint d3"}"#, token: "wrong")
            #expect(unauthorized.0 == .unauthorized)
            let incomplete = try await post(#"{"mvpd": "MVPD-A", "attribute": "userID"}"#)
            #expect(incomplete.0 == .badRequest)
            let unknown = try await post(#"{"mvpd": "MVPD-Z", "attribute": "userID", "value": "u1"}"#)
            #expect(unknown.0 == .badRequest)
            // A misspelt or empty member never widens the sign-out to every MVPD; a device the API would
            // refuse is refused here too.
            for body in [
                #"{"device": "fingerprint d3", "mvdp": "MVPD-B"}"#, #"{"device": "fingerprint d3", "mvpd": ""}"#,
                #"{"device": "fingerprint d3", "mvpd": 7}"#, #"{"device": "d3"}"#, #"{"device": "fingerprint d3", "attribute": "x"}"#,
            ] {
                #expect(try await post(body).0 == .badRequest, "\(body)")
            }
            let subscriber = try await post(#"{"mvpd": "MVPD-A", "attribute": "userID", "value": "u1"}"#)
            #expect(subscriber.0 == .ok && subscriber.1 == #"{"removed":2}"#)
            let device = try await post(#"{"device": "fingerprint d3", "mvpd": "MVPD-B"}"#)
            #expect(device.0 == .ok && device.1 == #"{"removed":1}"#)
            let again = try await post(#"{"device": "fingerprint d3"}"#)
            #expect(again.0 == .ok && again.1 == #"{"removed":0}"#)
        }
        for device in ["fingerprint d1", "fingerprint d2", "fingerprint d3"] {
            #expect(try await stores.profiles.profiles(serviceProvider: "REF30", device: device, now: now).isEmpty)
        }
    }
}
