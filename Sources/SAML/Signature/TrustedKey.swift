internal import CSAMLShim

/// A pinned IdP signing key: the only kind of key a signature is verified with.
///
/// Built once from a certificate or a public key (PEM or DER) and reused by every verification. The
/// certificate is trusted as a key holder (explicit-key trust, as Shibboleth does): its validity dates,
/// issuer and chain are not checked. Only the public key is kept for verifying (duplicating a key that
/// still carries its certificate costs as much as the verification itself); the certificate's DER is kept
/// to tell an operator that a failed signature carried a different certificate.
///
/// `ds:KeyInfo` in a response is never used to find or build a key.
public struct TrustedKey: Sendable {
    let handle: KeyHandle

    /// The xmlsec key, for other modules of this package (they cannot see the C types through SAML).
    package var opaqueKey: OpaquePointer { OpaquePointer(handle.key) }

    /// The DER of the certificate this key came from, if it came from one.
    public var certificateDER: [UInt8]? { handle.certificateDER }

    /// Every certificate or public key in a PEM text (several blocks are allowed, for key rotation).
    ///
    /// - Throws: ``SAMLError/Code/configurationInvalidKey`` if there is no usable block.
    public static func all(pem: [UInt8]) throws -> [TrustedKey] {
        let blocks = PEM.blocks(pem)
        guard !blocks.isEmpty else {
            throw SAMLError(.configurationInvalidKey, "expected PEM blocks (-----BEGIN CERTIFICATE-----), found none")
        }
        return try blocks.map { block in
            switch block.label {
            case "CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE":
                return try TrustedKey(der: block.der, isCertificate: true)
            case "PUBLIC KEY", "RSA PUBLIC KEY":
                return try TrustedKey(der: block.der, isCertificate: false)
            default:
                throw SAMLError(
                    .configurationInvalidKey,
                    "expected a CERTIFICATE or PUBLIC KEY block, found \(SAMLError.quote(block.label))"
                )
            }
        }
    }

    /// The first certificate or public key of a PEM text.
    public init(pem: [UInt8]) throws {
        self = try Self.all(pem: pem)[0]
    }

    /// A DER certificate, or failing that a DER SubjectPublicKeyInfo.
    public init(der: [UInt8]) throws {
        do {
            try self.init(der: der, isCertificate: true)
        } catch {
            try self.init(der: der, isCertificate: false)
        }
    }

    init(der: [UInt8], isCertificate: Bool) throws {
        try XMLSecRuntime.initialize()
        let loaded = der.withUnsafeBufferPointer {
            saml_shim_key_load_memory($0.baseAddress, $0.count, 0, isCertificate ? 1 : 0)
        }
        guard let loaded else {
            throw SAMLError(
                .configurationInvalidKey,
                "expected a DER \(isCertificate ? "certificate" : "public key") that OpenSSL can load, found \(der.count) bytes it cannot"
            )
        }
        defer { xmlSecKeyDestroy(loaded) }
        guard let bare = saml_shim_key_public_only(loaded) else {
            throw SAMLError(.configurationInvalidKey, "expected a public key in the certificate, found none")
        }
        handle = KeyHandle(key: bare, certificateDER: isCertificate ? der : nil)
    }
}

/// Owns one `xmlSecKey`.
///
/// `@unchecked Sendable`: the key is never mutated after creation. Verifications only pass it to
/// `xmlSecKeyDuplicate`, which reads it and takes a new reference on the OpenSSL `EVP_PKEY`
/// (an atomic reference count), so concurrent use from many threads is safe.
final class KeyHandle: @unchecked Sendable {
    let key: xmlSecKeyPtr
    let certificateDER: [UInt8]?

    init(key: xmlSecKeyPtr, certificateDER: [UInt8]?) {
        self.key = key
        self.certificateDER = certificateDER
    }

    deinit {
        xmlSecKeyDestroy(key)
    }
}

/// RFC 7468 textual encoding, just enough to find the blocks.
enum PEM {
    struct Block {
        var label: String
        var der: [UInt8]
    }

    static func blocks(_ text: [UInt8]) -> [Block] {
        let string = String(decoding: text, as: UTF8.self)
        var result: [Block] = []
        var label: String?
        var body: [UInt8] = []
        for rawLine in string.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.trimmingCharacters(" \t")
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                label = String(line.dropFirst(11).dropLast(5))
                body = []
            } else if line.hasPrefix("-----END "), let current = label {
                var repairs: [SAMLResponseDecoder.Repair] = []
                if let der = try? Base64Decoding.decode(body, maximumBytes: 1 << 20, repairs: &repairs) {
                    result.append(Block(label: current, der: der))
                }
                label = nil
            } else if label != nil, !line.contains(":") {
                body.append(contentsOf: line.utf8)
            }
        }
        return result
    }
}

extension StringProtocol {
    func trimmingCharacters(_ set: String) -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, set.unicodeScalars.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.unicodeScalars.contains(last) { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
