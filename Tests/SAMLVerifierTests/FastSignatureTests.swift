import CSAMLShim
import Foundation
@_spi(Stages) import SAML
import SAMLTestSupport
import Testing

/// The RSA signature transforms of fast_signature.c keep an OpenSSL context per key and thread: a
/// context must answer for its own key only, whatever the order of keys on a thread, past the number of
/// contexts a thread keeps, and with keys freed and loaded again between verifications.
/// (FastCanonicalizationTests compare their verdicts with xmlsec's own transforms on every vector; the
/// tests here also check that the prepared path ran: `saml_shim_fast_signature_checks`.)
@Suite("RSA verification with prepared contexts")
struct FastSignatureTests {
    static func key(_ name: String) throws -> [TrustedKey] {
        try TrustedKey.all(pem: Array(Data(contentsOf: Vector.root.appendingPathComponent("keys/\(name).cert.pem"))))
    }

    static func verdict(_ vector: Vector, keys: [TrustedKey]) throws -> Verdict {
        var configuration = try vector.configuration()
        configuration.trustedKeys = keys
        let verifier = try SAMLResponseVerifier(configuration)
        return Verdict {
            let parsed = try vector.bytes.withUnsafeBytes { try verifier.parse($0) }
            _ = try verifier.verifySignatures(parsed)
        }
    }

    @Test("each key gets its own verdict, in any order, on one thread")
    func keysInTurn() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let checksBefore = saml_shim_fast_signature_checks()
        let wrong = ["attacker-rsa-2048", "rsa-4096", "metadata-signer-rsa-2048", "ecdsa-p256"]
        // More keys in turn than a thread keeps contexts for (16), each loaded again every round (a new
        // OpenSSL key each time: 9 a round, and the response's own certificate tried for each wrong one),
        // then the same keys kept across rounds.
        var kept: [String: [TrustedKey]] = [:]
        for round in 0..<4 {
            for name in wrong + ["rsa-2048"] + wrong.reversed() {
                let keys = round == 3 ? try kept[name] ?? Self.key(name) : try Self.key(name)
                kept[name] = keys
                let verdict = try Self.verdict(vector, keys: keys)
                if name == "rsa-2048" {
                    #expect(verdict == .valid, "round \(round)")
                } else {
                    #expect(verdict != .valid, "round \(round), key \(name): \(verdict)")
                }
            }
        }
        // The right key after a wrong one, and a wrong one after the right one, with both kept.
        let right = try Self.key("rsa-2048")
        let attacker = try Self.key("attacker-rsa-2048")
        for _ in 0..<3 {
            let verdict = try Self.verdict(vector, keys: attacker)
            #expect(verdict == .invalid("signature.untrusted-key"), "\(verdict)")
            #expect(try Self.verdict(vector, keys: right) == .valid)
        }
        // A wrong key first among the trusted ones, then the right one: both tried on one document.
        #expect(try Self.verdict(vector, keys: attacker + right) == .valid)
        // Every RSA signature value above went through the prepared contexts (more than the 16 a thread keeps).
        #expect(saml_shim_fast_signature_checks() - checksBefore > 16)
    }

    /// The RSA-SHA384 and RSA-SHA512 klasses (no bundled vector uses them): the typical response's
    /// SignedInfo re-signed with each by the xmlsec1 command (the reference tool), then verified by the
    /// prepared path and by xmlsec's own transform; a changed SignatureValue fails both.
    @Test(
        "RSA-SHA384 and RSA-SHA512 signatures from xmlsec1 verify as with xmlsec's transform",
        .enabled(if: XMLSecCommand.enabled), arguments: ["rsa-sha384", "rsa-sha512"])
    func otherDigests(algorithm: String) throws {
        try XMLSecCommand.requireAvailable()
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let template = String(decoding: vector.bytes, as: UTF8.self)
            .replacingOccurrences(of: "xmldsig-more#rsa-sha256", with: "xmldsig-more#\(algorithm)")
        let signed = try XMLSecCommand.sign(Array(template.utf8))
        #expect(String(decoding: signed, as: UTF8.self).contains("xmldsig-more#\(algorithm)"))
        let verifier = try SAMLResponseVerifier(vector.configuration())
        let before = saml_shim_fast_signature_checks()
        let (fast, stock) = FastCanonicalizationTests.verdicts(signed, verifier: verifier)
        #expect(fast == .valid && stock == .valid, "fast \(fast), stock \(stock)")
        #expect(saml_shim_fast_signature_checks() == before + 1)
        var tampered = signed
        let text = String(decoding: signed, as: UTF8.self)
        let value = try #require(text.range(of: "<ds:SignatureValue>"))
        let at = text.utf8.distance(from: text.startIndex, to: value.upperBound) + 5
        tampered[at] = tampered[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let (tamperedFast, tamperedStock) = FastCanonicalizationTests.verdicts(tampered, verifier: verifier)
        #expect(tamperedFast == tamperedStock && tamperedFast != .valid, "fast \(tamperedFast), stock \(tamperedStock)")
    }

    /// A verification that stops half-way (a SignatureValue that is not Base64, a canonicalisation that
    /// is refused) leaves nothing on the thread that the next one reads: the valid response after it verifies.
    @Test("a verification abandoned half-way leaves the thread's state clean")
    func abandonedThenValid() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let verifier = try SAMLResponseVerifier(vector.configuration())
        let text = String(decoding: vector.bytes, as: UTF8.self)
        let notBase64 = text.replacingOccurrences(of: "<ds:SignatureValue>SZMZ", with: "<ds:SignatureValue>!!!!")
        let relative = text.replacingOccurrences(
            of: "<saml:Subject>", with: "<saml:Subject xmlns:r=\"relative/uri\"><r:x/>")
        #expect(notBase64 != text && relative != text)
        for _ in 0..<3 {
            for broken in [notBase64, relative] {
                let (fast, stock) = FastCanonicalizationTests.verdicts(Array(broken.utf8), verifier: verifier)
                #expect(fast != .valid && stock != .valid)
                #expect(FastCanonicalizationTests.verdicts(vector.bytes, verifier: verifier).0 == .valid)
            }
        }
    }

    @Test("a changed SignatureValue or SignedInfo fails with the prepared context as with xmlsec's")
    func tamperedSignature() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let text = String(decoding: vector.bytes, as: UTF8.self)
        let value = try #require(text.range(of: "<ds:SignatureValue>"))
        let signedInfo = try #require(text.range(of: "<ds:SignedInfo>"))
        var changedValue = Array(vector.bytes)
        let at = text.utf8.distance(from: text.startIndex, to: value.upperBound) + 10
        changedValue[at] = changedValue[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        var changedSignedInfo = Array(vector.bytes)
        changedSignedInfo.insert(contentsOf: Array(" ".utf8), at: text.utf8.distance(from: text.startIndex, to: signedInfo.upperBound))
        let configuration = try vector.configuration()
        let verifier = try SAMLResponseVerifier(configuration)
        for bytes in [changedValue, changedSignedInfo] {
            let (fast, stock) = FastCanonicalizationTests.verdicts(bytes, verifier: verifier)
            #expect(fast == stock)
            #expect(fast != .valid)
        }
        let (fast, stock) = FastCanonicalizationTests.verdicts(vector.bytes, verifier: verifier)
        #expect(fast == .valid && stock == .valid)
    }
}

