extension SAMLError.Code {
    // MARK: IdP metadata (SAML 2.0 Metadata), read at configuration time

    /// The metadata is not an `md:EntityDescriptor` or `md:EntitiesDescriptor`, or a required value is
    /// missing or malformed (the message names it).
    public static let metadataMalformed = Self("metadata.malformed", httpStatus: 500)
    /// The metadata's `validUntil` (of the document or of the entity) has passed, or that of every SAML 2.0
    /// IdP role of the entity read.
    public static let metadataExpired = Self("metadata.expired", httpStatus: 500)
    /// A metadata signer is configured and the document's root carries no signature.
    public static let metadataUnsigned = Self("metadata.unsigned", httpStatus: 500)
    /// No entity with a SAML 2.0 IdP role (`protocolSupportEnumeration` listing
    /// `urn:oasis:names:tc:SAML:2.0:protocol`) and at least one signing key, or not the entity asked for.
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
/// `signing` or absent: `ds:X509Certificate`, and `ds:KeyValue` (`RSAKeyValue`, xmldsig 1.1
/// `ECKeyValue` on P-256/384/521). Certificates are trusted as keys, as for pinned PEM: their dates are
/// not checked (the metadata's own `validUntil` is).
///
/// The SAML Metadata rules applied (issue 33):
/// - a role is a SAML 2.0 IdP role only when its `protocolSupportEnumeration` lists
///   `urn:oasis:names:tc:SAML:2.0:protocol`; other roles (SAML 1.1-only IdPs of federation aggregates)
///   give no key and no endpoint, and an entity without a SAML 2.0 IdP role is not an identity provider
///   (``SAMLError/Code/metadataNoIdentityProvider``);
/// - a role's own `validUntil` (Metadata 2.4.1) at or before ``Options/now`` takes the role out; an entity
///   whose SAML 2.0 IdP roles have all expired is ``SAMLError/Code/metadataExpired``; the roles used
///   narrow ``validUntil`` and ``cacheDuration``;
/// - one `ds:KeyInfo` is one key (XML-DSig 4.5): elements that describe the same key (a certificate and
///   its `RSAKeyValue`, a certificate twice) give that key once, elements of different keys are
///   ``SAMLError/Code/metadataKeyConflict``; the KeyInfos of several KeyDescriptors are pooled (rotation).
///
/// An entity refused by one of these rules is left out of an aggregate; naming it in
/// `read(_:entityID:options:)`, or finding no other entity, reports why.
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
    /// The earliest `validUntil` of the document, the entity and the SAML 2.0 IdP roles used, if any.
    public let validUntil: SAMLInstant?
    /// The shortest `cacheDuration` of the document, the entity and the SAML 2.0 IdP roles used, if any:
    /// how long a reader may keep it before fetching it again.
    public let cacheDuration: Duration?

    /// How metadata is read.
    public struct Options: Sendable {
        /// When not empty, the document's root must carry a signature that verifies with one of these keys
        /// (the strict one-reference profile of responses, every ID made of xs:NCName characters: `id.malformed`
        /// otherwise); otherwise a signature is not looked at.
        public var signers: [TrustedKey] = []
        /// The signature algorithm allow-list of the metadata signature. Default ``AlgorithmPolicy/strict``:
        /// metadata signed with RSA-SHA1 or a SHA-1 digest is refused (`signature.algorithm-not-allowed`).
        /// Set ``AlgorithmPolicy/allowingSHA1`` to accept it (older federation aggregates, SimpleSAMLphp's
        /// output); this is the metadata signer's own opt-in, independent of the responses' (`saml metadata
        /// --allow-sha1` on the command line).
        public var algorithms: AlgorithmPolicy = .strict
        /// The instant `validUntil` is compared with.
        public var now: SAMLInstant = .now()
        /// Parser caps (metadata aggregates are larger than responses: 16 MiB, 500,000 elements and 1,500,000 nodes, 128
        /// namespace declarations in scope).
        public var limits: XMLParserLimits = {
            var limits = XMLParserLimits()
            limits.maximumDocumentBytes = 16 << 20
            limits.maximumElements = 500_000
            limits.maximumNodes = 1_500_000
            limits.maximumAttributes = 2_000_000
            limits.maximumNamespaceDeclarations = 200_000
            limits.maximumNamespaceDeclarationsInScope = 128
            return limits
        }()

        public init(signers: [TrustedKey] = [], algorithms: AlgorithmPolicy = .strict, now: SAMLInstant = .now()) {
            self.signers = signers
            self.algorithms = algorithms
            self.now = now
        }
    }

    /// Every identity provider the document describes (an entity with a SAML 2.0 IdP or
    /// attribute-authority role still valid and at least one signing key).
    ///
    /// - Throws: ``SAMLError`` with a `metadata.*` code (when no entity is left, the reason it was left out),
    ///   `id.malformed` for a signed document with an ID not made of xs:NCName characters, or a `signature.*` code
    ///   when a required signature does not verify.
    public static func read(_ xml: [UInt8], options: Options = Options()) throws -> [IdentityProviderMetadata] {
        let reading = try readAll(xml, options: options)
        guard !reading.found.isEmpty else { throw reading.refusal }
        return reading.found
    }

    /// ``read(_:entityID:options:)`` of a document held as text.
    public static func read(_ xml: String, entityID: String?, options: Options = Options()) throws -> IdentityProviderMetadata {
        try read(Array(xml.utf8), entityID: entityID, options: options)
    }

    /// The one identity provider named `entityID` (or the only one, when nil).
    ///
    /// - Throws: as ``read(_:options:)``; when the entity named is in the document but left out, the reason
    ///   (`metadata.no-identity-provider`, `metadata.expired`, `metadata.key-conflict`) even if other
    ///   entities were read.
    public static func read(_ xml: [UInt8], entityID: String?, options: Options = Options()) throws -> IdentityProviderMetadata {
        let reading = try readAll(xml, options: options)
        if let entityID {
            if let match = reading.found.first(where: { $0.entityID == entityID }) { return match }
            if let skipped = reading.skipped.first(where: { $0.entityID == entityID }) { throw skipped.reason }
            throw SAMLError(
                .metadataNoIdentityProvider, "expected the entity \(SAMLError.quote(entityID)), found \(reading.found.count) others")
        }
        guard !reading.found.isEmpty else { throw reading.refusal }
        let all = reading.found
        guard all.count == 1 else {
            throw SAMLError(.metadataNoIdentityProvider, "expected one identity provider, found \(all.count): name the entity ID")
        }
        return all[0]
    }
}
