extension SAMLError.Code {
    /// The MVPD (or tenant) has no identity provider in the trust registry: refused, never verified
    /// with another tenant's trust. A server configuration gap, hence 500.
    public static let trustUnknownMVPD = Self("trust.unknown-mvpd", httpStatus: 500)
    /// The MVPD's identity provider was trusted from metadata whose `validUntil` has passed, and no newer
    /// document has been accepted: its responses are refused until one is (the service answers 503).
    public static let trustExpired = Self("trust.expired", httpStatus: 503)
    /// The MVPD's metadata source has not yielded a document it accepts yet (its URL did not answer at
    /// start-up and no backing copy could be read): refused until it does.
    public static let trustUnavailable = Self("trust.unavailable", httpStatus: 503)
}

/// An identity provider the service trusts: its entity ID, its signing keys and, when read from
/// metadata, its single sign-on endpoints.
///
/// A verifier built for it (``SAMLResponseVerifier/Configuration/init(identityProvider:audience:destination:inResponseTo:replay:)``)
/// always checks that the Response and Assertion Issuer equal ``entityID`` and accepts only ``keys``.
public struct IdentityProvider: Sendable {
    public let entityID: String
    /// The signing keys (several during a rotation). Never empty.
    public let keys: [TrustedKey]
    /// The metadata's `SingleSignOnService` endpoints (none for pinned certificates): where a request
    /// for this IdP is addressed.
    public let singleSignOnServices: [IdentityProviderMetadata.Endpoint]
    /// The metadata's `validUntil` (nil for pinned certificates): from then on ``TrustRegistry`` refuses
    /// this IdP's responses (``SAMLError/Code/trustExpired``) until it is replaced.
    public let validUntil: SAMLInstant?
    /// The algorithm allow-list of this IdP's responses, when it differs from the registry template's
    /// (``AlgorithmPolicy/allowingSHA1`` for an IdP that still signs with a legacy digest: the opt-in is
    /// per IdP, never for every MVPD at once). nil: the template's.
    public var algorithms: AlgorithmPolicy?

    /// - Throws: ``SAMLError/Code/configurationInvalid`` for an empty entity ID,
    ///   ``SAMLError/Code/configurationInvalidKey`` for an empty key list.
    public init(entityID: String, keys: [TrustedKey]) throws {
        guard !entityID.isEmpty else {
            throw SAMLError(.configurationInvalid, "expected an IdP entity ID, found an empty one")
        }
        guard !keys.isEmpty else {
            throw SAMLError(.configurationInvalidKey, "expected at least one signing key for \(SAMLError.quote(entityID)), found none")
        }
        self.entityID = entityID
        self.keys = keys
        singleSignOnServices = []
        validUntil = nil
        algorithms = nil
    }

    /// The entity ID and signing keys of IdP metadata.
    public init(metadata: IdentityProviderMetadata) {
        entityID = metadata.entityID
        keys = metadata.signingKeys
        singleSignOnServices = metadata.singleSignOnServices
        validUntil = metadata.validUntil
        algorithms = nil
    }
}

extension SAMLResponseVerifier.Configuration {
    /// A configuration bound to one identity provider: its keys pinned and its entity ID required as
    /// the Issuer of the Response and the Assertion. The safe way to build a verifier per IdP.
    ///
    /// Every check is named, `inResponseTo` too: `.skip` when the request a response answers comes with
    /// each call (``SAMLResponseVerifier/RequestExpectations``) or when IdP-initiated responses are
    /// expected; a response verified without one lists ``SkippedChecks/inResponseTo``.
    public init(
        identityProvider: IdentityProvider, audience: ExpectedValue<String>, destination: ExpectedValue<String>,
        inResponseTo: ExpectedValue<String>, replay: SAMLResponseVerifier.ReplayProtection
    ) {
        self.init(
            trustedKeys: identityProvider.keys, issuer: .equals(identityProvider.entityID), audience: audience,
            destination: destination, inResponseTo: inResponseTo, replay: replay)
    }
}

/// Which identity provider each MVPD (tenant) trusts, with a verifier built for each.
///
/// A Token Exchange backend serves many MVPDs, each with its own IdP: a response is verified only with
/// the verifier of the MVPD it is posted for, which pins that MVPD's IdP keys and requires that IdP's
/// entity ID as the issuer. A response from MVPD A's IdP posted as MVPD B therefore fails
/// (`issuer.mismatch`), whatever keys are pinned for A. An MVPD without an entry fails closed
/// (``SAMLError/Code/trustUnknownMVPD``).
///
/// ``replace(_:)`` and ``update(_:for:)`` build every new verifier first and then swap the whole map under
/// a lock: a request sees the old trust or the new one, never a mix, and nothing restarts (metadata
/// reloads, key rotation). An IdP read from metadata is refused from its `validUntil` on
/// (``SAMLError/Code/trustExpired``), by the template's clock, until it is replaced; an MVPD marked
/// with ``markUnavailable(_:)`` is refused (``SAMLError/Code/trustUnavailable``) until it gets an IdP.
/// `Sendable`; share one per process.
public final class TrustRegistry: Sendable {
    /// Everything a per-IdP verifier needs besides the IdP: a configuration whose `trustedKeys` and
    /// `issuer` are replaced for each IdP.
    public let template: SAMLResponseVerifier.Configuration
    private let verifiers: Locked<[String: Entry]>

    private enum Entry {
        case trusted(IdentityProvider, SAMLResponseVerifier)
        case unavailable
    }

