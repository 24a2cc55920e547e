internal import CSAMLShim

/// Decrypts SAML's encrypted elements (EncryptedAssertion, EncryptedAttribute, EncryptedID).
///
/// The EncryptedKey is looked for in the EncryptedData's ds:KeyInfo, through a same-document
/// ds:RetrievalMethod, or among the container's children; KeyInfo is only a pointer to the EncryptedKey,
/// never a source of keys: every configured SP key is tried. Only `CipherValue` is read: a
/// `CipherReference`, or a RetrievalMethod to anything but a same-document ID, is refused before any
/// cryptography (nothing is ever fetched).
///
/// **One failure for every cryptographic outcome.** Whether the key transport's padding was wrong, the
/// key was another SP's, the ciphertext was altered, or the plaintext is not one well-formed element
/// within the caps, the caller sees the same code and the same message (``SAMLError/Code/decryptionFailed``):
/// a difference would be a Bleichenbacher (RSA-1_5) or Jager-Somorovsky (CBC) oracle. A key transport that
/// does not yield a session key of the right length is replaced by a random key, so that the data step
/// runs and fails the same way.
enum Decryption {
    /// The most `xenc:EncryptedKey`s one encrypted element may carry (KeyInfo, RetrievalMethod and
    /// siblings together).
    static let maximumEncryptedKeys = 4

    /// The decrypted plaintext, not yet linked into any tree (see ``SafeXMLParser/parseFragment``).
    struct Plaintext {
        /// The one element the plaintext holds.
        let element: xmlNodePtr
        /// Every node parsed (the element, and whitespace or comments around it); free with `xmlFreeNodeList`.
        let nodes: xmlNodePtr
    }

    /// Decrypts the EncryptedData of `container` and parses the plaintext in the container's namespace
    /// context, with `limits` applied to the plaintext bytes before parsing.
    static func decrypt(
        _ container: xmlNodePtr, keys: [DecryptionKey], policy: EncryptionAlgorithmPolicy, limits: XMLParserLimits
    ) throws -> Plaintext {
        let name = container.qualifiedDescription
        guard !keys.isEmpty else {
            throw SAMLError(.decryptionNoKey, "expected an SP decryption key for the \(name), found none configured")
        }
        guard let encryptedData = container.firstChild(Namespace.xmlEnc, "EncryptedData") else {
            throw SAMLError(.structureMissingElement, "expected an xenc:EncryptedData in the \(name), found none")
        }
        let dataAlgorithm = encryptedData.firstChild(Namespace.xmlEnc, "EncryptionMethod")?.attribute("Algorithm") ?? ""
        let keyLength = try policy.checkDataEncryption(dataAlgorithm)
        _ = try cipherValue(of: encryptedData, in: name)
        let candidates = try encryptedKeys(for: encryptedData, in: container)
        guard !candidates.isEmpty else {
            throw SAMLError(.decryptionNoKey, "expected an xenc:EncryptedKey for the \(name), found none")
        }
        // Each EncryptedKey costs an RSA decryption per SP key, and anyone can make them with the SP's
        // public certificate: a few recipients at most (one per SP key in practice).
        guard candidates.count <= maximumEncryptedKeys else {
            throw SAMLError(
                .decryptionFailed, "expected at most \(maximumEncryptedKeys) xenc:EncryptedKey for the \(name), found \(candidates.count)")
        }
        // Every structural and policy check first: from here on, every failure is the same failure.
        let transports = try candidates.map { try KeyTransport($0, policy: policy, in: name) }
        let failure = SAMLError(
            .decryptionFailed,
            "expected the \(name) to decrypt with one of \(keys.count) SP key(s) into one element within the limits, "
                + "it does not (encrypted for another SP, or altered)"
        )
        // Each distinct session key is tried once (copies of one wrapped key decrypt the data once).
        var sessionKeys: [[UInt8]] = []
        for transport in transports {
            for key in keys {
                if let sessionKey = transport.decrypt(with: key), sessionKey.count == keyLength.bytes, !sessionKeys.contains(sessionKey) {
                    sessionKeys.append(sessionKey)
                }
            }
        }
        if sessionKeys.isEmpty {
            // Implicit rejection: the data step runs with a key that cannot work, and fails like any other.
            sessionKeys.append(RandomBytes.draw(keyLength.bytes))
        }
        for sessionKey in sessionKeys {
            guard let bytes = decryptData(encryptedData, sessionKey: sessionKey, des: keyLength.isDES, policy: policy, limits: limits)
            else { continue }
            if let plaintext = try? bytes.withUnsafeBytes({ try parse($0, in: container, limits: limits) }) {
                return plaintext
            }
        }
        throw failure
    }

