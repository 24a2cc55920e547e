import AppleSSO
import Foundation
import Logging
@_spi(Spans) import SAML
import Synchronization
import Tracing

/// The endpoints of the Token Exchange service, as plain functions from a request's parts to an answer
/// (``ServiceAnswer``); ``ServiceApplication`` puts them behind Hummingbird.
///
/// - `POST /api/v2/{serviceProvider}/sessions/sso/{partner}`: for an MVPD with platform SSO, answers
///   `partner_profile` with a fresh SAML `AttributeQuery` and the MVPD's attribute names; otherwise the
///   documented fallback (`authenticate`, `interactive`) with its reason. Nothing is stored: the
///   request's ID is MACed for the service provider, the MVPD, the device and the API
///   (``SAML/RequestIDAuthority``), and only a response that answers it from the same is accepted.
/// - `POST /api/v2/{serviceProvider}/profiles/sso/{partner}`: the Token Exchange (``AppleSSO/TokenExchange``).
/// - `POST /api/v1/tokens/authn`: the legacy exchange (`204` / `400`).
/// - `GET /api/v2/{serviceProvider}/configuration`: the MVPD configuration with Apple's picker lists.
public struct TokenExchangeService: Sendable {
    public let configuration: ServiceConfiguration
    public let trust: TrustRegistry
    /// The trust file as read at start-up (``TrustMaintainer`` keeps it current).
    public let trustContents: TrustFile.Contents
    public let store: any SAMLStateStore
    /// Where profiles are kept: the store when it keeps them too (PostgreSQL), else in memory.
    public let profileStore: any ProfileStore
    /// The profile reads of `sessions/sso` and `GET .../profiles`, bounded when the store is shared.
    let profileLookups: ProfileLookups
    /// The profile store when it is this process's memory (its occupancy is a gauge).
    let memoryProfiles: InMemoryProfileStore?
    /// What the MVPD configuration file says, replaced as a whole by ``reloadMVPDConfiguration()``.
    private let current: Current
    /// The SP metadata last written, and when.
    private let spMetadataCache = SPMetadataCache()
    private final class SPMetadataCache: Sendable {
        let document = Mutex<(bytes: [UInt8], madeAt: SAMLInstant)?>(nil)
    }
    private final class Current: Sendable {
        let snapshot: Mutex<Snapshot>
        init(_ snapshot: Snapshot) { self.snapshot = Mutex(snapshot) }
    }
    private struct Snapshot {
        var mvpds: MVPDConfiguration
        var exchange: TokenExchange
        /// The values an `mvpd` metric label may take: the MVPD configuration's IDs (every MVPD an answer
        /// names is one of them).
        var metricLabels: Set<String>
    }
    public var mvpds: MVPDConfiguration { current.snapshot.withLock { $0.mvpds } }
    var exchange: TokenExchange { current.snapshot.withLock { $0.exchange } }
    let signingKey: SigningKey?
    /// MACs the IDs of the requests `sessions/sso` issues and checks those the responses answer.
    let requests: RequestIDAuthority
    /// SHA-256 of each configured bearer token (compared in constant time).
    let bearerDigests: [[UInt8]]
    let metrics: ServiceMetrics
    let logger: Logger
    let tracer: (any Tracer)?

