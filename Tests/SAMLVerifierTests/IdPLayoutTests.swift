import AppleSSO
import Foundation
import SAML
import Testing

/// Responses made by seven real IdP implementations themselves (TestVectors/idp-layouts/: pysaml2,
/// python-xmlsec, the xmlsec1 tool, OpenSAML C++ samlsign, python3-saml, signxml, the JDK), with their own
/// keys, algorithms and encryption, put through the cookbook's encoding as a device does (issue 29).
@Suite("Recovery of real IdPs' layouts")
struct IdPLayoutTests {
    struct Manifest: Decodable {
        struct Entry: Decodable {
            var id: String
            var file: String
            var cert: String
            var spKey: String?
            var issuer: String
            var audience: String
            var destination: String
            var inResponseTo: String
            var now: String
            var allowSHA1: Bool
            var allowLegacyEncryption: Bool
            var recoverable: Bool
        }
        var vectors: [Entry]
    }

    static let directory = Vector.root.appendingPathComponent("idp-layouts")
    static let manifest: Manifest = {
        try! JSONDecoder().decode(Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("manifest.json")))
    }()

    static func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: directory.appendingPathComponent(path))) }

    static func verify(_ xml: [UInt8], _ entry: Manifest.Entry, recovery: Bool = true) throws -> VerifiedResponse {
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: try read(entry.cert)), issuer: .equals(entry.issuer),
            audience: .equals(entry.audience), destination: .equals(entry.destination), inResponseTo: .equals(entry.inResponseTo),
            replay: .skip)
        configuration.algorithms = entry.allowSHA1 ? .allowingSHA1 : .strict
        configuration.encryptionAlgorithms = entry.allowLegacyEncryption ? .allowingLegacy : .strict
        if let spKey = entry.spKey { configuration.decryptionKeys = [try DecryptionKey(pem: try read(spKey))] }
        configuration.recoversNormalizationDamage = recovery
        configuration.maximumAge = nil  // made at different times; `now` is inside every validity window
        let now = try #require(SAMLInstant(xmlDateTime: entry.now))
        return try SAMLResponseVerifier(configuration).verifyWithoutReplayCheck(xml, at: now)
    }

    /// What the device sends, decoded as a Token Exchange backend decodes it.
    static func device(_ xml: [UInt8]) throws -> [UInt8] {
        try SAMLResponseDecoder().decode(try Cookbook.encode(utf8: xml)).bytes
    }

    @Test("each response verifies as its implementation wrote it", arguments: manifest.vectors.map(\.id))
    func verifiesAsSigned(id: String) throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == id })
        let signed = try Self.verify(try Self.read(entry.file), entry)
        #expect(signed.repairs.isEmpty)
    }

    @Test(
        "after the cookbook's encoding: the recoverable ones verify with the same content, the others are refused as damaged",
        arguments: manifest.vectors.map(\.id))
    func afterTheCookbook(id: String) throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == id })
        let raw = try Self.read(entry.file)
        let signed = try Self.verify(raw, entry)
        let sent = try Self.device(raw)
        if entry.recoverable {
            let recovered = try Self.verify(sent, entry)
            #expect(recovered.assertion == signed.assertion)
            #expect(recovered.signedParts == signed.signedParts)
        } else {
            // Damaged beyond a layout: refused as damage where the failing part bears the cookbook's marks,
            // as a digest mismatch where it bears none (the damage is in text).
            let error = #expect(throws: SAMLError.self) { try Self.verify(sent, entry) }
            #expect(error?.code == .signatureNormalizationDamage || error?.code == .signatureDigestMismatch, "\(String(describing: error))")
        }
    }

    @Test("most need recovery, and exactly the recoverable ones survive the cookbook")
    func coverage() throws {
        var damaged = 0
        var recovered = 0
        for entry in Self.manifest.vectors {
            let sent = try Self.device(try Self.read(entry.file))
            if (try? Self.verify(sent, entry, recovery: false)) == nil { damaged += 1 }
            if (try? Self.verify(sent, entry)) != nil { recovered += 1 }
        }
        #expect(damaged >= Self.manifest.vectors.count * 2 / 3, "\(damaged) damaged")
        #expect(recovered == Self.manifest.vectors.filter(\.recoverable).count)
    }

    @Test("an IssueInstant changed after signing is refused, as signed and after the cookbook", arguments: manifest.vectors.map(\.id))
    func tamperedIsRefused(id: String) throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == id })
        var text = String(decoding: try Self.read(entry.file), as: UTF8.self)
        // The last IssueInstant: the Assertion's where it is in plain text, else the Response's; signed either way.
        let instant = try #require(text.ranges(of: "IssueInstant=\"20").last)
        let year = text.index(instant.upperBound, offsetBy: 1)
        text.replaceSubrange(year...year, with: text[year] == "5" ? "4" : "5")
        let tampered = Array(text.utf8)
        #expect(throws: SAMLError.self) { try Self.verify(tampered, entry) }
        #expect(throws: SAMLError.self) { try Self.verify(try Self.device(tampered), entry) }
    }

    @Test(
        "a signature value changed after the cookbook is refused (an RSA one before anything is rebuilt)",
        arguments: manifest.vectors.map(\.id))
    func forgedSignatureValueIsRefused(id: String) throws {
        let entry = try #require(Self.manifest.vectors.first { $0.id == id })
        var text = String(decoding: try Self.device(try Self.read(entry.file)), as: UTF8.self)
        let element = try #require(text.range(of: "SignatureValue"))
        let start = try #require(text[element.upperBound...].firstIndex(of: ">"))
        let from = text.index(after: start)
        let to = text.index(from, offsetBy: 8)
        text.replaceSubrange(from..<to, with: text[from..<to] == "AAAAAAAA" ? "BBBBBBBB" : "AAAAAAAA")
        let error = #expect(throws: SAMLError.self) { try Self.verify(Array(text.utf8), entry) }
        if !id.contains("p384") {
            #expect(error?.code == .signatureInvalid, "\(String(describing: error))")
        }
    }
}