    private static func decryptData(
        _ encryptedData: xmlNodePtr, sessionKey: [UInt8], des: Bool, policy: EncryptionAlgorithmPolicy, limits: XMLParserLimits
    ) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = sessionKey.withUnsafeBufferPointer {
            saml_shim_decrypt_data(
                encryptedData, $0.baseAddress, $0.count, des ? 1 : 0, policy.allowsLegacy ? 1 : 0,
                limits.maximumDocumentBytes, &output, &length)
        }
        defer { saml_shim_free_plaintext(output) }
        guard status == SAML_SHIM_DECRYPT_OK, let output else { return nil }
        return Array(UnsafeBufferPointer(start: output, count: length))
    }

    /// The plaintext must be exactly one element, with at most whitespace, comments and processing
    /// instructions around it.
    private static func parse(_ bytes: UnsafeRawBufferPointer, in container: xmlNodePtr, limits: XMLParserLimits) throws -> Plaintext {
        let nodes = try SafeXMLParser.parseFragment(bytes, in: container, limits: limits)
        var element: xmlNodePtr?
        var node: xmlNodePtr? = nodes
        var acceptable = true
        while let current = node {
            node = current.pointee.next
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                if element != nil { acceptable = false }
                element = current
            case XML_TEXT_NODE:
                if !Text.isBlank(current.pointee.content) { acceptable = false }
            case XML_COMMENT_NODE, XML_PI_NODE:
                break
            default:
                acceptable = false
            }
        }
        guard acceptable, let element else {
            xmlFreeNodeList(nodes)
            throw SAMLError(.decryptionFailed, "expected one element as the plaintext")
        }
        return Plaintext(element: element, nodes: nodes)
    }

    /// The Base64 CipherValue of an EncryptedData or EncryptedKey; a CipherReference is refused.
    static func cipherValue(of element: xmlNodePtr, in name: String) throws -> xmlNodePtr {
        guard let cipherData = element.firstChild(Namespace.xmlEnc, "CipherData") else {
            throw SAMLError(
                .structureMissingElement, "expected xenc:CipherData in the \(element.qualifiedDescription) of the \(name), found none")
        }
        if cipherData.firstChild(Namespace.xmlEnc, "CipherReference") != nil {
            throw SAMLError(
                .decryptionExternalReference,
                "expected the ciphertext of the \(name) inline (xenc:CipherValue), found an xenc:CipherReference (nothing is fetched)"
            )
        }
        guard let value = cipherData.firstChild(Namespace.xmlEnc, "CipherValue") else {
            throw SAMLError(
                .structureMissingElement, "expected xenc:CipherValue in the \(element.qualifiedDescription) of the \(name), found none")
        }
        return value
    }

    /// The EncryptedKey elements that may hold the key of `encryptedData`, most specific first.
    private static func encryptedKeys(for encryptedData: xmlNodePtr, in container: xmlNodePtr) throws -> [xmlNodePtr] {
        var found: [xmlNodePtr] = []
        func add(_ node: xmlNodePtr) {
            if !found.contains(node) { found.append(node) }
        }
        let keyInfo = encryptedData.firstChild(Namespace.xmlDSig, "KeyInfo")
        keyInfo?.children(Namespace.xmlEnc, "EncryptedKey").forEach(add)
        // Each RetrievalMethod is a walk of the container: no more of them than keys are accepted.
        let retrievals = keyInfo?.children(Namespace.xmlDSig, "RetrievalMethod") ?? []
        guard retrievals.count <= maximumEncryptedKeys else {
            throw SAMLError(
                .decryptionFailed,
                "expected at most \(maximumEncryptedKeys) ds:RetrievalMethod in the KeyInfo of the \(container.qualifiedDescription), found \(retrievals.count)"
            )
        }
        for retrieval in retrievals {
            let uri = retrieval.attribute("URI") ?? ""
            guard uri.hasPrefix("#"), uri.count > 1 else {
                throw SAMLError(
                    .decryptionExternalReference,
                    "expected a ds:RetrievalMethod URI naming a same-document ID ('#id'), found \(SAMLError.quote(uri)) (nothing is fetched)"
                )
            }
            let id = String(uri.dropFirst())
            container.descendants { $0.is(Namespace.xmlEnc, "EncryptedKey") && ($0.attribute("Id") == id || $0.attribute("ID") == id) }
                .forEach(add)
        }
        container.children(Namespace.xmlEnc, "EncryptedKey").forEach(add)
        return found
    }
}

