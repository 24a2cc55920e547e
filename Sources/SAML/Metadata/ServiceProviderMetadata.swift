import CookbookEncoding

/// The service provider's own SAML 2.0 metadata: what an MVPD's identity provider imports to know the SP's
/// entity ID, where to post responses, which key signs the SP's requests and which key to encrypt
/// assertions to.
///
/// ``xml(signedWith:now:)`` writes one `md:EntityDescriptor` with one `md:SPSSODescriptor` (SAML 2.0),
/// in the element order of the OASIS metadata schema (SAML Metadata 2.3.2, 2.4.1, 2.4.4): `ds:Signature`
/// (when signed), then in the role the signing and encryption `md:KeyDescriptor`s, the `md:NameIDFormat`s
/// and the `md:AssertionConsumerService`s. The output is compact UTF-8 with an XML declaration and every
/// value escaped; signed, the root carries an enveloped signature (exclusive C14N, SHA-256, RSA-SHA256 or
/// ECDSA-SHA256) over its `ID`, made as ``SAMLRequest`` signs requests.
///
/// ``read(_:options:)`` reads such a document back (one entity, one SAML 2.0 SP role), verifying the
/// root signature with the signers of its ``Options`` as IdP metadata is verified.
///
/// ```swift
/// let metadata = try ServiceProviderMetadata(
///     entityID: "https://saml.sp.auth.adobe.com",
///     assertionConsumerServiceURLs: ["https://sp.example.com/api/v2/REF30/profiles/sso/Apple"],
///     signingKey: requestSigningKey,                    // its certificate; AuthnRequestsSigned="true"
///     encryptionKeys: try TrustedKey.all(pem: spEncryptionCertificatePEM))
/// let xml = try metadata.xml(signedWith: requestSigningKey, now: .now())
/// ```
public struct ServiceProviderMetadata: Sendable {
    /// `urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST`, the binding of Apple SSO's responses.
    public static let httpPOST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
    /// `urn:oasis:names:tc:SAML:2.0:nameid-format:transient` (SAML Core 8.3.8).
    public static let transientNameID = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
    /// `urn:oasis:names:tc:SAML:2.0:nameid-format:persistent` (SAML Core 8.3.7).
    public static let persistentNameID = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"

    /// `md:AssertionConsumerService`: where the IdP posts its responses (an `IndexedEndpointType`).
    public struct AssertionConsumerService: Sendable, Hashable {
        public var location: String
        public var binding: String
        /// Unique among the SP's endpoints (`xs:unsignedShort`).
        public var index: UInt16
        /// The endpoint an IdP uses when a request names none (at most one is the default).
        public var isDefault: Bool

        public init(location: String, binding: String = ServiceProviderMetadata.httpPOST, index: UInt16, isDefault: Bool = false) {
            self.location = location
            self.binding = binding
            self.index = index
            self.isDefault = isDefault
        }
    }

    /// How SP metadata is read: the same options as IdP metadata (signers, algorithms, `now`, caps).
    public typealias Options = IdentityProviderMetadata.Options

    /// The SP's entity ID (at most 1,024 characters, SAML Metadata 2.3.2).
    public var entityID: String
    public var assertionConsumerServices: [AssertionConsumerService]
    /// The keys the SP signs its requests with, each written as its certificate (`use="signing"`); several
    /// during a rotation.
    public var signingKeys: [TrustedKey]
    /// The certificates the IdP encrypts assertions to (`use="encryption"`): those of the SP's
    /// ``DecryptionKey``s.
    public var encryptionKeys: [TrustedKey]
    /// The algorithms listed as `md:EncryptionMethod` of each encryption key, the preferred first. Default:
    /// AES-256-GCM, AES-128-GCM, RSA-OAEP (xmlenc 1.1) and RSA-OAEP-MGF1P, all accepted by
    /// ``EncryptionAlgorithmPolicy/strict``, so that an IdP that honours the list never picks a legacy one.
    public var encryptionMethods: [String] = EncryptionAlgorithmPolicy.advertised
    /// `md:NameIDFormat`s, the preferred first. Default: transient, then persistent (what Adobe Pass asks of
    /// MVPDs; the verifier accepts any NameID).
    public var nameIDFormats: [String] = [transientNameID, persistentNameID]
    /// `AuthnRequestsSigned`: true when the initialiser was given a signing key.
    public var authnRequestsSigned: Bool
    /// `WantAssertionsSigned`. Default true: the verifier's default ``SignaturePolicy`` requires a signature
    /// covering the assertion.
    public var wantAssertionsSigned = true
    /// How long a written document is valid: its `validUntil` is `now` + this, to the second below (nil: no
    /// `validUntil`).
    /// Default 7 days, for metadata served from an endpoint that readers fetch again after
    /// ``cacheDuration``; a copy an operator imports by hand stops being valid after that too, so give a
    /// longer validity (or nil) to metadata handed out as a file. Read back, the time left at the reader's
    /// `now`.
    public var validity: Duration? = .seconds(7 * 86_400)
    /// `cacheDuration`: how long a reader may keep the document before fetching it again. Default 6 hours.
    public var cacheDuration: Duration? = .seconds(6 * 3600)

