import Foundation
import Testing

@Suite("saml metadata: the rules of issue 33")
struct MetadataCommandTests {
    static let signer = "TestVectors/keys/metadata-signer-rsa-2048.cert.pem"
    static let now = ["--now", "2026-11-21T12:01:00Z"]

    @Test("metadata signed with RSA-SHA1 is refused unless --allow-sha1 is given")
    func allowSHA1() throws {
        let file = "TestVectors/metadata/idp-a-signed-sha1.xml"
        let refused = try CommandRunner.run(["metadata", file, "--signer", Self.signer] + Self.now)
        #expect(refused.status == 1)
        #expect(refused.error.hasPrefix("error: signature.algorithm-not-allowed"), "\(refused.error)")
        let accepted = try CommandRunner.run(["metadata", file, "--signer", Self.signer, "--allow-sha1"] + Self.now)
        #expect(accepted.status == 0, "\(accepted.error)")
        let entities = try JSONSerialization.jsonObject(with: accepted.output) as? [[String: Any]]
        #expect(entities?.first?["entityID"] as? String == "https://idp.mvpd.example.com")
        #expect(entities?.first?["signed"] as? Bool == true)
    }

    @Test("a SAML 1.1-only IdP, an expired role, a KeyInfo of two keys and a malformed signed ID are refused with their codes")
    func refusals() throws {
        for (file, code, signed) in [
            ("idp-saml11-only.xml", "metadata.no-identity-provider", false),
            ("idp-role-expired.xml", "metadata.expired", false),
            ("idp-keyinfo-certificate-and-other-rsa-key.xml", "metadata.key-conflict", false),
            ("idp-signed-id-xpath.xml", "id.malformed", true),
        ] {
            let result = try CommandRunner.run(
                ["metadata", "TestVectors/metadata/\(file)"] + (signed ? ["--signer", Self.signer] : []) + Self.now)
            #expect(result.status == 1, "\(file)")
            #expect(result.error.hasPrefix("error: \(code)"), "\(file): \(result.error)")
        }
    }
}
