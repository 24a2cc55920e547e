/// The algorithm allow-list of decryption.
///
/// By default: key transport RSA-OAEP (`xmlenc#rsa-oaep-mgf1p` with any SHA-1/SHA-2 DigestMethod, and
/// xmlenc 1.1 `rsa-oaep` with its DigestMethod and MGF1 parameters), data encryption AES-128/192/256-GCM.
///
/// ``allowingLegacy`` adds RSA-1_5, AES-CBC and 3DES-CBC, which many IdPs in the field still emit; it must
/// be chosen at the call site (`--allow-legacy-encryption` in the CLI). They are dangerous: RSA-1_5 key
/// transport answers whether a chosen ciphertext has valid padding (Bleichenbacher 1998), and CBC without
/// an integrity check answers whether a chosen ciphertext decrypts to well-formed XML (Jager and
/// Somorovsky 2011); each answer leaks a little of the key or the plaintext, and enough of them decrypt
/// an assertion captured elsewhere. The verifier gives such an attacker one answer for every failure
/// (same code, same message, a random session key in place of a failed key transport), which removes the
/// distinguishable answers but not a timing side channel: prefer asking the IdP for RSA-OAEP and AES-GCM.
public struct EncryptionAlgorithmPolicy: Sendable, Hashable {
    public let allowsLegacy: Bool

    public static let strict = EncryptionAlgorithmPolicy(allowsLegacy: false)
    public static let allowingLegacy = EncryptionAlgorithmPolicy(allowsLegacy: true)

    static let rsaOAEP = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"
    static let rsaOAEP11 = "http://www.w3.org/2009/xmlenc11#rsa-oaep"
    static let rsa15 = "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
    // Compared byte for byte (``Swift/String/hasSameBytes(as:)``), never hashed: the URI is the document's.
    static let gcm: [String] = [
        "http://www.w3.org/2009/xmlenc11#aes128-gcm", "http://www.w3.org/2009/xmlenc11#aes192-gcm",
        "http://www.w3.org/2009/xmlenc11#aes256-gcm",
    ]
    static let cbc: [String] = [
        "http://www.w3.org/2001/04/xmlenc#aes128-cbc", "http://www.w3.org/2001/04/xmlenc#aes192-cbc",
        "http://www.w3.org/2001/04/xmlenc#aes256-cbc",
    ]
    static let tripleDES = "http://www.w3.org/2001/04/xmlenc#tripledes-cbc"

    /// What SP metadata lists as `md:EncryptionMethod` (``ServiceProviderMetadata/encryptionMethods``), the
    /// preferred first: data encryption AES-256-GCM and AES-128-GCM, key transport RSA-OAEP (xmlenc 1.1,
    /// then the 2001 `rsa-oaep-mgf1p` most IdPs implement). Every one is accepted by ``strict``.
    static let advertised = [
        "http://www.w3.org/2009/xmlenc11#aes256-gcm", "http://www.w3.org/2009/xmlenc11#aes128-gcm", rsaOAEP11, rsaOAEP,
    ]

    func checkKeyTransport(_ uri: String) throws {
        if uri == Self.rsaOAEP || uri == Self.rsaOAEP11 { return }
        if uri == Self.rsa15 {
            guard allowsLegacy else { throw refusal("key transport", uri, legacy: true) }
            return
        }
        throw refusal("key transport", uri, legacy: false)
    }

    /// The session key a data algorithm needs.
    struct SessionKeyLength {
        var bytes: Int
        /// A 3DES key rather than an AES one.
        var isDES: Bool
    }

    func checkDataEncryption(_ uri: String) throws -> SessionKeyLength {
        let bytes = uri.contains("aes128") ? 16 : uri.contains("aes192") ? 24 : 32
        if Self.gcm.contains(where: { $0.hasSameBytes(as: uri) }) { return SessionKeyLength(bytes: bytes, isDES: false) }
        if Self.cbc.contains(where: { $0.hasSameBytes(as: uri) }) || uri == Self.tripleDES {
            guard allowsLegacy else { throw refusal("data encryption", uri, legacy: true) }
            return uri == Self.tripleDES ? SessionKeyLength(bytes: 24, isDES: true) : SessionKeyLength(bytes: bytes, isDES: false)
        }
        throw refusal("data encryption", uri, legacy: false)
    }

    private func refusal(_ kind: String, _ uri: String, legacy: Bool) -> SAMLError {
        let hint =
            legacy
            ? " (a legacy algorithm: allow it with EncryptionAlgorithmPolicy.allowingLegacy / --allow-legacy-encryption)" : ""
        return SAMLError(.decryptionAlgorithmNotAllowed, "expected an allowed \(kind) algorithm, found \(SAMLError.quote(uri))\(hint)")
    }
}
