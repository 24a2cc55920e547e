import AppleSSO
import Foundation
import Logging
import SAML
import SAMLTestSupport
import Synchronization
import Testing

/// Responses as real IdP implementations serialise them (TestVectors/recovery/, made by signxml,
/// python-xmlsec, xmlsec1, OpenSAML C++ and the JDK), put through the cookbook's encoding as a device does.
@Suite("Recovery of the cookbook's normalisation")
struct RecoveryTests {
    struct Manifest: Decodable {
        struct Entry: Decodable {
            var id: String
            var file: String
            var signer: String
        }
        var now: String
        var cert: String
        var config: [String: String]
        var vectors: [Entry]
    }

    static let manifest: Manifest = {
        let url = Vector.root.appendingPathComponent("recovery/manifest.json")
        return try! JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
    }()

    static func verifier(recovery: Bool = true, logger: Logger? = nil) throws -> SAMLResponseVerifier {
        let config = manifest.config
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: Array(Data(contentsOf: Vector.root.appendingPathComponent(manifest.cert)))),
            issuer: .equals(config["issuer"]!), audience: .equals(config["audience"]!),
            destination: .equals(config["destination"]!), inResponseTo: .equals(config["inResponseTo"]!), replay: .skip)
        configuration.recoversNormalizationDamage = recovery
        if let logger { configuration.logger = logger }
        return try SAMLResponseVerifier(configuration)
    }

    /// What the device sends, decoded as a Token Exchange backend decodes it.
    static func device(_ xml: [UInt8]) throws -> SAMLResponseDecoder.Decoded {
        try SAMLResponseDecoder().decode(try Cookbook.encode(utf8: xml))
    }

    static func verify(_ decoded: SAMLResponseDecoder.Decoded, recovery: Bool = true) throws -> VerifiedResponse {
        let now = try #require(SAMLInstant(xmlDateTime: manifest.now))
        return try verifier(recovery: recovery).verifyWithoutReplayCheck(decoded.bytes, at: now)
    }

    static func raw(_ entry: Manifest.Entry) throws -> [UInt8] {
        Array(try Data(contentsOf: Vector.root.appendingPathComponent(entry.file)))
    }

    @Test(
        "each vector verifies as signed, and after the cookbook's encoding with the same assertion", arguments: manifest.vectors.map(\.id))
    func recovered(id: String) throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == id })
        let raw = try Self.raw(entry)
        let signed = try Self.verify(try SAMLResponseDecoder().decode(raw))
        #expect(signed.repairs.isEmpty)
        let decoded = try Self.device(raw)
        let recovered = try Self.verify(decoded)
        // Read from the reconstructed tree: exactly what the undamaged document says.
        #expect(recovered.assertion == signed.assertion)
        #expect(recovered.signedParts == signed.signedParts)
        let damaged = (try? Self.verify(decoded, recovery: false)) == nil
        #expect(recovered.repairs.isEmpty == !damaged, "\(recovered.repairs)")
    }

    @Test("most vectors are damaged by the cookbook: the set tests recovery, not intact documents")
    func mostAreDamaged() {
        let damaged = Self.manifest.vectors.filter { (try? Self.verify(try Self.device(try Self.raw($0)), recovery: false)) == nil }
        #expect(damaged.count >= 15, "\(damaged.map(\.id))")
    }

    @Test("a value changed after signing is never recovered, whatever the layout", arguments: manifest.vectors.map(\.id))
    func tamperedIsRefused(id: String) throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == id })
        let raw = try Self.raw(entry)
        let tampered = Array(String(decoding: raw, as: UTF8.self).replacingOccurrences(of: ">hh-7731<", with: ">hh-0001<").utf8)
        #expect(tampered != raw)
        let error = try #require(throws: SAMLError.self) { try Self.verify(try Self.device(tampered)) }
        #expect([SAMLError.Code.signatureNormalizationDamage, .signatureDigestMismatch].contains(error.code), "\(error)")
        if error.code == .signatureNormalizationDamage {
            #expect(error.message.contains("Reference digest"))
            // The documented bound: at most 96 candidates per stage (docs/recovery.md).
            let tried = try #require(error.message.firstMatch(of: /\((\d+) tried\)/)).1
            #expect(Int(tried)! <= 2 * 96)
        }
    }

    @Test("a response signed by another key is not recovered into acceptance")
    func wrongKeyIsRefused() throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == "xmlsec1-both-pretty-4-spaces" })
        let decoded = try Self.device(try Self.raw(entry))
        let now = try #require(SAMLInstant(xmlDateTime: Self.manifest.now))
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(
                pem: Array(Data(contentsOf: Vector.root.appendingPathComponent("keys/attacker-rsa-2048.cert.pem")))),
            issuer: .skip, audience: .skip, destination: .skip, inResponseTo: .skip, replay: .skip)
        configuration.recoversNormalizationDamage = true
        let verifier = try SAMLResponseVerifier(configuration)
        #expect(throws: SAMLError.self) { try verifier.verifyWithoutReplayCheck(decoded.bytes, at: now) }
    }

    @Test("a SignedInfo changed after signing is reported as normalisation damage of SignedInfo")
    func signedInfoDamage() throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == "xmlsec1-assertion" })
        var text = String(decoding: try Self.raw(entry), as: UTF8.self)
        // The SignatureMethod line indented: a layout no signer writes, so nothing reconstructs it.
        text = text.replacingOccurrences(of: "\n<ds:SignatureMethod", with: "\n  <ds:SignatureMethod")
        let error = try #require(throws: SAMLError.self) { try Self.verify(try Self.device(Array(text.utf8))) }
        #expect(error.code == .signatureNormalizationDamage)
        #expect(error.message.contains("ds:SignedInfo"))
    }

    @Test("a recovery is logged at debug level with the layout that verified, and listed as repairs")
    func recoveryIsLogged() async throws {
        let records = CapturedLogs()
        var logger = records.logger
        logger.logLevel = .debug
        let entry = try #require(Self.manifest.vectors.first { $0.id == "xmlsec1-both" })
        let decoded = try Self.device(try Self.raw(entry))
        var configuration = try Self.verifier(logger: logger).configuration
        configuration.clock = FixedClock(try #require(SAMLInstant(xmlDateTime: Self.manifest.now)))
        let response = try await SAMLResponseVerifier(configuration).verify(decoded)
        #expect(response.repairs == [.signedWhitespaceRestored, .signedBase64LineBreaksRestored])
        let messages = records.all
        let recovery = try #require(messages.first { $0.message.contains("recovered") })
        #expect(recovery.level == .debug)
        #expect(recovery.metadata["saml.layout"]?.contains("lines of 64") == true)
        let accepted = try #require(messages.first { $0.message == "SAML response accepted" })
        #expect(accepted.metadata["saml.repairs"] == "signature.restored-whitespace,signature.restored-base64-line-breaks")
    }
}
