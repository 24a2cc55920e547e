import CookbookEncoding
import Foundation

/// The app's side of Apple single sign-on, as the Adobe Pass cookbooks walk it (REST API v2, and v1 where
/// it differs): Apple's Video Subscriber Account framework behind ``VideoSubscriberAccounts``, the
/// service behind ``AppleSSOTransport``. Each call returns an ``AppleSSOOutcome`` (never throws): the
/// profile, or the cookbook's code for what happened and the app's next step.
///
/// ```
/// let client = AppleSSOClient(settings: settings, transport: URLSessionTransport(baseURL: service),
///                             accounts: VSAccountManagerAccounts(manager: manager))
/// switch await client.signIn() { ... }
/// ```
public struct AppleSSOClient: Sendable {
    /// Who calls: the service provider (requestor), the access token, the device.
    public struct Settings: Sendable, Hashable {
        /// The service provider (REST API v2) or requestor (v1) identifier.
        public var serviceProvider: String
        /// The access token from Dynamic Client Registration (`Authorization: Bearer`).
        public var accessToken: String
        /// The device's identifier: `AP-Device-Identifier: fingerprint <this>` (v2), `deviceId` (v1).
        public var deviceIdentifier: String
        /// `X-Device-Info`: Base64 of the device's JSON description, when the app sends one.
        public var deviceInfo: String?
        /// The partner of the SSO routes.
        public var partner = "Apple"
        /// The framework's `channelIdentifier`: the SAML issuer of the service's requests (its SP entity ID,
        /// `spEntityID` in the reference service's configuration), as the REST API v1 cookbook sets it.
        public var channelIdentifier: String? = "https://saml.sp.auth.adobe.com"
        /// v1's `deviceType`.
        public var deviceType: DeviceType = .tvOS
        /// The app's `domainName` and `redirectUrl`: REST API v2 requires both with `sessions` (without them
        /// the service answers `resume`, ``AppleSSOOutcome/missingParameters(_:)``), and the redirect URL
        /// with `logout`.
        public var domainName: String
        public var redirectURL: String

        public init(
            serviceProvider: String, accessToken: String, deviceIdentifier: String, deviceInfo: String? = nil, domainName: String,
            redirectURL: String
        ) {
            self.serviceProvider = serviceProvider
            self.accessToken = accessToken
            self.deviceIdentifier = deviceIdentifier
            self.deviceInfo = deviceInfo
            self.domainName = domainName
            self.redirectURL = redirectURL
        }
    }

    /// REST API v1's `deviceType`.
    public enum DeviceType: String, Sendable, Hashable {
        case iOS
        case tvOS
    }

    public let settings: Settings
    let transport: any AppleSSOTransport
    let accounts: any VideoSubscriberAccounts
    let now: @Sendable () -> Date

    public init(
        settings: Settings, transport: any AppleSSOTransport, accounts: any VideoSubscriberAccounts,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.settings = settings
        self.transport = transport
        self.accounts = accounts
        self.now = now
    }

    /// The cookbook's partner authentication (REST API v2, "C"): the configuration; the user's permission
    /// and provider (Apple's picker may show); `sessions/sso`; the provider's SAML answer to the service's
    /// request; the Token Exchange (`profiles/sso`) with the answer in the cookbook's encoding.
    public func signIn() async -> AppleSSOOutcome {
        do throws(Stop) {
            let configuration = try await configuration(path: "/api/v2/\(escaped(settings.serviceProvider))/configuration")
            let (status, mvpd) = try await provider(configuration, interactive: true)
            let session = try await session(mvpd: mvpd, status: status)
            switch session.actionName {
            case "authorize":
                return .alreadySignedIn(mvpd: session.mvpd ?? mvpd.id)
            case "partner_profile":
                guard let request = session.authenticationRequest, !request.request.isEmpty else {
                    throw Stop(.unexpectedAnswer(status: 200, message: "expected authenticationRequest with partner_profile, found none"))
                }
                // REST API v2 cookbook, C: `isInterruptionAllowed` true, the provider's sign-in may show.
                let (response, answered) = try await providerAnswer(
                    token: request.request, attributes: request.attributesNames ?? mvpd.requiredMetadataFields, configuration, mvpd,
                    interactive: true)
                return try await exchange(response, status: answered, mvpd: mvpd)
            case "authenticate":
                return .regularFlow(reason: session.reasonType ?? "none", mvpd: session.mvpd, url: session.url, code: session.code)
            case "resume":
                return .missingParameters(session.missingParameters ?? [])
            default:
                throw Stop(
                    .unexpectedAnswer(status: 200, message: "expected actionName authorize, partner_profile, authenticate or resume"))
            }
        } catch {
            return error.outcome
        }
    }

