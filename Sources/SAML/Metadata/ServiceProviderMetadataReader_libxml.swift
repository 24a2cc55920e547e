internal import CSAMLShim

// Reading SP metadata from the libxml2 tree; the model, the writer and the public API are in
// Metadata/ServiceProviderMetadata.swift.
extension ServiceProviderMetadata {
    static func readDocument(_ xml: [UInt8], options: Options) throws -> ServiceProviderMetadata {
        let tree = try xml.withUnsafeBytes { try SafeXMLParser.parse($0, limits: options.limits) }
        let root = tree.root
        let md = Namespace.samlMetadata
        guard root.is(md, "EntityDescriptor") else {
            throw SAMLError(.metadataMalformed, "expected md:EntityDescriptor, found \(SAMLError.quote(root.qualifiedDescription))")
        }
        if !options.signers.isEmpty {
            try MetadataDocument.verifyRootSignature(of: root, document: tree.document, options: options)
        }
        guard let entityID = root.attribute("entityID").map(XMLWhitespace.trimmed), !entityID.isEmpty else {
            throw SAMLError(.metadataMalformed, "expected an entityID on md:EntityDescriptor, found none")
        }
        let roles = root.children(md, "SPSSODescriptor").filter(MetadataDocument.supportsSAML2)
        guard roles.count == 1, let role = roles.first else {
            throw SAMLError(
                .metadataMalformed,
                "expected one SPSSODescriptor of \(SAMLError.quote(entityID)) whose protocolSupportEnumeration lists SAML 2.0, found \(roles.count)"
            )
        }
        let until = try MetadataDocument.earliest(
            try MetadataDocument.instant(root, "validUntil"), try MetadataDocument.instant(role, "validUntil"))
        if let until, until <= options.now {
            throw SAMLError(
                .metadataExpired, "expected metadata valid at \(options.now), found validUntil \(until) for \(SAMLError.quote(entityID))")
        }
        var metadata = try ServiceProviderMetadata(entityID: entityID, assertionConsumerServiceURLs: [])
        metadata.validity = until.map { .milliseconds($0.millisecondsSinceEpoch - options.now.millisecondsSinceEpoch) }
        metadata.cacheDuration = try MetadataDocument.shortest(try MetadataDocument.shortest(nil, root), role)
        metadata.authnRequestsSigned = try boolean(role, "AuthnRequestsSigned")
        metadata.wantAssertionsSigned = try boolean(role, "WantAssertionsSigned")
        try readKeys(of: role, entityID: entityID, into: &metadata)
        metadata.nameIDFormats = role.children(md, "NameIDFormat").map { XMLWhitespace.trimmed($0.textContent) }
        metadata.assertionConsumerServices = try role.children(md, "AssertionConsumerService").map { service in
            guard let binding = service.attribute("Binding"), let location = service.attribute("Location"),
                let index = service.attribute("index").flatMap({ UInt16(XMLWhitespace.trimmed($0)) })
            else {
                throw SAMLError(
                    .metadataMalformed,
                    "expected Binding, Location and an xs:unsignedShort index on each AssertionConsumerService of \(SAMLError.quote(entityID))"
                )
            }
            return AssertionConsumerService(
                location: XMLWhitespace.trimmed(location), binding: XMLWhitespace.trimmed(binding), index: index,
                isDefault: try boolean(service, "isDefault"))
        }
        return metadata
    }

    /// The signing and encryption keys of the role's `md:KeyDescriptor`s (a descriptor without `use` gives
    /// both, SAML Metadata 2.4.1.1), each key once per use, and the encryption descriptors' algorithms.
    private static func readKeys(of role: xmlNodePtr, entityID: String, into metadata: inout ServiceProviderMetadata) throws {
        var signing: [TrustedKey] = []
        var encryption: [TrustedKey] = []
        var methods: [String] = []
        for descriptor in role.children(Namespace.samlMetadata, "KeyDescriptor") {
            let use = descriptor.attribute("use").map(XMLWhitespace.trimmed)
            guard let keyInfo = descriptor.firstChild(Namespace.xmlDSig, "KeyInfo"),
                let key = try KeyInfoKeys.read(keyInfo, entityID: entityID)
            else { continue }
            if use == nil || use == "signing", !signing.contains(where: { $0.fingerprint == key.fingerprint }) {
                signing.append(key)
            }
            if use == nil || use == "encryption" {
                if !encryption.contains(where: { $0.fingerprint == key.fingerprint }) { encryption.append(key) }
                for method in descriptor.children(Namespace.samlMetadata, "EncryptionMethod") {
                    if let algorithm = method.attribute("Algorithm").map(XMLWhitespace.trimmed), !methods.contains(algorithm) {
                        methods.append(algorithm)
                    }
                }
            }
        }
        metadata.signingKeys = signing
        metadata.encryptionKeys = encryption
        metadata.encryptionMethods = methods
    }

    /// An optional `xs:boolean` attribute (`true`, `false`, `1`, `0`); absent is false.
    private static func boolean(_ element: xmlNodePtr, _ name: StaticString) throws -> Bool {
        guard let text = element.attribute(name).map(XMLWhitespace.trimmed) else { return false }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: throw SAMLError(.metadataMalformed, "expected an xs:boolean in \(name), found \(SAMLError.quote(text))")
        }
    }
}
