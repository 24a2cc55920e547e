extension SAMLError.Code {
    // MARK: IdP metadata (SAML 2.0 Metadata), read at configuration time

    /// The metadata is not an `md:EntityDescriptor` or `md:EntitiesDescriptor`, or a required value is
    /// missing or malformed (the message names it).
    public static let metadataMalformed = Self("metadata.malformed", httpStatus: 500)
    /// The metadata's `validUntil` (of the document or of the entity) has passed.
    public static let metadataExpired = Self("metadata.expired", httpStatus: 500)
    /// A metadata signer is configured and the document's root carries no signature.
    public static let metadataUnsigned = Self("metadata.unsigned", httpStatus: 500)
    /// No entity with an IdP role and at least one signing key, or not the entity asked for.
    public static let metadataNoIdentityProvider = Self("metadata.no-identity-provider", httpStatus: 500)
    /// One `ds:KeyInfo` describes more than one key (for example a certificate and an `RSAKeyValue` of a
    /// different key): XML-DSig 4.5 makes a KeyInfo describe one key, so conflicting descriptions are refused.
    public static let metadataKeyConflict = Self("metadata.key-conflict", httpStatus: 500)
}

/// One identity provider as its SAML 2.0 metadata describes it: entity ID, signing keys, SSO endpoints,
/// validity.
///
/// Read with ``read(_:options:)`` from an `md:EntityDescriptor` or an `md:EntitiesDescriptor` (an
/// aggregate), with the same safe parser as responses (no DTD, caps before parsing). Keys come from the
/// `md:KeyDescriptor`s of `md:IDPSSODescriptor` and `md:AttributeAuthorityDescriptor` whose `use` is
/// `signing` or absent: every `ds:X509Certificate`, and `ds:KeyValue` (`RSAKeyValue`, xmldsig 1.1
/// `ECKeyValue` on P-256/384/521). Certificates are trusted as keys, as for pinned PEM: their dates are
/// not checked (the metadata's own `validUntil` is).
public struct IdentityProviderMetadata: Sendable {
    /// `md:SingleSignOnService`.
    public struct Endpoint: Sendable, Hashable {
        public let binding: String
        public let location: String
    }

    public let entityID: String
    /// The signing keys (several during a rotation), in document order.
    public let signingKeys: [TrustedKey]
    /// The IdP's SSO endpoints.
    public let singleSignOnServices: [Endpoint]
    /// The earliest `validUntil` of the document and the entity, if any.
    public let validUntil: SAMLInstant?
    /// The shortest `cacheDuration` of the document and the entity, if any: how long a reader may keep
    /// it before fetching it again.
    public let cacheDuration: Duration?

    /// How metadata is read.
    public struct Options: Sendable {
        /// When not empty, the document's root must carry a signature that verifies with one of these keys
        /// (the strict one-reference profile of responses); otherwise a signature is not looked at.
        public var signers: [TrustedKey] = []
        /// The signature algorithm allow-list. Default ``AlgorithmPolicy/strict``.
        public var algorithms: AlgorithmPolicy = .strict
        /// The instant `validUntil` is compared with.
        public var now: SAMLInstant = .now()
        /// Parser caps (metadata aggregates are larger than responses: 16 MiB and 500,000 elements).
        public var limits: XMLParserLimits = {
            var limits = XMLParserLimits()
            limits.maximumDocumentBytes = 16 << 20
            limits.maximumElements = 500_000
            limits.maximumAttributes = 2_000_000
            limits.maximumNamespaceDeclarations = 200_000
            return limits
        }()

        public init(signers: [TrustedKey] = [], now: SAMLInstant = .now()) {
            self.signers = signers
            self.now = now
        }
    }

    /// Every identity provider the document describes (an entity with an IdP or attribute-authority role
    /// and at least one signing key).
    ///
    /// - Throws: ``SAMLError`` with a `metadata.*` code, or a `signature.*` code when a required signature
    ///   does not verify.
    public static func read(_ xml: [UInt8], options: Options = Options()) throws -> [IdentityProviderMetadata] {
        try readAll(xml, options: options)
    }

    /// The one identity provider named `entityID` (or the only one, when nil).
    public static func read(_ xml: [UInt8], entityID: String?, options: Options = Options()) throws -> IdentityProviderMetadata {
        let all = try read(xml, options: options)
        if let entityID {
            guard let match = all.first(where: { $0.entityID == entityID }) else {
                throw SAMLError(.metadataNoIdentityProvider, "expected the entity \(SAMLError.quote(entityID)), found \(all.count) others")
            }
            return match
        }
        guard all.count == 1 else {
            throw SAMLError(.metadataNoIdentityProvider, "expected one identity provider, found \(all.count): name the entity ID")
        }
        return all[0]
    }
}