    /// The cookbook's "check authentication" (REST API v2, "B"): the permission and provider checked
    /// silently (no picker), then the profiles the service holds for the device (`GET profiles`, with the
    /// partner framework status when the check gave one, so that an `appleSSO` profile can be among them).
    ///
    /// Profiles: ``AppleSSOOutcome/profiles(_:)``. None: ``AppleSSOOutcome/profiles(_:)`` of none, whose
    /// next step is ``signIn()``, when the user has not decided on the permission or is signed in to no
    /// provider (``signIn()`` prompts and shows Apple's picker); otherwise what the check found
    /// (`VSA403`, `APPL_ERROR`, `N004`, ...).
    public func checkAuthentication() async -> AppleSSOOutcome {
        do throws(Stop) {
            let configuration = try await configuration(path: "/api/v2/\(escaped(settings.serviceProvider))/configuration")
            var status: FrameworkStatus?
            var silent: AppleSSOOutcome?
            do {
                status = try await provider(configuration, interactive: false).0
            } catch {
                silent = error.outcome
            }
            let answer = try await send(
                "GET", "/api/v2/\(escaped(settings.serviceProvider))/profiles", headers: v2Headers(status), expecting: 200)
            let profiles = try decode(Wire.Profiles.self, answer).profiles.sorted { $0.key < $1.key }.map { Wire.profile($0.key, $0.value) }
            switch silent {
            case nil, .accessNotDetermined?, .notSignedInToProvider?: return .profiles(profiles)
            case let outcome?: return profiles.isEmpty ? outcome : .profiles(profiles)
            }
        } catch {
            return error.outcome
        }
    }

    /// The `AP-Partner-Framework-Status` header value for the decisions (REST API v2, "D"), which require it
    /// for an `appleSSO` profile: the permission and provider checked silently, as the cookbook says
    /// (``AppleSSOOutcome/partnerFrameworkStatus(header:mvpd:)``), or what the check found. The cookbook
    /// allows a cached value refreshed when the app comes to the foreground.
    public func partnerFrameworkStatus() async -> AppleSSOOutcome {
        do throws(Stop) {
            let configuration = try await configuration(path: "/api/v2/\(escaped(settings.serviceProvider))/configuration")
            let (status, mvpd) = try await provider(configuration, interactive: false)
            return .partnerFrameworkStatus(header: status.headerValue, mvpd: mvpd.id)
        } catch {
            return error.outcome
        }
    }

    /// The cookbook's logout (REST API v2, "D. Logout"): `GET logout/{mvpd}` (every MVPD when `mvpd` is
    /// nil) with ``Settings/redirectURL``, one ``Logout`` per MVPD whose profile was removed. A profile
    /// made through Apple SSO (`partner_logout`) gives `VSA203`
    /// (``AppleSSOOutcome/providerSignOutRequired(_:)``): the framework has no API to sign the device out
    /// of its provider.
    public func logout(mvpd: String? = nil) async -> AppleSSOOutcome {
        do throws(Stop) {
            var path = "/api/v2/\(escaped(settings.serviceProvider))/logout"
            if let mvpd { path += "/\(escaped(mvpd))" }
            path += "?redirectUrl=\(escaped(settings.redirectURL))"
            let answer = try await send("GET", path, headers: v2Headers(nil), expecting: 200)
            let logouts = try decode(Wire.Logouts.self, answer).logouts.sorted { $0.key < $1.key }.filter {
                $0.value.actionName != "invalid"
            }
            .map { Logout(mvpd: $0.key, actionName: $0.value.actionName, actionType: $0.value.actionType, url: $0.value.url) }
            if logouts.isEmpty { return .noProfile }
            return logouts.contains(where: \.requiresProviderSignOut) ? .providerSignOutRequired(logouts) : .signedOut(logouts)
        } catch {
            return error.outcome
        }
    }

    // MARK: Steps

    /// The configuration at `path` (v2's or v1's).
    func configuration(path: String) async throws(Stop) -> Configuration {
        try decode(Configuration.self, try await send("GET", path, headers: v2Headers(nil), expecting: 200))
    }

    /// The user's permission, then their provider (Apple's picker when `interactive`), validated as the
    /// cookbook says: granted, a provider the configuration maps to an MVPD completing SSO, not expired.
    func provider(_ configuration: Configuration, interactive: Bool) async throws(Stop) -> (FrameworkStatus, MVPD) {
        let access: VideoSubscriberAccountStatus
        do {
            access = try await accounts.accessStatus(prompt: interactive)
        } catch {
            throw Stop(Self.outcome(of: error, configuration, interactive: interactive))
        }
        switch access {
        case .granted: break
        case .notDetermined: throw Stop(.accessNotDetermined)
        case .denied, .restricted: throw Stop(.accessDenied)
        }
        let metadata = try await metadata(
            VideoSubscriberAccountRequest(
                channelIdentifier: settings.channelIdentifier, supportedProviderIdentifiers: configuration.supportedProviderIdentifiers,
                featuredProviderIdentifiers: configuration.featuredProviderIdentifiers, isInterruptionAllowed: interactive),
            configuration, interactive: interactive)
        return try validate(metadata, configuration)
    }

