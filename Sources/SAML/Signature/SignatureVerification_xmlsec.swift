internal import CSAMLShim

/// Verifies one `ds:Signature` with xmlsec against the pinned keys, each tried with a fresh context.
enum SignatureVerification {
    /// What one verification of a signature against every pinned key found.
    enum Outcome {
        /// The signature verified with this key.
        case valid(TrustedKey)
        /// A Reference's digest did not match (xmlsec then leaves the signature value unchecked).
        case digestMismatch
        /// The digests matched; the signature value verified with no pinned key.
        case signatureInvalid
        /// xmlsec could not process the signature, for the reasons it and OpenSSL gave (``CLibraryErrors``).
        case processingFailed(reasons: String)
    }

    /// Returns the pinned key that verified the signature.
    ///
    /// - Parameter fastCanonicalization: the fast paths of the shim (the default): canonicalisation by
    ///   fast_c14n.c and canonicalizer.c (metered), `#ID` resolved by xmlsec's direct lookup; the tests run both and compare.
    @discardableResult
    static func verify(signature: xmlNodePtr, keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool = true) throws
        -> TrustedKey
    {
        let outcome = try attempt(signature: signature, keys: keys, algorithms: algorithms, fastCanonicalization: fastCanonicalization)
        if case .valid(let key) = outcome { return key }
        throw failure(outcome, signature: signature, keys: keys, cookbookShaped: false)
    }

    /// One verification with every pinned key in turn.
    ///
    /// - Throws: ``SAMLError/Code/idDuplicate`` when xmlsec registered an ID the structure checks had not;
    ///   ``SAMLError/Code/idMalformed`` for a Reference URI that is not `""` or `#` + a plain name;
    ///   ``SAMLError/Code/signatureBudgetExceeded`` when canonicalising would pass its budget.
    static func attempt(signature: xmlNodePtr, keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool = true) throws
        -> Outcome
    {
        var outcome = Outcome.signatureInvalid
        CLibraryErrors.begin()
        for key in keys {
            switch saml_shim_dsig_verify(signature, key.handle.key, algorithms.allowsSHA1 ? 1 : 0, fastCanonicalization ? 1 : 0) {
            case SAML_SHIM_DSIG_VALID:
                return .valid(key)
            case SAML_SHIM_DSIG_IDS_CHANGED:
                throw SAMLError(.idDuplicate, "expected xmlsec to register no ID the structure checks had not, found it adding one")
            case SAML_SHIM_DSIG_REFERENCE_REFUSED:
                throw SAMLError(
                    .idMalformed,
                    "expected every Reference URI of the signature on \(signedElementDescription(signature)) to be '#' + a plain name (or empty, in a document that is one element's tree), found another (never resolved as XPointer)"
                )
            case SAML_SHIM_DSIG_BUDGET_EXCEEDED:
                // The same canonicalisation with another key would cost the same again: refused at once.
                throw budgetExceeded(signature: signature)
            case SAML_SHIM_DSIG_C14N_REFUSED:
                throw canonicalizationRefused(signature: signature)
            case SAML_SHIM_DSIG_DIGEST_MISMATCH:
                outcome = .digestMismatch
            case SAML_SHIM_DSIG_SIGNATURE_INVALID:
                break
            default:
                if case .signatureInvalid = outcome { outcome = .processingFailed(reasons: CLibraryErrors.take()) }
            }
        }
        return outcome
    }

    /// The error that reports a canonicalisation refused for its cost (c14n_budget.c).
    static func budgetExceeded(signature: xmlNodePtr) -> SAMLError {
        let what =
            switch saml_shim_dsig_budget_reason() {
            case SAML_SHIM_C14N_OVER_PREFIXES:
                "an InclusiveNamespaces PrefixList of at most 32 prefixes of at most 64 bytes, found a longer one"
            case SAML_SHIM_C14N_OVER_WORK:
                "canonicalisation work within the document's fuel (16 units a byte), found more (namespaces, prefixes or attributes amplified)"
            default: "canonical bytes within 4 times the document's size, found more (namespace declarations amplified)"
            }
        return SAMLError(.signatureBudgetExceeded, "expected \(what) when canonicalising the signed \(signedElementDescription(signature))")
    }

