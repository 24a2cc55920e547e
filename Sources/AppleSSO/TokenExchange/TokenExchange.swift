import Foundation
@_spi(Spans) import SAML

/// The server side of the Apple SSO Token Exchange: one call from the incoming form body and headers to
/// either the v2-shaped `appleSSO` profile or an Enhanced Error Code object.
///
/// Order: the `AP-Partner-Framework-Status` header is decoded and checked (permission, provider, expiry);
/// the MVPD is the one the header's provider id maps to through `platformMappingId`, unless given (then
/// the two must agree); that MVPD's identity provider is taken from the `TrustRegistry` (an MVPD without
/// one is refused: no other tenant's trust is ever used); the `SAMLResponse` form field is decoded and
/// verified with that IdP's verifier, which requires its entity ID as issuer and accepts only its keys;
/// the MVPD's `requiredMetadataFields` are extracted (every one must be present) and mapped to
/// user-metadata keys. An MVPD without `requiredMetadataFields` gets its NameID and every attribute.
///
/// Failures answer with the HTTP status of the library's code (`SAMLError.Code.httpStatus`): 400 for
/// what the client sent, 413 too large, 503 when a store failed (fail closed), 500 for the server's own
/// configuration; an error that is not a `SAMLError` is a 500.
public struct TokenExchange: Sendable {
    public var configuration: MVPDConfiguration
    /// The identity provider of each MVPD, with its verifier.
    public var trust: TrustRegistry
    public var mapping: UserMetadataMapping
    public var decoder: SAMLResponseDecoder
    /// When set, a response must answer a request these keys issued for the caller's service provider,
    /// device and API and for the MVPD it is posted as (`RequestIDAuthority`); the verifiers'
    /// state store then records the request answered, once.
    public var requests: RequestIDAuthority?
    /// How long a profile is valid from its exchange (`notAfter`), per MVPD: the authentication TTL an
    /// Adobe Pass integration sets per MVPD, not the assertion's `NotOnOrAfter` (minutes, meant for the
    /// assertion's delivery). MVPDs not listed get ``defaultAuthenticationTTL``.
    public var authenticationTTLs: [String: Duration] = [:]
    /// Default 30 days.
    public var defaultAuthenticationTTL: Duration = .seconds(30 * 86_400)

    public init(
        configuration: MVPDConfiguration, trust: TrustRegistry, mapping: UserMetadataMapping = UserMetadataMapping(),
        decoder: SAMLResponseDecoder = SAMLResponseDecoder(), requests: RequestIDAuthority? = nil
    ) {
        self.configuration = configuration
        self.trust = trust
        self.mapping = mapping
        self.decoder = decoder
        self.requests = requests
    }

    /// Who posts a response: what a request issued by ``requests`` is bound to besides its MVPD.
    public struct Caller: Sendable, Hashable {
        /// The service provider (requestor) the response is posted to.
        public var serviceProvider: String
        /// The device (REST API v2: the `AP-Device-Identifier` header's value; v1: `deviceId`).
        public var device: String
        /// `v2` or `v1`.
        public var api: String

        public init(serviceProvider: String, device: String, api: String) {
            self.serviceProvider = serviceProvider
            self.device = device
            self.api = api
        }

        /// The binding of a request issued to this caller for `mvpd`, whose identity provider is `identityProvider`.
        public func binding(mvpd: String, identityProvider: String) -> RequestBinding {
            RequestBinding(serviceProvider: serviceProvider, mvpd: mvpd, identityProvider: identityProvider, device: device, api: api)
        }
    }

    /// Runs the exchange for one request.
    ///
    /// - Parameters:
    ///   - body: the `application/x-www-form-urlencoded` request body (or just the SAMLResponse value).
    ///   - partnerFrameworkStatus: the `AP-Partner-Framework-Status` header value.
    ///   - mvpd: the MVPD id, when the request names one.
    ///   - caller: who posts it (with ``requests``: the response must answer a request issued to it).
    ///   - expectations: what this request's response must answer (the request's ID, the endpoint it was
    ///     posted to).
    /// - Returns: the profile of the verified response.
    /// - Throws: the ``EnhancedError`` to answer with (its ``EnhancedError/status`` and
    ///   ``EnhancedError/json``), the library's reason in ``EnhancedError/cause``.
    public func exchange(
        body: [UInt8], partnerFrameworkStatus: String?, mvpd: String? = nil, caller: Caller? = nil,
        expecting expectations: SAMLResponseVerifier.RequestExpectations = SAMLResponseVerifier.RequestExpectations()
    ) async throws(EnhancedError) -> AppleSSOProfile {
        try await outcome(body: body, partnerFrameworkStatus: partnerFrameworkStatus, mvpd: mvpd, caller: caller, expecting: expectations)
            .get()
    }