/// The key transport of one EncryptedKey, read and checked against the policy before any decryption.
struct KeyTransport {
    // Searched byte for byte (``Swift/String/hasSameBytes(as:)``), never hashed: the URI is the document's.
    private static let digests: KeyValuePairs<String, saml_shim_digest> = [
        "http://www.w3.org/2000/09/xmldsig#sha1": SAML_SHIM_DIGEST_SHA1,
        "http://www.w3.org/2001/04/xmldsig-more#sha224": SAML_SHIM_DIGEST_SHA224,
        "http://www.w3.org/2001/04/xmlenc#sha256": SAML_SHIM_DIGEST_SHA256,
        "http://www.w3.org/2001/04/xmldsig-more#sha384": SAML_SHIM_DIGEST_SHA384,
        "http://www.w3.org/2001/04/xmlenc#sha384": SAML_SHIM_DIGEST_SHA384,
        "http://www.w3.org/2001/04/xmlenc#sha512": SAML_SHIM_DIGEST_SHA512,
    ]
    private static let masks: KeyValuePairs<String, saml_shim_digest> = [
        "http://www.w3.org/2009/xmlenc11#mgf1sha1": SAML_SHIM_DIGEST_SHA1,
        "http://www.w3.org/2009/xmlenc11#mgf1sha224": SAML_SHIM_DIGEST_SHA224,
        "http://www.w3.org/2009/xmlenc11#mgf1sha256": SAML_SHIM_DIGEST_SHA256,
        "http://www.w3.org/2009/xmlenc11#mgf1sha384": SAML_SHIM_DIGEST_SHA384,
        "http://www.w3.org/2009/xmlenc11#mgf1sha512": SAML_SHIM_DIGEST_SHA512,
    ]

    let oaep: Bool
    let digest: saml_shim_digest
    let mask: saml_shim_digest
    let label: [UInt8]
    let cipher: [UInt8]

    init(_ encryptedKey: xmlNodePtr, policy: EncryptionAlgorithmPolicy, in name: String) throws {
        let method = encryptedKey.firstChild(Namespace.xmlEnc, "EncryptionMethod")
        let uri = method?.attribute("Algorithm") ?? ""
        try policy.checkKeyTransport(uri)
        oaep = uri != EncryptionAlgorithmPolicy.rsa15
        func lookup(
            _ table: KeyValuePairs<String, saml_shim_digest>, _ element: xmlNodePtr?, _ what: String
        ) throws -> saml_shim_digest {
            guard let element else { return SAML_SHIM_DIGEST_SHA1 }  // the default of both specifications
            let algorithm = element.attribute("Algorithm") ?? ""
            guard let digest = table.first(where: { $0.key.hasSameBytes(as: algorithm) })?.value else {
                throw SAMLError(
                    .decryptionAlgorithmNotAllowed, "expected a known \(what) for RSA-OAEP, found \(SAMLError.quote(algorithm))")
            }
            return digest
        }
        digest = try lookup(Self.digests, method?.firstChild(Namespace.xmlDSig, "DigestMethod"), "DigestMethod")
        // rsa-oaep-mgf1p fixes the mask function to MGF1 with SHA-1 (XML Encryption 1.0, 5.4.2); only the
        // xmlenc 1.1 rsa-oaep names another.
        mask =
            uri == EncryptionAlgorithmPolicy.rsaOAEP11
            ? try lookup(Self.masks, method?.firstChild(Namespace.xmlEnc11, "MGF"), "MGF") : SAML_SHIM_DIGEST_SHA1
        do {
            label = try method?.firstChild(Namespace.xmlEnc, "OAEPparams").map { try $0.base64Content(maximumBytes: 1024) } ?? []
            cipher = try Decryption.cipherValue(of: encryptedKey, in: name).base64Content(maximumBytes: 2048)
        } catch let error as SAMLError
            where error.code == .decodeInvalidBase64 || error.code == .decodeTruncatedBase64 || error.code == .decodeTooLarge
        {
            throw SAMLError(
                .structureMissingElement, "expected the EncryptedKey of the \(name) to carry a Base64 RSA ciphertext, found none")
        }
    }

    /// The session key, or nil when the key transport fails with this key (the caller does not say so).
    func decrypt(with key: DecryptionKey) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 512)
        var length = 0
        let status = output.withUnsafeMutableBufferPointer { buffer in
            label.withUnsafeBufferPointer { label in
                cipher.withUnsafeBufferPointer { cipher in
                    saml_shim_rsa_decrypt_key(
                        key.handle.key, oaep ? 1 : 0, digest, mask, label.baseAddress, label.count,
                        cipher.baseAddress, cipher.count, buffer.baseAddress, buffer.count, &length)
                }
            }
        }
        guard status == SAML_SHIM_DECRYPT_OK, length > 0 else { return nil }
        return Array(output[0..<length])
    }
}