    /// Metadata for `entityID` with one HTTP-POST endpoint per URL (indexes 0, 1, ...; the first the
    /// default).
    ///
    /// - Parameters:
    ///   - entityID: the SP's entity ID.
    ///   - assertionConsumerServiceURLs: where the IdPs post responses, the first the default.
    ///   - signingKey: the key the SP signs its requests with; its certificate is listed first among the
    ///     signing keys and ``authnRequestsSigned`` is true.
    ///   - additionalSigningKeys: further signing certificates (the next key of a rotation).
    ///   - encryptionKeys: the certificates of the SP's decryption keys.
    /// - Throws: ``SAMLError/Code/configurationInvalidKey`` when `signingKey` was loaded without its
    ///   certificate.
    public init(
        entityID: String, assertionConsumerServiceURLs: [String], signingKey: SigningKey? = nil, additionalSigningKeys: [TrustedKey] = [],
        encryptionKeys: [TrustedKey] = []
    ) throws {
        self.entityID = entityID
        assertionConsumerServices = assertionConsumerServiceURLs.enumerated().map { index, url in
            AssertionConsumerService(location: url, index: UInt16(truncatingIfNeeded: index), isDefault: index == 0)
        }
        var signing: [TrustedKey] = []
        if let signingKey {
            guard let der = signingKey.certificateDER else {
                throw SAMLError(.configurationInvalidKey, "expected the SP signing key with its certificate, found the key alone")
            }
            signing.append(try TrustedKey(der: der, isCertificate: true))
        }
        signingKeys = signing + additionalSigningKeys
        self.encryptionKeys = encryptionKeys
        authnRequestsSigned = signingKey != nil
    }

    /// Reads SP metadata: one `md:EntityDescriptor` with one `md:SPSSODescriptor` whose
    /// `protocolSupportEnumeration` lists SAML 2.0, with the safe parser of responses.
    ///
    /// Keys come from the role's `md:KeyDescriptor`s (`use` absent counts for both signing and
    /// encryption) as for IdP metadata; ``validity`` is the time left at ``IdentityProviderMetadata/Options/now`` until the
    /// earliest `validUntil` of the entity and the role; booleans absent are false (SAML Metadata 2.4.4).
    ///
    /// - Throws: ``SAMLError`` with `metadata.malformed` (another root, no or several SAML 2.0 SP roles, a
    ///   malformed value), `metadata.expired`, `metadata.key-conflict`, or with signers configured
    ///   `metadata.unsigned` and the `signature.*` and `id.*` codes of IdP metadata.
    public static func read(_ xml: [UInt8], options: Options = Options()) throws -> ServiceProviderMetadata {
        try readDocument(xml, options: options)
    }

