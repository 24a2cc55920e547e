public import Logging
public import Tracing

/// Verifies SAML 2.0 responses: safe parsing, the signature with xmlsec1 against pinned keys, the
/// protocol checks of SAML Core and Profiles, replay; then hands out what the verified assertion says.
///
/// Build one per IdP configuration and share it: it is `Sendable`, holds the parsed keys, and every
/// call works on its own document and xmlsec context.
///
/// ```swift
/// let verifier = try SAMLResponseVerifier(.init(
///     trustedKeys: try TrustedKey.all(pem: mvpdCertificatePEM),
///     issuer: .equals("https://idp.mvpd.example.com"),
///     audience: .equals("https://saml.sp.auth.adobe.com"),
///     destination: .skip,
///     inResponseTo: .skip,
///     replay: .assertions(InMemoryStateStore())
/// ))
/// let response = try await verifier.verify(decoded.bytes)
/// let fields = try response.fields(["uid", "NameID", "householdId"])
/// ```
public struct SAMLResponseVerifier: Sendable {
    /// How replayed assertions are detected.
    public enum ReplayProtection: Sendable {
        /// Replay detection alone: each assertion recorded in `store` (once per issuer and ID, until its
        /// NotOnOrAfter plus the skew) and refused the second time; the request it answers is not
        /// recorded (``store(_:unsolicited:)`` records both). `InMemoryStateStore()` for one process.
        case assertions(any SAMLStateStore)
        /// Remember assertion IDs in this cache until NotOnOrAfter plus the skew.
        @available(*, deprecated, renamed: "assertions", message: "use .assertions(InMemoryStateStore()) or another SAMLStateStore")
        case cache(any ReplayCache)
        /// Do not check; reported in ``VerifiedResponse/skippedChecks``.
        case skip
        /// Replay detection and answered requests in one shared store: a response is accepted only if
        /// its signed `InResponseTo` names a request the caller vouches for
        /// (``RequestExpectations/issuedRequest``, or ``RequestExpectations/inResponseTo``), recorded as
        /// answered atomically with its assertion (``SAMLStateStore/consume(request:assertion:now:)``).
        /// A response without `InResponseTo` (IdP-initiated) is refused unless `unsolicited` is
        /// ``UnsolicitedResponses/allow``.
        case store(any SAMLStateStore, unsolicited: UnsolicitedResponses = .refuse)
    }

    /// Whether responses that answer no request (IdP-initiated) are accepted with a state store.
    public enum UnsolicitedResponses: Sendable, Hashable {
        /// Refused with `in-response-to.unsolicited` (the default: SP-initiated flows only).
        case refuse
        /// Accepted (their assertion IDs still go through replay detection).
        case allow
    }

    /// What the bearer confirmation's `Recipient` must be. SAML Core 2.4.1.2 allows the location the
    /// response is delivered to or the SP's entity ID; attribute-query responses often carry the latter.
    public enum Recipients: Sendable, Hashable {
        /// The value ``Configuration/destination`` expects; not checked when that is `.skip`.
        case destination
        /// Any of these (for example the ACS URL and the SP entity ID). Must not be empty.
        case anyOf([String])
        /// Do not check; reported in ``VerifiedResponse/skippedChecks`` (``SkippedChecks/recipient``).
        case skip
    }

