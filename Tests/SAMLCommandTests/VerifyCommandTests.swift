import Foundation
import SAMLTestSupport
import Testing

@Suite("saml verify, inspect, vectors")
struct VerifyCommandTests {
    static let common = [
        "--cert", "TestVectors/keys/rsa-2048.cert.pem", "--now", "2026-11-21T12:01:00Z",
        "--issuer", "https://idp.mvpd.example.com", "--audience", "https://saml.sp.auth.adobe.com",
    ]

    static func json(_ result: CommandRunner.Result) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: result.output) as? [String: Any] ?? [:]
    }

    @Test("a valid response exits 0 with the JSON verdict, attributes and skipped checks")
    func validResponse() throws {
        let result = try CommandRunner.run(
            ["verify", "--json", "--require-fields", "uid,NameID,zip"] + Self.common
                + ["TestVectors/responses/typical-rsa2048-assertion-signed.xml"])
        #expect(result.status == 0, "\(result.error)")
        let object = try Self.json(result)
        #expect(object["valid"] as? Bool == true)
        #expect(object["error"] is NSNull)
        #expect(object["nameID"] as? String == "subscriber-0042")
        #expect((object["attributes"] as? [String: [String]])?["zip"] == ["10001", "10002"])
        #expect(object["missingFields"] as? [String] == [])
        #expect(object["skippedChecks"] as? [String] == ["destination", "recipient", "in-response-to", "replay", "issue-instant-age"])
        #expect(result.error.isEmpty)
    }

    @Test("the input format is detected: the cookbook-encoded form body verifies too")
    func acceptsEncodedInput() throws {
        let xml = try Data(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("TestVectors/responses/typical-rsa2048-assertion-signed.xml"))
        let encoded = try CommandRunner.run(["encode"], input: xml)
        let result = try CommandRunner.run(["verify", "--json"] + Self.common + ["-"], input: Data("SAMLResponse=".utf8) + encoded.output)
        #expect(result.status == 0, "\(result.outputText)")
    }

    @Test("a rejected response exits 1 with the code in the JSON and nothing on stderr")
    func rejectedResponse() throws {
        let result = try CommandRunner.run(["verify", "--json"] + Self.common + ["TestVectors/responses/tampered-attribute-value.xml"])
        #expect(result.status == 1)
        let object = try Self.json(result)
        #expect(object["valid"] as? Bool == false)
        #expect((object["error"] as? [String: String])?["code"] == "signature.digest-mismatch")
        #expect(result.error.isEmpty)
    }

    @Test("libxml2 prints nothing: a relative namespace URI in signed content is refused without a line on stderr")
    func libxml2Silent() throws {
        // libxml2's C14N reports a relative namespace URI through its generic error function, which printed
        // seven lines to stderr per request (document bytes included) before it was silenced at start-up.
        let typical = try String(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("TestVectors/responses/typical-rsa2048-assertion-signed.xml"),
            encoding: .utf8)
        let relative = typical.replacingOccurrences(
            of: "</saml:AttributeStatement>",
            with:
                #"<saml:Attribute Name="r"><saml:AttributeValue><r:x xmlns:r="relative/uri"/></saml:AttributeValue></saml:Attribute></saml:AttributeStatement>"#
        )
        #expect(relative != typical)
        let result = try CommandRunner.run(["verify", "--json"] + Self.common + ["-"], input: Data(relative.utf8))
        #expect(result.status == 1)
        #expect((try Self.json(result)["error"] as? [String: String])?["code"] == "signature.malformed")
        #expect(result.error.isEmpty, "\(result.error)")
    }

    @Test("missing required fields are listed and reject the response")
    func missingFields() throws {
        let result = try CommandRunner.run(
            ["verify", "--json", "--require-fields", "uid,guid,MaxTVRating"] + Self.common
                + ["TestVectors/responses/typical-rsa2048-assertion-signed.xml"])
        #expect(result.status == 1)
        let object = try Self.json(result)
        #expect(object["missingFields"] as? [String] == ["guid", "MaxTVRating"])
        #expect((object["error"] as? [String: String])?["code"] == "fields.missing")
    }

    @Test("garbage input is a rejection (exit 1), a missing certificate a usage error (exit 2)")
    func garbageAndUsage() throws {
        let garbage = try CommandRunner.run(["verify", "--json"] + Self.common + ["-"], input: Data("%%%not saml".utf8))
        #expect(garbage.status == 1)
        #expect(try Self.json(garbage)["valid"] as? Bool == false)
        #expect(try CommandRunner.run(["verify", "TestVectors/responses/unsigned.xml"]).status == 2)
        #expect(try CommandRunner.run(["verify", "--cert", "/nonexistent.pem", "TestVectors/responses/unsigned.xml"]).status == 2)
        #expect(try CommandRunner.run(["verify", "--cert", "README.md", "TestVectors/responses/unsigned.xml"]).status == 2)
    }

    @Test("a pinned certificate may be given as DER")
    func acceptsDERCertificate() throws {
        let pem = try String(
            contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("TestVectors/keys/rsa-2048.cert.pem"), encoding: .utf8)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        let url = try TemporaryFiles.file("saml.der")
        try der.write(to: url)
        let result = try CommandRunner.run([
            "verify", "--json", "--cert", url.path, "--now", "2026-11-21T12:01:00Z",
            "TestVectors/responses/typical-rsa2048-assertion-signed.xml",
        ])
        #expect(result.status == 0, "\(result.outputText)")
    }

    @Test("inspect prints signatures, references and IDs without judging")
    func inspect() throws {
        let result = try CommandRunner.run(["inspect", "TestVectors/responses/xsw-signed-assertion-hidden-in-extensions.xml"])
        #expect(result.status == 0)
        let object = try Self.json(result)
        let assertions = object["assertions"] as? [[String: Any]] ?? []
        #expect(
            assertions.map { $0["path"] as? String } == [
                "/samlp:Response/saml:Assertion", "/samlp:Response/samlp:Extensions/saml:Assertion",
            ])
        let signatures = object["signatures"] as? [[String: Any]] ?? []
        #expect(signatures.count == 1)
    }

    @Test("vectors verifies every bundled vector against its expected verdict")
    func vectorsMatchExpectations() throws {
        let result = try CommandRunner.run(["vectors"])
        #expect(result.status == 0, "\(result.outputText)")
        #expect(result.outputText.contains("xsw-second-assertion-before-signed"))
        #expect(result.outputText.contains(" 0 mismatches"))
        #expect(result.error.isEmpty)
    }
}