    /// The provider's SAML answer to the service's request `token`, from the same provider.
    func providerAnswer(token: String, attributes: [String], _ configuration: Configuration, _ mvpd: MVPD, interactive: Bool)
        async throws(Stop) -> (String, FrameworkStatus)
    {
        let metadata = try await metadata(
            VideoSubscriberAccountRequest(
                channelIdentifier: settings.channelIdentifier, supportedProviderIdentifiers: configuration.supportedProviderIdentifiers,
                featuredProviderIdentifiers: configuration.featuredProviderIdentifiers, verificationToken: token,
                attributeNames: attributes,
                isInterruptionAllowed: interactive),
            configuration, interactive: interactive)
        let (status, answering) = try validate(metadata, configuration)
        guard answering.id == mvpd.id else {
            throw Stop(.metadataRequestFailed(message: "expected the answer of \(mvpd.id)'s provider, found another provider's"))
        }
        guard let response = metadata.samlAttributeQueryResponse, !response.isEmpty else {
            throw Stop(.metadataRequestFailed(message: "expected samlAttributeQueryResponse, found none"))
        }
        return (response, status)
    }

    func metadata(_ request: VideoSubscriberAccountRequest, _ configuration: Configuration, interactive: Bool) async throws(Stop)
        -> VideoSubscriberAccountMetadata
    {
        do {
            return try await accounts.metadata(request)
        } catch {
            throw Stop(Self.outcome(of: error, configuration, interactive: interactive))
        }
    }

    /// The cookbook's "return partner framework status information" checks.
    func validate(_ metadata: VideoSubscriberAccountMetadata, _ configuration: Configuration) throws(Stop) -> (
        FrameworkStatus, MVPD
    ) {
        guard let identifier = metadata.providerIdentifier, !identifier.isEmpty else { throw Stop(.notSignedInToProvider) }
        if let expiration = metadata.authenticationExpiration, expiration <= now() { throw Stop(.notSignedInToProvider) }
        let mvpd = try Self.ssoMVPD(identifier, configuration)
        return (FrameworkStatus(providerIdentifier: identifier, expiration: metadata.authenticationExpiration), mvpd)
    }

    /// The MVPD Apple's `identifier` maps to, when Apple SSO completes for it.
    static func ssoMVPD(_ identifier: String, _ configuration: Configuration) throws(Stop) -> MVPD {
        guard let mvpd = configuration.mvpd(providerIdentifier: identifier) else {
            throw Stop(.providerNotSupported(providerIdentifier: identifier))
        }
        if mvpd.completesSingleSignOn { return mvpd }
        if mvpd.enablePlatformServices && mvpd.displayInPlatformPicker { throw Stop(.pickerOnlyProvider(mvpd: mvpd.id)) }
        throw Stop(.providerNotSupported(providerIdentifier: identifier))
    }

    /// A framework error as the SDK cookbook names it: `VSA503` while authenticating, `APPL_ERROR` while
    /// checking silently.
    static func outcome(of error: VideoSubscriberAccountError, _ configuration: Configuration, interactive: Bool) -> AppleSSOOutcome {
        switch error {
        case .accessNotGranted: return .accessDenied
        case .userCancelled: return .cancelled
        case .unsupportedProvider(nil): return .otherProviderChosen
        case .unsupportedProvider(let identifier?):
            // A provider in Apple's picker that the framework does not complete: the regular flow, with the
            // MVPD selected when the configuration lists it (REST API v1 cookbook, "Initiate Platform SSO
            // workflow with Adobe config"), N004 otherwise.
            guard let mvpd = configuration.mvpd(providerIdentifier: identifier) else {
                return .providerNotSupported(providerIdentifier: identifier)
            }
            return .pickerOnlyProvider(mvpd: mvpd.id)
        case .other(_, _, let description):
            let text = "\(error.name): \(description)"
            return interactive ? .metadataRequestFailed(message: text) : .frameworkError(details: text)
        default:
            return interactive ? .metadataRequestFailed(message: error.name) : .frameworkError(details: error.name)
        }
    }

