import AppleSSO
import AppleSSOClient
import Foundation
import Hummingbird
import SAML
import SAMLLoad
import SAMLService
import SAMLTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's client (AppleSSOClient) driven through every outcome of the cookbooks against the reference
/// service, running on loopback with the bundled development configuration and bearer tokens, over
/// URLSession; the scripted framework answers with the mock MVPDs' freshly signed responses.
@Suite("The app's client against the service")
struct AppleSSOClientTests {
    /// The provider's SAML answer to the service's request (the Base64 `AttributeQuery` handed over as the
    /// verification token): a response of `mvpd`'s mock IdP in response to its ID.
    static func answer(_ mvpd: LoadMVPD) -> @Sendable (String, [String]) -> String {
        { token, _ in (try? Service.response(mvpd, to: requestID(token))) ?? "" }
    }

    /// A framework answering as `mvpd`'s provider, and the first response it handed over (to replay).
    static func keepingFirstAnswer(_ mvpd: LoadMVPD) -> (ScriptedAccounts, FirstAnswer) {
        let first = FirstAnswer()
        let accounts = ScriptedAccounts(provider: mvpd.providerID) { token, attributes in
            let response = answer(mvpd)(token, attributes)
            first.value.withLock { $0 = $0 ?? response }
            return response
        }
        return (accounts, first)
    }

    final class FirstAnswer: Sendable {
        let value = Mutex<String?>(nil)
    }

    static func requestID(_ token: String) -> String? {
        guard let xml = Data(base64Encoded: token).map({ String(decoding: $0, as: UTF8.self) }), let start = xml.range(of: " ID=\"")
        else { return nil }
        return String(xml[start.upperBound...].prefix { $0 != "\"" })
    }

    static func configuration(mvpds: String? = nil) -> SAMLService.ServiceConfiguration {
        var configuration = Service.configuration()
        configuration.bearerTokens = ["token"]
        if let mvpds { configuration.mvpdConfigurationPath = mvpds }
        return configuration
    }

    static func client(
        _ port: Int, _ accounts: any VideoSubscriberAccounts, token: String = "token", device: String = Service.newDevice(),
        domainName: String = "app.example", transport: Recording? = nil
    ) -> AppleSSOClient {
        AppleSSOClient(
            settings: .init(
                serviceProvider: "REF30", accessToken: token, deviceIdentifier: device,
                deviceInfo: Data(#"{"model":"AppleTV","osName":"tvOS"}"#.utf8).base64EncodedString(), domainName: domainName,
                redirectURL: "https://app.example/signed-out"),
            transport: transport ?? Recording(port: port), accounts: accounts)
    }

    /// URLSession to the service, every request and answer kept.
    final class Recording: AppleSSOTransport, @unchecked Sendable {
        let inner: URLSessionTransport
        private let lock = NSLock()
        private var exchanges: [(TransportRequest, TransportResponse?)] = []

        init(port: Int) { inner = URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!) }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            do {
                let response = try await inner.send(request)
                lock.withLock { exchanges.append((request, response)) }
                return response
            } catch {
                lock.withLock { exchanges.append((request, nil)) }
                throw error
            }
        }

