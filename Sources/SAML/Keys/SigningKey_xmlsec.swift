internal import CSAMLShim

/// A private key (with its certificate, carried in KeyInfo) that the service signs with.
public struct SigningKey: Sendable {
    let handle: KeyHandle

    /// The DER of the certificate given with the key, if any: what SP metadata lists as the key that
    /// signs requests (``ServiceProviderMetadata``).
    public let certificateDER: [UInt8]?

    /// An unencrypted PEM private key and, optionally, its PEM certificate, held as text.
    public init(privateKeyPEM: String, certificatePEM: String? = nil) throws {
        try self.init(privateKeyPEM: Array(privateKeyPEM.utf8), certificatePEM: certificatePEM.map { Array($0.utf8) })
    }

    /// An unencrypted PEM private key and, optionally, its PEM certificate.
    public init(privateKeyPEM: [UInt8], certificatePEM: [UInt8]? = nil) throws {
        try XMLSecRuntime.initialize()
        let certificate = certificatePEM ?? []
        let loaded = privateKeyPEM.withUnsafeBufferPointer { key in
            certificate.withUnsafeBufferPointer { cert in
                saml_shim_signing_key_load(key.baseAddress, key.count, cert.count > 0 ? cert.baseAddress : nil, cert.count)
            }
        }
        guard let loaded else {
            throw SAMLError(
                .configurationInvalidKey,
                "expected an unencrypted PEM private key (and its PEM certificate), found something OpenSSL cannot load")
        }
        handle = KeyHandle(key: loaded, certificateDER: nil)
        // The block OpenSSL loaded: the first certificate of the text.
        let der = try certificatePEM.flatMap { try PEM.blocks($0).first { PEM.certificateLabels.contains($0.label) }?.der }
        if let der {
            // The certificate is published (KeyInfo of signed requests, SP metadata) as the key's: another
            // key's certificate would have the IdP check the SP's signatures with the wrong key.
            let certificate = try TrustedKey(der: der, isCertificate: true)
            guard let key = handle.publicKeyDER, key == certificate.handle.publicKeyDER else {
                throw SAMLError(.configurationInvalidKey, "expected the certificate of the private key, found a certificate of another key")
            }
        }
        certificateDER = der
    }
}

extension SigningKey {
    /// `document` with its root element (an AuthnRequest or AttributeQuery with an ID and an Issuer, or an
    /// md:EntityDescriptor with an ID) signed: enveloped, exclusive C14N, SHA-256, RSA-SHA256 or
    /// ECDSA-SHA256 after the key's type; serialised by libxml2 with an XML declaration.
    func signRoot(of document: [UInt8]) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        let status = document.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                saml_shim_sign_root($0.baseAddress, Int32($0.count), handle.key, &output, &length)
            }
        }
        defer { saml_shim_free_buffer(output) }
        guard status == 0, let output else {
            throw SAMLError(.configurationInvalidKey, "expected the SP signing key to sign the document, found it cannot")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