    public struct Configuration: Sendable {
        /// The pinned IdP keys (several for rotation). Must not be empty.
        public var trustedKeys: [TrustedKey]
        /// The IdP entity ID expected as Issuer.
        public var issuer: ExpectedValue<String>
        /// The service's entity ID expected in every AudienceRestriction.
        public var audience: ExpectedValue<String>
        /// The endpoint the response was posted to: checked against Destination (required on a signed
        /// Response when set) and, unless ``recipients`` says otherwise, the bearer Recipient.
        public var destination: ExpectedValue<String>
        /// The values accepted as the bearer SubjectConfirmationData's `Recipient`. Default
        /// ``Recipients/destination``.
        public var recipients: Recipients = .destination
        /// The ID of the request this response answers.
        public var inResponseTo: ExpectedValue<String>
        /// Replay detection.
        public var replay: ReplayProtection
        /// The SP private keys encrypted assertions, NameIDs and attributes are decrypted with (several for
        /// rotation). Empty by default: an encrypted assertion is then refused with `decryption.no-key`.
        public var decryptionKeys: [DecryptionKey] = []
        /// The decryption allow-list. Default ``EncryptionAlgorithmPolicy/strict`` (RSA-OAEP, AES-GCM).
        public var encryptionAlgorithms: EncryptionAlgorithmPolicy = .strict
        /// Where a signature is required. Default ``SignaturePolicy/responseOrAssertion``.
        public var signaturePolicy: SignaturePolicy = .responseOrAssertion
        /// The algorithm allow-list. Default ``AlgorithmPolicy/strict`` (no SHA-1).
        public var algorithms: AlgorithmPolicy = .strict
        /// The tolerance applied to every time comparison. Default 180 s (Shibboleth's).
        public var clockSkew: Duration = .seconds(180)
        /// The oldest IssueInstant accepted; `nil` turns the age check off. Default 60 s, which with
        /// ``clockSkew`` accepts a response up to 240 s after it was issued: Shibboleth SP's tolerance (its
        /// message-flow rule's 60 s plus its 180 s skew). An MVPD issues the response while the device's
        /// Video Subscriber Account request waits, and the app posts it at once; the user's time in the
        /// provider picker comes before the request ID is answered, not after the response is issued (that
        /// wait is the service's `requestLifetime`). docs/security.md, "Time".
        public var maximumAge: Duration? = .seconds(60)
        /// Whether a bearer SubjectConfirmation is required (SAML Web SSO profile). Default true.
        public var requiresBearerConfirmation: Bool = true
        /// Whether a signature that fails on a document bearing the marks of the Adobe Pass cookbook's
        /// whitespace normalisation (no newline anywhere) is retried over reconstructions of the signer's
        /// layout: indentation between elements, template newlines and Base64 line breaks, each tried by
        /// hashing (bounded by a multiple of the signed part's size) before xmlsec verifies the one that
        /// matches. xmlsec decides every signature, so a recovered response is exactly what the IdP signed;
        /// the repairs are listed in ``VerifiedResponse/repairs``. Default true; docs/recovery.md.
        public var recoversNormalizationDamage = true
        /// Parser caps.
        public var parserLimits = XMLParserLimits()
        /// Where the current time comes from. Tests pin it with ``FixedClock`` (the bundled vectors carry
        /// the instant they verify at in their manifest's `now`).
        public var clock: any SAMLClock = SystemClock()
        /// Where the verifier logs: one `debug` line per verdict (the code and message of a refusal; the
        /// key's fingerprint, the signed parts and the repairs of an acceptance); never raw input
        /// (identifiers are escaped and cut to 64 bytes). Silent by default; pass the application's
        /// logger. The package configures no global logging.
        public var logger = Logger(label: "swift-saml", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Where the verifier's spans go: `saml.parse`, `saml.signature`, `saml.decrypt`, `saml.validate` and
        /// `saml.store.consume`, children of the caller's current span (`ServiceContext.current`), each with
        /// a refusal's code (`saml.error.code`) and never a byte of the response, a NameID or an attribute
        /// value. nil by default: no span and no cost. `InstrumentationSystem.tracer` for the process's
        /// tracer (swift-distributed-tracing), or a tracer of the caller's own.
        public var tracer: (any Tracer)?

        public init(
            trustedKeys: [TrustedKey],
            issuer: ExpectedValue<String>,
            audience: ExpectedValue<String>,
            destination: ExpectedValue<String>,
            inResponseTo: ExpectedValue<String>,
            replay: ReplayProtection
        ) {
            self.trustedKeys = trustedKeys
            self.issuer = issuer
            self.audience = audience
            self.destination = destination
            self.inResponseTo = inResponseTo
            self.replay = replay
        }
    }

    public let configuration: Configuration
    /// The request-ID check of the current call (``RequestExpectations/issuedRequest``).
    private(set) var issuedRequest: RequestExpectations.IssuedRequest?
    /// What the current call records with the assertion (``RequestExpectations/attachment``).
    private(set) var attachment: (@Sendable (VerifiedResponse) throws -> any Sendable)?
    /// Told when the current call reaches the state store (``RequestExpectations/willRecord``).
    private(set) var willRecord: (@Sendable () -> Void)?