        var requests: [TransportRequest] { lock.withLock { exchanges.map(\.0) } }
        var paths: [String] { requests.map { String($0.path.prefix { $0 != "?" }) } }
    }

    @Test(
        "a login end to end: configuration, picker, sessions/sso, the provider's answer, the Token Exchange; then the profile, authorize, logout (VSA203)"
    )
    func endToEnd() async throws {
        try await Service.with(Self.configuration()) { port in
            let mvpd = Service.mvpdA
            let accounts = ScriptedAccounts(provider: mvpd.providerID, response: Self.answer(mvpd))
            let device = Service.newDevice()
            let recording = Recording(port: port)
            let client = Self.client(port, accounts, device: device, transport: recording)

            let outcome = await client.signIn()
            guard case .signedIn(let profile) = outcome else {
                Issue.record("expected signedIn, found \(outcome)")
                return
            }
            #expect(profile.mvpd == "MVPD-A" && profile.type == "appleSSO")
            #expect(profile.attributes["householdID"]?.isEmpty == false, "\(profile.attributes)")
            #expect(outcome.code == nil && outcome.nextStep == .continueToDecisions)
            #expect(
                recording.paths == [
                    "/api/v2/REF30/configuration", "/api/v2/REF30/sessions/sso/Apple", "/api/v2/REF30/profiles/sso/Apple",
                ])
            // The framework was asked as the cookbook says: the picker's lists, then the verification token
            // with the request's attribute names, interruption allowed for both.
            let requests = accounts.requests
            #expect(requests.count == 2 && accounts.accessChecks == [true])
            #expect(requests.first?.supportedProviderIdentifiers == ["ProviderA", "ProviderB"])
            #expect(requests.first?.featuredProviderIdentifiers == ["ProviderB"])
            #expect(requests.first?.verificationToken == nil && requests.allSatisfy(\.isInterruptionAllowed))
            #expect(requests.allSatisfy { $0.channelIdentifier == "https://saml.sp.auth.adobe.com" })
            #expect(requests.last?.verificationToken.flatMap(Self.requestID) != nil)
            #expect(requests.last?.attributeNames == ["NameID", "uid", "householdId"])
            // The partner framework status the client sent reads back as AppleSSO reads it.
            let header = try #require(recording.requests.last?.headers["AP-Partner-Framework-Status"])
            let status = try PartnerFrameworkStatus(headerValue: header)
            #expect(status.accessStatus == .granted && status.providerID == "ProviderA" && status.expirationMilliseconds != nil)

            let check = await client.checkAuthentication()
            #expect(check == .profiles([profile]) && check.nextStep == .continueToDecisions)
            #expect(await client.signIn() == .alreadySignedIn(mvpd: "MVPD-A"))

            // The decisions need the partner framework status of an appleSSO profile: the client gives it,
            // and the service permits with it.
            let framework = await client.partnerFrameworkStatus()
            guard case .partnerFrameworkStatus(let value, let frameworkMVPD) = framework else {
                Issue.record("expected partnerFrameworkStatus, found \(framework)")
                return
            }
            #expect(frameworkMVPD == "MVPD-A" && framework.nextStep == .continueToDecisions)
            let decision = try await recording.send(
                TransportRequest(
                    method: "POST", path: "/api/v2/REF30/decisions/preauthorize/MVPD-A",
                    headers: [
                        "Authorization": "Bearer token", "AP-Device-Identifier": "fingerprint \(device)",
                        "AP-Partner-Framework-Status": value,
                        "Content-Type": "application/json",
                    ], body: Data(#"{"resources":["REF30"]}"#.utf8)))
            let decisions = try JSONSerialization.jsonObject(with: decision.body) as? [String: Any]
            let first = (decisions?["decisions"] as? [[String: Any]])?.first
            #expect(decision.status == 200 && first?["authorized"] as? Bool == true, "\(String(decoding: decision.body, as: UTF8.self))")

            let logout = await client.logout(mvpd: "MVPD-A")
            #expect(
                logout == .providerSignOutRequired([.init(mvpd: "MVPD-A", actionName: "partner_logout", actionType: "partner_interactive")])
            )
            #expect(logout.code == "VSA203" && logout.nextStep == .showProviderSignOutInstruction)
            #expect(await client.logout(mvpd: "MVPD-A") == .noProfile)
            let after = await client.checkAuthentication()
            #expect(after == .profiles([]) && after.nextStep == .signIn)
        }
    }

    @Test("the Token Exchange carries the cookbook's encoding of what the framework returned, byte for byte")
    func encodingByteForByte() async throws {
        try await Service.with(Self.configuration()) { port in
            let mvpd = Service.mvpdB
            // What the framework hands over may be laid out: leading and trailing whitespace (spaces, tabs,
            // newlines, a no-break space) is normalised away by the cookbook's code, and the signature holds.
            let accounts = ScriptedAccounts(provider: mvpd.providerID) { token, attributes in
                "\n\t  \u{00A0}" + Self.answer(mvpd)(token, attributes) + " \r\n\t"
            }
            let recording = Recording(port: port)
            let outcome = await Self.client(port, accounts, transport: recording).signIn()
            #expect(outcome.nextStep == .continueToDecisions, "\(outcome)")
            let sent = try #require(recording.requests.last)
            #expect(accounts.requests.last?.verificationToken?.isEmpty == false)
            let body = String(decoding: sent.body, as: UTF8.self)
            #expect(body.hasPrefix("SAMLResponse="))
            let value = String(body.dropFirst("SAMLResponse=".count))
            // Decoded, it is the normalised response; re-encoded by the cookbook's own code, the same bytes.
            let decoded = try #require(Data(base64Encoded: value.removingPercentEncoding ?? ""))
            let normalized = String(decoding: decoded, as: UTF8.self)
            #expect(normalized.hasPrefix("<") && normalized.hasSuffix(">"))
            #expect(value == CookbookOracle.encode("\n\t  \u{00A0}" + normalized + " \r\n\t"))
            #expect(!value.contains("%25") && !value.contains("+") && !value.contains("/"), "encoded once, never twice")
        }
    }

    @Test("a replayed response is refused with the service's Enhanced Error Code")
    func replay() async throws {
        try await Service.with(Self.configuration()) { port in
            let mvpd = Service.mvpdA
            let (accounts, first) = Self.keepingFirstAnswer(mvpd)
            let device = Service.newDevice()
            #expect(await Self.client(port, accounts, device: device).signIn().nextStep == .continueToDecisions)
            let captured = try #require(first.value.withLock { $0 })
            let replaying = ScriptedAccounts(provider: mvpd.providerID) { _, _ in captured }
            // The same device, signed out, hands the same response over for its next request; then
            // another device does.
            #expect(await Self.client(port, accounts, device: device).logout(mvpd: "MVPD-A").code == "VSA203")
            for client in [Self.client(port, replaying, device: device), Self.client(port, replaying)] {
                let outcome = await client.signIn()
                guard case .refused(let error) = outcome else {
                    Issue.record("expected refused, found \(outcome)")
                    continue
                }
                #expect(error.status == 400 && error.code == "invalid_parameter_saml_response", "\(error)")
                #expect(outcome.code == "invalid_parameter_saml_response" && outcome.nextStep == .report)
            }
        }
    }

    @Test("the framework's answers become the SDK cookbook's codes, each with its next step")
    func frameworkOutcomes() async throws {
        try await Service.with(Self.configuration()) { port in
            func outcome(
                status: Result<VideoSubscriberAccountStatus, VideoSubscriberAccountError> = .success(.granted),
                _ answer: @escaping ScriptedAccounts.Answer
            ) async -> AppleSSOOutcome {
                await Self.client(port, ScriptedAccounts(status: status, answer: answer)).signIn()
            }
            let signedIn = VideoSubscriberAccountMetadata(providerIdentifier: "ProviderA", authenticationExpiration: Date() + 3600)
            let cases: [(AppleSSOOutcome, String?, AppleSSONextStep)] = [
                (await outcome(status: .success(.denied)) { _ in signedIn }, "VSA403", .regularAuthentication(mvpd: nil)),
                (await outcome(status: .success(.restricted)) { _ in signedIn }, "VSA403", .regularAuthentication(mvpd: nil)),
                (await outcome(status: .success(.notDetermined)) { _ in signedIn }, "VSA404", .regularAuthentication(mvpd: nil)),
                (
                    await outcome { _ throws(VideoSubscriberAccountError) in throw .accessNotGranted }, "VSA403",
                    .regularAuthentication(mvpd: nil)
                ),
                (
                    await outcome { _ throws(VideoSubscriberAccountError) in throw .unsupportedProvider(identifier: nil) }, "N003",
                    .regularAuthentication(mvpd: nil)
                ),
                (
                    await outcome { _ throws(VideoSubscriberAccountError) in throw .unsupportedProvider(identifier: "ProviderZ") }, "N004",
                    .regularAuthentication(mvpd: nil)
                ),
                (await outcome { _ in .init(providerIdentifier: "ProviderZ") }, "N004", .regularAuthentication(mvpd: nil)),
                (
                    await outcome { _ throws(VideoSubscriberAccountError) in throw .userCancelled }, "N005",
                    .regularAuthentication(mvpd: nil)
                ),
                (
                    await outcome { _ throws(VideoSubscriberAccountError) in throw .serviceTemporarilyUnavailable }, "VSA503",
                    .regularAuthentication(mvpd: nil)
                ),
                (
                    await outcome { _ throws(VideoSubscriberAccountError) in
                        throw .other(domain: "NSURLErrorDomain", code: -1001, description: "timed out")
                    }, "VSA503", .regularAuthentication(mvpd: nil)
                ),
                // The provider's sign-in: the framework fails, or answers without a SAML response.
                (
                    await outcome { request throws(VideoSubscriberAccountError) in
                        if request.verificationToken != nil { throw .providerRejected }
                        return signedIn
                    }, "VSA503", .regularAuthentication(mvpd: nil)
                ),
                (await outcome { _ in signedIn }, "VSA503", .regularAuthentication(mvpd: nil)),
                // Signed in to no provider, or an authentication that ended.
                (await outcome { _ in .init(providerIdentifier: nil) }, nil, .regularAuthentication(mvpd: nil)),
                (
                    await outcome { _ in .init(providerIdentifier: "ProviderA", authenticationExpiration: Date() - 1) }, nil,
                    .regularAuthentication(mvpd: nil)
                ),
            ]
            for (outcome, code, next) in cases {
                #expect(outcome.code == code && outcome.nextStep == next, "\(outcome)")
            }
            // The framework refuses a provider the configuration lists: the regular flow with it selected.
            let listed = await outcome { _ throws(VideoSubscriberAccountError) in throw .unsupportedProvider(identifier: "ProviderA") }
            #expect(listed == .pickerOnlyProvider(mvpd: "MVPD-A") && listed.code == nil)
            #expect(cases[4].0 == .otherProviderChosen && cases[6].0 == .providerNotSupported(providerIdentifier: "ProviderZ"))
            #expect(cases[12].0 == .notSignedInToProvider)

            // Checking silently, a framework failure is APPL_ERROR, and nothing is shown.
            let silent = ScriptedAccounts { _ throws(VideoSubscriberAccountError) in throw .serviceTemporarilyUnavailable }
            let check = await Self.client(port, silent).checkAuthentication()
            #expect(check == .frameworkError(details: "VSErrorCodeServiceTemporarilyUnavailable") && check.code == "APPL_ERROR")
            #expect(silent.accessChecks == [false] && silent.requests.allSatisfy { !$0.isInterruptionAllowed })
            // Undecided, or signed in to no provider: no profile yet, and the next step is signIn (which
            // prompts and shows the picker); denied: VSA403.
            let undecided = await Self.client(port, ScriptedAccounts(status: .success(.notDetermined)) { _ in signedIn })
                .checkAuthentication()
            #expect(undecided == .profiles([]) && undecided.nextStep == .signIn)
            let nobody = await Self.client(port, ScriptedAccounts { _ in .init(providerIdentifier: nil) }).checkAuthentication()
            #expect(nobody == .profiles([]) && nobody.nextStep == .signIn)
            let denied = await Self.client(port, ScriptedAccounts(status: .success(.denied)) { _ in signedIn }).checkAuthentication()
            #expect(denied == .accessDenied)
            // Without the app's domain name, the service answers resume: a fault of the integration.
            let missing = await Self.client(port, ScriptedAccounts { _ in signedIn }, domainName: "").signIn()
            #expect(
                missing == .missingParameters(["domainName"]) && missing.code == "missing_parameters_fallback"
                    && missing.nextStep == .report)
        }
    }

    @Test(
        "an MVPD the configuration does not list for Apple SSO: N004 without a session; PICKER: the regular flow with it selected; one without trust: the service's fallback"
    )
    func providersTheConfigurationDoesNotComplete() async throws {
        // The bundled configuration with MVPD-C boarded as PICKER.
        let bundled = try String(contentsOfFile: "\(Service.vectors)/exchange/mvpd-configuration.json", encoding: .utf8)
        let (head, tail) = try #require(
            bundled.range(of: "\"id\": \"MVPD-C\"").map { (bundled[..<$0.upperBound], bundled[$0.upperBound...]) })
        let picker = head + tail.replacingOccurrences(of: "\"SUPPORTED\"", with: "\"PICKER\"")
        let path = try TemporaryFiles.file("client-mvpds.json").path
        try picker.write(toFile: path, atomically: true, encoding: .utf8)

        try await Service.with(Self.configuration()) { port in
            let recording = Recording(port: port)
            let unknown = await Self.client(port, ScriptedAccounts { _ in .init(providerIdentifier: "ProviderZ") }, transport: recording)
                .signIn()
            #expect(unknown == .providerNotSupported(providerIdentifier: "ProviderZ") && unknown.code == "N004")
            #expect(recording.paths == ["/api/v2/REF30/configuration"], "no session for a provider the configuration does not list")
            // MVPD-C is listed as SUPPORTED but has no trust: the service answers the regular flow.
            let untrusted = await Self.client(port, ScriptedAccounts { _ in .init(providerIdentifier: "ProviderC") }).signIn()
            guard case .regularFlow(let reason, let mvpd, let url, let code) = untrusted else {
                Issue.record("expected regularFlow, found \(untrusted)")
                return
            }
            #expect(reason == "configuration_fallback" && mvpd == "MVPD-C" && url != nil && code?.count == 7, "\(untrusted)")
            #expect(untrusted.nextStep == .regularAuthentication(mvpd: "MVPD-C"))
        }
        try await Service.with(Self.configuration(mvpds: path)) { port in
            let chosen = await Self.client(port, ScriptedAccounts { _ in .init(providerIdentifier: "ProviderC") }).signIn()
            #expect(chosen == .pickerOnlyProvider(mvpd: "MVPD-C") && chosen.code == nil)
            #expect(chosen.nextStep == .regularAuthentication(mvpd: "MVPD-C"))
            let refused = await Self.client(
                port, ScriptedAccounts { _ throws(VideoSubscriberAccountError) in throw .unsupportedProvider(identifier: "ProviderC") }
            ).signIn()
            #expect(refused == .pickerOnlyProvider(mvpd: "MVPD-C"))
        }
    }

    @Test("the service's refusals: 401 (renew the token), a degraded service (503 with Retry-After), no answer, an answer out of contract")
    func serviceOutcomes() async throws {
        let mvpd = Service.mvpdA
        try await Service.with(Self.configuration()) { port in
            let outcome = await Self.client(port, ScriptedAccounts(provider: mvpd.providerID, response: Self.answer(mvpd)), token: "wrong")
                .signIn()
            guard case .unauthorized(let error) = outcome else {
                Issue.record("expected unauthorized, found \(outcome)")
                return
            }
            #expect(
                error?.status == 401 && outcome.nextStep == .renewAccessToken && outcome.code?.hasPrefix("invalid_access_token") == true)
        }
        // A store that fails: the exchange cannot record the assertion and answers 503, never a profile.
        try await Service.with(Self.configuration(), store: FailingStore()) { port in
            let outcome = await Self.client(port, ScriptedAccounts(provider: mvpd.providerID, response: Self.answer(mvpd))).signIn()
            guard case .unavailable(let retryAfter, let error) = outcome else {
                Issue.record("expected unavailable, found \(outcome)")
                return
            }
            #expect(retryAfter != nil && (retryAfter ?? 0) > 0 && error?.status == 503, "\(outcome)")
            #expect(outcome.nextStep == .retry(afterSeconds: retryAfter))
        }
        let refusing = try RefusingPort()
        let unreachable = await Self.client(refusing.port, ScriptedAccounts(provider: mvpd.providerID, response: Self.answer(mvpd)))
            .signIn()
        guard case .networkFailure = unreachable else {
            Issue.record("expected networkFailure, found \(unreachable)")
            return
        }
        #expect(unreachable.nextStep == .retry(afterSeconds: nil))
        // Something that is not the service: 200 with a body of another shape.
        let router = Router()
        router.get("/api/v2/REF30/configuration") { _, _ in "hello" }
        try await Service.withServer(router) { port in
            let outcome = await Self.client(port, ScriptedAccounts(provider: mvpd.providerID, response: Self.answer(mvpd))).signIn()
            guard case .unexpectedAnswer(let status, _) = outcome else {
                Issue.record("expected unexpectedAnswer, found \(outcome)")
                return
            }
            #expect(status == 200 && outcome.nextStep == .report)
        }
    }

    @Test("REST API v1's flow: config, profile-requests, tokens/authn (204); a replay refused in v1's terms")
    func restAPIv1() async throws {
        try await Service.with(Self.configuration()) { port in
            let mvpd = Service.mvpdA
            let (accounts, first) = Self.keepingFirstAnswer(mvpd)
            let recording = Recording(port: port)
            let outcome = await Self.client(port, accounts, transport: recording).signInV1()
            #expect(outcome == .signedIn(AppleSSOClient.Profile(mvpd: "MVPD-A", type: "appleSSO")))
            #expect(recording.paths == ["/api/v1/config/REF30", "/api/v1/REF30/profile-requests/MVPD-A", "/api/v1/tokens/authn"])
            #expect(accounts.requests.last?.attributeNames == ["NameID", "uid", "householdId"])
            // The v1 cookbook forwards the request without interrupting the user.
            #expect(accounts.requests.last?.isInterruptionAllowed == false)
            let body = String(decoding: try #require(recording.requests.last?.body), as: UTF8.self)
            #expect(body.hasPrefix("requestor=REF30&deviceId=") && body.contains("&mvpd=MVPD-A&deviceType=tvOS&SAMLResponse="))

            let captured = try #require(first.value.withLock { $0 })
            let replayed = await Self.client(port, ScriptedAccounts(provider: mvpd.providerID) { _, _ in captured }).signInV1()
            guard case .refused(let error) = replayed else {
                Issue.record("expected refused, found \(replayed)")
                return
            }
            #expect(error.status == 400, "\(error)")
        }
    }
}
