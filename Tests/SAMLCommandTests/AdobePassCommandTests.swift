import Foundation
import SAMLTestSupport
import Testing

@Suite("saml mvpd, pfs, exchange")
struct AdobePassCommandTests {
    static let configuration = """
        {"requestor": {"mvpds": [
          {"id": "Optimum", "enablePlatformServices": true, "boardingStatus": "SUPPORTED", "displayInPlatformPicker": true,
           "platformMappingId": "Cablevision", "requiredMetadataFields": ["NameID", "zip"]},
          {"id": "Dish", "enablePlatformServices": true, "displayInPlatformPicker": false, "platformMappingId": "DishTV"}
        ]}}
        """

    static func temporaryFile(_ contents: Data) throws -> String {
        let url = try TemporaryFiles.file("saml")
        try contents.write(to: url)
        return url.path
    }

    @Test("mvpd prints MVPDs and the picker lists")
    func mvpd() throws {
        let path = try Self.temporaryFile(Data(Self.configuration.utf8))
        let supported = try CommandRunner.run(["mvpd", path, "--supported"])
        #expect(supported.status == 0)
        #expect(try JSONSerialization.jsonObject(with: supported.output) as? [String] == ["Cablevision"])
        let featured = try CommandRunner.run(["mvpd", path, "--featured", "Dish,Optimum"])
        #expect(try JSONSerialization.jsonObject(with: featured.output) as? [String] == ["Cablevision"])
        let one = try CommandRunner.run(["mvpd", path, "--mvpd", "Optimum"])
        #expect(
            (try JSONSerialization.jsonObject(with: one.output) as? [String: Any])?["requiredMetadataFields"] as? [String] == [
                "NameID", "zip",
            ])
        #expect(try CommandRunner.run(["mvpd", path, "--mvpd", "Nobody"]).status == 1)
    }

    @Test("pfs encode and decode are inverse")
    func pfs() throws {
        let encoded = try CommandRunner.run([
            "pfs", "encode", "--access-status", "granted", "--provider-id", "Cablevision", "--expiration-ms", "1735689600000",
        ])
        #expect(encoded.status == 0)
        let value = encoded.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
        let decoded = try CommandRunner.run(["pfs", "decode", value])
        let object = try JSONSerialization.jsonObject(with: decoded.output) as? [String: [String: String]]
        #expect(object?["frameworkProviderInfo"]?["expirationDate"] == "1735689600000")
        #expect(object?["frameworkPermissionInfo"]?["accessStatus"] == "granted")
        let bad = try CommandRunner.run(["pfs", "decode", "%%%"])
        #expect(bad.status == 1)
        #expect(bad.error.hasPrefix("error: pfs.malformed-base64: "))
    }

    @Test("exchange prints the profile (exit 0) or the error object (exit 1)")
    func exchange() throws {
        let config = try Self.temporaryFile(Data(Self.configuration.utf8))
        let xml = try Data(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("TestVectors/responses/typical-rsa2048-assertion-signed.xml"))
        let encoded = try CommandRunner.run(["encode"], input: xml)
        let body = try Self.temporaryFile(Data("SAMLResponse=".utf8) + encoded.output)
        let pfs = try CommandRunner.run(["pfs", "encode", "--access-status", "granted", "--provider-id", "Cablevision"])
            .outputText.trimmingCharacters(in: .whitespacesAndNewlines)
        let common = [
            "exchange", "--config", config, "--pfs", pfs, "--issuer", "https://idp.mvpd.example.com",
            "--audience", "https://saml.sp.auth.adobe.com", "--in-response-to", "_aq-3f9a1b2c", "--now", "2026-11-21T12:01:00Z",
        ]
        let good = try CommandRunner.run(common + ["--cert", "TestVectors/keys/rsa-2048.cert.pem", body])
        #expect(good.status == 0, "\(good.outputText)")
        let profile = try JSONSerialization.jsonObject(with: good.output) as? [String: [String: [String: Any]]]
        #expect(profile?["profiles"]?["Optimum"]?["type"] as? String == "appleSSO")
        let wrongKey = try CommandRunner.run(common + ["--cert", "TestVectors/keys/attacker-rsa-2048.cert.pem", body])
        #expect(wrongKey.status == 1)
        let error = try JSONSerialization.jsonObject(with: wrongKey.output) as? [String: Any]
        #expect(error?["code"] as? String == "invalid_parameter_saml_response")
        #expect((error?["details"] as? String)?.hasPrefix("signature.untrusted-key") == true)
        #expect(try CommandRunner.run(["exchange", "--config", config, body]).status == 2)
        // A required field the response does not carry: the device's answer on stdout, and for the
        // operator, on stderr, which field (the names come from the MVPD's configuration).
        let demandingConfiguration = Self.configuration.replacingOccurrences(of: "\"zip\"]", with: "\"zip\", \"postalRegion\"]")
        let demanding = try Self.temporaryFile(Data(demandingConfiguration.utf8))
        var missingArguments = common + ["--cert", "TestVectors/keys/rsa-2048.cert.pem", body]
        missingArguments[2] = demanding
        let missing = try CommandRunner.run(missingArguments)
        #expect(missing.status == 1)
        #expect(missing.error.hasPrefix("error: fields.missing: "), "\(missing.error)")
        #expect(missing.error.contains("postalRegion"))
    }
}
