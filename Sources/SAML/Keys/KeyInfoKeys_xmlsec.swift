internal import CSAMLShim

/// The key a metadata `ds:KeyInfo` names: `ds:X509Data/ds:X509Certificate`, and `ds:KeyValue` holding
/// `ds:RSAKeyValue` or xmldsig 1.1 `dsig11:ECKeyValue` (named curves P-256, P-384, P-521), turned into a
/// DER SubjectPublicKeyInfo for OpenSSL. Metadata is trusted configuration (signed by a pinned signer or
/// installed by the operator), unlike the KeyInfo of a response, which is never read.
///
/// One KeyInfo is one key (XML-DSig 4.5: KeyInfo "indicates the key" the signature is checked with).
/// Several children may describe it (a certificate and its `RSAKeyValue`, the same certificate twice):
/// they are compared by their public key as OpenSSL encodes it, and the first certificate is the key
/// returned (its fingerprint is the certificate's, as for a pinned PEM). In one `ds:X509Data`, the first
/// certificate is the key and any others its chain (XML-DSig 4.5.4), which are never trusted as keys.
/// Children that describe different public keys (a certificate and another key's `RSAKeyValue`, the
/// certificates of two `ds:X509Data` of different keys) are refused with
/// ``SAMLError/Code/metadataKeyConflict``: pooling them would trust a key the IdP never published as its
/// own. Keys of different `md:KeyDescriptor`s are separate
/// KeyInfos and stay pooled (rotation). The only caller is the metadata reader, so this applies to every
/// metadata source (the `metadata` entries of a trust file, `saml verify --metadata`); a response's
/// KeyInfo is never read and pinned PEM bundles are not KeyInfos.
enum KeyInfoKeys {
    static let dsig11: StaticString = "http://www.w3.org/2009/xmldsig11#"

    /// The one key of `keyInfo`, or nil when it names none this reader can use (only `ds:KeyName`,
    /// `ds:X509IssuerSerial`, a `DSAKeyValue`...).
    ///
    /// - Throws: ``SAMLError/Code/metadataMalformed`` for a key element that cannot be read,
    ///   ``SAMLError/Code/metadataKeyConflict`` when its children describe more than one public key.
    static func read(_ keyInfo: xmlNodePtr, entityID: String) throws -> TrustedKey? {
        let ds = Namespace.xmlDSig
        var keys: [(key: TrustedKey, source: String)] = []
        func fail(_ what: String, _ error: SAMLError) -> SAMLError {
            SAMLError(
                .metadataMalformed, "expected a usable \(what) for \(SAMLError.quote(entityID)), found one that is not: \(error.message)")
        }
        // In one X509Data, the first certificate holds the key and any others are its chain (XML-DSig 4.5.4:
        // every certificate of an X509Data contains the validation key or is part of a chain ending in
        // the one that does); chain certificates are not keys of the IdP.
        for data in keyInfo.children(ds, "X509Data") {
            guard let certificate = data.firstChild(ds, "X509Certificate") else { continue }
            do {
                keys.append((try TrustedKey(der: try base64(certificate), isCertificate: true), "X509Certificate"))
            } catch let error as SAMLError {
                throw fail("X509Certificate", error)
            }
        }
        for value in keyInfo.children(ds, "KeyValue") {
            do {
                if let rsa = value.firstChild(ds, "RSAKeyValue") {
                    guard let modulus = rsa.firstChild(ds, "Modulus"), let exponent = rsa.firstChild(ds, "Exponent") else {
                        throw SAMLError(.metadataMalformed, "expected Modulus and Exponent in RSAKeyValue")
                    }
                    let der = DER.rsaPublicKey(modulus: try base64(modulus), exponent: try base64(exponent))
                    keys.append((try TrustedKey(der: der, isCertificate: false), "RSAKeyValue"))
                } else if let ec = value.firstChild(dsig11, "ECKeyValue") {
                    guard let curve = ec.firstChild(dsig11, "NamedCurve")?.attribute("URI"), let point = ec.firstChild(dsig11, "PublicKey"),
                        case let named = XMLWhitespace.trimmed(curve),
                        let oid = DER.namedCurves.first(where: { $0.key.hasSameBytes(as: named) })?.value
                    else {
                        throw SAMLError(.metadataMalformed, "expected a NamedCurve of P-256, P-384 or P-521 and a PublicKey in ECKeyValue")
                    }
                    keys.append(
                        (try TrustedKey(der: DER.ecPublicKey(curve: oid, point: try base64(point)), isCertificate: false), "ECKeyValue"))
                }
            } catch let error as SAMLError {
                throw fail("KeyValue", error)
            }
        }
        guard let first = keys.first else { return nil }
        let expected = try publicKey(first.key)
        for other in keys.dropFirst() {
            guard try publicKey(other.key) != expected else { continue }
            throw SAMLError(
                .metadataKeyConflict,
                "expected one key in a ds:KeyInfo of \(SAMLError.quote(entityID)) (XML-DSig 4.5), found "
                    + "\(keys.count) key descriptions (\(keys.map(\.source).joined(separator: ", "))) naming different public keys")
        }
        return first.key
    }

    /// The SubjectPublicKeyInfo of a loaded key as OpenSSL encodes it, so that a certificate's key and the
    /// same key written as a KeyValue compare equal whatever the encoding they were read from.
    private static func publicKey(_ key: TrustedKey) throws -> [UInt8] {
        guard let der = key.handle.publicKeyDER else {
            throw SAMLError(.metadataMalformed, "expected a public key OpenSSL can encode in a ds:KeyInfo, found one it cannot")
        }
        return der
    }

    private static func base64(_ element: xmlNodePtr) throws -> [UInt8] {
        try element.base64Content(maximumBytes: 1 << 16)
    }
}

/// Just enough DER to write a SubjectPublicKeyInfo.
enum DER {
    /// `urn:oid:` URIs of the named curves and the DER of their object identifiers (searched byte for
    /// byte, ``Swift/String/hasSameBytes(as:)``: the URI is the document's).
    static let namedCurves: KeyValuePairs<String, [UInt8]> = [
        "urn:oid:1.2.840.10045.3.1.7": [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07],
        "urn:oid:1.3.132.0.34": [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22],
        "urn:oid:1.3.132.0.35": [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23],
    ]
    static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    static let null: [UInt8] = [0x05, 0x00]

    static func rsaPublicKey(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        let key = sequence(integer(modulus) + integer(exponent))
        return sequence(sequence(rsaEncryption + null) + bitString(key))
    }

    static func ecPublicKey(curve: [UInt8], point: [UInt8]) -> [UInt8] {
        sequence(sequence(ecPublicKey + curve) + bitString(point))
    }

    static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tagged(0x02, bytes)
    }

    static func bitString(_ bytes: [UInt8]) -> [UInt8] { tagged(0x03, [0] + bytes) }
    static func sequence(_ bytes: [UInt8]) -> [UInt8] { tagged(0x30, bytes) }

    static func tagged(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        var count = content.count
        if count < 0x80 {
            length = [UInt8(count)]
        } else {
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }
}