    /// ``exchange(body:partnerFrameworkStatus:mvpd:caller:expecting:)`` with a `String` body (a form body or
    /// the SAMLResponse value as text).
    public func exchange(
        body: String, partnerFrameworkStatus: String?, mvpd: String? = nil, caller: Caller? = nil,
        expecting expectations: SAMLResponseVerifier.RequestExpectations = SAMLResponseVerifier.RequestExpectations()
    ) async throws(EnhancedError) -> AppleSSOProfile {
        try await exchange(
            body: Array(body.utf8), partnerFrameworkStatus: partnerFrameworkStatus, mvpd: mvpd, caller: caller, expecting: expectations)
    }

    private func outcome(
        body: [UInt8], partnerFrameworkStatus: String?, mvpd: String?, caller: Caller?,
        expecting expectations: SAMLResponseVerifier.RequestExpectations
    ) async -> Result<AppleSSOProfile, EnhancedError> {
        let now = trust.template.clock.now()
        guard let header = partnerFrameworkStatus else {
            return .failure(EnhancedError(pfs: .accessNotPresent))
        }
        let status: PartnerFrameworkStatus
        do {
            status = try PartnerFrameworkStatus(headerValue: header)
        } catch {
            return .failure(.partnerFrameworkStatusMalformed(error))
        }
        let provider: MVPD
        do {
            provider = try status.validate(configuration: configuration, requestedMVPD: mvpd, now: now)
        } catch {
            return .failure(EnhancedError(pfs: error))
        }
        return await verify(body: body, for: provider, caller: caller, expecting: expectations)
    }

    /// The legacy REST API v1 exchange, `POST /api/v1/tokens/authn`: the form fields `requestor`,
    /// `deviceId`, `mvpd`, `deviceType` (`iOS` or `tvOS`) and `SAMLResponse` are all required; there is no
    /// `AP-Partner-Framework-Status` header, so the MVPD is the `mvpd` field. v1 answers `204` or `400`;
    /// this answers the same, except that a failing store is a `503` and the server's own configuration
    /// a `500` (fail closed, never the client's fault).
    ///
    /// - Parameters:
    ///   - body: the request body (`application/x-www-form-urlencoded`).
    ///   - requestor: the service provider this endpoint serves; a different `requestor` is refused.
    ///     With ``requests``, the response must answer a request issued to this requestor, the `deviceId`
    ///     and the `v1` API (a request issued on v2 is refused with `in-response-to.wrong-api`).
    ///   - expectations: what the response must answer beyond the configuration (an outstanding request).
    public func exchangeV1(
        body: [UInt8], requestor: String,
        expecting expectations: SAMLResponseVerifier.RequestExpectations = SAMLResponseVerifier.RequestExpectations()
    ) async throws(EnhancedError) -> AppleSSOProfile {
        try await outcomeV1(body: body, requestor: requestor, expecting: expectations).get()
    }

    private func outcomeV1(
        body: [UInt8], requestor: String, expecting expectations: SAMLResponseVerifier.RequestExpectations
    ) async -> Result<AppleSSOProfile, EnhancedError> {
        var fields: [String: String] = [:]
        for name in ["requestor", "deviceId", "mvpd", "deviceType"] {
            let value: String?
            do {
                value = try FormBody.text(named: name, in: body)
            } catch let error as SAMLError {
                return .failure(.malformedParameter(name, error))
            } catch {
                return .failure(EnhancedError.internalError)
            }
            fields[name] = value ?? ""
        }
        // REST API v1's codes (Enhanced Error Codes, "REST API v1").
        guard fields["requestor"] == requestor else {
            return .failure(
                EnhancedError(
                    status: 400, code: "invalid_requestor", message: "The requestor parameter is missing or invalid.", details: nil))
        }
        guard fields["deviceId"]?.isEmpty == false else {
            return .failure(
                EnhancedError(status: 400, code: "invalid_device_id", message: "The device identifier is missing or invalid.", details: nil)
            )
        }
        guard fields["deviceType"] == "iOS" || fields["deviceType"] == "tvOS" else {
            return .failure(
                EnhancedError(
                    status: 400, code: "invalid_device_info", message: "The device type is missing or invalid (iOS or tvOS).", details: nil)
            )
        }
        guard let mvpd = fields["mvpd"], let provider = configuration.mvpd(id: mvpd) else {
            return .failure(
                EnhancedError(
                    status: 400, code: "unknown_integration",
                    message: "The integration between the requestor and the mvpd does not exist or is disabled.", details: nil,
                    action: "configuration"))
        }
        // v1's profile request (`GET /api/v1/{requestor}/profile-requests/{mvpd}`) names no device, so a v1
        // request is bound to the requestor, the MVPD and the API only.
        let caller = Caller(serviceProvider: requestor, device: "", api: "v1")
        return await verify(body: body, for: provider, caller: caller, expecting: expectations)
    }

