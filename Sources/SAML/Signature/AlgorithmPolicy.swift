/// The algorithm allow-list of signature verification.
///
/// By default: RSA and ECDSA with SHA-256/384/512, digests SHA-256/384/512. SHA-1 (`rsa-sha1`,
/// `ecdsa-sha1` and the `sha1` digest) only with ``allowingSHA1``, which must be spelled out at the call
/// site. HMAC, MD5, DSA and unknown URIs are never accepted. Canonicalisation: exclusive C14N and
/// inclusive C14N 1.0/1.1, with or without comments (real IdPs sign with all of them; none of them can
/// select content the way XPath or XSLT can).
public struct AlgorithmPolicy: Sendable, Hashable {
    /// Whether SHA-1 digests and RSA-SHA1/ECDSA-SHA1 signatures are accepted.
    public let allowsSHA1: Bool

    /// The default allow-list.
    public static let strict = AlgorithmPolicy(allowsSHA1: false)
    /// The default allow-list plus SHA-1, which most IdPs in the field still emit. Weaker: SHA-1 has
    /// practical chosen-prefix collisions.
    public static let allowingSHA1 = AlgorithmPolicy(allowsSHA1: true)

    static let signatureMethods: Set<String> = [
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
    ]
    static let sha1SignatureMethods: Set<String> = [
        "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1",
    ]
    static let digestMethods: Set<String> = [
        "http://www.w3.org/2001/04/xmlenc#sha256",
        "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    ]
    static let sha1DigestMethods: Set<String> = ["http://www.w3.org/2000/09/xmldsig#sha1"]
    static let canonicalizations: Set<String> = [
        "http://www.w3.org/2001/10/xml-exc-c14n#",
        "http://www.w3.org/2001/10/xml-exc-c14n#WithComments",
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments",
        "http://www.w3.org/2006/12/xml-c14n11",
        "http://www.w3.org/2006/12/xml-c14n11#WithComments",
    ]
    static let envelopedSignature = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    func allowsSignatureMethod(_ uri: String) -> Bool {
        Self.signatureMethods.contains(uri) || (allowsSHA1 && Self.sha1SignatureMethods.contains(uri))
    }

    func allowsDigestMethod(_ uri: String) -> Bool {
        Self.digestMethods.contains(uri) || (allowsSHA1 && Self.sha1DigestMethods.contains(uri))
    }

    /// Why `uri` is refused, for messages: SHA-1 gets a pointer to the opt-in.
    func refusal(_ kind: String, _ uri: String) -> SAMLError {
        let hint =
            Self.sha1SignatureMethods.contains(uri) || Self.sha1DigestMethods.contains(uri)
            ? " (SHA-1 needs AlgorithmPolicy.allowingSHA1 / --allow-sha1)" : ""
        return SAMLError(
            .signatureAlgorithmNotAllowed,
            "expected an allowed \(kind) algorithm, found \(SAMLError.quote(uri))\(hint)"
        )
    }
}
