internal import CSAMLShim

/// Decrypts SAML's encrypted elements (EncryptedAssertion, EncryptedAttribute, EncryptedID) in place.
///
/// The EncryptedKey is looked for in the EncryptedData's ds:KeyInfo, through a same-document
/// ds:RetrievalMethod, or among the container's children; KeyInfo is only a pointer to the EncryptedKey,
/// never a source of keys: every configured SP key is tried, preset on a fresh context.
enum Decryption {
    static let xenc: StaticString = "http://www.w3.org/2001/04/xmlenc#"

    /// Decrypts the EncryptedData of `container`; returns the element that replaced it.
    static func decrypt(
        _ container: xmlNodePtr, keys: [DecryptionKey], policy: EncryptionAlgorithmPolicy, maximumBytes: Int
    ) throws -> xmlNodePtr {
        let name = container.qualifiedDescription
        guard !keys.isEmpty else {
            throw SAMLError(.decryptionNoKey, "expected an SP decryption key for the \(name), found none configured")
        }
        guard let encryptedData = container.firstChild(xenc, "EncryptedData") else {
            throw SAMLError(.decryptionFailed, "expected an xenc:EncryptedData in the \(name), found none")
        }
        let dataAlgorithm = encryptedData.firstChild(xenc, "EncryptionMethod")?.attribute("Algorithm") ?? ""
        let isDES = try policy.checkDataEncryption(dataAlgorithm)
        let candidates = encryptedKeys(for: encryptedData, in: container)
        guard !candidates.isEmpty else {
            throw SAMLError(.decryptionNoKey, "expected an xenc:EncryptedKey for the \(name), found none")
        }
        var sessionKey: [UInt8]?
        search: for encryptedKey in candidates {
            let transport = encryptedKey.firstChild(xenc, "EncryptionMethod")?.attribute("Algorithm") ?? ""
            try policy.checkKeyTransport(transport)
            for key in keys {
                if let decrypted = decryptKey(encryptedKey, key: key, oaep11: transport == EncryptionAlgorithmPolicy.rsaOAEP11, policy: policy) {
                    sessionKey = decrypted
                    break search
                }
            }
        }
        guard let sessionKey else {
            throw SAMLError(
                .decryptionNoKey,
                "expected an EncryptedKey that one of \(keys.count) SP key(s) decrypts, found none (encrypted for another SP?)"
            )
        }
        let before = Set(container.elementChildren.map { $0 })
        let status = sessionKey.withUnsafeBufferPointer {
            saml_shim_decrypt_data(encryptedData, $0.baseAddress, $0.count, isDES ? 1 : 0, policy.allowsLegacy ? 1 : 0, maximumBytes)
        }
        switch status {
        case SAML_SHIM_DECRYPT_OK:
            break
        case SAML_SHIM_DECRYPT_TOO_LARGE:
            throw SAMLError(.decryptionFailed, "expected at most \(maximumBytes) decrypted bytes in the \(name), found more")
        default:
            throw SAMLError(.decryptionFailed, "expected the \(name) to decrypt with its session key, it does not (corrupted or tampered ciphertext)")
        }
        // The EncryptedData node is gone; what replaced it is the new element child.
        let added = container.elementChildren.filter { !before.contains($0) }
        guard added.count == 1, let element = added.first else {
            throw SAMLError(.decryptionFailed, "expected one element as the plaintext of the \(name), found \(added.count)")
        }
        return element
    }

    private static func decryptKey(_ encryptedKey: xmlNodePtr, key: DecryptionKey, oaep11: Bool, policy: EncryptionAlgorithmPolicy) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 512)
        var length = 0
        let status = output.withUnsafeMutableBufferPointer { buffer in
            oaep11
                ? saml_shim_decrypt_key_oaep11(encryptedKey, key.handle.key, buffer.baseAddress, buffer.count, &length)
                : saml_shim_decrypt_key(encryptedKey, key.handle.key, policy.allowsLegacy ? 1 : 0, buffer.baseAddress, buffer.count, &length)
        }
        guard status == SAML_SHIM_DECRYPT_OK, length > 0 else { return nil }
        return Array(output[0..<length])
    }

    /// The EncryptedKey elements that may hold the key of `encryptedData`, most specific first.
    private static func encryptedKeys(for encryptedData: xmlNodePtr, in container: xmlNodePtr) -> [xmlNodePtr] {
        var found: [xmlNodePtr] = []
        func add(_ node: xmlNodePtr) {
            if !found.contains(node) { found.append(node) }
        }
        let keyInfo = encryptedData.firstChild(Namespace.xmlDSig, "KeyInfo")
        keyInfo?.children(xenc, "EncryptedKey").forEach(add)
        for retrieval in keyInfo?.children(Namespace.xmlDSig, "RetrievalMethod") ?? [] {
            guard let uri = retrieval.attribute("URI"), uri.hasPrefix("#") else { continue }
            let id = String(uri.dropFirst())
            container.descendants { $0.is(xenc, "EncryptedKey") && ($0.attribute("Id") == id || $0.attribute("ID") == id) }.forEach(add)
        }
        container.children(xenc, "EncryptedKey").forEach(add)
        return found
    }
}
