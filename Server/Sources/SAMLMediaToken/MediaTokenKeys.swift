import Crypto
import Foundation
import JWTKit

/// ES256 (P-256) keys of media tokens, each with its RFC 7638 thumbprint as `kid`.
public struct MediaTokenKey: Sendable {
    public let keyID: String
    let publicKey: ES256PublicKey
    let privateKey: ES256PrivateKey?

    /// A private key (signs and verifies).
    public init(privateKeyPEM pem: String) throws(MediaTokenError) {
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: pem)
        } catch {
            throw MediaTokenError(.invalidKey, "expected a P-256 private key in PEM, found one that does not read")
        }
        try self.init(publicKey: key.publicKey, privateKey: key)
    }

    /// A public key (verifies only), in PEM.
    public init(publicKeyPEM pem: String) throws(MediaTokenError) {
        let key: ES256PublicKey
        do {
            key = try ES256PublicKey(pem: pem)
        } catch {
            throw MediaTokenError(.invalidKey, "expected a P-256 public key in PEM, found one that does not read")
        }
        try self.init(publicKey: key, privateKey: nil)
    }

    /// A fresh private key (a development instance without `mediaTokenKeysFile`).
    public static func generated() -> MediaTokenKey {
        let key = ES256PrivateKey()
        return try! MediaTokenKey(publicKey: key.publicKey, privateKey: key)
    }

    private init(publicKey: ES256PublicKey, privateKey: ES256PrivateKey?) throws(MediaTokenError) {
        guard let parameters = publicKey.parameters else {
            throw MediaTokenError(.invalidKey, "expected a P-256 key with coordinates, found none")
        }
        self.publicKey = publicKey
        self.privateKey = privateKey
        // RFC 7638: SHA-256 of the required members in lexicographic order, no whitespace.
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(parameters.x)","y":"\#(parameters.y)"}"#
        keyID = Data(SHA256.hash(data: Data(canonical.utf8))).base64URLEncoded
    }

    /// The public key as a JWK (RFC 7517) object: `kty`, `crv`, `x`, `y`, `kid`, `alg`, `use`.
    public var jwk: [String: String] {
        let parameters = publicKey.parameters!
        return ["kty": "EC", "crv": "P-256", "x": parameters.x, "y": parameters.y, "kid": keyID, "alg": "ES256", "use": "sig"]
    }

    /// The keys of a PEM file: each `-----BEGIN ... PRIVATE KEY-----` block, in order (the first signs).
    public static func privateKeys(pemFile text: String) throws(MediaTokenError) -> [MediaTokenKey] {
        var keys: [MediaTokenKey] = []
        var block: [Substring] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-----BEGIN ") { block = [] }
            block.append(Substring(trimmed))
            if trimmed.hasPrefix("-----END ") {
                guard trimmed.hasSuffix("PRIVATE KEY-----") else {
                    throw MediaTokenError(.invalidKey, "expected only private keys in the media-token key file, found another PEM block")
                }
                keys.append(try MediaTokenKey(privateKeyPEM: block.joined(separator: "\n")))
                block = []
            }
        }
        guard !keys.isEmpty else { throw MediaTokenError(.invalidKey, "expected at least one PEM private key, found none") }
        return keys
    }

    /// The JWK Set of `keys`' public halves (RFC 7517 section 5), as JSON text.
    public static func jwks(_ keys: [MediaTokenKey]) -> [UInt8] {
        let object = ["keys": keys.map(\.jwk)]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(object)) ?? Data())
    }
}
