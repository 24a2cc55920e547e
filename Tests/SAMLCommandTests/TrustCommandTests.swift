import Foundation
import SAMLTestSupport
import Testing

@Suite("saml metadata, verify --metadata, exchange --trust")
struct TrustCommandTests {
    @Test("exchange --trust: only a response posted for its own MVPD gets a profile")
    func exchangeMatrix() throws {
        let root = CommandRunner.repositoryRoot.appendingPathComponent("TestVectors")
        let cases = try ExchangeCases.load(vectors: root)
        for c in cases.cases {
            let encoded = try CommandRunner.run(["encode", "TestVectors/\(c.response)"])
            let body = try AdobePassCommandTests.temporaryFile(Data("SAMLResponse=".utf8) + encoded.output)
            let pfs = try CommandRunner.run(["pfs", "encode", "--access-status", "granted", "--provider-id", c.providerID])
                .outputText.trimmingCharacters(in: .whitespacesAndNewlines)
            let result = try CommandRunner.run([
                "exchange", "--config", "TestVectors/exchange/mvpd-configuration.json", "--trust", "TestVectors/exchange/trust.json",
                "--pfs", pfs, "--audience", cases.audience, "--in-response-to", cases.inResponseTo, "--now", cases.now, body,
            ])
            let object = try JSONSerialization.jsonObject(with: result.output) as? [String: Any]
            if c.expect == "valid" {
                #expect(result.status == 0, "\(c.from) as \(c.postedAs): \(result.outputText)")
                #expect((object?["profiles"] as? [String: Any])?[c.postedAs] != nil)
            } else {
                #expect(result.status == 1, "\(c.from) as \(c.postedAs)")
                #expect(object?["status"] as? Int == c.status, "\(c.from) as \(c.postedAs)")
                #expect(
                    (object?["details"] as? String)?.hasPrefix(c.code ?? "?") == true, "\(c.from) as \(c.postedAs): \(result.outputText)")
            }
        }
    }

    @Test("metadata prints entity, key fingerprints, endpoints and validity; refuses tampered and expired metadata")
    func metadata() throws {
        let signed = try CommandRunner.run([
            "metadata", "TestVectors/metadata/idp-a-signed.xml", "--signer", "TestVectors/keys/metadata-signer-rsa-2048.cert.pem",
        ])
        #expect(signed.status == 0)
        let entities = try JSONSerialization.jsonObject(with: signed.output) as? [[String: Any]]
        #expect(entities?.first?["entityID"] as? String == "https://idp.mvpd.example.com")
        #expect(
            (entities?.first?["keys"] as? [[String: Any]])?.first?["sha256"] as? String
                == "18bc64b7283d40050305c36561ca7e2e36a7ade46d5fc1b773b5eb360c48e6a8")
        #expect(entities?.first?["validUntil"] as? String == "2036-01-01T00:00:00Z")
        let tampered = try CommandRunner.run([
            "metadata", "TestVectors/metadata/idp-a-signed-tampered.xml", "--signer", "TestVectors/keys/metadata-signer-rsa-2048.cert.pem",
        ])
        #expect(tampered.status == 1)
        #expect(tampered.error.hasPrefix("error: signature.digest-mismatch"))
        let expired = try CommandRunner.run(["metadata", "TestVectors/metadata/idp-a-expired.xml"])
        #expect(expired.error.hasPrefix("error: metadata.expired"))
    }

    @Test("verify --metadata pins the metadata's keys and requires its entity ID as issuer")
    func verifyWithMetadata() throws {
        let common = ["verify", "--now", "2026-11-21T12:01:00Z", "--json"]
        let good = try CommandRunner.run(
            common + ["--metadata", "TestVectors/metadata/idp-a.xml", "TestVectors/responses/typical-rsa2048-assertion-signed.xml"])
        #expect(good.status == 0, "\(good.outputText)")
        let object = try JSONSerialization.jsonObject(with: good.output) as? [String: Any]
        #expect((object?["skippedChecks"] as? [String])?.contains("issuer") == false)
        let cross = try CommandRunner.run(
            common + ["--metadata", "TestVectors/metadata/idp-b.xml", "TestVectors/responses/typical-rsa2048-assertion-signed.xml"])
        #expect(cross.status == 1)
        #expect(
            ((try JSONSerialization.jsonObject(with: cross.output) as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
                == "issuer.mismatch")
    }
}
