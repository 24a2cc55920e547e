import Foundation
import JWTKit

/// The content server's side: checks a media token (``MediaToken``) before the resource plays.
///
/// ```swift
/// let verifier = try await MediaTokenVerifier(jwks: jwksJSON, issuer: "REF30")   // GET /api/v2/REF30/media-tokens/keys
/// let token = try await verifier.verify(serialized, resource: "REF30", mvpd: "MVPD-A", device: deviceIdentifier)
/// ```
///
/// Refused, each with its code (``MediaTokenError/Code``): anything but a compact JWS with `alg` ES256
/// and a `kid` the verifier holds; a signature that does not verify; a time outside `nbf`...`exp` (with
/// ``leeway``); another issuer (the service provider the verifier is made for), resource, MVPD or device
/// than the caller expects. The issuer and the resource are always checked, byte for byte; the MVPD and
/// the device when the caller names them (a content server that knows the device should name it: a token
/// is otherwise good for any device during its few minutes).
public struct MediaTokenVerifier: Sendable {
    private let collection: JWTKeyCollection
    private let keyIDs: Set<String>
    /// The service provider whose tokens are accepted (`iss`).
    public let issuer: String
    /// The clock skew allowed on `nbf` and `exp`.
    public var leeway: TimeInterval = 30
    /// The longest token read: the service's tokens are about 1 KB, and 4 KB for the longest resource id.
    public static let maximumLength = 16 * 1024

    public init(keys: [MediaTokenKey], issuer: String) async throws(MediaTokenError) {
        guard !keys.isEmpty else { throw MediaTokenError(.invalidKey, "expected at least one key, found none") }
        let collection = JWTKeyCollection()
        for key in keys { await collection.add(ecdsa: key.publicKey, kid: JWKIdentifier(string: key.keyID)) }
        self.collection = collection
        keyIDs = Set(keys.map(\.keyID))
        self.issuer = issuer
    }

    /// The keys of a JWK Set (the service's `media-tokens/keys`): its P-256 keys.
    public init(jwks json: some DataProtocol, issuer: String) async throws(MediaTokenError) {
        guard let set = try? JSONDecoder().decode(KeySet.self, from: Data(json)) else {
            throw MediaTokenError(.invalidKey, "expected a JWK Set ({\"keys\": [...]}), found text that does not read as one")
        }
        var keys: [MediaTokenKey] = []
        for key in set.keys where key.kty == "EC" && key.crv == "P-256" {
            guard let x = key.x, let y = key.y, let publicKey = try? ES256PublicKey(parameters: (x, y)) else {
                throw MediaTokenError(.invalidKey, "expected a P-256 JWK with x and y, found one that does not read")
            }
            keys.append(try MediaTokenKey(publicKeyPEM: publicKey.pemRepresentation))
        }
        try await self.init(keys: keys, issuer: issuer)
    }

    /// The token's claims once every check passes.
    public func verify(
        _ serialized: String, resource: String, mvpd: String? = nil, device: String? = nil, now: Date = Date()
    ) async throws(MediaTokenError) -> MediaToken {
        // The header's alg and kid first: jwt-kit picks the key by kid and falls back to its first key,
        // so an unknown kid is refused here, and only ES256 is ever accepted.
        guard serialized.utf8.count <= Self.maximumLength else {
            throw MediaTokenError(.malformed, "expected a compact JWS of at most \(Self.maximumLength) bytes, found a longer text")
        }
        let parts = serialized.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.header(parts[0]) else {
            throw MediaTokenError(.malformed, "expected a compact JWS of three Base64url parts with a JSON header, found another form")
        }
        guard header.alg == "ES256" else { throw MediaTokenError(.algorithm, "expected alg ES256, found another algorithm") }
        guard let kid = header.kid, keyIDs.contains(kid) else {
            throw MediaTokenError(.unknownKey, "expected a kid among the \(keyIDs.count) key(s) held, found none of them")
        }
        let claims: MediaTokenClaims
        do {
            claims = try await collection.verify(serialized, as: MediaTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw MediaTokenError(.signature, "expected a signature by key \(kid), found one that does not verify")
        } catch {
            throw MediaTokenError(
                .malformed,
                "expected the media token's claims (iss, jti, iat, nbf, exp, resource, mvpd, dev), found a token that does not read")
        }
        let time = now.timeIntervalSince1970
        guard time < TimeInterval(claims.exp) + leeway else {
            throw MediaTokenError(.expired, "expected a time before exp \(claims.exp) (+\(Int(leeway)) s), found \(Int64(time))")
        }
        guard time >= TimeInterval(claims.nbf) - leeway else {
            throw MediaTokenError(.notYetValid, "expected a time from nbf \(claims.nbf) (-\(Int(leeway)) s), found \(Int64(time))")
        }
        guard claims.iss.utf8.elementsEqual(issuer.utf8) else {
            throw MediaTokenError(.wrongIssuer, "expected a token issued by \(issuer), found another issuer's")
        }
        guard claims.resource.utf8.elementsEqual(resource.utf8) else {
            throw MediaTokenError(.wrongResource, "expected a token for the resource asked for, found one for another")
        }
        if let mvpd, !claims.mvpd.utf8.elementsEqual(mvpd.utf8) {
            throw MediaTokenError(.wrongMVPD, "expected a token for MVPD \(mvpd), found another MVPD's")
        }
        if let device, claims.dev != MediaToken.deviceDigest(device) {
            throw MediaTokenError(.wrongDevice, "expected a token issued to this device, found another device's")
        }
        return MediaToken(claims, keyID: kid)
    }

    /// The members of a JWK Set this reads.
    private struct KeySet: Decodable {
        struct Key: Decodable {
            var kty: String
            var crv: String?
            var x: String?
            var y: String?
        }
        var keys: [Key]
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    private static func header(_ part: Substring) -> Header? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.utf8.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSONDecoder().decode(Header.self, from: data)
    }
}
