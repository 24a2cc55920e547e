/// What a SAML request is issued for, and what the response that answers it must come with: the
/// service provider it was asked of, the MVPD (its id and its identity provider's entity ID), the device
/// that asked, and the API it was asked through.
public struct RequestBinding: Sendable, Hashable {
    public var serviceProvider: String
    /// The MVPD id.
    public var mvpd: String
    /// The entity ID of the MVPD's identity provider.
    public var identityProvider: String
    /// The device (for example the `AP-Device-Identifier` header's value). Only its HMAC enters the ID.
    public var device: String
    /// The API the request was issued through (for example `v2`): a request issued on one API cannot be
    /// answered through another.
    public var api: String

    public init(serviceProvider: String, mvpd: String, identityProvider: String, device: String, api: String) {
        self.serviceProvider = serviceProvider
        self.mvpd = mvpd
        self.identityProvider = identityProvider
        self.device = device
        self.api = api
    }
}

/// A request ID that was issued and may be answered until `expiry`.
public struct IssuedRequestID: Sendable, Hashable {
    public let id: String
    public let expiry: SAMLInstant

    public init(id: String, expiry: SAMLInstant) {
        self.id = id
        self.expiry = expiry
    }
}

/// One key of a ``RequestIDAuthority``: a one-byte id (written into every request ID it MACs, so that
/// keys can rotate) and a secret of at least 32 bytes.
public struct RequestIDKey: Sendable {
    public let id: UInt8
    /// The secret, made ready for HMAC-SHA-256 once, not at every MAC (a request ID's check computes
    /// several).
    let ready: ReadyHMACKey

    /// - Throws: ``SAMLError/Code/configurationInvalid`` for a secret shorter than 32 bytes.
    public init(id: UInt8, secret: [UInt8]) throws {
        guard secret.count >= 32 else {
            throw SAMLError(.configurationInvalid, "expected a request-ID key secret of at least 32 bytes, found \(secret.count)")
        }
        self.id = id
        ready = ReadyHMACKey(secret)
    }

    /// A key of 32 bytes from the system's cryptographic random source (one process only: other
    /// instances cannot check the IDs it MACs).
    public static func random(id: UInt8 = 0) -> RequestIDKey {
        // 32 random bytes always satisfy the length rule.
        try! RequestIDKey(id: id, secret: RandomBytes.draw(32))
    }
}

/// Self-describing, MAC-protected SAML request IDs: issuing a request writes nothing anywhere, so an
/// unauthenticated caller can ask for as many as it likes without filling any store; the response that
/// answers one is accepted only if the ID was MACed by one of these keys for the same
/// ``RequestBinding`` and has not expired, and a state store then records it answered, once.
///
/// An ID is `_R1` and the unpadded Base64url of: the key id (1 byte), the expiry in seconds since 1970
/// (8 bytes, big-endian), a 16-byte random nonce, four 4-byte field tags (HMAC-SHA-256 of the nonce and
/// the service provider, the API, the MVPD, the device, truncated), a 12-byte ID MAC (HMAC-SHA-256 of
/// everything before it: the ID was issued here, unchanged) and a 16-byte binding MAC (HMAC-SHA-256 of
/// everything before it and every field of the binding): 95 characters, an xs:NCName.
///
/// ``check(_:for:)`` first checks the ID MAC (``SAMLError/Code/inResponseToNotOutstanding`` when it was
/// not issued here), then the binding MAC for the binding the response comes with; when that differs,
/// the tags say which field differs (``SAMLError/Code/inResponseToWrongMVPD``,
/// ``SAMLError/Code/inResponseToWrongDevice``, ...). The binding itself rests on the 128-bit binding
/// MAC, never on the short tags. MACs and tags are compared in constant time. Expiry is left to the
/// store, which compares it with its own clock (the database's for a shared store).
///
/// Several instances of a service must share the keys. Rotation: put the new key first (it MACs new
/// IDs) and keep the old one until the request lifetime has passed.
public struct RequestIDAuthority: Sendable {
    public let keys: [RequestIDKey]

    /// - Throws: ``SAMLError/Code/configurationInvalid`` for no key or two keys with the same id.
    public init(keys: [RequestIDKey]) throws {
        guard !keys.isEmpty else { throw SAMLError(.configurationInvalid, "expected at least one request-ID key, found none") }
        guard Set(keys.map(\.id)).count == keys.count else {
            throw SAMLError(.configurationInvalid, "expected request-ID keys with distinct ids, found a repeated id")
        }
        self.keys = keys
    }

