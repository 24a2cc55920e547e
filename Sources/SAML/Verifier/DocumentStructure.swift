internal import CSAMLShim

/// The shape checks that come before any signature is looked at: one `samlp:Response` root with Version
/// 2.0, exactly one `saml:Assertion` or `saml:EncryptedAssertion` in the whole document and as a direct
/// child of the Response, IDs registered only on the Response and the Assertion and unique across the
/// document, signatures only as direct children of those two.
///
/// An encrypted assertion is adopted after decryption (``adoptDecryptedAssertion(_:document:limits:)``),
/// which applies the same checks to the plaintext. A class: the verification stages share and complete it.
final class DocumentStructure {
    let response: xmlNodePtr
    /// The signature on the Response, if any.
    let responseSignature: xmlNodePtr?
    /// The EncryptedAssertion, when the assertion arrived encrypted.
    let encryptedAssertion: xmlNodePtr?
    /// The assertion; nil until an encrypted one is decrypted.
    private(set) var assertion: xmlNodePtr?
    /// The signature on the Assertion, if any.
    private(set) var assertionSignature: xmlNodePtr?
    /// Every ID value seen so far.
    private var identifiers = Set<String>()

    init(_ tree: XMLTree) throws {
        let root = tree.root
        guard root.is(Namespace.samlProtocol, "Response") else {
            throw SAMLError(.structureNotAResponse, "expected a samlp:Response root element, found \(SAMLError.quote(root.qualifiedDescription))")
        }
        guard root.attribute("Version") == "2.0" else {
            throw SAMLError(.structureVersion, "expected Version \"2.0\", found \(SAMLError.quote(root.attribute("Version") ?? ""))")
        }
        response = root
        let scan = try Self.scan(root, identifiers: &identifiers)
        guard scan.assertions.count + scan.encrypted.count <= 1 else {
            throw SAMLError(.assertionMultiple, "expected one Assertion, found \(scan.assertions.count + scan.encrypted.count)")
        }
        guard let single = scan.assertions.first ?? scan.encrypted.first else {
            throw SAMLError(.assertionMissing, "expected one Assertion, found none")
        }
        guard single.pointee.parent == root else {
            throw SAMLError(.assertionMisplaced, "expected the Assertion as a direct child of the Response, found it deeper")
        }
        if let duplicate = scan.duplicate {
            throw SAMLError(.idDuplicate, "expected unique IDs, found \(SAMLError.quote(duplicate)) twice")
        }
        encryptedAssertion = scan.encrypted.first
        var responseSignature: xmlNodePtr?
        for signature in scan.signatures {
            if signature.pointee.parent == root {
                guard responseSignature == nil else {
                    throw SAMLError(.signatureDuplicate, "expected at most one signature on the Response, found two")
                }
                responseSignature = signature
            } else if signature.pointee.parent != single || scan.encrypted.first != nil {
                throw Self.misplaced(signature)
            }
        }
        self.responseSignature = responseSignature
        try Self.register(root, document: tree.document)
        if let assertion = scan.assertions.first {
            try adopt(assertion, signatures: scan.signatures.filter { $0.pointee.parent == assertion }, document: tree.document)
        }
    }

    /// Takes the assertion that decryption put in place of the EncryptedData: the same limits, ID and
    /// signature rules as for a plain assertion, over its subtree.
    func adoptDecryptedAssertion(_ element: xmlNodePtr, document: xmlDocPtr, limits: XMLParserLimits) throws {
        guard element.is(Namespace.samlAssertion, "Assertion") else {
            throw SAMLError(.assertionMissing, "expected a saml:Assertion as the plaintext, found \(SAMLError.quote(element.qualifiedDescription))")
        }
        try SafeXMLParser.checkLimits(element, limits: limits)
        let scan = try Self.scan(element, identifiers: &identifiers)
        guard scan.assertions.count == 1, scan.encrypted.isEmpty else {
            throw SAMLError(.assertionMultiple, "expected one Assertion in the plaintext, found \(scan.assertions.count + scan.encrypted.count)")
        }
        if let duplicate = scan.duplicate {
            throw SAMLError(.idDuplicate, "expected unique IDs, found \(SAMLError.quote(duplicate)) twice")
        }
        for signature in scan.signatures where signature.pointee.parent != element {
            throw Self.misplaced(signature)
        }
        try adopt(element, signatures: scan.signatures, document: document)
    }