    /// Where an MVPD's trust stands.
    public enum Status: Sendable, Hashable {
        /// An IdP is trusted (until `validUntil`, when it came from metadata).
        case trusted(validUntil: SAMLInstant?)
        /// The IdP's metadata has passed its `validUntil`.
        case expired(SAMLInstant)
        /// No document has been accepted yet.
        case unavailable
    }

    /// - Parameters:
    ///   - identityProviders: MVPD id → its IdP.
    ///   - template: audience, destination, replay protection, decryption keys, policies, clock, logger
    ///     for every verifier (its `trustedKeys` and `issuer` are ignored). See
    ///     ``SAMLResponseVerifier/Configuration/template(audience:destination:replay:)``.
    public init(_ identityProviders: [String: IdentityProvider], template: SAMLResponseVerifier.Configuration) throws {
        self.template = template
        verifiers = Locked(try Self.build(identityProviders, template: template))
    }

    /// The verifier of `mvpd`'s identity provider.
    ///
    /// - Throws: ``SAMLError/Code/trustUnknownMVPD``, ``SAMLError/Code/trustUnavailable`` or
    ///   ``SAMLError/Code/trustExpired``.
    public func verifier(for mvpd: String) throws -> SAMLResponseVerifier {
        switch verifiers.withLock({ $0[mvpd] }) {
        case nil:
            throw SAMLError(.trustUnknownMVPD, "expected an identity provider configured for the MVPD \(SAMLError.quote(mvpd)), found none")
        case .unavailable:
            throw SAMLError(
                .trustUnavailable, "expected accepted metadata for the MVPD \(SAMLError.quote(mvpd)), found none yet (see its source's log)"
            )
        case .trusted(let identityProvider, let verifier):
            if let validUntil = identityProvider.validUntil, template.clock.now() >= validUntil {
                throw SAMLError(
                    .trustExpired,
                    "expected the metadata of the MVPD \(SAMLError.quote(mvpd)) valid now, found validUntil \(validUntil) passed and no newer document accepted"
                )
            }
            return verifier
        }
    }

    /// The identity provider `mvpd` trusts now, if any (none while its trust is unavailable or expired).
    public func identityProvider(for mvpd: String) -> IdentityProvider? {
        guard case .trusted(let identityProvider, _) = verifiers.withLock({ $0[mvpd] }) else { return nil }
        if let validUntil = identityProvider.validUntil, template.clock.now() >= validUntil { return nil }
        return identityProvider
    }

    /// Where each MVPD's trust stands, by MVPD id.
    public var status: [String: Status] {
        let now = template.clock.now()
        return verifiers.withLock { entries in
            entries.mapValues { entry in
                switch entry {
                case .unavailable: .unavailable
                case .trusted(let identityProvider, _):
                    if let until = identityProvider.validUntil, now >= until {
                        .expired(until)
                    } else {
                        .trusted(validUntil: identityProvider.validUntil)
                    }
                }
            }
        }
    }

    /// Marks `mvpd` as configured but without an accepted document yet (its responses are refused with
    /// ``SAMLError/Code/trustUnavailable``); an IdP already trusted for it is left as it is.
    public func markUnavailable(_ mvpd: String) {
        verifiers.withLock { entries in
            if entries[mvpd] == nil { entries[mvpd] = .unavailable }
        }
    }

    /// Refuses `mvpd`'s responses from now on (``SAMLError/Code/trustUnavailable``), whatever it trusted
    /// before: for an MVPD whose last key may no longer verify (a pinned certificate that has ended).
    /// ``markUnavailable(_:)`` leaves a trusted IdP in place; this does not.
    public func withdraw(_ mvpd: String) {
        verifiers.withLock { $0[mvpd] = .unavailable }
    }

    /// The MVPD ids with an identity provider, sorted.
    public var mvpds: [String] { verifiers.withLock { Array($0.keys) }.sorted() }

    /// Replaces the whole trust at once (for example after reloading every metadata file).
    public func replace(_ identityProviders: [String: IdentityProvider]) throws {
        let built = try Self.build(identityProviders, template: template)
        verifiers.withLock { $0 = built }
    }

    /// Sets (or, with nil, removes) one MVPD's identity provider; the others are untouched.
    public func update(_ identityProvider: IdentityProvider?, for mvpd: String) throws {
        let entry = try identityProvider.map { Entry.trusted($0, try Self.verifier($0, template: template)) }
        verifiers.withLock { $0[mvpd] = entry }
    }

    private static func build(
        _ identityProviders: [String: IdentityProvider], template: SAMLResponseVerifier.Configuration
    ) throws -> [String: Entry] {
        try identityProviders.mapValues { .trusted($0, try verifier($0, template: template)) }
    }

    private static func verifier(_ identityProvider: IdentityProvider, template: SAMLResponseVerifier.Configuration) throws
        -> SAMLResponseVerifier
    {
        var configuration = template
        configuration.trustedKeys = identityProvider.keys
        configuration.issuer = .equals(identityProvider.entityID)
        if let algorithms = identityProvider.algorithms { configuration.algorithms = algorithms }
        return try SAMLResponseVerifier(configuration)
    }
}

extension SAMLResponseVerifier.Configuration {
    /// A template for ``TrustRegistry``: every expectation but the IdP's (no key, issuer to be set per IdP).
    /// Adjust its other members (decryption keys, policies, clock, logger) before building the registry.
    public static func template(
        audience: ExpectedValue<String>, destination: ExpectedValue<String>, replay: SAMLResponseVerifier.ReplayProtection
    ) -> Self {
        Self(trustedKeys: [], issuer: .skip, audience: audience, destination: destination, inResponseTo: .skip, replay: replay)
    }
}