    /// `POST sessions/sso/{partner}` for `mvpd`.
    func session(mvpd: MVPD, status: FrameworkStatus) async throws(Stop) -> Wire.Session {
        let fields = [("mvpd", mvpd.id), ("domainName", settings.domainName), ("redirectUrl", settings.redirectURL)]
        var headers = v2Headers(status)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        let answer = try await send(
            "POST", "/api/v2/\(escaped(settings.serviceProvider))/sessions/sso/\(escaped(settings.partner))", headers: headers,
            body: Data(FormEncoding.encode(fields).utf8), expecting: 200)
        return try decode(Wire.Session.self, answer)
    }

    /// The Token Exchange (`POST profiles/sso/{partner}`): the response in the cookbook's encoding, which
    /// goes into the form as it is (never URL-encoded again).
    func exchange(_ response: String, status: FrameworkStatus, mvpd: MVPD) async throws(Stop) -> AppleSSOOutcome {
        var headers = v2Headers(status)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        let answer = try await send(
            "POST", "/api/v2/\(escaped(settings.serviceProvider))/profiles/sso/\(escaped(settings.partner))", headers: headers,
            body: Data(("SAMLResponse=" + CookbookText.encode(response)).utf8), expecting: 201)
        guard let profile = try decode(Wire.Profiles.self, answer).profiles[mvpd.id] else {
            throw Stop(.unexpectedAnswer(status: answer.status, message: "expected the profile of \(mvpd.id), found none"))
        }
        return .signedIn(Wire.profile(mvpd.id, profile))
    }

    // MARK: HTTP

    func v2Headers(_ status: FrameworkStatus?) -> [String: String] {
        var headers = [
            "Authorization": "Bearer \(settings.accessToken)", "AP-Device-Identifier": "fingerprint \(settings.deviceIdentifier)",
            "Accept": "application/json",
        ]
        if let deviceInfo = settings.deviceInfo { headers["X-Device-Info"] = deviceInfo }
        if let status { headers["AP-Partner-Framework-Status"] = status.headerValue }
        return headers
    }

    /// Sends, and turns every answer but `expecting` into its outcome.
    func send(_ method: String, _ path: String, headers: [String: String], body: Data = Data(), expecting: Int) async throws(Stop)
        -> TransportResponse
    {
        let answer: TransportResponse
        do {
            answer = try await transport.send(TransportRequest(method: method, path: path, headers: headers, body: body))
        } catch {
            throw Stop(.networkFailure(message: "\(method) \(path.prefix { $0 != "?" }): \(error)"))
        }
        guard answer.status == expecting else { throw Stop(Self.failure(answer)) }
        return answer
    }

    /// A refusal's outcome: `401`, `503`/`429` with `Retry-After`, an Enhanced Error Code, or an answer
    /// out of contract.
    static func failure(_ answer: TransportResponse) -> AppleSSOOutcome {
        let error = try? JSONDecoder().decode(ServiceError.self, from: answer.body)
        let retryAfter = answer.headers["retry-after"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        switch answer.status {
        case 401:
            return .unauthorized(error)
        case 429, 503:
            return .unavailable(retryAfter: retryAfter, error)
        case _ where error?.action == "retry-after":
            return .unavailable(retryAfter: retryAfter, error)
        default:
            guard let error else {
                return .unexpectedAnswer(status: answer.status, message: "expected an Enhanced Error Code object, found another body")
            }
            return .refused(error)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ answer: TransportResponse) throws(Stop) -> T {
        do {
            return try JSONDecoder().decode(type, from: answer.body)
        } catch {
            throw Stop(.unexpectedAnswer(status: answer.status, message: "expected \(type) JSON: \(error)"))
        }
    }

    func escaped(_ text: String) -> String { FormEncoding.percentEncode(text) }
}

/// A step's end: the outcome the call returns.
struct Stop: Error {
    let outcome: AppleSSOOutcome
    init(_ outcome: AppleSSOOutcome) { self.outcome = outcome }
}

/// The `AP-Partner-Framework-Status` header of a granted permission and a provider: standard Base64 of
/// `{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"expirationDate":"<ms>","id":"<provider>"}}`
/// (`expirationDate` in milliseconds, a string, when the framework gave one).
struct FrameworkStatus: Sendable, Hashable {
    let providerIdentifier: String
    let expiration: Date?

    var headerValue: String {
        struct Header: Encodable {
            struct Permission: Encodable { let accessStatus: String }
            struct Provider: Encodable {
                let id: String
                let expirationDate: String?
            }
            let frameworkPermissionInfo: Permission
            let frameworkProviderInfo: Provider
        }
        let header = Header(
            frameworkPermissionInfo: .init(accessStatus: "granted"),
            frameworkProviderInfo: .init(
                id: providerIdentifier, expirationDate: expiration.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded(.down))) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these two plain structures cannot fail.
        return ((try? encoder.encode(header)) ?? Data()).base64EncodedString()
    }
}