    private func adopt(_ assertion: xmlNodePtr, signatures: [xmlNodePtr], document: xmlDocPtr) throws {
        guard assertion.attribute("Version") == "2.0" else {
            throw SAMLError(.structureVersion, "expected Assertion Version \"2.0\", found \(SAMLError.quote(assertion.attribute("Version") ?? ""))")
        }
        guard signatures.count <= 1 else {
            throw SAMLError(.signatureDuplicate, "expected at most one signature on the Assertion, found two")
        }
        try Self.register(assertion, document: document)
        self.assertion = assertion
        assertionSignature = signatures.first
    }

    private static func misplaced(_ signature: xmlNodePtr) -> SAMLError {
        let name = signature.pointee.parent.map { xmlNodePtr($0).qualifiedDescription } ?? "?"
        return SAMLError(.signatureMisplaced, "expected signatures only on the Response or the Assertion, found one in \(SAMLError.quote(name))")
    }

    /// One walk over a subtree: assertions (wrapping attacks hide a second one in Extensions, Object, ...),
    /// encrypted assertions, signatures, and the first duplicate ID value.
    private static func scan(_ root: xmlNodePtr, identifiers: inout Set<String>) throws
        -> (assertions: [xmlNodePtr], encrypted: [xmlNodePtr], signatures: [xmlNodePtr], duplicate: String?)
    {
        var assertions: [xmlNodePtr] = []
        var encrypted: [xmlNodePtr] = []
        var signatures: [xmlNodePtr] = []
        var duplicate: String?
        root.forEachElement { element in
            if element.is(Namespace.samlAssertion, "Assertion") {
                assertions.append(element)
            } else if element.is(Namespace.samlAssertion, "EncryptedAssertion") {
                encrypted.append(element)
            } else if element.is(Namespace.xmlDSig, "Signature") {
                signatures.append(element)
            }
            if duplicate == nil { duplicate = collectIDs(of: element, into: &identifiers) }
            return true
        }
        return (assertions, encrypted, signatures, duplicate)
    }

    /// Adds the values of `element`'s ID attributes (unqualified `ID`, and `xml:id`) to `seen` and
    /// returns the first value seen before. xmlsec's own `xmlSecAddIDs` keeps the first duplicate and
    /// ignores namespaces, so IDs are checked and registered here instead.
    private static func collectIDs(of element: xmlNodePtr, into seen: inout Set<String>) -> String? {
        var attribute = element.pointee.properties
        while let current = attribute {
            attribute = current.pointee.next
            guard current.is("ID", namespace: nil) || current.is("id", namespace: Namespace.xml) else { continue }
            let value = current.value
            guard seen.insert(value).inserted else { return value }
        }
        return nil
    }

    /// Registers the unqualified `ID` of a Response or Assertion (and nothing else) as an XML ID.
    private static func register(_ element: xmlNodePtr, document: xmlDocPtr) throws {
        guard let attribute = element.attributeNode("ID"), case let value = attribute.value, !value.isEmpty else {
            throw SAMLError(.idMissing, "expected an ID on \(element.qualifiedDescription), found none")
        }
        if let registered = xmlGetID(document, value) {
            guard registered.pointee.parent == element else {
                throw SAMLError(.idDuplicate, "expected the ID \(SAMLError.quote(value)) to name \(element.qualifiedDescription), found it naming another element")
            }
        } else if xmlAddID(nil, document, value, attribute) == nil {
            throw SAMLError(.idDuplicate, "expected to register the ID \(SAMLError.quote(value)), found it taken")
        }
    }
}