    /// The error that reports a document or node set the canonicaliser refuses (canonicalizer.c): it holds
    /// something canonical XML cannot be written for as libxml2 writes it, and no unverified document is
    /// handed to libxml2's own canonicaliser.
    static func canonicalizationRefused(signature: xmlNodePtr) -> SAMLError {
        let found =
            switch saml_shim_dsig_refusal() {
            case SAML_SHIM_C14N_REFUSED_RELATIVE_NAMESPACE: "a namespace URI that is not absolute"
            case SAML_SHIM_C14N_REFUSED_QUOTED_NAMESPACE: "a namespace URI holding a double quote"
            case SAML_SHIM_C14N_REFUSED_NODE_KIND: "a DTD, an entity reference or another node kind canonical XML does not write"
            case SAML_SHIM_C14N_REFUSED_ATTRIBUTE_CONTENT: "an attribute value that is not plain text"
            case SAML_SHIM_C14N_REFUSED_XML_BASE: "an xml:base above the signed element that inclusive C14N 1.1 would resolve"
            default: "a node set other than the signed element's tree minus its signature"
            }
        return SAMLError(
            .signatureMalformed,
            "expected a document canonical XML can be written for when canonicalising the signed \(signedElementDescription(signature)), found \(found)"
        )
    }

    /// The error that reports a failed ``attempt(signature:keys:algorithms:fastCanonicalization:)``.
    /// `cookbookShaped`: the document bears the marks of the cookbook's whitespace normalisation (no newline
    /// anywhere), so the message may name it as a likely cause; otherwise it does not.
    static func failure(_ outcome: Outcome, signature: xmlNodePtr, keys: [TrustedKey], cookbookShaped: Bool) -> SAMLError {
        let parent = signedElementDescription(signature)
        switch outcome {
        case .digestMismatch:
            return SAMLError(
                .signatureDigestMismatch,
                "expected the digest of the signed \(parent) to match its Reference, found different content "
                    + (cookbookShaped
                        ? "(changed after signing, e.g. by whitespace normalisation)" : "(changed after signing)")
            )
        case .processingFailed(let reasons):
            return SAMLError(
                .signatureMalformed,
                "expected a signature xmlsec can process, found one it cannot (on \(parent))"
                    + (reasons.isEmpty ? "" : "; xmlsec: \(reasons)"))
        case .valid, .signatureInvalid:
            if let carried = carriedCertificate(signature), !keys.contains(where: { $0.certificateDER == carried }) {
                return SAMLError(
                    .signatureUntrustedKey,
                    "expected a signature by a pinned key, found one that does not verify and carries a certificate "
                        + "that is not pinned (on \(parent))"
                )
            }
            return SAMLError(
                .signatureInvalid,
                "expected a signature value that verifies with one of \(keys.count) pinned key(s), found none that does (on \(parent))"
            )
        }
    }

    /// Verifies `signature` with `key` and returns what xmlsec digested for its first Reference (nil when it
    /// did not get that far), and whether the signature verified. For the SPI that tests and fuzz targets use.
    static func referenceBytes(
        signature: xmlNodePtr, key: TrustedKey, algorithms: AlgorithmPolicy, fastCanonicalization: Bool
    ) -> (valid: Bool, bytes: [UInt8]?) {
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        let result = saml_shim_dsig_reference_bytes(
            signature, key.handle.key, algorithms.allowsSHA1 ? 1 : 0, fastCanonicalization ? 1 : 0, &bytes, &length)
        defer { saml_shim_free_buffer(bytes) }
        return (result == SAML_SHIM_DSIG_VALID, bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) })
    }

    /// `prefix:name` of the element a signature sits in, for messages.
    static func signedElementDescription(_ signature: xmlNodePtr) -> String {
        signature.pointee.parent.map { xmlNodePtr($0).qualifiedDescription } ?? "document"
    }

    /// The DER of the first ds:X509Certificate in the signature's KeyInfo; only for diagnostics.
    private static func carriedCertificate(_ signature: xmlNodePtr) -> [UInt8]? {
        guard
            let certificate = signature.descendants(where: { $0.is(Namespace.xmlDSig, "X509Certificate") }).first
        else { return nil }
        var repairs: [SAMLResponseDecoder.Repair] = []
        return try? Base64Decoding.decode(Array(certificate.textContent.utf8), maximumBytes: 1 << 16, repairs: &repairs)
    }
}