    static let prefix = "_R1"
    private static let tagLength = 4
    private static let idMACLength = 12
    private static let macLength = 16
    private static let nonceLength = 16
    /// key id, expiry, nonce, four tags, ID MAC, binding MAC: a whole number of 3-byte groups.
    private static let payloadLength = 1 + 8 + nonceLength + 4 * tagLength + idMACLength + macLength

    /// A new ID for `binding`, answerable until `now + lifetime` (whole seconds, rounded up).
    ///
    /// - Throws: ``SAMLError/Code/runtimeInitializationFailed`` when OpenSSL cannot compute an HMAC.
    public func issue(for binding: RequestBinding, lifetime: Duration, now: SAMLInstant) throws(SAMLError) -> IssuedRequestID {
        let key = keys[0]
        let expirySeconds = (now + lifetime).millisecondsSinceEpoch / 1000 + 1
        let nonce = RandomBytes.draw(Self.nonceLength)
        var payload: [UInt8] = [key.id]
        payload.reserveCapacity(Self.payloadLength)
        for shift in stride(from: 56, through: 0, by: -8) {
            payload.append(UInt8(truncatingIfNeeded: UInt64(expirySeconds) >> UInt64(shift)))
        }
        payload += nonce
        for field in Field.allCases {
            guard let tag = Self.tag(field, binding: binding, nonce: nonce, key: key) else { throw Self.hmacFailed }
            payload += tag
        }
        guard let idMAC = Self.hmac(Array("swift-saml request id".utf8) + payload, key: key) else { throw Self.hmacFailed }
        payload += idMAC[..<Self.idMACLength]
        guard let mac = Self.mac(over: payload, binding: binding, key: key) else { throw Self.hmacFailed }
        payload += mac
        return IssuedRequestID(id: Self.prefix + Self.encode(payload), expiry: SAMLInstant(millisecondsSinceEpoch: expirySeconds * 1000))
    }

    /// The issued ID `id` names, if one of these keys MACed it for `binding`.
    ///
    /// - Throws: ``SAMLError/Code/inResponseToNotOutstanding`` for an ID not issued here (not of this
    ///   form, an unknown key, a MAC that does not verify); `in-response-to.wrong-service-provider`,
    ///   `-mvpd`, `-device`, `-api` for an ID issued here for another binding.
    public func check(_ id: String, for binding: RequestBinding) throws(SAMLError) -> IssuedRequestID {
        func notIssued(_ why: String) -> SAMLError {
            SAMLError(.inResponseToNotOutstanding, "expected InResponseTo to name a request issued by this service, found \(why)")
        }
        guard id.utf8.count == Self.prefix.utf8.count + Self.payloadLength / 3 * 4, id.hasPrefix(Self.prefix),
            let payload = Self.decode(Array(id.utf8.dropFirst(Self.prefix.utf8.count)))
        else {
            throw notIssued("an ID of another form")
        }
        guard let key = keys.first(where: { $0.id == payload[0] }) else { throw notIssued("an ID MACed by an unknown key") }
        let macStart = payload.count - Self.macLength
        let idMACStart = macStart - Self.idMACLength
        guard let idMAC = Self.hmac(Array("swift-saml request id".utf8) + payload[..<idMACStart], key: key) else {
            throw notIssued("an ID that cannot be checked (no HMAC)")
        }
        guard Self.equal(idMAC[..<Self.idMACLength], payload[idMACStart..<macStart]) else {
            throw notIssued("an ID whose MAC does not verify")
        }
        guard let expected = Self.mac(over: Array(payload[..<macStart]), binding: binding, key: key) else {
            throw notIssued("an ID that cannot be checked (no HMAC)")
        }
        guard !Self.equal(expected, payload[macStart...]) else {
            var seconds: UInt64 = 0
            for byte in payload[1..<9] { seconds = seconds << 8 | UInt64(byte) }
            guard seconds < UInt64(Int64.max / 1000) else { throw notIssued("an ID with an impossible expiry") }
            return IssuedRequestID(id: id, expiry: SAMLInstant(millisecondsSinceEpoch: Int64(seconds) * 1000))
        }
        let nonce = Array(payload[9..<(9 + Self.nonceLength)])
        var offset = 9 + Self.nonceLength
        for field in Field.allCases {
            guard let tag = Self.tag(field, binding: binding, nonce: nonce, key: key) else {
                throw notIssued("an ID that cannot be checked (no HMAC)")
            }
            if !Self.equal(tag, payload[offset..<(offset + Self.tagLength)]) {
                throw SAMLError(
                    field.code, "expected InResponseTo to name a request issued for this \(field.description), found one issued for another"
                )
            }
            offset += Self.tagLength
        }
        // Tags that all match under a binding MAC that does not: a 2^-128 event for an ID issued here.
        throw notIssued("an ID issued for another binding")
    }