    /// Reads the MVPD configuration, the trust file (pinned keys and metadata files; metadata URLs are
    /// ``TrustMaintainer``'s, and refused with `trust.unavailable` until it has read them) and the signing
    /// key the configuration names.
    ///
    /// With `tracer`, the verifier's phases and the issue of each SAML request are spans of it
    /// (``ServiceConfiguration/tracing``).
    public init(
        configuration: ServiceConfiguration, store: any SAMLStateStore, metrics: ServiceMetrics, logger: Logger,
        tracer: (any Tracer)? = nil
    ) throws {
        self.configuration = configuration
        self.tracer = tracer
        self.store = store
        // Reaching the store gives the request's verification slot up (AdmissionControl).
        self.metrics = metrics
        self.logger = logger
        let profiles = store as? any ProfileStore ?? InMemoryProfileStore(capacity: configuration.memoryProfileCapacity)
        let fullSince = Mutex<ContinuousClock.Instant?>(nil)
        // A shared store's reads are bounded for anonymous callers; the in-memory one needs no bound.
        let lookups = ProfileLookups(
            store: profiles,
            limits: profiles is InMemoryProfileStore
                ? nil
                : ProfileLookups.Limits(
                    perSecond: configuration.profileLookupsPerSecond, concurrency: configuration.profileLookupConcurrency),
            metrics: metrics)
        profileLookups = lookups
        let admitted = AdmittedStore(
            store: store, profiles: lookups, metrics: metrics,
            profileNotKept: { profile in
                metrics.storeError(operation: "profile")
                logger.warning("profile not kept (the exchange succeeded)", metadata: ["mvpd": "\(profile.mvpd)"])
            },
            storeFull: { kind in
                metrics.storeFull(kind: kind)
                // One line every 10 s at most: a full store refuses every login until entries expire.
                let now = ContinuousClock.now
                let due = fullSince.withLock { last in
                    guard last.map({ now - $0 >= .seconds(10) }) ?? true else { return false }
                    last = now
                    return true
                }
                if due {
                    logger.error(
                        "the in-memory store is full of live entries: logins are refused (503, replay.cache-full) until some expire; raise memoryStoreCapacity (about 100 bytes an entry) or use PostgreSQL",
                        metadata: ["kind": "\(kind)"])
                }
            })
        profileStore = profiles
        memoryProfiles = profiles as? InMemoryProfileStore
        let mvpds = try Self.readMVPDConfiguration(configuration.mvpdConfigurationPath)
        var template = SAMLResponseVerifier.Configuration.template(
            audience: .equals(configuration.spEntityID), destination: ExpectedValue(orSkip: configuration.destination),
            replay: .store(admitted, unsolicited: configuration.allowUnsolicited ? .allow : .refuse))
        template.logger = logger
        template.clock = configuration.clock
        template.maximumAge = configuration.maximumAge
        template.clockSkew = configuration.clockSkew
        template.tracer = tracer
        trustContents = try TrustFile.read(contentsOf: configuration.trustPath)
        try DevelopmentKeys.check(trustContents, allowed: configuration.allowDevelopmentKeys)
        var identityProviders = trustContents.pinned
        for (mvpd, source) in trustContents.sources {
            guard case .file = source.location else { continue }
            do {
                identityProviders[mvpd] = IdentityProvider(
                    metadata: try source.read(try source.storedDocument(), now: configuration.clock.now()))
            } catch let error as SAMLError {
                throw SAMLError(error.code, "MVPD \"\(mvpd)\" in the trust file: \(error.message)")
            }
            try DevelopmentKeys.check(
                identityProviders[mvpd]?.keys ?? [], "the metadata of the trust file's MVPD \"\(mvpd)\"",
                allowed: configuration.allowDevelopmentKeys)
        }
        trust = try TrustRegistry(identityProviders, template: template)
        if configuration.requestKeys.isEmpty {
            guard configuration.store == "memory" else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected request-ID keys (requestKeys, SAML_SERVICE_REQUEST_KEYS) shared by every instance of a shared store, found none"
                )
            }
            requests = try RequestIDAuthority(keys: [.random()])
        } else {
            requests = try RequestIDAuthority(keys: configuration.requestKeys)
        }
        bearerDigests = configuration.bearerTokens.map { BearerToken.digest(Array($0.utf8)) }
        current = Current(Self.snapshot(mvpds, configuration: configuration, trust: trust, requests: requests))
        if let keyPath = configuration.requestSigningKeyPath {
            signingKey = try SigningKey(
                privateKeyPEM: try Self.read(keyPath), certificatePEM: try configuration.requestSigningCertificatePath.map(Self.read))
        } else {
            signingKey = nil
        }
        for mvpd in mvpds.mvpds
        where mvpd.boardingStatus == .supported && trust.identityProvider(for: mvpd.id) == nil && trustContents.sources[mvpd.id] == nil {
            logger.warning(
                "MVPD has platform SSO but no identity provider in the trust file: its responses are refused",
                metadata: ["mvpd": "\(mvpd.id)"])
        }
    }

    private static func readMVPDConfiguration(_ path: String) throws -> MVPDConfiguration {
        guard let document = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable MVPD configuration at \"\(path)\"")
        }
        return try MVPDConfiguration.decode(Array(document))
    }

    private static func snapshot(
        _ mvpds: MVPDConfiguration, configuration: ServiceConfiguration, trust: TrustRegistry, requests: RequestIDAuthority
    ) -> Snapshot {
        var exchange = TokenExchange(
            configuration: mvpds, trust: trust, mapping: UserMetadataMapping(configuration.userMetadataMapping), requests: requests)
        exchange.defaultAuthenticationTTL = configuration.authenticationTTL
        exchange.authenticationTTLs = configuration.mvpdAuthenticationTTLs
        return Snapshot(mvpds: mvpds, exchange: exchange, metricLabels: Set(mvpds.mvpds.map(\.id)))
    }

    /// Reads the MVPD configuration file again and swaps it in for new requests; a file that does not read
    /// leaves the current one in place and says why in the log.
    public func reloadMVPDConfiguration() {
        do {
            let mvpds = try Self.readMVPDConfiguration(configuration.mvpdConfigurationPath)
            let snapshot = Self.snapshot(mvpds, configuration: configuration, trust: trust, requests: requests)
            current.snapshot.withLock { $0 = snapshot }
            logger.info("MVPD configuration reloaded", metadata: ["mvpds": "\(mvpds.mvpds.count)"])
        } catch {
            logger.error(
                "the MVPD configuration does not read: the previous one stays in place",
                metadata: ["path": "\(configuration.mvpdConfigurationPath)", "error": "\((error as? SAMLError)?.message ?? "\(error)")"])
        }
    }

    private static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable file at \"\(path)\", found none")
        }
        return Array(data)
    }

    // MARK: Endpoints

    /// `POST /api/v2/{serviceProvider}/sessions/sso/{partner}` ("Retrieve partner authentication request").
    ///
    /// After authorization, the path and `AP-Device-Identifier`, every answer is `200` with `actionName`,
    /// `actionType`, `reasonType`, a fresh `sessionId`, `serviceProvider` and, once known, `mvpd`, decided
    /// in this order (docs/service.md has the table):
    /// 1. the `AP-Partner-Framework-Status` header is valid and the device has a valid profile for its MVPD
    ///    → `authorize` / `direct` / `authenticatedSSO` (`url`: the MVPD's authorization decision path);
    /// 2. `domainName` or `redirectUrl` is missing or invalid → `resume` / `direct` /
    ///    `missing_parameters_fallback` with `missingParameters`, `code` and the session's `url`;
    /// 3. the header is missing, malformed, not `granted`, expired, or names an unknown provider →
    ///    `authenticate` / `interactive` / `pfs_fallback`;
    /// 4. the MVPD has no platform services, is not `SUPPORTED` for Apple SSO, or no identity provider is
    ///    trusted for it → `authenticate` / `interactive` / `configuration_fallback`;
    /// 5. otherwise `partner_profile` / `direct` / `none` with `authenticationRequest` (a new
    ///    `AttributeQuery` whose ID is MACed for this service provider, the MVPD, the device and `v2`, nothing
    ///    stored) and `url` (the profile endpoint).
    ///
    /// Fallbacks carry a `code` (7 characters, valid 30 minutes: `notBefore` / `notAfter`, strings) and the
    /// `url` of the basic authentication flow (``ServiceConfiguration/authenticationURL``, with the code,
    /// `domainName` and `redirectUrl`): a flow this service does not host itself.
    public func session(serviceProvider: String, partner: String, headers: RequestHeaders, body: [UInt8]) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkPath(serviceProvider: serviceProvider, partner: partner)
            ?? checkDevice(headers)
        {
            return refusal
        }
        let mvpds = self.mvpds
        let now = configuration.clock.now()
        let device = headers.deviceIdentifier ?? ""
        let sessionID = RandomIdentifier.uuid()
        let code = codeOf(sessionID)
        let requested: String?
        do {
            requested = try requestedMVPD(body)
        } catch {
            return error.answer
        }
        func text(_ name: String) -> String? {
            guard let value = (try? FormBody.text(named: name, in: body)) ?? nil, !value.isEmpty, value.utf8.count <= 2048 else {
                return nil
            }
            return value
        }
        // A host name, and an absolute http(s) URL with a host: what the basic flow can send a browser to.
        let domainName = text("domainName").flatMap { name in
            name.utf8.count <= 253
                && name.utf8.allSatisfy({
                    $0 == 0x2D || $0 == 0x2E || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                })
                ? name : nil
        }
        let redirectURL = text("redirectUrl").flatMap { value -> String? in
            guard !value.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }), let components = URLComponents(string: value),
                let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = components.host,
                !host.isEmpty
            else { return nil }
            return value
        }
        // The header: decoded, then validated against the configuration (permission, provider, expiry).
        var mvpd: MVPD?
        var frameworkValid = false
        if let header = headers.partnerFrameworkStatus, let status = try? PartnerFrameworkStatus(headerValue: header) {
            if let validated = try? status.validate(configuration: mvpds, requestedMVPD: requested, now: now) {
                mvpd = validated
                frameworkValid = true
            } else {
                mvpd = status.providerID.flatMap { mvpds.mvpd(platformMappingId: $0) }
            }
        }
        func answer(_ action: String, _ type: String, _ reason: String, _ extra: [String: JSONValue] = [:]) -> ServiceAnswer {
            metrics.session(action: action, reason: reason)
            var object: [String: JSONValue] = [
                "actionName": .string(action), "actionType": .string(type), "reasonType": .string(reason), "sessionId": .string(sessionID),
                "serviceProvider": .string(configuration.serviceProvider),
            ]
            if let mvpd { object["mvpd"] = .string(mvpd.id) }
            object.merge(extra) { _, new in new }
            return .json(200, .object(object), code: action == "partner_profile" ? action : reason, mvpd: mvpd?.id)
        }
        func codeFields(url: String) -> [String: JSONValue] {
            [
                "url": .string(url), "code": .string(code), "notBefore": .string(String(now.millisecondsSinceEpoch)),
                "notAfter": .string(String((now + .seconds(1800)).millisecondsSinceEpoch)),
            ]
        }
        func fallback(_ reason: String) -> ServiceAnswer {
            answer(
                "authenticate", "interactive", reason,
                codeFields(url: authenticationURL(code: code, mvpd: mvpd, domainName: domainName, redirectURL: redirectURL)))
        }
        // 1. A valid profile for this device and MVPD: proceed with decisions.
        if frameworkValid, let mvpd {
            do {
                if try await profileLookups.hasProfile(
                    serviceProvider: configuration.serviceProvider, device: device, mvpd: mvpd.id, now: now)
                {
                    return answer(
                        "authorize", "direct", "authenticatedSSO",
                        ["url": .string("/api/v2/\(configuration.serviceProvider)/decisions/authorize/\(mvpd.id)")])
                }
            } catch is ProfileLookups.Shed {
                // Beyond the profile reads' rate or concurrency (counted there): as if there were none.
            } catch {
                metrics.storeError(operation: "profiles")
                logger.warning("profiles not read: answering as if there were none", metadata: ["mvpd": "\(mvpd.id)"])
            }
        }
        // 2. Missing parameters: the app resumes the session with them.
        let missing = (domainName == nil ? ["domainName"] : []) + (redirectURL == nil ? ["redirectUrl"] : [])
        if !missing.isEmpty {
            var extra = codeFields(url: "/api/v2/\(configuration.serviceProvider)/sessions/\(code)")
            extra["missingParameters"] = .strings(missing)
            return answer("resume", "direct", "missing_parameters_fallback", extra)
        }
        // 3. The partner framework status.
        guard frameworkValid, let mvpd else { return fallback("pfs_fallback") }
        // 4. The MVPD's partner SSO configuration.
        guard mvpd.enablePlatformServices, mvpd.boardingStatus == .supported, let idp = trust.identityProvider(for: mvpd.id) else {
            return fallback("configuration_fallback")
        }
        // 5. The partner authentication request.
        let request: SAMLRequest
        do {
            request = try issueRequest(
                TokenExchange.Caller(serviceProvider: configuration.serviceProvider, device: device, api: "v2"), mvpd: mvpd,
                identityProvider: idp, now: now)
        } catch {
            logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
            return .error(EnhancedError.internalError)
        }
        return answer(
            "partner_profile", "direct", "none",
            [
                "url": .string("/api/v2/\(configuration.serviceProvider)/profiles/sso/\(partner)"),
                "authenticationRequest": [
                    "type": "saml", "request": .string(request.base64), "attributesNames": .strings(mvpd.requiredMetadataFields),
                ],
            ])
    }

    /// A SAML `AttributeQuery` for `mvpd`'s required fields, its ID MACed for `caller` (nothing stored);
    /// counted in `saml_requests_issued_total`, and a `saml.request.issue` span with tracing on.
    private func issueRequest(_ caller: TokenExchange.Caller, mvpd: MVPD, identityProvider idp: IdentityProvider, now: SAMLInstant) throws
        -> SAMLRequest
    {
        func issue() throws -> SAMLRequest {
            let issued = try requests.issue(
                for: caller.binding(mvpd: mvpd.id, identityProvider: idp.entityID), lifetime: configuration.requestLifetime, now: now)
            return try SAMLRequest(
                .attributeQuery(attributes: mvpd.requiredMetadataFields), id: issued.id, issuer: configuration.spEntityID,
                destination: Self.destination(of: idp), signingKey: signingKey)
        }
        let request = try VerificationSpans(tracer).phase("saml.request.issue", issue)
        metrics.requestIssued(mvpd: mvpd.id, api: caller.api)
        return request
    }

    /// The value of an `mvpd` metric label: a configured MVPD's id, else `none`. Never a value of the
    /// request's own: the label's values are bounded by the configuration.
    func metricLabel(mvpd: String?) -> String {
        guard let mvpd, current.snapshot.withLock({ $0.metricLabels.contains(mvpd) }) else { return "none" }
        return mvpd
    }

    /// The authentication code of a session: 7 characters of its identifier's digest, `A`-`Z` and `2`-`7`.
    private func codeOf(_ sessionID: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        return String(BearerToken.digest(Array(sessionID.utf8)).prefix(7).map { alphabet[Int($0 & 31)] })
    }

    /// The basic authentication flow's URL for a fallback: ``ServiceConfiguration/authenticationURL`` with
    /// `{serviceProvider}`, `{code}` and `{mvpd}` filled in, and `domainName` and `redirectUrl` as query
    /// parameters when the request gave them.
    private func authenticationURL(code: String, mvpd: MVPD?, domainName: String?, redirectURL: String?) -> String {
        var url = configuration.authenticationURL.replacingOccurrences(of: "{serviceProvider}", with: configuration.serviceProvider)
            .replacingOccurrences(of: "{code}", with: code).replacingOccurrences(of: "{mvpd}", with: mvpd?.id ?? "")
        var query: [String] = []
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        if let domainName { query.append("domainName=" + (domainName.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")) }
        if let redirectURL { query.append("redirectUrl=" + (redirectURL.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")) }
        if !query.isEmpty { url += (url.contains("?") ? "&" : "?") + query.joined(separator: "&") }
        return url
    }

    /// `POST /api/v2/{serviceProvider}/profiles/sso/{partner}`: `201` with the profile, or the Enhanced
    /// Error Code object with its status. An optional `mvpd` form field must name the MVPD the header's
    /// provider maps to (`invalid_header_pfs_provider_id_mismatch` otherwise). `AP-Device-Identifier` is required (`fingerprint <value>`),
    /// `X-Device-Info`, when present, must be Base64 of a JSON object. The response must answer a request
    /// `sessions/sso` issued to this service provider and device for the MVPD it is posted as.
    public func profile(serviceProvider: String, partner: String, headers: RequestHeaders, body: [UInt8]) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkPath(serviceProvider: serviceProvider, partner: partner)
            ?? checkDevice(headers)
        {
            return refusal
        }
        let requested: String?
        do {
            requested = try requestedMVPD(body)
        } catch {
            return error.answer
        }
        let caller = TokenExchange.Caller(serviceProvider: configuration.serviceProvider, device: headers.deviceIdentifier ?? "", api: "v2")
        do {
            let profile = try await exchange.exchange(
                body: body, partnerFrameworkStatus: headers.partnerFrameworkStatus, mvpd: requested, caller: caller)
            if profile.response.inResponseTo != nil { metrics.requestAnswered(mvpd: profile.mvpd, api: "v2") }
            // Kept with the login by the store the verifier consumed through (AdmittedStore): in the same
            // transaction (PostgreSQL), or right after it, a failure then logged and counted.
            return ServiceAnswer(status: 201, body: profile.json, code: "ok", mvpd: profile.mvpd)
        } catch {
            return refusal(error)
        }
    }

    /// `GET /api/v2/{serviceProvider}/profiles` and `.../profiles/{mvpd}`: `200` with `{"profiles": {...}}`,
    /// the device's profiles still valid (an empty map when there is none), after authorization, the path,
    /// `AP-Device-Identifier` and, for one MVPD, a known MVPD (`400 invalid_parameter_mvpd`).
    public func profiles(serviceProvider: String, mvpd: String?, headers: RequestHeaders) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkPath(serviceProvider: serviceProvider, partner: nil) ?? checkDevice(headers) {
            return refusal
        }
        if let mvpd, mvpds.mvpd(id: mvpd) == nil {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_mvpd", message: "The MVPD parameter value is missing or invalid.", details: nil))
        }
        let stored: [StoredProfile]
        do {
            stored = try await profileLookups.profiles(
                serviceProvider: configuration.serviceProvider, device: headers.deviceIdentifier ?? "", now: configuration.clock.now())
        } catch {
            if !(error is ProfileLookups.Shed) { metrics.storeError(operation: "profiles") }
            return .error(
                EnhancedError(
                    status: 503, code: "service_unavailable", message: "The profiles cannot be read now; retry later.", details: nil,
                    action: "retry"))
        }
        // Every kept profile is an appleSSO one. With an AP-Partner-Framework-Status header (the cookbook:
        // the app sends it "such that the retrieved response may include an 'appleSSO' type profile"), only
        // the profile of the MVPD a valid header names: the user may have signed out of the provider on the
        // device since. Without the header, the device's profiles as kept.
        let header = headers.partnerFrameworkStatus
        let signedIn: String? = header.flatMap { try? PartnerFrameworkStatus(headerValue: $0) }
            .flatMap { try? $0.validate(configuration: mvpds, requestedMVPD: nil, now: configuration.clock.now()) }?.id
        var map: [String: JSONValue] = [:]
        for profile in stored where (mvpd == nil || profile.mvpd == mvpd) && (header == nil || profile.mvpd == signedIn) {
            map[profile.mvpd] = .raw(profile.json)
        }
        return .json(200, ["profiles": .object(map)], code: "ok", mvpd: mvpd)
    }

    /// An exchange's refusal; a store failure is counted (the exchange failed closed).
    private func refusal(_ error: EnhancedError) -> ServiceAnswer {
        if error.cause?.code == .storeUnavailable || error.cause?.code == .replayCacheFull { metrics.storeError(operation: "consume") }
        return .error(error)
    }

    /// `POST /api/v1/tokens/authn`: `204`, or `400` with the error object (`503`/`500` when the service
    /// cannot decide: a failing store, its own configuration).
    public func legacyAuthentication(headers: RequestHeaders, body: [UInt8], format: V1Format = .json) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) { return Self.v1(refusal, format) }
        do {
            let profile = try await exchange.exchangeV1(body: body, requestor: configuration.serviceProvider)
            if profile.response.inResponseTo != nil { metrics.requestAnswered(mvpd: profile.mvpd, api: "v1") }
            return ServiceAnswer(status: 204, body: [], code: "ok", mvpd: profile.mvpd)
        } catch {
            return Self.v1(refusal(error), format)
        }
    }

    /// REST API v1's representations: JSON, or XML when the client asks (`Accept: application/xml`, a
    /// `format=xml` parameter or a `.xml` extension).
    public enum V1Format: Sendable {
        case json, xml

        public init(accept: String?, format: String?, path: String) {
            if format?.lowercased() == "xml" || path.lowercased().hasSuffix(".xml") {
                self = .xml
            } else if format?.lowercased() == "json" || path.lowercased().hasSuffix(".json") {
                self = .json
            } else {
                self = accept?.lowercased().contains("application/xml") == true ? .xml : .json
            }
        }
    }

    /// `GET /api/v1/config/{requestorId}` ("Provide MVPD List"): the MVPDs with their platform SSO fields,
    /// JSON or XML.
    public func v1Configuration(requestor: String, headers: RequestHeaders, format: V1Format) -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkRequestor(requestor) { return Self.v1(refusal, format) }
        let mvpds = self.mvpds
        return format == .xml
            ? ServiceAnswer(
                status: 200, body: mvpds.xmlV1(requestor: configuration.serviceProvider), code: "ok", mvpd: nil,
                contentType: "application/xml;charset=utf-8")
            : ServiceAnswer(status: 200, body: mvpds.jsonV1(requestor: configuration.serviceProvider), code: "ok", mvpd: nil)
    }

    /// `GET /api/v1/{requestor}/profile-requests/{mvpd}?deviceType=iOS|tvOS` ("Retrieve Platform SSO
    /// profile request"): the SAML request (Base64, `application/octet-stream`, opaque to the app, which
    /// hands it to Apple's framework as the `verificationToken`), MACed for the requestor, the MVPD and `v1`.
    public func v1ProfileRequest(requestor: String, mvpd id: String, deviceType: String?, headers: RequestHeaders, format: V1Format)
        -> ServiceAnswer
    {
        if let refusal = checkAuthorization(headers) ?? checkRequestor(requestor) { return Self.v1(refusal, format) }
        guard deviceType == "iOS" || deviceType == "tvOS" else {
            return Self.v1(
                .error(
                    EnhancedError(
                        status: 400, code: "invalid_device_info", message: "The device type is missing or invalid (iOS or tvOS).",
                        details: nil)),
                format)
        }
        guard let mvpd = mvpds.mvpd(id: id), mvpd.enablePlatformServices, mvpd.boardingStatus == .supported,
            let idp = trust.identityProvider(for: mvpd.id)
        else {
            return Self.v1(
                .error(
                    EnhancedError(
                        status: 400, code: "unknown_integration",
                        message: "The integration between the requestor and the mvpd does not exist or is disabled.", details: nil,
                        action: "configuration")),
                format)
        }
        do {
            let request = try issueRequest(
                TokenExchange.Caller(serviceProvider: configuration.serviceProvider, device: "", api: "v1"), mvpd: mvpd,
                identityProvider: idp, now: configuration.clock.now())
            return ServiceAnswer(
                status: 200, body: Array(request.base64.utf8), code: "ok", mvpd: mvpd.id, contentType: "application/octet-stream")
        } catch {
            logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
            return Self.v1(.error(EnhancedError(status: 500, code: "internal_error", message: "The request failed.", details: nil)), format)
        }
    }

    private func checkRequestor(_ requestor: String) -> ServiceAnswer? {
        guard requestor == configuration.serviceProvider else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_requestor", message: "The requestor parameter is missing or invalid.", details: nil))
        }
        return nil
    }

    /// A refusal in REST API v1's terms (``AppleSSO/EnhancedError/v1``), in JSON or XML.
    static func v1(_ answer: ServiceAnswer, _ format: V1Format) -> ServiceAnswer {
        guard let error = answer.error?.v1 else { return answer }
        var result = answer
        switch format {
        case .xml:
            result.body = error.xml
            result.contentType = "application/xml;charset=utf-8"
        case .json:
            result.body = error.json
        }
        return result
    }

    /// `GET /api/v2/{serviceProvider}/saml/metadata`: the SP's own SAML 2.0 metadata (entity ID, assertion
    /// consumer services, the request-signing certificate, the encryption certificate, NameID formats,
    /// `validUntil` 7 days ahead, `cacheDuration` 6 hours), signed with the request-signing key when there
    /// is one. Public, as SP metadata is (no bearer token); made at most once an hour whatever the traffic,
    /// so that a caller cannot make the service sign on demand. 404 without an assertion consumer service.
    public func spMetadata(serviceProvider: String) -> ServiceAnswer {
        if let refusal = checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        let now = configuration.clock.now()
        let cached = spMetadataCache.document.withLock { cached -> [UInt8]? in
            guard let cached, now < cached.madeAt + .seconds(3600), cached.madeAt <= now else { return nil }
            return cached.bytes
        }
        if let cached {
            return ServiceAnswer(status: 200, body: cached, code: "ok", mvpd: nil, contentType: "application/samlmetadata+xml")
        }
        let urls =
            configuration.assertionConsumerServiceURLs.isEmpty
            ? configuration.destination.map { [$0] } ?? [] : configuration.assertionConsumerServiceURLs
        guard !urls.isEmpty else {
            return .error(EnhancedError(status: 404, code: "not_found", message: "No SP metadata is configured.", details: nil))
        }
        do {
            let encryption = try configuration.encryptionCertificatePath.map { try TrustedKey.all(pem: try Self.read($0)) } ?? []
            let metadata = try ServiceProviderMetadata(
                entityID: configuration.spEntityID, assertionConsumerServiceURLs: urls, signingKey: signingKey, encryptionKeys: encryption)
            let bytes = try metadata.xml(signedWith: signingKey, now: now)
            spMetadataCache.document.withLock { $0 = (bytes, now) }
            return ServiceAnswer(status: 200, body: bytes, code: "ok", mvpd: nil, contentType: "application/samlmetadata+xml")
        } catch {
            logger.error("SP metadata not written", metadata: ["error": "\((error as? SAMLError)?.message ?? "\(error)")"])
            return .error(
                EnhancedError(
                    status: 500, code: "internal_error", message: "The SP metadata cannot be written.", details: error as? SAMLError))
        }
    }

    /// `GET /api/v2/{serviceProvider}/configuration`.
    public func mvpdConfiguration(serviceProvider: String, headers: RequestHeaders) -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        let requestor = MVPDConfiguration.Requestor(
            id: configuration.serviceProvider, name: configuration.requestorName, domains: configuration.domains)
        let body = mvpds.json(
            requestor: requestor, featured: configuration.featuredMVPDs, device: Self.deviceType(headers.deviceInfo),
            time: configuration.clock.now(), completesSSO: { trust.identityProvider(for: $0) != nil })
        return ServiceAnswer(status: 200, body: body, code: "ok", mvpd: nil)
    }

    /// `device` of the configuration: the `X-Device-Info` header's `osName` (or `model`), else `unknown`.
    static func deviceType(_ header: String?) -> String {
        guard let header, let data = Data(base64Encoded: header),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return "unknown" }
        let value = (object["osName"] as? String) ?? (object["model"] as? String) ?? "unknown"
        return String(value.prefix(64))
    }

    /// Where the request is addressed: the IdP's single sign-on endpoint from its metadata (HTTP-POST,
    /// then HTTP-Redirect, then the first), or none (Destination is optional; the entity ID is not an
    /// endpoint, and an IdP refuses a request destined for an address it does not answer on).
    static func destination(of idp: IdentityProvider) -> String? {
        let endpoints = idp.singleSignOnServices.filter { !$0.location.isEmpty }
        let preferred = ["urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"]
        return preferred.lazy.compactMap { binding in endpoints.first { $0.binding == binding } }.first?.location
            ?? endpoints.first?.location
    }

    // MARK: Checks shared by the endpoints

    /// An answer that ends a request early.
    struct Refusal: Error {
        let answer: ServiceAnswer
    }

    /// The optional `mvpd` form field.
    private func requestedMVPD(_ body: [UInt8]) throws(Refusal) -> String? {
        do {
            return try FormBody.text(named: "mvpd", in: body)
        } catch {
            throw Refusal(answer: .error(.malformedParameter("mvpd", error)))
        }
    }

    private func checkPath(serviceProvider: String, partner: String?) -> ServiceAnswer? {
        guard serviceProvider == configuration.serviceProvider else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_service_provider",
                    message: "The service provider parameter value is missing or invalid.",
                    details: nil))
        }
        if let partner, partner.lowercased() != "apple" {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_partner", message: "The partner parameter value is missing or invalid.",
                    details: nil))
        }
        return nil
    }

    /// `Authorization: Bearer <token>` (scheme in any case, RFC 9110 11.1), compared with every configured
    /// token over their SHA-256 digests in constant time.
    func checkAuthorization(_ headers: RequestHeaders) -> ServiceAnswer? {
        guard !bearerDigests.isEmpty else { return nil }
        if let value = headers.authorization, let token = BearerToken.credentials(in: value), BearerToken.matches(token, bearerDigests) {
            return nil
        }
        return .error(
            EnhancedError(
                status: 401, code: "invalid_access_token_service_provider",
                message: "The access token is invalid due to invalid service provider.", details: nil, action: "application-registration"))
    }

    private func checkDevice(_ headers: RequestHeaders) -> ServiceAnswer? {
        guard let identifier = headers.deviceIdentifier, identifier.utf8.starts(with: "fingerprint ".utf8), identifier.utf8.count > 12,
            identifier.utf8.count <= 512
        else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_header_device_identifier",
                    message: "The AP-Device-Identifier header must be \"fingerprint <value>\".", details: nil))
        }
        if let info = headers.deviceInfo {
            let decoded = Data(base64Encoded: info)
            guard let decoded, case .object? = try? JSONValue(parsing: decoded, maxDepth: 16) else {
                return .error(
                    EnhancedError(
                        status: 400, code: "invalid_header_device_info",
                        message: "The X-Device-Info header must be Base64 of a JSON object.",
                        details: nil))
            }
        }
        return nil
    }
}