    /// Verifies the SAMLResponse of `body` with the MVPD's identity provider and builds the profile.
    private func verify(
        body: [UInt8], for provider: MVPD, caller: Caller?, expecting expectations: SAMLResponseVerifier.RequestExpectations
    ) async -> Result<AppleSSOProfile, EnhancedError> {
        var expectations = expectations
        if let requests, let caller, let identityProvider = trust.identityProvider(for: provider.id) {
            expectations.issuedRequest = .init(
                authority: requests, binding: caller.binding(mvpd: provider.id, identityProvider: identityProvider.entityID))
        }
        return await verifyAndExtract(body: body, for: provider, caller: caller, expecting: expectations).mapError { error in
            var error = error
            error.mvpd = provider.id
            return error
        }
    }

    /// Verifies, and with a caller builds the profile from the verified response before its replay
    /// record: a response missing a required field is refused without consuming its request, and the
    /// profile goes to the state store with the assertion (a `SAMLAttachingStateStore` keeps it
    /// exactly when the login is accepted: ``AppleSSOProfile/isStored``).
    private func verifyAndExtract(
        body: [UInt8], for provider: MVPD, caller: Caller?, expecting expectations: SAMLResponseVerifier.RequestExpectations
    ) async -> Result<AppleSSOProfile, EnhancedError> {
        let verifier: SAMLResponseVerifier
        do {
            verifier = try trust.verifier(for: provider.id)
        } catch let error as SAMLError {
            return .failure(EnhancedError(saml: error))
        } catch {
            return .failure(EnhancedError.internalError)
        }
        let built = ProfileSlot()
        var expectations = expectations
        if let caller {
            expectations.attachment = { [self] response in
                let profile = try makeProfile(response, for: provider)
                built.set(profile)
                return StoredProfile(
                    serviceProvider: caller.serviceProvider, device: caller.device, mvpd: profile.mvpd, json: profile.objectJSON,
                    notAfter: SAMLInstant(millisecondsSinceEpoch: profile.notAfter))
            }
        }
        do {
            let decoded = try VerificationSpans(trust.template.tracer).phase("saml.decode") { try decoder.decode(body) }
            let response = try await verifier.verify(decoded, expecting: expectations)
            var profile = try built.get() ?? makeProfile(response, for: provider)
            profile.isStored = response.attachmentRecorded
            return .success(profile)
        } catch let error as SAMLError {
            return .failure(EnhancedError(saml: error))
        } catch {
            return .failure(EnhancedError.internalError)
        }
    }

    /// The profile of a verified response: the MVPD's `requiredMetadataFields` (v2 configurations may
    /// carry none: then the NameID and every attribute), valid for the MVPD's authentication TTL.
    private func makeProfile(_ response: VerifiedResponse, for provider: MVPD) throws -> AppleSSOProfile {
        let names =
            provider.requiredMetadataFields.isEmpty
            ? ["NameID"] + response.assertion.attributes.map(\.name) : provider.requiredMetadataFields
        let fields = try response.fields(names, allowMissing: provider.requiredMetadataFields.isEmpty)
        let now = trust.template.clock.now()
        return AppleSSOProfile(
            mvpd: provider.id, response: response, fields: fields, mapping: mapping, notBefore: now,
            notAfter: now + (authenticationTTLs[provider.id] ?? defaultAuthenticationTTL))
    }
}

/// The profile the attachment hook built, handed back to the exchange after verification.
private final class ProfileSlot: Sendable {
    private let slot = Locked<AppleSSOProfile?>(nil)
    func set(_ profile: AppleSSOProfile) { slot.withLock { $0 = profile } }
    func get() -> AppleSSOProfile? { slot.withLock { $0 } }
}
