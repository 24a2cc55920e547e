internal import CSAMLShim

/// The shape checks that come before any signature is looked at: one `samlp:Response` root with Version
/// 2.0, exactly one `saml:Assertion` in the whole document and as its direct child, IDs registered only
/// on those two elements and unique across the document, signatures only as direct children of them.
struct DocumentStructure {
    let response: xmlNodePtr
    let assertion: xmlNodePtr
    /// The signature on the Response and on the Assertion, if any.
    let responseSignature: xmlNodePtr?
    let assertionSignature: xmlNodePtr?

    init(_ tree: XMLTree) throws {
        let root = tree.root
        guard root.is(Namespace.samlProtocol, "Response") else {
            throw SAMLError(.structureNotAResponse, "expected a samlp:Response root element, found \(SAMLError.quote(root.qualifiedDescription))")
        }
        guard root.attribute("Version") == "2.0" else {
            throw SAMLError(.structureVersion, "expected Version \"2.0\", found \(SAMLError.quote(root.attribute("Version") ?? ""))")
        }
        response = root

        // One walk over the whole document: assertions (wrapping attacks hide a second one in
        // Extensions, Object, ...), signatures, and every ID value.
        var assertions: [xmlNodePtr] = []
        var encrypted = 0
        var signatures: [xmlNodePtr] = []
        var identifiers = Set<String>()
        var duplicate: String?
        root.forEachElement { element in
            if element.is(Namespace.samlAssertion, "Assertion") {
                assertions.append(element)
            } else if element.is(Namespace.samlAssertion, "EncryptedAssertion") {
                encrypted += 1
            } else if element.is(Namespace.xmlDSig, "Signature") {
                signatures.append(element)
            }
            if duplicate == nil { duplicate = Self.collectIDs(of: element, into: &identifiers) }
            return true
        }
        guard assertions.count + encrypted <= 1 else {
            throw SAMLError(.assertionMultiple, "expected one Assertion, found \(assertions.count + encrypted)")
        }
        guard encrypted == 0 else {
            throw SAMLError(.assertionEncrypted, "expected a plain Assertion, found an EncryptedAssertion (decryption is not configured)")
        }
        guard let assertion = assertions.first else {
            throw SAMLError(.assertionMissing, "expected one Assertion, found none")
        }
        guard assertion.pointee.parent == root else {
            throw SAMLError(.assertionMisplaced, "expected the Assertion as a direct child of the Response, found it deeper")
        }
        guard assertion.attribute("Version") == "2.0" else {
            throw SAMLError(.structureVersion, "expected Assertion Version \"2.0\", found \(SAMLError.quote(assertion.attribute("Version") ?? ""))")
        }
        self.assertion = assertion
        if let duplicate {
            throw SAMLError(.idDuplicate, "expected unique IDs, found \(SAMLError.quote(duplicate)) twice")
        }
        try Self.registerIDs(tree.document, signable: [root, assertion])

        var responseSignature: xmlNodePtr?
        var assertionSignature: xmlNodePtr?
        for signature in signatures {
            let parent = signature.pointee.parent
            if parent == root {
                guard responseSignature == nil else {
                    throw SAMLError(.signatureDuplicate, "expected at most one signature on the Response, found two")
                }
                responseSignature = signature
            } else if parent == assertion {
                guard assertionSignature == nil else {
                    throw SAMLError(.signatureDuplicate, "expected at most one signature on the Assertion, found two")
                }
                assertionSignature = signature
            } else {
                let name = parent.map { xmlNodePtr($0).qualifiedDescription } ?? "?"
                throw SAMLError(.signatureMisplaced, "expected signatures only on the Response or the Assertion, found one in \(SAMLError.quote(name))")
            }
        }
        self.responseSignature = responseSignature
        self.assertionSignature = assertionSignature
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

    /// Registers the unqualified `ID` of the Response and the Assertion, and nothing else, as XML IDs.
    private static func registerIDs(_ document: xmlDocPtr, signable: [xmlNodePtr]) throws {
        for element in signable {
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
}
