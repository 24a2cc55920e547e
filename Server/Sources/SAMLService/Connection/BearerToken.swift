import Crypto

/// `Authorization: Bearer` credentials (RFC 6750 2.1, RFC 9110 11.1): the scheme in any case, one or
/// more spaces, the token; tokens compared over their SHA-256 digests in constant time, so neither the
/// length nor the first differing byte of a configured token shows in the time of a refusal.
enum BearerToken {
    static func digest(_ token: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: token))
    }

    /// The token of a `Bearer` header value, or nil for another scheme or an empty token.
    static func credentials(in value: String) -> [UInt8]? {
        let bytes = Array(value.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1,
            zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }),
            bytes[scheme.count] == UInt8(ascii: " ")
        else { return nil }
        let token = bytes[(scheme.count + 1)...].drop { $0 == UInt8(ascii: " ") }
        return token.isEmpty ? nil : Array(token)
    }

    /// Whether `token` is one of the tokens whose digests are `digests`; every digest is compared in full.
    static func matches(_ token: [UInt8], _ digests: [[UInt8]]) -> Bool {
        let presented = digest(token)
        var found = false
        for candidate in digests {
            var difference: UInt8 = 0
            for (a, b) in zip(presented, candidate) { difference |= a ^ b }
            found = found || (difference == 0 && candidate.count == presented.count)
        }
        return found
    }
}
