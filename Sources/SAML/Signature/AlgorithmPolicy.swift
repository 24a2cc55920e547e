/// The algorithm allow-list of signature verification.
///
/// By default: RSA and ECDSA with SHA-256/384/512, digests SHA-256/384/512. The legacy digests, SHA-1
/// (`rsa-sha1`, `ecdsa-sha1` and the `sha1` digest) and SHA-224 (`rsa-sha224`, `ecdsa-sha224`, `sha224`),
/// only with ``allowingSHA1``, which must be spelled out at the call site; a response accepted under it
/// says which it used (``VerifiedResponse/legacyAlgorithms``) and is logged at warning level. HMAC, MD5, DSA and unknown URIs are never accepted. Canonicalisation: exclusive C14N and
/// inclusive C14N 1.0/1.1, with or without comments (real IdPs sign with all of them; none of them can
/// select content the way XPath or XSLT can).
public struct AlgorithmPolicy: Sendable, Hashable {
    /// Whether the legacy digests are accepted: SHA-1 and SHA-224, as digests and in RSA and ECDSA
    /// signatures.
    public let allowsSHA1: Bool

    /// The default allow-list.
    public static let strict = AlgorithmPolicy(allowsSHA1: false)
    /// The default allow-list plus the legacy digests, SHA-1 (which older IdPs and federation aggregates
    /// still emit) and SHA-224. Weaker: SHA-1 has practical chosen-prefix collisions (an attacker who can
    /// have the IdP sign one document may get a signature valid for another); SHA-224's 112-bit collision
    /// resistance is below what the default allows. For an IdP that cannot yet do better, with a deadline
    /// (docs/security.md, "Legacy digests").
    public static let allowingSHA1 = AlgorithmPolicy(allowsSHA1: true)

    // The lists are compared byte for byte (``Swift/String/hasSameBytes(as:)``): the URI comes from the
    // document before its signature is proven and is never hashed as a String.
    static let signatureMethods: [String] = [
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
    ]
    static let sha1SignatureMethods: [String] = [
        "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha224",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha224",
    ]
    static let digestMethods: [String] = [
        "http://www.w3.org/2001/04/xmlenc#sha256",
        "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    ]
    static let sha1DigestMethods: [String] = [
        "http://www.w3.org/2000/09/xmldsig#sha1", "http://www.w3.org/2001/04/xmldsig-more#sha224",
    ]

    /// Whether `uri` is a signature or digest method of the legacy digests (SHA-1, SHA-224).
    public static func isLegacy(_ uri: String) -> Bool {
        lists(sha1SignatureMethods, uri) || lists(sha1DigestMethods, uri)
    }

    /// Whether `uri` is one of the allowed canonicalisations.
    static func isCanonicalization(_ uri: String) -> Bool {
        lists(canonicalizations, uri)
    }

    private static func lists(_ list: [String], _ uri: String) -> Bool {
        list.contains { $0.hasSameBytes(as: uri) }
    }
    static let canonicalizations: [String] = [
        "http://www.w3.org/2001/10/xml-exc-c14n#",
        "http://www.w3.org/2001/10/xml-exc-c14n#WithComments",
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments",
        "http://www.w3.org/2006/12/xml-c14n11",
        "http://www.w3.org/2006/12/xml-c14n11#WithComments",
    ]
    static let envelopedSignature = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    func allowsSignatureMethod(_ uri: String) -> Bool {
        Self.lists(Self.signatureMethods, uri) || (allowsSHA1 && Self.lists(Self.sha1SignatureMethods, uri))
    }

    func allowsDigestMethod(_ uri: String) -> Bool {
        Self.lists(Self.digestMethods, uri) || (allowsSHA1 && Self.lists(Self.sha1DigestMethods, uri))
    }

    /// Why `uri` is refused, for messages: SHA-1 gets a pointer to the opt-in.
    func refusal(_ kind: String, _ uri: String) -> SAMLError {
        let hint =
            Self.isLegacy(uri)
            ? " (a legacy digest, SHA-1 or SHA-224: accepted only by explicit opt-in, AlgorithmPolicy.allowingSHA1 or --allow-sha1; "
                + "in a trust file, allowLegacyDigests for an MVPD's responses, allowSHA1MetadataSignature for its metadata)" : ""
        return SAMLError(
            .signatureAlgorithmNotAllowed,
            "expected an allowed \(kind) algorithm, found \(SAMLError.quote(uri))\(hint)"
        )
    }
}
