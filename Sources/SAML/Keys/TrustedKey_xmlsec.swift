internal import CSAMLShim
import CookbookEncoding

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

    /// The SHA-256 fingerprint, lower-case hex: of the certificate's DER when the key came from a
    /// certificate (what `openssl x509 -fingerprint -sha256` prints, without colons), of the
    /// SubjectPublicKeyInfo's DER otherwise. ``VerifiedResponse/signingKeyFingerprint`` names the key that
    /// verified a response this way.
    public var fingerprint: String { handle.fingerprint }

    /// Every certificate or public key in a PEM text (several blocks are allowed, for key rotation).
    ///
    /// - Throws: ``SAMLError/Code/configurationInvalidKey`` if there is no block, or if any block cannot
    ///   be used (its position and line are named): a rotation bundle never silently shrinks.
    public static func all(pem: [UInt8]) throws -> [TrustedKey] {
        let blocks = try PEM.blocks(pem)
        guard !blocks.isEmpty else {
            throw SAMLError(.configurationInvalidKey, "expected PEM blocks (-----BEGIN CERTIFICATE-----), found none")
        }
        return try blocks.map { block in
            do {
                switch block.label {
                case _ where PEM.certificateLabels.contains(block.label):
                    return try TrustedKey(der: block.der, isCertificate: true)
                case "PUBLIC KEY", "RSA PUBLIC KEY":
                    return try TrustedKey(der: block.der, isCertificate: false)
                default:
                    throw SAMLError(
                        .configurationInvalidKey, "expected a CERTIFICATE or PUBLIC KEY block, found \(SAMLError.quote(block.label))")
                }
            } catch let error as SAMLError {
                throw SAMLError(error.code, "PEM block \(block.index) (line \(block.line)): \(error.message)")
            }
        }
    }

    /// ``all(pem:)`` of a PEM text held as a `String`.
    public static func all(pem: String) throws -> [TrustedKey] {
        try all(pem: Array(pem.utf8))
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
        var spki: UnsafeMutablePointer<UInt8>?
        var length = 0
        defer { saml_shim_openssl_free(spki) }
        guard isCertificate || (saml_shim_public_key_der(bare, &spki, &length) == 0 && spki != nil) else {
            xmlSecKeyDestroy(bare)
            throw SAMLError(.configurationInvalidKey, "expected a public key OpenSSL can encode, found one it cannot")
        }
        let fingerprinted = isCertificate ? der : Array(UnsafeBufferPointer(start: spki, count: length))
        handle = KeyHandle(key: bare, certificateDER: isCertificate ? der : nil, fingerprint: SHA256.hex(fingerprinted))
    }
}

/// SHA-256 through OpenSSL, for fingerprints.
enum SHA256 {
    static func hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { saml_shim_sha256(input.baseAddress, input.count, $0.baseAddress) }
        }
        return Hex.string(digest, uppercase: false)
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
    let fingerprint: String

    init(key: xmlSecKeyPtr, certificateDER: [UInt8]?, fingerprint: String = "") {
        self.key = key
        self.certificateDER = certificateDER
        self.fingerprint = fingerprint
    }

    deinit {
        xmlSecKeyDestroy(key)
    }

    /// The public key's SubjectPublicKeyInfo as OpenSSL encodes it (of a private key too), so that keys read
    /// from different encodings compare equal; nil when OpenSSL cannot encode it.
    var publicKeyDER: [UInt8]? {
        var spki: UnsafeMutablePointer<UInt8>?
        var length = 0
        defer { saml_shim_openssl_free(spki) }
        guard saml_shim_public_key_der(key, &spki, &length) == 0, let spki else { return nil }
        return Array(UnsafeBufferPointer(start: spki, count: length))
    }
}

/// RFC 7468 textual encoding, just enough to find the blocks.
enum PEM {
    /// The labels OpenSSL reads a certificate from.
    static let certificateLabels: Set<String> = ["CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE"]

    struct Block {
        var label: String
        var der: [UInt8]
        /// 1-based position among the blocks, and the line of its BEGIN.
        var index: Int
        var line: Int
    }

    /// Every block; a block whose Base64 does not decode, or that never ends, is an error naming it.
    static func blocks(_ text: [UInt8]) throws -> [Block] {
        let string = String(decoding: text, as: UTF8.self)
        var result: [Block] = []
        var open: (label: String, line: Int)?
        var body: [UInt8] = []
        var lineNumber = 0
        for rawLine in string.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = XMLWhitespace.trimmed(String(rawLine))
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                if let current = open {
                    throw SAMLError(
                        .configurationInvalidKey,
                        "PEM block \(result.count + 1) (line \(current.line)): expected -----END \(current.label)-----, found another BEGIN at line \(lineNumber)"
                    )
                }
                open = (String(line.dropFirst(11).dropLast(5)), lineNumber)
                body = []
            } else if line.hasPrefix("-----END "), let current = open {
                var repairs: [SAMLResponseDecoder.Repair] = []
                do {
                    let der = try Base64Decoding.decode(body, maximumBytes: 1 << 20, repairs: &repairs)
                    result.append(Block(label: current.label, der: der, index: result.count + 1, line: current.line))
                } catch let error as SAMLError {
                    throw SAMLError(
                        .configurationInvalidKey, "PEM block \(result.count + 1) (line \(current.line)): expected Base64, \(error.message)")
                }
                open = nil
            } else if open != nil, !line.contains(":") {
                body.append(contentsOf: line.utf8)
            }
        }
        if let current = open {
            throw SAMLError(
                .configurationInvalidKey,
                "PEM block \(result.count + 1) (line \(current.line)): expected -----END \(current.label)-----, found the end of the text")
        }
        return result
    }
}
