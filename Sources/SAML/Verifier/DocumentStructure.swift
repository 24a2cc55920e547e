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

        // Exactly one assertion anywhere: wrapping attacks hide a second one in Extensions, Object, ...
        let assertions = root.descendants { $0.is(Namespace.samlAssertion, "Assertion") }
        let encrypted = root.descendants { $0.is(Namespace.samlAssertion, "EncryptedAssertion") }
        guard assertions.count + encrypted.count <= 1 else {
            throw SAMLError(.assertionMultiple, "expected one Assertion, found \(assertions.count + encrypted.count)")
        }
        guard encrypted.isEmpty else {
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

        try Self.registerIDs(tree.document, root: root, signable: [root, assertion])

        var responseSignature: xmlNodePtr?
        var assertionSignature: xmlNodePtr?
        for signature in root.descendants(where: { $0.is(Namespace.xmlDSig, "Signature") }) {
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

    /// Registers the unqualified `ID` of the Response and the Assertion (and nothing else) as XML IDs,
    /// after checking that no ID value (`ID` on any element, or `xml:id`) occurs twice: xmlsec's own
    /// `xmlSecAddIDs` keeps the first duplicate and ignores namespaces.
    private static func registerIDs(_ document: xmlDocPtr, root: xmlNodePtr, signable: [xmlNodePtr]) throws {
        var seen = Set<String>()
        for element in root.descendants(where: { _ in true }) {
            var attribute = element.pointee.properties
            while let current = attribute {
                let name = current.pointee.name.map { String(cString: $0) } ?? ""
                let namespace = current.pointee.ns?.pointee.href.map { String(cString: $0) }
                let isID = (name == "ID" && namespace == nil)
                    || (name == "id" && namespace == "http://www.w3.org/XML/1998/namespace")
                if isID, let value = element.attribute(name) ?? xmlIDValue(current) {
                    guard seen.insert(value).inserted else {
                        throw SAMLError(.idDuplicate, "expected unique IDs, found \(SAMLError.quote(value)) twice")
                    }
                }
                attribute = current.pointee.next
            }
        }
        for element in signable {
            guard let attribute = element.attributeNode("ID"), let value = element.attribute("ID"), !value.isEmpty else {
                throw SAMLError(.idMissing, "expected an ID on \(element.qualifiedDescription), found none")
            }
            if xmlGetID(document, value) == nil {
                guard xmlAddID(nil, document, value, attribute) != nil else {
                    throw SAMLError(.idDuplicate, "expected to register the ID \(SAMLError.quote(value)), found it taken")
                }
            } else if xmlGetID(document, value)?.pointee.parent != element {
                throw SAMLError(.idDuplicate, "expected the ID \(SAMLError.quote(value)) to name \(element.qualifiedDescription), found it naming another element")
            }
        }
    }

    private static func xmlIDValue(_ attribute: xmlAttrPtr) -> String? {
        guard let text = attribute.pointee.children?.pointee.content else { return nil }
        return String(cString: text)
    }
}