    /// - Throws: ``SAMLError/Code/configurationInvalidKey`` when no key is pinned: a verifier without a
    ///   key must not exist, rather than skip verification.
    public init(_ configuration: Configuration) throws {
        guard !configuration.trustedKeys.isEmpty else {
            throw SAMLError(.configurationInvalidKey, "expected at least one pinned IdP key, found none")
        }
        if case .anyOf(let values) = configuration.recipients, values.isEmpty {
            throw SAMLError(
                .configurationInvalid,
                "expected at least one accepted Recipient in recipients: .anyOf, found none (use .skip to turn the check off)")
        }
        try XMLSecRuntime.initialize()
        self.configuration = configuration
    }

    /// What differs from one request to the next, passed to each verify call (the verifier itself is
    /// built once per IdP and shared). A nil member falls back to the configuration's expectation.
    public struct RequestExpectations: Sendable {
        /// The ID of the request this response answers (the `AuthnRequest` or `AttributeQuery` sent).
        public var inResponseTo: String?
        /// The endpoint the response was posted to (checked against Destination and, with the default
        /// ``Recipients/destination``, the bearer Recipient).
        public var destination: String?
        /// With a state store: the signed `InResponseTo` must be an ID ``RequestIDAuthority`` issued
        /// for this binding (`in-response-to.wrong-mvpd`, `-device`, `-api`, `-service-provider` or
        /// `not-outstanding` otherwise); the store then records it answered, once, until its expiry.
        public var issuedRequest: IssuedRequest?
        /// Made from the response once every check has passed, before the replay record; a state store
        /// that is a ``SAMLAttachingStateStore`` records its value with the assertion in the same step
        /// (``VerifiedResponse/attachmentRecorded``), so that what a login keeps exists exactly when the
        /// login was accepted. An error it throws refuses the response before anything is recorded.
        public var attachment: (@Sendable (VerifiedResponse) throws -> any Sendable)?
        /// Called once every check has passed (the request's ID included) and the attachment is made, just
        /// before the replay record reaches the cache or the state store (never for a response refused
        /// before it, nor without replay protection): what follows is a wait for the store, not CPU work. A
        /// server that admits verifications by their CPU gives its slot up here.
        public var willRecord: (@Sendable () -> Void)?

        /// Who issued the request a response must answer, and for what.
        public struct IssuedRequest: Sendable {
            public var authority: RequestIDAuthority
            public var binding: RequestBinding

            public init(authority: RequestIDAuthority, binding: RequestBinding) {
                self.authority = authority
                self.binding = binding
            }
        }

        public init(
            inResponseTo: String? = nil, destination: String? = nil, issuedRequest: IssuedRequest? = nil,
            attachment: (@Sendable (VerifiedResponse) throws -> any Sendable)? = nil
        ) {
            self.inResponseTo = inResponseTo
            self.destination = destination
            self.issuedRequest = issuedRequest
            self.attachment = attachment
        }
    }

    /// Verifies a response document (XML bytes, as ``SAMLResponseDecoder`` returns them) at the
    /// configuration's clock, including replay detection.
    ///
    /// - Throws: ``SAMLError``; a replay cache that fails with anything else is reported as
    ///   ``SAMLError/Code/storeUnavailable`` (503): verification fails closed.
    public func verify(_ xml: [UInt8], expecting expectations: RequestExpectations = RequestExpectations()) async throws -> VerifiedResponse
    {
        try await expecting(expectations).verifyLogged(xml, repairs: [])
    }

    /// Verifies what ``SAMLResponseDecoder`` decoded; the response lists the decoder's repairs.
    public func verify(
        _ decoded: SAMLResponseDecoder.Decoded, expecting expectations: RequestExpectations = RequestExpectations()
    ) async throws -> VerifiedResponse {
        try await expecting(expectations).verifyLogged(decoded.bytes, repairs: decoded.repairs)
    }

