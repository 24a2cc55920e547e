internal import CSAMLShim

/// Verifies one `ds:Signature` with xmlsec against the pinned keys, each tried with a fresh context.
enum SignatureVerification {
    /// - Parameter fastCanonicalization: use the cheap visibility test of fast_c14n.c (the default); the
    ///   tests run both and compare.
    /// Returns the pinned key that verified the signature.
    @discardableResult
    static func verify(signature: xmlNodePtr, keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool = true) throws -> TrustedKey {
        var sawDigestMismatch = false
        var sawProcessingFailure = false
        for key in keys {
            switch saml_shim_dsig_verify(signature, key.handle.key, algorithms.allowsSHA1 ? 1 : 0, fastCanonicalization ? 1 : 0) {
            case SAML_SHIM_DSIG_VALID:
                return key
            case SAML_SHIM_DSIG_IDS_CHANGED:
                throw SAMLError(.idDuplicate, "expected xmlsec to register no ID the structure checks had not, found it adding one")
            case SAML_SHIM_DSIG_DIGEST_MISMATCH:
                sawDigestMismatch = true
            case SAML_SHIM_DSIG_SIGNATURE_INVALID:
                break
            default:
                sawProcessingFailure = true
            }
        }
        let parent = signature.pointee.parent.map { xmlNodePtr($0).qualifiedDescription } ?? "document"
        if sawDigestMismatch {
            throw SAMLError(
                .signatureDigestMismatch,
                "expected the digest of the signed \(parent) to match its Reference, found different content "
                    + "(changed after signing, e.g. by whitespace normalisation)"
            )
        }
        if sawProcessingFailure {
            throw SAMLError(.signatureMalformed, "expected a signature xmlsec can process, found one it cannot (on \(parent))")
        }
        if let carried = carriedCertificate(signature), !keys.contains(where: { $0.certificateDER == carried }) {
            throw SAMLError(
                .signatureUntrustedKey,
                "expected a signature by a pinned key, found one that does not verify and carries a certificate "
                    + "that is not pinned (on \(parent))"
            )
        }
        throw SAMLError(
            .signatureInvalid,
            "expected a signature value that verifies with one of \(keys.count) pinned key(s), found none that does (on \(parent))"
        )
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