/// The request headers the endpoints read.
public struct RequestHeaders: Sendable {
    public var authorization: String?
    public var deviceIdentifier: String?
    public var deviceInfo: String?
    public var partnerFrameworkStatus: String?
    /// `Accept` (REST API v1 answers XML when it asks for `application/xml`).
    public var accept: String?

    public init(
        authorization: String? = nil, deviceIdentifier: String? = nil, deviceInfo: String? = nil, partnerFrameworkStatus: String? = nil,
        accept: String? = nil
    ) {
        self.accept = accept
        self.authorization = authorization
        self.deviceIdentifier = deviceIdentifier
        self.deviceInfo = deviceInfo
        self.partnerFrameworkStatus = partnerFrameworkStatus
    }
}

/// An endpoint's answer: status, JSON body, and what the access log and the verdict metric record.
public struct ServiceAnswer: Sendable {
    public var status: Int
    public var body: [UInt8]
    /// `ok`, the library's error code, or the Enhanced Error Code / session answer.
    public var code: String
    public var mvpd: String?
    /// The library's message, logged at `debug` only (it may quote bytes of the request).
    public var detail: String?
    /// The body's media type; nil: JSON.
    public var contentType: String?
    /// An error's `trace`.
    public var trace: String?
    /// The error this answer carries, if it is one.
    public var error: EnhancedError?

    init(
        status: Int, body: [UInt8], trace: String? = nil, code: String, mvpd: String?, detail: String? = nil, contentType: String? = nil
    ) {
        self.status = status
        self.body = body
        self.trace = trace
        self.code = code
        self.mvpd = mvpd
        self.detail = detail
        self.contentType = contentType
    }

    static func json(_ status: Int, _ object: JSONValue, code: String, mvpd: String?) -> ServiceAnswer {
        ServiceAnswer(status: status, body: object.bytes, code: code, mvpd: mvpd)
    }

    /// An error answer, with a fresh `trace` (also the access log's) for support to find the request by.
    static func error(_ error: EnhancedError, mvpd: String? = nil) -> ServiceAnswer {
        var error = error
        error.trace = error.trace ?? RandomIdentifier.uuid()
        var answer = ServiceAnswer(
            status: error.status, body: error.json, trace: error.trace, code: error.cause?.code.identifier ?? error.code,
            mvpd: mvpd ?? error.mvpd,
            detail: error.cause?.message)
        answer.error = error
        return answer
    }
}
