import AppleSSO
import Foundation
import Logging
import SAML
import Synchronization

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
        /// The configuration endpoint's answer.
        var configurationJSON: [UInt8]
    }
    public var mvpds: MVPDConfiguration { current.snapshot.withLock { $0.mvpds } }
    var exchange: TokenExchange { current.snapshot.withLock { $0.exchange } }
    var configurationJSON: [UInt8] { current.snapshot.withLock { $0.configurationJSON } }
    let signingKey: SigningKey?
    /// MACs the IDs of the requests `sessions/sso` issues and checks those the responses answer.
    let requests: RequestIDAuthority
    /// SHA-256 of each configured bearer token (compared in constant time).
    let bearerDigests: [[UInt8]]
    let metrics: ServiceMetrics
    let logger: Logger

    /// Reads the MVPD configuration, the trust file (pinned keys and metadata files; metadata URLs are
    /// ``TrustMaintainer``'s, and refused with `trust.unavailable` until it has read them) and the signing
    /// key the configuration names.
    public init(configuration: ServiceConfiguration, store: any SAMLStateStore, metrics: ServiceMetrics, logger: Logger) throws {
        self.configuration = configuration
        self.store = store
        self.metrics = metrics
        self.logger = logger
        let mvpds = try Self.readMVPDConfiguration(configuration.mvpdConfigurationPath)
        var template = SAMLResponseVerifier.Configuration.template(
            audience: .equals(configuration.spEntityID), destination: ExpectedValue(orSkip: configuration.destination),
            replay: .store(store, unsolicited: configuration.allowUnsolicited ? .allow : .refuse))
        template.logger = logger
        template.clock = configuration.clock
        trustContents = try TrustFile.read(contentsOf: configuration.trustPath)
        var identityProviders = trustContents.pinned
        for (mvpd, source) in trustContents.sources {
            guard case .file = source.location else { continue }
            do {
                identityProviders[mvpd] = IdentityProvider(
                    metadata: try source.read(try source.storedDocument(), now: configuration.clock.now()))
            } catch let error as SAMLError {
                throw SAMLError(error.code, "MVPD \"\(mvpd)\" in the trust file: \(error.message)")
            }
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
        Snapshot(
            mvpds: mvpds,
            exchange: TokenExchange(
                configuration: mvpds, trust: trust, mapping: UserMetadataMapping(configuration.userMetadataMapping), requests: requests),
            configurationJSON: mvpds.json(serviceProvider: configuration.serviceProvider, featured: configuration.featuredMVPDs))
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

    /// `POST /api/v2/{serviceProvider}/sessions/sso/{partner}`.
    ///
    /// Order: authorization, path (service provider, partner), `AP-Device-Identifier`; then the
    /// `AP-Partner-Framework-Status` header: absent → `missing_parameters_fallback`; not decodable →
    /// `400 invalid_header_pfs_malformed`; permission not granted or undetermined, provider unknown,
    /// mismatching the `mvpd` form field, or expired → `pfs_fallback`; the MVPD is not boarded for Apple
    /// SSO (`boardingStatus` not `SUPPORTED`, or platform services off) or no identity provider is
    /// trusted for it → `configuration_fallback`. Otherwise a new `AttributeQuery` (Issuer
    /// ``ServiceConfiguration/spEntityID``, signed when a key is configured) whose ID is MACed for this
    /// service provider, the MVPD, the device and `v2`, answerable for ``ServiceConfiguration/requestLifetime``,
    /// answered as `partner_profile`. Nothing is written anywhere.
    public func session(serviceProvider: String, partner: String, headers: RequestHeaders, body: [UInt8]) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkPath(serviceProvider: serviceProvider, partner: partner)
            ?? checkDevice(headers)
        {
            return refusal
        }
        func fallback(_ reason: String, mvpd: MVPD? = nil) -> ServiceAnswer {
            metrics.session(action: "authenticate", reason: reason)
            var object: [String: JSONValue] = ["actionName": "authenticate", "actionType": "interactive", "reasonType": .string(reason)]
            if let mvpd { object["mvpd"] = .string(mvpd.id) }
            return .json(200, .object(object), code: reason, mvpd: mvpd?.id)
        }
        let requested: String?
        do {
            requested = try requestedMVPD(body)
        } catch {
            return error.answer
        }
        guard let header = headers.partnerFrameworkStatus else { return fallback("missing_parameters_fallback") }
        let status: PartnerFrameworkStatus
        do {
            status = try PartnerFrameworkStatus(headerValue: header)
        } catch {
            return .error(.partnerFrameworkStatusMalformed(error))
        }
        let mvpd: MVPD
        do {
            mvpd = try status.validate(configuration: mvpds, requestedMVPD: requested, now: configuration.clock.now())
        } catch {
            return fallback("pfs_fallback", mvpd: status.providerID.flatMap { mvpds.mvpd(platformMappingId: $0) })
        }
        guard mvpd.enablePlatformServices, mvpd.boardingStatus == .supported, let idp = trust.identityProvider(for: mvpd.id) else {
            return fallback("configuration_fallback", mvpd: mvpd)
        }
        let request: SAMLRequest
        do {
            let caller = TokenExchange.Caller(
                serviceProvider: configuration.serviceProvider, device: headers.deviceIdentifier ?? "", api: "v2")
            let issued = try requests.issue(
                for: caller.binding(mvpd: mvpd.id, identityProvider: idp.entityID), lifetime: configuration.requestLifetime,
                now: configuration.clock.now())
            request = try SAMLRequest(
                .attributeQuery(attributes: mvpd.requiredMetadataFields), id: issued.id, issuer: configuration.spEntityID,
                destination: Self.destination(of: idp), signingKey: signingKey)
        } catch {
            logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
            return .error(EnhancedError.internalError)
        }
        metrics.session(action: "partner_profile", reason: "none")
        let object: JSONValue = [
            "actionName": "partner_profile", "actionType": "direct", "reasonType": "none", "mvpd": .string(mvpd.id),
            "authenticationRequest": [
                "type": "saml", "request": .string(request.base64), "attributesNames": .strings(mvpd.requiredMetadataFields),
            ],
        ]
        return .json(200, object, code: "partner_profile", mvpd: mvpd.id)
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
        switch await exchange.exchange(body: body, partnerFrameworkStatus: headers.partnerFrameworkStatus, mvpd: requested, caller: caller)
        {
        case .success(let profile):
            return ServiceAnswer(status: 201, body: profile.json, code: "ok", mvpd: profile.mvpd)
        case .failure(let error):
            return refusal(error)
        }
    }

    /// An exchange's refusal; a store failure is counted (the exchange failed closed).
    private func refusal(_ error: EnhancedError) -> ServiceAnswer {
        if error.cause?.code == .storeUnavailable || error.cause?.code == .replayCacheFull { metrics.storeError(operation: "consume") }
        return .error(error)
    }

    /// `POST /api/v1/tokens/authn`: `204`, or `400` with the error object (`503`/`500` when the service
    /// cannot decide: a failing store, its own configuration).
    public func legacyAuthentication(headers: RequestHeaders, body: [UInt8]) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) { return refusal }
        switch await exchange.exchangeV1(body: body, requestor: configuration.serviceProvider) {
        case .success(let profile):
            return ServiceAnswer(status: 204, body: [], code: "ok", mvpd: profile.mvpd)
        case .failure(let error):
            return refusal(error)
        }
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
        return ServiceAnswer(status: 200, body: configurationJSON, code: "ok", mvpd: nil)
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
                EnhancedError(status: 400, code: "invalid_requestor", message: "The service provider is not served here.", details: nil))
        }
        if let partner, partner != "Apple" {
            return .error(
                EnhancedError(status: 400, code: "invalid_parameter_partner", message: "The partner must be Apple.", details: nil))
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
                status: 401, code: "invalid_access_token", message: "The Authorization header must carry a valid bearer token.",
                details: nil, action: "authentication"))
    }

    private func checkDevice(_ headers: RequestHeaders) -> ServiceAnswer? {
        guard let identifier = headers.deviceIdentifier, identifier.hasPrefix("fingerprint "), identifier.count > 12,
            identifier.count <= 512
        else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_header_device_identifier",
                    message: "The AP-Device-Identifier header must be \"fingerprint <value>\".", details: nil))
        }
        if let info = headers.deviceInfo {
            let decoded = Data(base64Encoded: info)
            guard let decoded, (try? JSONDecoder().decode(AnyJSONObject.self, from: decoded)) != nil else {
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

    public init(
        authorization: String? = nil, deviceIdentifier: String? = nil, deviceInfo: String? = nil, partnerFrameworkStatus: String? = nil
    ) {
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

    init(status: Int, body: [UInt8], code: String, mvpd: String?, detail: String? = nil, contentType: String? = nil) {
        self.status = status
        self.body = body
        self.code = code
        self.mvpd = mvpd
        self.detail = detail
        self.contentType = contentType
    }

    static func json(_ status: Int, _ object: JSONValue, code: String, mvpd: String?) -> ServiceAnswer {
        ServiceAnswer(status: status, body: object.bytes, code: code, mvpd: mvpd)
    }

    static func error(_ error: EnhancedError, mvpd: String? = nil) -> ServiceAnswer {
        ServiceAnswer(
            status: error.status, body: error.json, code: error.cause?.code.identifier ?? error.code, mvpd: mvpd ?? error.mvpd,
            detail: error.cause?.message)
    }
}

/// Decodes when the JSON is an object, whatever its members.
private struct AnyJSONObject: Decodable {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: Key.self)
    }
}
