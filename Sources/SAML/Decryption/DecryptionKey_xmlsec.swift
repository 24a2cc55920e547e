internal import CSAMLShim

/// A service-provider private key that encrypted assertions, attributes and NameIDs are decrypted with.
/// Parsed once and reused; several may be configured for rotation (each is tried in turn).
public struct DecryptionKey: Sendable {
    let handle: KeyHandle

    /// A PEM private key (PKCS#8 or PKCS#1, unencrypted).
    public init(pem: [UInt8]) throws {
        try XMLSecRuntime.initialize()
        guard let key = pem.withUnsafeBufferPointer({ saml_shim_private_key_load_memory($0.baseAddress, $0.count) }) else {
            throw SAMLError(.configurationInvalidKey, "expected an unencrypted PEM private key, found something OpenSSL cannot load")
        }
        handle = KeyHandle(key: key, certificateDER: nil)
    }
}
