internal import CSAMLShim

// Reading SAML metadata from the libxml2 tree; the model and the public API are in
// Metadata/IdentityProviderMetadata.swift.
extension IdentityProviderMetadata {
    /// What a document yields: the identity providers, and the entities left out with the reason, so that
    /// asking for one of those by its entity ID reports why instead of "not found".
    struct Reading {
        var found: [IdentityProviderMetadata] = []
        var skipped: [(entityID: String, reason: SAMLError)] = []

        /// The refusal when nothing was found: the only skipped entity's reason, or for several the first
        /// one's message under the code they share (`metadata.no-identity-provider` when they differ).
        var refusal: SAMLError {
            guard let first = skipped.first else {
                return SAMLError(.metadataNoIdentityProvider, "expected an entity with an IDPSSODescriptor and a signing key, found none")
            }
            guard skipped.count > 1 else { return first.reason }
            let code = skipped.allSatisfy { $0.reason.code == first.reason.code } ? first.reason.code : .metadataNoIdentityProvider
            return SAMLError(code, "\(first.reason.message) (and \(skipped.count - 1) other entities without a usable identity provider)")
        }
    }

    static func readAll(_ xml: [UInt8], options: Options) throws -> Reading {
        let tree = try xml.withUnsafeBytes { try SafeXMLParser.parse($0, limits: options.limits) }
        let root = tree.root
        let md = Namespace.samlMetadata
        guard root.is(md, "EntityDescriptor") || root.is(md, "EntitiesDescriptor") else {
            throw SAMLError(
                .metadataMalformed,
                "expected md:EntityDescriptor or md:EntitiesDescriptor, found \(SAMLError.quote(root.qualifiedDescription))")
        }
        if !options.signers.isEmpty {
            try MetadataDocument.verifyRootSignature(of: root, document: tree.document, options: options)
        }
        var reading = Reading()
        try collect(root, validUntil: nil, cacheDuration: nil, options: options, into: &reading)
        return reading
    }

    private static func collect(
        _ element: xmlNodePtr, validUntil: SAMLInstant?, cacheDuration: Duration?, options: Options, into reading: inout Reading
    ) throws {
        let md = Namespace.samlMetadata
        let until = try MetadataDocument.earliest(validUntil, try MetadataDocument.instant(element, "validUntil"))
        if let until, until <= options.now {
            throw SAMLError(
                .metadataExpired, "expected metadata valid at \(options.now), found validUntil \(until) on \(element.qualifiedDescription)")
        }
        let cache = try MetadataDocument.shortest(cacheDuration, element)
        if element.is(md, "EntitiesDescriptor") {
            for child in element.elementChildren where child.is(md, "EntitiesDescriptor") || child.is(md, "EntityDescriptor") {
                try collect(child, validUntil: until, cacheDuration: cache, options: options, into: &reading)
            }
            return
        }
        guard let entityID = element.attribute("entityID").map(XMLWhitespace.trimmed), !entityID.isEmpty else {
            throw SAMLError(.metadataMalformed, "expected an entityID on md:EntityDescriptor, found none")
        }
        do {
            reading.found.append(
                try identityProvider(element, entityID: entityID, validUntil: until, cacheDuration: cache, options: options))
        } catch let reason as SAMLError where Self.entityScoped.contains(reason.code) {
            reading.skipped.append((entityID, reason))
        }
    }

    /// The refusals that leave one entity out of an aggregate rather than refuse the document; asking
    /// for that entity, or finding no other, reports them.
    private static let entityScoped: [SAMLError.Code] = [.metadataNoIdentityProvider, .metadataExpired, .metadataKeyConflict]

