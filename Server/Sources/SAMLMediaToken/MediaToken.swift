import Crypto
import Foundation
import JWTKit

/// A media token: what `decisions/authorize` answers with a `Permit`, for the content server to check
/// before it plays the resource. A JWS (RFC 7515, compact serialisation) signed with ES256 through
/// jwt-kit, in the decision's `token.serializedToken`; its claims:
///
/// | claim | value |
/// |---|---|
/// | `iss` | the service provider (requestor id) |
/// | `jti` | a fresh UUID, the token's `identifier` |
/// | `iat`, `nbf`, `exp` | issued, valid from, valid until (seconds; `exp` a few minutes on) |
/// | `resource` | the resource id the decision permitted, exactly |
/// | `mvpd` | the MVPD of the profile |
/// | `dev` | Base64url of SHA-256 of the device's `AP-Device-Identifier` (the identifier itself is not carried) |
///
/// The header carries `kid`, the key's RFC 7638 thumbprint, and `alg` `ES256`; ``MediaTokenVerifier``
/// accepts nothing else.
public struct MediaToken: Sendable, Hashable {
    public var identifier: String
    public var serviceProvider: String
    public var resource: String
    public var mvpd: String
    /// ``MediaToken/deviceDigest(_:)`` of the device it was issued to.
    public var device: String
    public var issuedAt: Date
    public var notBefore: Date
    public var notAfter: Date
    /// The signing key's id.
    public var keyID: String

    /// The `dev` claim of a device identifier (its `AP-Device-Identifier` value, `fingerprint <value>`).
    public static func deviceDigest(_ device: String) -> String {
        Data(SHA256.hash(data: Data(device.utf8))).base64URLEncoded
    }
}

/// The claims as signed.
struct MediaTokenClaims: JWTPayload, Equatable {
    var iss: String
    var jti: String
    var iat: Int64
    var nbf: Int64
    var exp: Int64
    var resource: String
    var mvpd: String
    var dev: String

    /// The times and bindings are checked by ``MediaTokenVerifier`` against its own clock and the
    /// request; the signature is jwt-kit's.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Why a media token was refused; ``code`` is stable.
public struct MediaTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not a compact JWS, not JSON claims, or a claim missing or of the wrong type.
        public static let malformed = Code(rawValue: "media-token.malformed")
        /// `alg` is not ES256.
        public static let algorithm = Code(rawValue: "media-token.algorithm")
        /// `kid` names no key the verifier holds.
        public static let unknownKey = Code(rawValue: "media-token.unknown-key")
        /// The signature does not verify with the key `kid` names.
        public static let signature = Code(rawValue: "media-token.signature")
        /// Past `exp` (beyond the leeway).
        public static let expired = Code(rawValue: "media-token.expired")
        /// Before `nbf` (beyond the leeway).
        public static let notYetValid = Code(rawValue: "media-token.not-yet-valid")
        /// Issued for another resource.
        public static let wrongResource = Code(rawValue: "media-token.wrong-resource")
        /// Issued for another MVPD.
        public static let wrongMVPD = Code(rawValue: "media-token.wrong-mvpd")
        /// Issued to another device.
        public static let wrongDevice = Code(rawValue: "media-token.wrong-device")
        /// Issued by another service provider.
        public static let wrongIssuer = Code(rawValue: "media-token.wrong-issuer")
        /// A key that does not read (PEM, JWKS), or a key that is not P-256.
        public static let invalidKey = Code(rawValue: "media-token.invalid-key")
    }

    public let code: Code
    /// What was expected and found, for logs; never a value of the token.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

extension Data {
    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