    /// The metadata document, signed with `key` when given (its certificate in the signature's KeyInfo).
    ///
    /// - Parameters:
    ///   - key: the key to sign the document with (nil: unsigned).
    ///   - now: the instant ``validity`` counts from.
    /// - Throws: ``SAMLError/Code/configurationInvalid`` for values the schema or SAML Metadata refuses (an
    ///   empty or over-long entity ID, no endpoint, two endpoints with one index or two defaults, a
    ///   character XML cannot carry, a duration that is not positive, `AuthnRequestsSigned` without a
    ///   signing key), ``SAMLError/Code/configurationInvalidKey`` for a key without a certificate or a
    ///   signing key that cannot sign.
    public func xml(signedWith key: SigningKey? = nil, now: SAMLInstant) throws -> [UInt8] {
        try validate()
        if let key, key.certificateDER == nil {
            throw SAMLError(.configurationInvalidKey, "expected the metadata signing key with its certificate, found the key alone")
        }
        let escape = XMLEscaping.escape
        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        text += #"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#""#
        text += #" ID="_\#(SAMLRequest.randomHex(bytes: 16))" entityID="\#(escape(entityID))""#
        if let validity {
            // Whole seconds, as metadata usually carries them (xs:dateTime allows a fraction, not every reader does).
            let until = (now + validity).millisecondsSinceEpoch
            text += #" validUntil="\#(SAMLInstant(millisecondsSinceEpoch: until - (until % 1000 + 1000) % 1000))""#
        }
        if let cacheDuration { text += #" cacheDuration="\#(XMLDuration.format(cacheDuration))""# }
        text += #"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol""#
        text += #" AuthnRequestsSigned="\#(authnRequestsSigned)" WantAssertionsSigned="\#(wantAssertionsSigned)">"#
        for (use, keys) in [("signing", signingKeys), ("encryption", encryptionKeys)] {
            for key in keys {
                // Checked by validate(): every key came from a certificate.
                let certificate = Base64.encode(key.certificateDER ?? [])
                text += #"<md:KeyDescriptor use="\#(use)"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\#(certificate)"#
                text += "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
                if use == "encryption" {
                    text += encryptionMethods.map { #"<md:EncryptionMethod Algorithm="\#(escape($0))"/>"# }.joined()
                }
                text += "</md:KeyDescriptor>"
            }
        }
        text += nameIDFormats.map { "<md:NameIDFormat>\(escape($0))</md:NameIDFormat>" }.joined()
        for service in assertionConsumerServices {
            text += #"<md:AssertionConsumerService Binding="\#(escape(service.binding))" Location="\#(escape(service.location))""#
            text += #" index="\#(service.index)"\#(service.isDefault ? #" isDefault="true""# : "")/>"#
        }
        // The line breaks around the root are libxml2's, so that signed and unsigned documents look alike.
        text += "</md:SPSSODescriptor></md:EntityDescriptor>\n"
        let unsigned = Array(text.utf8)
        guard let key else { return unsigned }
        return try key.signRoot(of: unsigned)
    }

    /// The rules of the schema and of SAML Metadata that the values must meet to be written.
    private func validate() throws {
        func invalid(_ message: String) -> SAMLError { SAMLError(.configurationInvalid, "SP metadata: " + message) }
        guard !entityID.isEmpty, entityID.unicodeScalars.count <= 1024 else {
            throw invalid("expected an entity ID of 1 to 1,024 characters, found \(entityID.unicodeScalars.count)")
        }
        guard !assertionConsumerServices.isEmpty else { throw invalid("expected at least one assertion consumer service, found none") }
        guard Set(assertionConsumerServices.map(\.index)).count == assertionConsumerServices.count else {
            throw invalid("expected a different index for each assertion consumer service, found one index twice")
        }
        guard assertionConsumerServices.filter(\.isDefault).count <= 1 else {
            throw invalid("expected at most one default assertion consumer service, found several")
        }
        let values: [(String, String)] =
            [("entity ID", entityID)]
            + assertionConsumerServices.flatMap { [("endpoint location", $0.location), ("endpoint binding", $0.binding)] }
            + nameIDFormats.map { ("NameID format", $0) } + encryptionMethods.map { ("encryption method", $0) }
        for (name, value) in values {
            guard !value.isEmpty, value.unicodeScalars.allSatisfy(Self.isWritable) else {
                throw invalid("expected a non-empty \(name) without control characters, found \(SAMLError.quote(value))")
            }
        }
        for (name, duration) in [("validity", validity), ("cache duration", cacheDuration)] {
            if let duration, duration.milliseconds <= 0 { throw invalid("expected a positive \(name), found \(duration)") }
        }
        if authnRequestsSigned, signingKeys.isEmpty {
            throw invalid("expected a signing key when AuthnRequestsSigned is true, found none")
        }
        if (signingKeys + encryptionKeys).contains(where: { $0.certificateDER == nil }) {
            throw SAMLError(.configurationInvalidKey, "SP metadata: expected certificates, found a public key without one")
        }
    }

    /// A scalar XML 1.0 can carry (XML 1.0 2.2) and attribute-value normalisation leaves as it is (no tab
    /// or line break): the values written are URIs.
    private static func isWritable(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF
    }
}