    /// The identity provider of one `md:EntityDescriptor`, from its SAML 2.0 IdP roles that are still valid.
    ///
    /// A role (`md:IDPSSODescriptor`, `md:AttributeAuthorityDescriptor`) is used only when its
    /// `protocolSupportEnumeration` lists SAML 2.0 (Metadata 2.4.1: a SAML 1.1-only IdP's keys and endpoints
    /// are not a SAML 2.0 IdP's) and its own `validUntil`, if any, is after `now` (Metadata 2.4.1 gives
    /// roles `validUntil` and `cacheDuration` too); the roles used narrow the entity's validity.
    ///
    /// - Throws: ``SAMLError/Code/metadataNoIdentityProvider`` without a SAML 2.0 IdP role or signing key,
    ///   ``SAMLError/Code/metadataExpired`` when every SAML 2.0 IdP role has expired,
    ///   ``SAMLError/Code/metadataKeyConflict`` for a KeyInfo naming two keys (these three leave just this
    ///   entity out of an aggregate); `metadata.malformed` refuses the whole document.
    private static func identityProvider(
        _ entity: xmlNodePtr, entityID: String, validUntil: SAMLInstant?, cacheDuration: Duration?, options: Options
    ) throws -> IdentityProviderMetadata {
        let md = Namespace.samlMetadata
        let roles = entity.children(md, "IDPSSODescriptor") + entity.children(md, "AttributeAuthorityDescriptor")
        let saml2 = roles.filter(MetadataDocument.supportsSAML2)
        guard !saml2.isEmpty else {
            throw SAMLError(
                .metadataNoIdentityProvider,
                "expected an IDPSSODescriptor or AttributeAuthorityDescriptor of \(SAMLError.quote(entityID)) whose "
                    + "protocolSupportEnumeration lists SAML 2.0, found \(roles.isEmpty ? "no such role" : "\(roles.count) for other protocols only")"
            )
        }
        var until = validUntil
        var cache = cacheDuration
        var used: [xmlNodePtr] = []
        var expired: (role: xmlNodePtr, validUntil: SAMLInstant)?
        for role in saml2 {
            let roleUntil = try MetadataDocument.instant(role, "validUntil")
            if let roleUntil, roleUntil <= options.now {
                expired = expired ?? (role, roleUntil)
                continue
            }
            until = try MetadataDocument.earliest(until, roleUntil)
            cache = try MetadataDocument.shortest(cache, role)
            used.append(role)
        }
        if used.isEmpty, let expired {
            throw SAMLError(
                .metadataExpired,
                "expected a SAML 2.0 role of \(SAMLError.quote(entityID)) valid at \(options.now), found validUntil "
                    + "\(expired.validUntil) on its \(expired.role.qualifiedDescription)")
        }
        var keys: [TrustedKey] = []
        var seen = Set<String>()
        for role in used {
            for descriptor in role.children(md, "KeyDescriptor") {
                let use = descriptor.attribute("use").map(XMLWhitespace.trimmed)
                guard use == nil || use == "signing" else { continue }
                guard let keyInfo = descriptor.firstChild(Namespace.xmlDSig, "KeyInfo") else { continue }
                if let key = try KeyInfoKeys.read(keyInfo, entityID: entityID), seen.insert(key.fingerprint).inserted {
                    keys.append(key)
                }
            }
        }
        guard !keys.isEmpty else {
            throw SAMLError(
                .metadataNoIdentityProvider, "expected a signing key in the SAML 2.0 IdP roles of \(SAMLError.quote(entityID)), found none")
        }
        let endpoints = used.filter { $0.is(md, "IDPSSODescriptor") }.flatMap { $0.children(md, "SingleSignOnService") }.map {
            Endpoint(binding: $0.attribute("Binding") ?? "", location: $0.attribute("Location") ?? "")
        }
        return IdentityProviderMetadata(
            entityID: entityID, signingKeys: keys, singleSignOnServices: endpoints, validUntil: until, cacheDuration: cache)
    }
}

/// The ID table of a signed document other than a response (metadata): the root's unqualified `ID`,
/// `xml:id` anywhere, the `Id`s xmlsec would register inside the signature; every value unique.
///
/// Every one of these values, and every unqualified `ID` elsewhere in the document, must be made of
/// xs:NCName characters (``NCName/isAcceptedID(_:)``; SAML's `ID` and XML-DSig's `Id` are `xs:ID`), checked before xmlsec sees the document:
/// the Reference URI (``SignatureProfile``: `""` or `#` + the root's ID) is then a plain name looked up
/// in this table, never an XPointer or XPath expression (issue 33).
enum IDTable {
    static func registerForSignature(root: xmlNodePtr, signature: xmlNodePtr, document: xmlDocPtr) throws {
        var seen = Set<String>()
        var duplicate: String?
        var malformed: String?
        func note(_ value: String) {
            if !seen.insert(value).inserted { duplicate = duplicate ?? value }
            if malformed == nil, !NCName.isAcceptedID(value) { malformed = value }
        }
        root.forEachElement { element in
            var attribute = element.pointee.properties
            while let current = attribute {
                attribute = current.pointee.next
                if current.is("ID", namespace: nil) || current.is("id", namespace: Namespace.xml) { note(current.value) }
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
                    note(current.value)
                }
            }
            return true
        }
        if let malformed {
            throw SAMLError(
                .idMalformed, "expected every ID of signed metadata to be made of xs:NCName characters, found \(SAMLError.quote(malformed))"
            )
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
    /// A positive duration as hours, minutes and seconds (`PT6H`, `PT1H30M`, `PT0.5S`), milliseconds kept.
    static func format(_ duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let rest = milliseconds % 60_000
        var text = "PT"
        if hours > 0 { text += "\(hours)H" }
        if minutes > 0 { text += "\(minutes)M" }
        if rest > 0 || text == "PT" {
            var fraction = String(String(rest % 1000 + 1000).dropFirst())
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "\(rest / 1000)" + (fraction.isEmpty ? "" : "." + fraction) + "S"
        }
        return text
    }

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