/// The xmlsec1 command, installed by `scripts/install-dependencies`: where it is missing the tests that
/// need it are skipped, unless `CI` is set (`.ci/run`), where they fail saying so.
enum XMLSecCommand {
    static let path = ["/usr/bin/xmlsec1", "/usr/local/bin/xmlsec1"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var enabled: Bool { path != nil || ProcessInfo.processInfo.environment["CI"] != nil }

    static func requireAvailable() throws {
        try #require(path != nil, "the xmlsec1 command is missing under CI (scripts/install-dependencies installs it)")
    }

    /// `template` signed (its Assertion's enveloped signature) with the bundled RSA-2048 key.
    static func sign(_ template: [UInt8]) throws -> [UInt8] {
        let folder = try TemporaryFiles.folder("saml-xmlsec1")
        let input = folder.appendingPathComponent("template.xml"), output = folder.appendingPathComponent("signed.xml")
        try Data(template).write(to: input)
        let keys = Vector.root.appendingPathComponent("keys")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(path))
        process.arguments = [
            "--sign", "--privkey-pem",
            keys.appendingPathComponent("rsa-2048.key.pem").path + "," + keys.appendingPathComponent("rsa-2048.cert.pem").path,
            "--id-attr:ID", "urn:oasis:names:tc:SAML:2.0:assertion:Assertion", "--output", output.path, input.path,
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "xmlsec1 --sign exited with \(process.terminationStatus)")
        return Array(try Data(contentsOf: output))
    }
}
