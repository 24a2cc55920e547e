import Foundation
import JWTKit

/// Signs media tokens with the first of its keys; the others are published beside it
/// (``MediaTokenKey/jwks(_:)``) so that content servers already hold a key before it starts signing:
/// rotation is adding the new key second, publishing, then moving it first (docs/service.md).
public struct MediaTokenIssuer: Sendable {
    public let keys: [MediaTokenKey]
    /// How long a token is valid from its issue.
    public let lifetime: Duration
    private let signing: ES256PrivateKey

    public init(keys: [MediaTokenKey], lifetime: Duration) throws(MediaTokenError) {
        guard let signing = keys.first?.privateKey else {
            throw MediaTokenError(.invalidKey, "expected a private key first among the media-token keys, found none")
        }
        self.keys = keys
        self.lifetime = lifetime
        self.signing = signing
    }

    /// A token for `resource`, issued now to `device` (its `AP-Device-Identifier`) for `mvpd`, valid for
    /// ``lifetime`` but never past `notAfter` (the profile's end).
    public func issue(
        serviceProvider: String, resource: String, mvpd: String, device: String, now: Date = Date(), notAfter: Date? = nil
    ) async throws -> (token: String, claims: MediaToken) {
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        var expires = issued + max(1, lifetime.components.seconds)
        if let notAfter { expires = min(expires, max(issued, Int64(notAfter.timeIntervalSince1970.rounded(.down)))) }
        let claims = MediaTokenClaims(
            iss: serviceProvider, jti: UUID().uuidString.lowercased(), iat: issued, nbf: issued, exp: expires, resource: resource,
            mvpd: mvpd, dev: MediaToken.deviceDigest(device))
        // jwt-kit's collection is an actor whose keys are added asynchronously: one per token (an
        // allocation beside the ECDSA signature's tens of microseconds) keeps this initialiser synchronous.
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: signing, kid: JWKIdentifier(string: keys[0].keyID))
        let token = try await collection.sign(claims, kid: JWKIdentifier(string: keys[0].keyID))
        return (token, MediaToken(claims, keyID: keys[0].keyID))
    }
}

extension MediaToken {
    init(_ claims: MediaTokenClaims, keyID: String) {
        self.init(
            identifier: claims.jti, serviceProvider: claims.iss, resource: claims.resource, mvpd: claims.mvpd, device: claims.dev,
            issuedAt: Date(timeIntervalSince1970: TimeInterval(claims.iat)),
            notBefore: Date(timeIntervalSince1970: TimeInterval(claims.nbf)),
            notAfter: Date(timeIntervalSince1970: TimeInterval(claims.exp)), keyID: keyID)
    }
}
