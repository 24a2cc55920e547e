internal import CSAMLShim

/// The strict signature profile (OpenSAML's, which blocks every signature-wrapping variant), checked on
/// the tree before xmlsec runs:
///
/// - exactly one `ds:SignedInfo` with an allowed CanonicalizationMethod and SignatureMethod;
/// - exactly one `ds:Reference`, whose `URI` is `#` + the ID of the signature's parent (an empty URI only
///   when the parent is the document element and the document holds nothing else but comments), and whose
///   ID resolves to exactly that parent;
/// - transforms: enveloped-signature, plus at most one canonicalisation, nothing else;
/// - an allowed DigestMethod;
/// - no `ds:Object` and no `ds:Manifest` anywhere in the signature;
/// - no namespaced attribute in `ds:SignedInfo`'s subtree (so that the profile and libxmlsec1 read the
///   same `URI`, `Algorithm` and `PrefixList`).
enum SignatureProfile {
    /// Returns the legacy algorithms (SHA-1, SHA-224) among the signature's methods, which `algorithms`
    /// allowed.
    @discardableResult
    static func check(signature: xmlNodePtr, parent: xmlNodePtr, document: xmlDocPtr, algorithms: AlgorithmPolicy) throws -> [String] {
        let dsig = Namespace.xmlDSig
        var forbidden = false
        signature.forEachElement { element in
            forbidden = forbidden || element.is(dsig, "Object") || element.is(dsig, "Manifest")
            return !forbidden
        }
        if forbidden {
            throw SAMLError(.signatureObjectForbidden, "expected no ds:Object or ds:Manifest in a signature, found one")
        }
        let signedInfos = signature.elementChildren.count { $0.is(dsig, "SignedInfo") }
        guard signedInfos == 1, let signedInfo = signature.firstChild(dsig, "SignedInfo") else {
            throw SAMLError(.signatureMalformed, "expected one ds:SignedInfo, found \(signedInfos)")
        }
        guard signature.firstChild(dsig, "SignatureValue") != nil else {
            throw SAMLError(.signatureMalformed, "expected a ds:SignatureValue, found none")
        }
        try checkNoNamespacedAttributes(signedInfo)
        let c14n = signedInfo.firstChild(dsig, "CanonicalizationMethod")?.attribute("Algorithm") ?? ""
        guard AlgorithmPolicy.isCanonicalization(c14n) else {
            throw algorithms.refusal("canonicalisation", c14n)
        }
        let method = signedInfo.firstChild(dsig, "SignatureMethod")?.attribute("Algorithm") ?? ""
        guard algorithms.allowsSignatureMethod(method) else {
            throw algorithms.refusal("signature", method)
        }
        let references = signedInfo.elementChildren.count { $0.is(dsig, "Reference") }
        guard references == 1, let reference = signedInfo.firstChild(dsig, "Reference") else {
            throw SAMLError(.signatureReferenceMismatch, "expected exactly one ds:Reference, found \(references)")
        }
        try checkReferenceTarget(reference, parent: parent, document: document)
        try checkTransforms(reference)
        let digest = reference.firstChild(dsig, "DigestMethod")?.attribute("Algorithm") ?? ""
        guard algorithms.allowsDigestMethod(digest) else {
            throw algorithms.refusal("digest", digest)
        }
        return [method, digest].filter(AlgorithmPolicy.isLegacy)
    }

    /// The profile reads `URI`, `Algorithm` and `PrefixList` in no namespace; libxmlsec1 reads the first
    /// attribute of that local name in any namespace (`xmlGetProp`). The schema allows no namespaced
    /// attribute on SignedInfo and what it holds (the methods, references, transforms and
    /// InclusiveNamespaces), so one is refused: both then read the same attribute.
    private static func checkNoNamespacedAttributes(_ signedInfo: xmlNodePtr) throws {
        var found: xmlNodePtr?
        signedInfo.forEachElement { element in
            var attribute = element.pointee.properties
            while let current = attribute {
                if current.pointee.ns != nil {
                    found = element
                    return false
                }
                attribute = current.pointee.next
            }
            return true
        }
        if let found {
            throw SAMLError(
                .signatureMalformed,
                "expected no namespaced attribute on \(found.qualifiedDescription) (the XML-DSig schema allows none), found one")
        }
    }

    private static func checkReferenceTarget(_ reference: xmlNodePtr, parent: xmlNodePtr, document: xmlDocPtr) throws {
        let uri = reference.attribute("URI")
        let parentID = parent.attribute("ID") ?? ""
        var parentName: String { parent.qualifiedDescription }  // for the messages only
        if uri == nil || uri == "" {
            // An empty URI means the whole document: acceptable only for a signature on the root, and only
            // where the whole document is the root's tree (comments aside, which that URI leaves out):
            // then it covers exactly what `#` + the root's ID covers (XMLDSig 4.3.3.2, SAML Core 5.4.2).
            guard parent == xmlDocGetRootElement(document) else {
                throw SAMLError(
                    .signatureReferenceMismatch,
                    "expected the Reference URI \"#\(SAMLError.quote(parentID).dropFirst().dropLast())\" of the signed \(parentName), found an empty URI"
                )
            }
            var child = document.pointee.children
            while let node = child {
                guard node == parent || node.pointee.type == XML_COMMENT_NODE else {
                    throw SAMLError(
                        .signatureReferenceMismatch,
                        "expected nothing but comments beside the signed \(parentName) under an empty Reference URI, found another node")
                }
                child = node.pointee.next
            }
            return
        }
        guard let uri, uri.utf8.first == UInt8(ascii: "#"), uri.utf8.dropFirst().elementsEqual(parentID.utf8), !parentID.isEmpty else {
            throw SAMLError(
                .signatureReferenceMismatch,
                "expected the Reference URI to be '#' + the ID of the signed \(parentName) (\(SAMLError.quote(parentID))), found \(SAMLError.quote(uri ?? ""))"
            )
        }
        // The ID must resolve to the parent itself (IDs are registered only on Response and Assertion,
        // and duplicates were refused before).
        guard let attribute = xmlGetID(document, parentID), attribute.pointee.parent == parent else {
            throw SAMLError(.signatureReferenceMismatch, "expected the Reference to resolve to the signed \(parentName), it does not")
        }
    }

    private static func checkTransforms(_ reference: xmlNodePtr) throws {
        let transforms = reference.firstChild(Namespace.xmlDSig, "Transforms")?.children(Namespace.xmlDSig, "Transform") ?? []
        let algorithms = transforms.map { $0.attribute("Algorithm") ?? "" }
        guard algorithms.count <= 2 else {
            throw SAMLError(.signatureTransformNotAllowed, "expected at most two transforms, found \(algorithms.count)")
        }
        guard algorithms.contains(where: { $0.hasSameBytes(as: AlgorithmPolicy.envelopedSignature) }) else {
            throw SAMLError(.signatureTransformNotAllowed, "expected the enveloped-signature transform, found none")
        }
        for algorithm in algorithms where !algorithm.hasSameBytes(as: AlgorithmPolicy.envelopedSignature) {
            guard AlgorithmPolicy.isCanonicalization(algorithm) else {
                throw SAMLError(
                    .signatureTransformNotAllowed,
                    "expected enveloped-signature and a canonicalisation only, found the transform \(SAMLError.quote(algorithm))"
                )
            }
        }
        if algorithms.count == 2, algorithms[0].hasSameBytes(as: algorithms[1]) {
            throw SAMLError(.signatureTransformNotAllowed, "expected two different transforms, found the same twice")
        }
    }
}
