internal import CSAMLShim

/// A private key (with its certificate, carried in KeyInfo) that the service signs with.
public struct SigningKey: Sendable {
    let handle: KeyHandle

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
    }
}

extension SigningKey {
    /// `document` with its root element (an AuthnRequest or AttributeQuery with an ID and an Issuer)
    /// signed: enveloped, exclusive C14N, SHA-256, RSA-SHA256 or ECDSA-SHA256 after the key's type.
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
            throw SAMLError(.configurationInvalidKey, "expected the SP signing key to sign the request, found it cannot")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