    /// Everything `verify(_:expecting:)` does except replay detection, at an explicit instant. For tools
    /// and benchmarks; a server that accepts logins needs `verify(_:expecting:)`.
    public func verifyWithoutReplayCheck(
        _ xml: [UInt8], at now: SAMLInstant, expecting expectations: RequestExpectations = RequestExpectations()
    ) throws -> VerifiedResponse {
        try xml.withUnsafeBytes { try verifyWithoutReplayCheck($0, at: now, expecting: expectations) }
    }

    /// ``verifyWithoutReplayCheck(_:at:expecting:)`` over bytes the caller holds (the fuzz targets' input).
    @_spi(Stages)
    public func verifyWithoutReplayCheck(
        _ xml: UnsafeRawBufferPointer, at now: SAMLInstant, expecting expectations: RequestExpectations = RequestExpectations()
    ) throws -> VerifiedResponse {
        let response = try expecting(expectations).verifyDocument(xml, now: now).0
        logLegacyAlgorithms(response)
        return response
    }

    /// Every acceptance under the legacy digests, at warning level: for the operator who opted in and must
    /// end it (docs/security.md, "Legacy digests").
    private func logLegacyAlgorithms(_ response: VerifiedResponse) {
        guard !response.legacyAlgorithms.isEmpty else { return }
        configuration.logger.warning(
            "SAML response accepted with a legacy digest (SHA-1 or SHA-224): weaker against collisions",
            metadata: [
                "saml.issuer": "\(SAMLError.quote(response.assertion.issuer))",
                "saml.legacy-algorithms": "\(response.legacyAlgorithms.joined(separator: ","))",
            ])
    }

    /// This verifier with the request's expectations in place of the configuration's.
    private func expecting(_ expectations: RequestExpectations) -> SAMLResponseVerifier {
        guard
            expectations.inResponseTo != nil || expectations.destination != nil || expectations.issuedRequest != nil
                || expectations.attachment != nil || expectations.willRecord != nil
        else { return self }
        var configuration = configuration
        if let requestID = expectations.inResponseTo { configuration.inResponseTo = .equals(requestID) }
        if let destination = expectations.destination { configuration.destination = .equals(destination) }
        return SAMLResponseVerifier(checked: configuration, expectations: expectations)
    }

    private init(checked configuration: Configuration, expectations: RequestExpectations) {
        self.configuration = configuration
        issuedRequest = expectations.issuedRequest
        attachment = expectations.attachment
        willRecord = expectations.willRecord
    }

    private func verifyLogged(_ xml: [UInt8], repairs: [SAMLResponseDecoder.Repair]) async throws -> VerifiedResponse {
        let logger = configuration.logger
        do {
            let now = configuration.clock.now()
            var (response, expiry) = try xml.withUnsafeBytes { try verifyDocument($0, now: now) }
            response.repairs = repairs + response.repairs
            let attached = try attachment.map { try $0(response) }
            response.attachmentRecorded = try await recordUse(of: response, expiry: expiry, now: now, attaching: attached)
            logLegacyAlgorithms(response)
            logger.debug(
                "SAML response accepted",
                metadata: [
                    "saml.assertion-id": "\(SAMLError.quote(response.assertion.id))",
                    "saml.key-sha256": "\(response.signingKeyFingerprint)",
                    "saml.signed": "\(response.signedParts.description)",
                    "saml.repairs": "\(response.repairs.map(\.rawValue).joined(separator: ","))",
                ])
            return response
        } catch let error as SAMLError {
            logger.debug("SAML response refused", metadata: ["saml.code": "\(error.code)", "saml.reason": "\(error.message)"])
            throw error
        }
    }

