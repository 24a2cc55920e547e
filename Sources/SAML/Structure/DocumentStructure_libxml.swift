internal import CSAMLShim

/// The shape checks that come before any signature is looked at: one `samlp:Response` root with Version
/// 2.0, exactly one `saml:Assertion` or `saml:EncryptedAssertion` in the whole document and as a direct
/// child of the Response, signatures only as direct children of those two, and the document's ID table
/// exactly what these checks saw: the unqualified `ID` of the Response and the Assertion, `xml:id`
/// (libxml2 registers it while parsing) and every `Id` inside a `ds:Signature`, `xenc:EncryptedData` or
/// `xenc:EncryptedKey` (which xmlsec registers when it processes them; registered here first, and the
/// shim checks that xmlsec adds nothing), every value made of xs:NCName characters (``NCName/isAcceptedID(_:)``) and unique across all of them.
///
/// An encrypted assertion is adopted after decryption (``adoptDecryptedAssertion(_:limits:)``), as a
/// document of its own, with the same checks. A class: the verification stages share and complete it.
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
    /// Every ID value seen so far, as bytes (``Swift/String/hasSameBytes(as:)``: never hashed as a String).
    private var identifiers = Set<[UInt8]>()
    /// The fingerprint of the pinned key that verified the last signature (the Assertion's when both).
    var signingKeyFingerprint = ""
    /// The legacy algorithms (SHA-1, SHA-224) of the signatures that verified.
    var legacyAlgorithms: Set<String> = []
    /// What the recovery of cookbook-damaged signed content restored (``SignatureRecovery``).
    var repairs: [SAMLResponseDecoder.Repair] = []
    /// The document the decrypted assertion lives in.
    private(set) var decryptedAssertionTree: XMLTree?

    init(_ tree: XMLTree) throws {
        let root = tree.root
        guard root.is(Namespace.samlProtocol, "Response") else {
            throw SAMLError(
                .structureNotAResponse, "expected a samlp:Response root element, found \(SAMLError.quote(root.qualifiedDescription))")
        }
        guard root.attribute("Version") == "2.0" else {
            throw SAMLError(.structureVersion, "expected Version \"2.0\", found \(SAMLError.quote(root.attribute("Version") ?? ""))")
        }
        response = root
        let scan = try Self.scan(root, identifiers: &identifiers)
        try scan.checkWellFormed()
        guard scan.assertions.count + scan.encrypted.count <= 1 else {
            throw SAMLError(.assertionMultiple, "expected one Assertion, found \(scan.assertions.count + scan.encrypted.count)")
        }
        guard let single = scan.assertions.first ?? scan.encrypted.first else {
            // An IdP's error Response carries no assertion (Profiles 4.1.4.2): report its status.
            try StatusPolicy.check(ResponseContentReader.status(of: root))
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
        try Self.register(scan.xmlsecIDs, document: tree.document)
        if let assertion = scan.assertions.first {
            try adopt(assertion, signatures: scan.signatures.filter { $0.pointee.parent == assertion }, document: tree.document)
        }
    }

    /// Takes the decrypted assertion as a document of its own (as OpenSAML's decrypter does), so that its
    /// signature is canonicalised in the namespace context the IdP signed it in, whatever the
    /// canonicalisation; namespace declarations it used from the enclosing Response are declared on it.
    /// The same ID and signature rules as for a plain assertion apply over its subtree.
    func adoptDecryptedAssertion(_ plaintext: Decryption.Plaintext) throws {
        defer { xmlFreeNodeList(plaintext.nodes) }
        guard plaintext.element.is(Namespace.samlAssertion, "Assertion") else {
            throw SAMLError(
                .assertionMissing,
                "expected a saml:Assertion as the plaintext, found \(SAMLError.quote(plaintext.element.qualifiedDescription))")
        }
        // The plaintext was parsed in the EncryptedAssertion's namespace context: a plaintext that is not
        // self-contained uses the Response's declarations, which are declared on it, with their own
        // prefixes, before it moves to a document of its own.
        try plaintext.element.declareInheritedNamespaces()
        guard let document = xmlNewDoc("1.0") else {
            throw SAMLError(.decryptionFailed, "expected memory for the decrypted assertion, found none")
        }
        let tree = XMLTree(document)
        guard let element = xmlDocCopyNode(plaintext.element, document, 1) else {
            throw SAMLError(.decryptionFailed, "expected memory for the decrypted assertion, found none")
        }
        xmlDocSetRootElement(document, element)
        decryptedAssertionTree = tree
        let scan = try Self.scan(element, identifiers: &identifiers)
        try scan.checkWellFormed()
        guard scan.assertions.count == 1, scan.encrypted.isEmpty else {
            throw SAMLError(
                .assertionMultiple, "expected one Assertion in the plaintext, found \(scan.assertions.count + scan.encrypted.count)")
        }
        if let duplicate = scan.duplicate {
            throw SAMLError(.idDuplicate, "expected unique IDs, found \(SAMLError.quote(duplicate)) twice")
        }
        for signature in scan.signatures where signature.pointee.parent != element {
            throw Self.misplaced(signature)
        }
        try Self.register(scan.xmlsecIDs, document: document)
        try adopt(element, signatures: scan.signatures, document: document)
    }

    private func adopt(_ assertion: xmlNodePtr, signatures: [xmlNodePtr], document: xmlDocPtr) throws {
        guard assertion.attribute("Version") == "2.0" else {
            throw SAMLError(
                .structureVersion, "expected Assertion Version \"2.0\", found \(SAMLError.quote(assertion.attribute("Version") ?? ""))")
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
        return SAMLError(
            .signatureMisplaced, "expected signatures only on the Response or the Assertion, found one in \(SAMLError.quote(name))")
    }

    /// What one walk over a subtree found.
    private struct Scan {
        var assertions: [xmlNodePtr] = []
        var encrypted: [xmlNodePtr] = []
        var signatures: [xmlNodePtr] = []
        /// The `Id` attributes (any namespace: xmlsec compares the local name only) that xmlsec would
        /// register when it processes a ds:Signature, xenc:EncryptedData or xenc:EncryptedKey subtree.
        var xmlsecIDs: [xmlAttrPtr] = []
        var duplicate: String?
        /// The first ID attribute whose value is not made of xs:NCName characters.
        var malformed: xmlAttrPtr?

        /// Refuses an ID not made of xs:NCName characters: a Reference can then only name a plain ID.
        func checkWellFormed() throws {
            guard let malformed else { return }
            let owner = malformed.pointee.parent.map { xmlNodePtr($0).qualifiedDescription } ?? "?"
            let name = String(cString: malformed.pointee.name)
            throw SAMLError(
                .idMalformed,
                "expected the \(name) of \(owner) to be made of xs:NCName characters, found \(SAMLError.quote(malformed.value))")
        }
    }

    /// One walk over a subtree: assertions (wrapping attacks hide a second one in Extensions, Object, ...),
    /// encrypted assertions, signatures, the attributes xmlsec would register as IDs, and the first
    /// duplicate ID value.
    private static func scan(_ root: xmlNodePtr, identifiers: inout Set<[UInt8]>) throws -> Scan {
        var scan = Scan()
        // The depth of the xmlsec-processed subtree being walked, if any.
        var xmlsecSubtree: Int?
        root.walk { node, depth in
            if let start = xmlsecSubtree, depth <= start { xmlsecSubtree = nil }
            guard node.isElement else { return false }
            let element = node
            var xmlsecProcessed = false
            if element.is(Namespace.samlAssertion, "Assertion") {
                scan.assertions.append(element)
            } else if element.is(Namespace.samlAssertion, "EncryptedAssertion") {
                scan.encrypted.append(element)
            } else if element.is(Namespace.xmlDSig, "Signature") {
                scan.signatures.append(element)
                xmlsecProcessed = true
            } else {
                xmlsecProcessed = element.is(Namespace.xmlEnc, "EncryptedData") || element.is(Namespace.xmlEnc, "EncryptedKey")
            }
            if xmlsecSubtree == nil, xmlsecProcessed { xmlsecSubtree = depth }
            var attribute = element.pointee.properties
            while let current = attribute {
                attribute = current.pointee.next
                let xmlsecID = xmlsecSubtree != nil && current.pointee.name.map { XMLName.equals($0, "Id") } ?? false
                guard xmlsecID || current.is("ID", namespace: nil) || current.is("id", namespace: Namespace.xml) else { continue }
                if xmlsecID { scan.xmlsecIDs.append(current) }
                let value = current.value
                if scan.malformed == nil, !NCName.isAcceptedID(value) { scan.malformed = current }
                if !identifiers.insert(Array(value.utf8)).inserted, scan.duplicate == nil { scan.duplicate = value }
            }
            return true
        }
        return scan
    }

    /// The document's ID table, created small: a response registers a handful of IDs, and libxml2's
    /// default table (256 buckets, cleared on creation and walked again when the document is freed) is
    /// made for documents with many. It grows as libxml2's own does when a chain gets long.
    private static func idTable(_ document: xmlDocPtr) {
        if document.pointee.ids == nil, let table = xmlHashCreateDict(8, document.pointee.dict) {
            document.pointee.ids = UnsafeMutableRawPointer(table)
        }
    }

    /// Registers the attributes xmlsec would register, before it does (values are unique: checked by the scan).
    private static func register(_ attributes: [xmlAttrPtr], document: xmlDocPtr) throws {
        idTable(document)
        for attribute in attributes {
            try attribute.withValue { value in
                if let registered = xmlGetID(document, value) {
                    guard registered == attribute else {
                        throw SAMLError(.idDuplicate, "expected the ID \(SAMLError.quote(attribute.value)) once, found it twice")
                    }
                } else if xmlAddID(nil, document, value, attribute) == nil {
                    throw SAMLError(.idDuplicate, "expected to register the ID \(SAMLError.quote(attribute.value)), found it taken")
                }
            }
        }
    }

    /// Registers the unqualified `ID` of a Response or Assertion (and nothing else) as an XML ID.
    private static func register(_ element: xmlNodePtr, document: xmlDocPtr) throws {
        idTable(document)
        guard let attribute = element.attributeNode("ID"), attribute.withValue({ $0.pointee != 0 }) else {
            throw SAMLError(.idMissing, "expected an ID on \(element.qualifiedDescription), found none")
        }
        try attribute.withValue { value in
            if let registered = xmlGetID(document, value) {
                guard registered.pointee.parent == element else {
                    throw SAMLError(
                        .idDuplicate,
                        "expected the ID \(SAMLError.quote(attribute.value)) to name \(element.qualifiedDescription), found it naming another element"
                    )
                }
            } else if xmlAddID(nil, document, value, attribute) == nil {
                throw SAMLError(.idDuplicate, "expected to register the ID \(SAMLError.quote(attribute.value)), found it taken")
            }
        }
    }
}
