internal import CSAMLShim

// Reading SAML metadata from the libxml2 tree; the model and the public API are in
// Metadata/IdentityProviderMetadata.swift.
extension IdentityProviderMetadata {
    static func readAll(_ xml: [UInt8], options: Options) throws -> [IdentityProviderMetadata] {
        let tree = try xml.withUnsafeBytes { try SafeXMLParser.parse($0, limits: options.limits) }
        let root = tree.root
        let md = Namespace.samlMetadata
        guard root.is(md, "EntityDescriptor") || root.is(md, "EntitiesDescriptor") else {
            throw SAMLError(
                .metadataMalformed,
                "expected md:EntityDescriptor or md:EntitiesDescriptor, found \(SAMLError.quote(root.qualifiedDescription))")
        }
        if !options.signers.isEmpty {
            try verifySignature(of: root, document: tree.document, options: options)
        }
        var found: [IdentityProviderMetadata] = []
        try collect(root, validUntil: nil, cacheDuration: nil, options: options, into: &found)
        guard !found.isEmpty else {
            throw SAMLError(.metadataNoIdentityProvider, "expected an entity with an IDPSSODescriptor and a signing key, found none")
        }
        return found
    }

    private static func collect(
        _ element: xmlNodePtr, validUntil: SAMLInstant?, cacheDuration: Duration?, options: Options,
        into found: inout [IdentityProviderMetadata]
    ) throws {
        let md = Namespace.samlMetadata
        let until = try earliest(validUntil, try instant(element, "validUntil"))
        if let until, until <= options.now {
            throw SAMLError(
                .metadataExpired, "expected metadata valid at \(options.now), found validUntil \(until) on \(element.qualifiedDescription)")
        }
        var cache = cacheDuration
        if let text = element.attribute("cacheDuration") {
            guard let duration = XMLDuration.parse(text) else {
                throw SAMLError(.metadataMalformed, "expected an xs:duration in cacheDuration, found \(SAMLError.quote(text))")
            }
            cache = cache.map { min($0, duration) } ?? duration
        }
        if element.is(md, "EntitiesDescriptor") {
            for child in element.elementChildren where child.is(md, "EntitiesDescriptor") || child.is(md, "EntityDescriptor") {
                try collect(child, validUntil: until, cacheDuration: cache, options: options, into: &found)
            }
            return
        }
        guard let entityID = element.attribute("entityID").map(XMLWhitespace.trimmed), !entityID.isEmpty else {
            throw SAMLError(.metadataMalformed, "expected an entityID on md:EntityDescriptor, found none")
        }
        let roles = element.children(md, "IDPSSODescriptor") + element.children(md, "AttributeAuthorityDescriptor")
        var keys: [TrustedKey] = []
        var seen = Set<String>()
        for role in roles {
            for descriptor in role.children(md, "KeyDescriptor") {
                let use = descriptor.attribute("use").map(XMLWhitespace.trimmed)
                guard use == nil || use == "signing" else { continue }
                guard let keyInfo = descriptor.firstChild(Namespace.xmlDSig, "KeyInfo") else { continue }
                for key in try KeyInfoKeys.read(keyInfo, entityID: entityID) where seen.insert(key.fingerprint).inserted {
                    keys.append(key)
                }
            }
        }
        guard !roles.isEmpty, !keys.isEmpty else { return }
        let endpoints = element.children(md, "IDPSSODescriptor").flatMap { $0.children(md, "SingleSignOnService") }.map {
            Endpoint(binding: $0.attribute("Binding") ?? "", location: $0.attribute("Location") ?? "")
        }
        found.append(
            IdentityProviderMetadata(
                entityID: entityID, signingKeys: keys, singleSignOnServices: endpoints, validUntil: until, cacheDuration: cache))
    }

    private static func instant(_ element: xmlNodePtr, _ name: StaticString) throws -> SAMLInstant? {
        guard let text = element.attribute(name) else { return nil }
        guard let instant = SAMLInstant(xmlDateTime: text) else {
            throw SAMLError(.metadataMalformed, "expected an xs:dateTime in \(name), found \(SAMLError.quote(text))")
        }
        return instant
    }

    private static func earliest(_ a: SAMLInstant?, _ b: SAMLInstant?) throws -> SAMLInstant? {
        switch (a, b) {
        case let (a?, b?): min(a, b)
        default: a ?? b
        }
    }

    /// The root's signature, with the responses' strict profile, against the configured signers.
    private static func verifySignature(of root: xmlNodePtr, document: xmlDocPtr, options: Options) throws {
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

/// The ID table of a signed document other than a response (metadata): the root's unqualified `ID`,
/// `xml:id` anywhere, the `Id`s xmlsec would register inside the signature; every value unique.
enum IDTable {
    static func registerForSignature(root: xmlNodePtr, signature: xmlNodePtr, document: xmlDocPtr) throws {
        var seen = Set<String>()
        var duplicate: String?
        root.forEachElement { element in
            var attribute = element.pointee.properties
            while let current = attribute {
                attribute = current.pointee.next
                if current.is("ID", namespace: nil) || current.is("id", namespace: Namespace.xml), !seen.insert(current.value).inserted {
                    duplicate = duplicate ?? current.value
                }
            }
            return true
        }
        var inSignature: [xmlAttrPtr] = []
        signature.forEachElement { element in
            var attribute = element.pointee.properties
            while let current = attribute {
                attribute = current.pointee.next
                if current.pointee.name.map({ XMLName.equals($0, "Id") }) ?? false {
                    inSignature.append(current)
                    if !seen.insert(current.value).inserted { duplicate = duplicate ?? current.value }
                }
            }
            return true
        }
        if let duplicate {
            throw SAMLError(.idDuplicate, "expected unique IDs, found \(SAMLError.quote(duplicate)) twice")
        }
        for attribute in (root.attributeNode("ID").map { [$0] } ?? []) + inSignature where xmlGetID(document, attribute.value) == nil {
            guard xmlAddID(nil, document, attribute.value, attribute) != nil else {
                throw SAMLError(.idDuplicate, "expected to register the ID \(SAMLError.quote(attribute.value)), found it taken")
            }
        }
    }
}

/// `xs:duration` (`P1DT2H`, `PT30M`, `-P1Y`...), enough for `cacheDuration`: years count 365 days and
/// months 30.
enum XMLDuration {
    static func parse(_ text: String) -> Duration? {
        var bytes = Array(XMLWhitespace.trimmed(text).utf8)[...]
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        }
        guard bytes.first == UInt8(ascii: "P"), bytes.count > 1 else { return nil }
        bytes = bytes.dropFirst()
        var seconds = 0.0
        var inTime = false
        var number = ""
        var sawComponent = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "T"):
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
                number.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                guard let value = Double(number) else { return nil }
                let unit: Double
                switch (inTime, byte) {
                case (false, UInt8(ascii: "Y")): unit = 365 * 86_400
                case (false, UInt8(ascii: "M")): unit = 30 * 86_400
                case (false, UInt8(ascii: "D")): unit = 86_400
                case (true, UInt8(ascii: "H")): unit = 3600
                case (true, UInt8(ascii: "M")): unit = 60
                case (true, UInt8(ascii: "S")): unit = 1
                default: return nil
                }
                seconds += value * unit
                number = ""
                sawComponent = true
            }
        }
        guard number.isEmpty, sawComponent, seconds < 1e12 else { return nil }
        return .milliseconds(Int64((negative ? -seconds : seconds) * 1000))
    }
}