    /// The bound fields, in the order of their tags and of the diagnosis (the API before the device: a
    /// v1 crossover names its device differently too, and the API is what it got wrong).
    private enum Field: UInt8, CaseIterable {
        case serviceProvider = 1, api, mvpd, device

        var code: SAMLError.Code {
            switch self {
            case .serviceProvider: .inResponseToWrongServiceProvider
            case .mvpd: .inResponseToWrongMVPD
            case .device: .inResponseToWrongDevice
            case .api: .inResponseToWrongAPI
            }
        }

        var description: String {
            switch self {
            case .serviceProvider: "service provider"
            case .mvpd: "MVPD"
            case .device: "device"
            case .api: "API"
            }
        }

        /// The field's values, each written with its length first so that no two bindings share bytes.
        func values(of binding: RequestBinding) -> [String] {
            switch self {
            case .serviceProvider: [binding.serviceProvider]
            case .mvpd: [binding.mvpd, binding.identityProvider]
            case .device: [binding.device]
            case .api: [binding.api]
            }
        }
    }

    private static func tag(_ field: Field, binding: RequestBinding, nonce: [UInt8], key: RequestIDKey) -> ArraySlice<UInt8>? {
        var input: [UInt8] = Array("swift-saml request tag".utf8) + [field.rawValue] + nonce
        append(field.values(of: binding), to: &input)
        return hmac(input, key: key)?[..<tagLength]
    }

    private static func mac(over prefix: [UInt8], binding: RequestBinding, key: RequestIDKey) -> ArraySlice<UInt8>? {
        var input: [UInt8] = Array("swift-saml request binding".utf8) + prefix
        for field in Field.allCases { append(field.values(of: binding), to: &input) }
        return hmac(input, key: key)?[..<macLength]
    }

    private static let hmacFailed = SAMLError(.runtimeInitializationFailed, "expected OpenSSL to compute an HMAC-SHA-256, found it failing")

    private static func append(_ values: [String], to input: inout [UInt8]) {
        for value in values {
            let count = UInt32(truncatingIfNeeded: value.utf8.count)
            input += [
                UInt8(count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8),
                UInt8(truncatingIfNeeded: count),
            ]
            input += value.utf8
        }
    }

    /// nil when OpenSSL fails (it cannot allocate): the caller then refuses, never compares with zeros.
    private static func hmac(_ input: [UInt8], key: RequestIDKey) -> [UInt8]? { key.ready.mac(input) }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }()

    /// Base64url of a whole number of 3-byte groups (no padding needed).
    private static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 3 * 4)
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let group = UInt32(bytes[start]) << 16 | UInt32(bytes[start + 1]) << 8 | UInt32(bytes[start + 2])
            for shift: UInt32 in stride(from: 18, through: 0, by: -6) { out.append(alphabet[Int(group >> shift & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The payload of a Base64url text of ``payloadLength`` bytes; nil for any other symbol or length.
    private static func decode(_ symbols: [UInt8]) -> [UInt8]? {
        guard symbols.count == payloadLength / 3 * 4 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(payloadLength)
        for start in stride(from: 0, to: symbols.count, by: 4) {
            var group: UInt32 = 0
            for symbol in symbols[start..<(start + 4)] {
                let value = values[Int(symbol)]
                guard value != 0xFF else { return nil }
                group = group << 6 | UInt32(value)
            }
            // Appended one by one: an array literal per group is an allocation per group.
            out.append(UInt8(group >> 16))
            out.append(UInt8(truncatingIfNeeded: group >> 8))
            out.append(UInt8(truncatingIfNeeded: group))
        }
        return out
    }

    private static func equal(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        ReadyHMACKey.equalInConstantTime(a, b)
    }
}
