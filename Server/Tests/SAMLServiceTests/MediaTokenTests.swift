import Crypto
import Foundation
import SAMLMediaToken
import Testing

/// Media tokens as the content server checks them: issued by the service's issuer, refused when they are
/// expired, for another resource, MVPD, device or issuer, signed by another key, altered, or not ES256.
@Suite("Media tokens")
struct MediaTokenTests {
    static let device = "fingerprint dGVzdC1kZXZpY2U="

    static func issued(_ issuer: MediaTokenIssuer, now: Date = Date()) async throws -> String {
        try await issuer.issue(serviceProvider: "REF30", resource: "REF30", mvpd: "MVPD-A", device: device, now: now).token
    }

    @Test("a token verifies for its resource, MVPD, device and issuer, within its lifetime only")
    func roundTrip() async throws {
        let key = MediaTokenKey.generated()
        let issuer = try MediaTokenIssuer(keys: [key], lifetime: .seconds(300))
        let now = Date()
        let token = try await Self.issued(issuer, now: now)
        let verifier = try await MediaTokenVerifier(jwks: MediaTokenKey.jwks([key]), issuer: "REF30")
        let claims = try await verifier.verify(token, resource: "REF30", mvpd: "MVPD-A", device: Self.device, now: now)
        #expect(claims.resource == "REF30" && claims.keyID == key.keyID && claims.notAfter.timeIntervalSince(claims.notBefore) == 300)
        func refused(_ code: MediaTokenError.Code, _ check: () async throws -> Void) async {
            do {
                try await check()
                Issue.record("accepted, expected \(code)")
            } catch {
                #expect((error as? MediaTokenError)?.code == code)
            }
        }
        await refused(.expired) { _ = try await verifier.verify(token, resource: "REF30", now: now + 331) }
        await refused(.notYetValid) { _ = try await verifier.verify(token, resource: "REF30", now: now - 31) }
        await refused(.wrongResource) { _ = try await verifier.verify(token, resource: "REF31", now: now) }
        await refused(.wrongMVPD) { _ = try await verifier.verify(token, resource: "REF30", mvpd: "MVPD-B", now: now) }
        await refused(.wrongDevice) { _ = try await verifier.verify(token, resource: "REF30", device: "fingerprint other", now: now) }
        let other = try await MediaTokenVerifier(keys: [key], issuer: "OTHER")
        await refused(.wrongIssuer) { _ = try await other.verify(token, resource: "REF30", now: now) }
        // Byte for byte: the same resource in another Unicode normalisation form is another resource.
        let composed = try await issuer.issue(
            serviceProvider: "REF30", resource: "caf\u{E9}", mvpd: "MVPD-A", device: Self.device, now: now)
        await refused(.wrongResource) { _ = try await verifier.verify(composed.token, resource: "cafe\u{301}", now: now) }
        // Never past the profile's end.
        let capped = try await issuer.issue(
            serviceProvider: "REF30", resource: "REF30", mvpd: "MVPD-A", device: Self.device, now: now, notAfter: now + 60)
        #expect(capped.claims.notAfter.timeIntervalSince(capped.claims.notBefore) == 60)
    }

    @Test("another key, an altered payload, alg none or HS256, an unknown kid and other forms are refused")
    func hostile() async throws {
        let key = MediaTokenKey.generated()
        let token = try await Self.issued(try MediaTokenIssuer(keys: [key], lifetime: .seconds(300)))
        let other = try await MediaTokenVerifier(keys: [MediaTokenKey.generated()], issuer: "REF30")
        let verifier = try await MediaTokenVerifier(keys: [key], issuer: "REF30")
        func code(_ serialized: String, _ using: MediaTokenVerifier) async -> MediaTokenError.Code? {
            do {
                _ = try await using.verify(serialized, resource: "REF30")
                return nil
            } catch {
                return error.code
            }
        }
        #expect(await code(token, other) == .unknownKey)
        let parts = token.split(separator: ".").map(String.init)
        func encoded(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let payload = String(decoding: Data(base64Encoded: Self.padded(parts[1]))!, as: UTF8.self)
        let altered = encoded(payload.replacingOccurrences(of: "\"MVPD-A\"", with: "\"MVPD-B\""))
        #expect(await code([parts[0], altered, parts[2]].joined(separator: "."), verifier) == .signature)
        let none = encoded(#"{"alg":"none","kid":"\#(key.keyID)","typ":"JWT"}"#)
        #expect(await code([none, parts[1], ""].joined(separator: "."), verifier) == .algorithm)
        let hmac = encoded(#"{"alg":"HS256","kid":"\#(key.keyID)","typ":"JWT"}"#)
        let signed = HMAC<SHA256>.authenticationCode(for: Data("\(hmac).\(parts[1])".utf8), using: SymmetricKey(size: .bits256))
        #expect(await code([hmac, parts[1], Data(signed).base64EncodedString()].joined(separator: "."), verifier) == .algorithm)
        let stranger = encoded(#"{"alg":"ES256","kid":"someone-else"}"#)
        #expect(await code([stranger, parts[1], parts[2]].joined(separator: "."), verifier) == .unknownKey)
        for malformed in [
            "", "a.b", "a.b.c.d", String(repeating: "a", count: 17000), String(repeating: ".", count: 1_000_000), "%%%.e30.x",
        ] {
            #expect(await code(malformed, verifier) == .malformed)
        }
    }

    @Test("rotation: the file's keys in order, the first signs, all verify; keys that do not read are refused")
    func rotation() async throws {
        let old = P256.Signing.PrivateKey()
        let new = P256.Signing.PrivateKey()
        let keys = try MediaTokenKey.privateKeys(pemFile: new.pemRepresentation + "\n" + old.pemRepresentation + "\n")
        #expect(keys.count == 2)
        let previous = try MediaTokenIssuer(keys: try MediaTokenKey.privateKeys(pemFile: old.pemRepresentation), lifetime: .seconds(60))
        let current = try MediaTokenIssuer(keys: keys, lifetime: .seconds(60))
        let verifier = try await MediaTokenVerifier(jwks: MediaTokenKey.jwks(keys), issuer: "REF30")
        for issuer in [previous, current] { _ = try await verifier.verify(try await Self.issued(issuer), resource: "REF30") }
        #expect(try await verifier.verify(try await Self.issued(current), resource: "REF30").keyID == keys[0].keyID)
        #expect(throws: MediaTokenError.self) { try MediaTokenKey.privateKeys(pemFile: "") }
        #expect(throws: MediaTokenError.self) {
            try MediaTokenKey.privateKeys(pemFile: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
        }
        let publicOnly = old.publicKey.pemRepresentation
        #expect(throws: MediaTokenError.self) { try MediaTokenKey.privateKeys(pemFile: publicOnly) }
        await #expect(throws: MediaTokenError.self) { try await MediaTokenVerifier(jwks: Array("{\"keys\": 1}".utf8), issuer: "REF30") }
    }

    static func padded(_ text: String) -> String {
        var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }
}
