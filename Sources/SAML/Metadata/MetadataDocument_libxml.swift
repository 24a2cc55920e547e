internal import CSAMLShim

/// What the readers of IdP metadata (``IdentityProviderMetadata``) and SP metadata
/// (``ServiceProviderMetadata``) share: the root signature, `validUntil` and `cacheDuration`, the SAML 2.0
/// protocol test of a role.
enum MetadataDocument {
    /// SAML 2.0 among the role's `protocolSupportEnumeration` (a whitespace-separated list of URIs).
    static func supportsSAML2(_ role: xmlNodePtr) -> Bool {
        guard let list = role.attribute("protocolSupportEnumeration") else { return false }
        let saml2 = "urn:oasis:names:tc:SAML:2.0:protocol"
        return list.utf8.split(whereSeparator: XMLWhitespace.isWhitespace).contains { $0.elementsEqual(saml2.utf8) }
    }

    /// The shorter of `current` and the element's `cacheDuration`, if any.
    static func shortest(_ current: Duration?, _ element: xmlNodePtr) throws -> Duration? {
        guard let text = element.attribute("cacheDuration") else { return current }
        guard let duration = XMLDuration.parse(text) else {
            throw SAMLError(.metadataMalformed, "expected an xs:duration in cacheDuration, found \(SAMLError.quote(text))")
        }
        return current.map { min($0, duration) } ?? duration
    }

    /// The element's attribute `name` as an xs:dateTime, if present.
    static func instant(_ element: xmlNodePtr, _ name: StaticString) throws -> SAMLInstant? {
        guard let text = element.attribute(name) else { return nil }
        guard let instant = SAMLInstant(xmlDateTime: text) else {
            throw SAMLError(.metadataMalformed, "expected an xs:dateTime in \(name), found \(SAMLError.quote(text))")
        }
        return instant
    }

    /// The earlier of two optional instants.
    static func earliest(_ a: SAMLInstant?, _ b: SAMLInstant?) throws -> SAMLInstant? {
        switch (a, b) {
        case let (a?, b?): min(a, b)
        default: a ?? b
        }
    }

    /// The root's signature, with the responses' strict profile, against the configured signers.
    static func verifyRootSignature(of root: xmlNodePtr, document: xmlDocPtr, options: IdentityProviderMetadata.Options) throws {
        let signatures = root.children(Namespace.xmlDSig, "Signature")
        guard let signature = signatures.first else {
            throw SAMLError(.metadataUnsigned, "expected a signature on \(root.qualifiedDescription) by the metadata signer, found none")
        }
        guard signatures.count == 1 else {
            throw SAMLError(.signatureDuplicate, "expected one signature on \(root.qualifiedDescription), found \(signatures.count)")
        }
        try IDTable.registerForSignature(root: root, signature: signature, document: document)
        try SignatureProfile.check(signature: signature, parent: root, document: document, algorithms: options.algorithms)
        try SignatureVerification.verify(signature: signature, keys: options.signers, algorithms: options.algorithms)
    }
}