    /// Replay detection, and the recording of the answered request with a state store (and of
    /// `attached`, with a ``SAMLAttachingStateStore``: then true).
    private func recordUse(of response: VerifiedResponse, expiry: SAMLInstant, now: SAMLInstant, attaching attached: (any Sendable)?)
        async throws -> Bool
    {
        do {
            switch configuration.replay {
            case .skip:
                return false
            case .cache(let cache):
                // Keyed by issuer and ID: one IdP's IDs never make another's look replayed.
                let key = "\(response.assertion.issuer.utf8.count):\(response.assertion.issuer)\(response.assertion.id)"
                willRecord?()
                let inserted = try await VerificationSpans(configuration.tracer).phase(
                    "saml.store.consume", { try await cache.insertIfAbsent(key, expiry: expiry, now: now) },
                    annotate: { ["saml.store.outcome": $0 ? "accepted" : "replayed"] })
                guard inserted else { throw Self.replayed(response.assertion.id) }
                return false
            case .assertions(let store):
                return try await consume(response, in: store, request: nil, expiry: expiry, now: now, attaching: attached)
            case .store(let store, let unsolicited):
                let request = try answeredRequest(response, unsolicited: unsolicited, now: now)
                return try await consume(response, in: store, request: request, expiry: expiry, now: now, attaching: attached)
            }
        } catch let error as SAMLError {
            throw error
        } catch {
            throw SAMLError(
                .storeUnavailable, "expected the state store to answer, found it failing (\(type(of: error))): refused, not accepted")
        }
    }

    /// Records `response`'s assertion (and `request`, and `attached` with a ``SAMLAttachingStateStore``:
    /// then true) in `store`, and turns what the store found into the verifier's answer.
    private func consume(
        _ response: VerifiedResponse, in store: any SAMLStateStore, request: IssuedRequestID?, expiry: SAMLInstant, now: SAMLInstant,
        attaching attached: (any Sendable)?
    ) async throws -> Bool {
        let assertionID = response.assertion.id
        let assertion = UsedAssertion(issuer: response.assertion.issuer, id: assertionID, expiry: expiry)
        willRecord?()
        let attaching = attached.flatMap { value in (store as? any SAMLAttachingStateStore).map { ($0, value) } }
        let outcome = try await VerificationSpans(configuration.tracer).phase(
            "saml.store.consume",
            {
                if let (store, value) = attaching {
                    try await store.consume(request: request, assertion: assertion, now: now, attaching: value)
                } else {
                    try await store.consume(request: request, assertion: assertion, now: now)
                }
            }, annotate: { ["saml.store.outcome": "\($0)"] })
        switch outcome {
        case .accepted:
            return attaching != nil
        case .replayed:
            throw Self.replayed(assertionID)
        case .requestAnswered:
            throw SAMLError(
                .inResponseToNotOutstanding, "expected InResponseTo to name a request not answered yet, found one answered before")
        case .requestExpired:
            throw SAMLError(
                .inResponseToExpired,
                "expected InResponseTo to name a request that can still be answered, found one past its lifetime")
        case .assertionExpired:
            throw SAMLError(
                .timeExpired,
                "expected an assertion still valid by the state store's clock, found it past its expiry there (this instance's clock is behind the store's): refused, not accepted"
            )
        }
    }

    private static func replayed(_ assertionID: String) -> SAMLError {
        SAMLError(.replayDetected, "expected an assertion not seen before, found \(SAMLError.quote(assertionID)) again")
    }

    /// The request a response answers, as the caller vouches for it: an ID ``RequestIDAuthority`` issued
    /// for the call's binding, or the ID the call names (recorded as answered for as long as a response
    /// to it could be accepted). nil for an unsolicited response, when those are allowed.
    private func answeredRequest(_ response: VerifiedResponse, unsolicited: UnsolicitedResponses, now: SAMLInstant) throws
        -> IssuedRequestID?
    {
        guard let requestID = response.inResponseTo else {
            guard unsolicited == .allow else {
                throw SAMLError(
                    .inResponseToUnsolicited,
                    "expected a response to a request of this service (signed InResponseTo), found an unsolicited one")
            }
            return nil
        }
        if let issuedRequest {
            return try issuedRequest.authority.check(requestID, for: issuedRequest.binding)
        }
        // InResponseToPolicy has compared the signed value with the one the call names.
        guard configuration.inResponseTo.expected == requestID else {
            throw SAMLError(
                .inResponseToNotOutstanding,
                "expected InResponseTo to name a request the caller vouches for (issuedRequest or inResponseTo), found one it does not name"
            )
        }
        return IssuedRequestID(id: requestID, expiry: now + (configuration.maximumAge ?? .seconds(60)) + configuration.clockSkew)
    }
}
