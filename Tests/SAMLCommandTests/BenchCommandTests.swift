import Foundation
import SAML
import SAMLBench
import SAMLTestSupport
import Testing

@Suite("saml bench and generate")
struct BenchCommandTests {
    @Test("bench prints the 1-thread result first for each input, with the C baseline ratio")
    func benchReportsJSON() throws {
        let result = try CommandRunner.run([
            "bench", "--json", "--threads", "2", "--seconds", "0.05", "--cert", "TestVectors/keys/rsa-2048.cert.pem",
            "TestVectors/responses/typical-rsa2048-assertion-signed.xml",
        ])
        #expect(result.status == 0, "\(result.error)")
        let object = try JSONSerialization.jsonObject(with: result.output) as? [String: Any]
        let rows = object?["results"] as? [[String: Any]] ?? []
        #expect(rows.map { $0["threads"] as? Int } == [1, 2])
        #expect(rows.allSatisfy { ($0["responses_per_second"] as? Double ?? 0) > 0 })
        #expect(rows.allSatisfy { ($0["microseconds_per_response"] as? Double ?? 0) > 0 })
        #expect((rows.first?["ratio_to_baseline"] as? Double ?? 0) > 0)
        #expect(rows.last?["scaling"] is Double)
    }

    @Test("the floor of primitives verifies what it measures: the bundled RSA vectors have one, a tampered byte fails it")
    func floorOfPrimitives() throws {
        let inputs = try BenchInput.bundled(directory: URL(fileURLWithPath: "TestVectors"))
        let typical = try #require(inputs.first { $0.name == "typical-rsa2048-assertion-signed" })
        let floor = try #require(PrimitivesFloor(typical))
        #expect(try floor.run() > 1000, "the canonical assertion, some kilobytes")
        #expect(inputs.filter { $0.name.contains("rsa2048") }.allSatisfy { PrimitivesFloor($0) != nil })
        // ECDSA has no floor here (RSA-SHA256 only); a response whose signed content changed has none either.
        #expect(inputs.first { $0.name.contains("ecdsa") }.flatMap(PrimitivesFloor.init) == nil)
        let xml = try SAMLResponseDecoder().decode(typical.transported).bytes
        #expect(PrimitivesFloor(xml: xml, certificatePEM: typical.certificatePEM) != nil)
        let text = String(decoding: xml, as: UTF8.self)
        let tampered = text.replacingOccurrences(of: "<saml:Audience>", with: "<saml:Audience>x")
        #expect(tampered != text)
        #expect(PrimitivesFloor(xml: Array(tampered.utf8), certificatePEM: typical.certificatePEM) == nil)
        let otherKey = try Array(Data(contentsOf: URL(fileURLWithPath: "TestVectors/keys/rsa-4096.cert.pem")))
        #expect(PrimitivesFloor(xml: xml, certificatePEM: otherKey) == nil)
    }

    @Test(
        "with a JDK on the PATH, the JDK's XML-DSig is measured on the same input beside the project",
        .enabled(if: JDKBaseline.isAvailable))
    func benchMeasuresTheJDK() throws {
        let result = try CommandRunner.run([
            "bench", "--json", "--jdk", "--rounds", "3", "--no-baseline", "--threads", "1", "--seconds", "0.2", "--jdk-warm-up", "0.5",
            "--cert",
            "TestVectors/keys/rsa-2048.cert.pem", "TestVectors/responses/typical-rsa2048-both-signed.xml",
        ])
        #expect(result.status == 0, "\(result.error)")
        let object = try JSONSerialization.jsonObject(with: result.output) as? [String: Any]
        let row = (object?["results"] as? [[String: Any]])?.first ?? [:]
        #expect((row["jdk_responses_per_second"] as? Double ?? 0) > 0)
        #expect((row["ratio_to_jdk"] as? Double ?? 0) > 0)
        // Three slices each, alternated; the reported figures are their medians.
        let ours = row["slices"] as? [Double] ?? []
        let jdk = row["jdk_slices"] as? [Double] ?? []
        #expect(ours.count == 3 && jdk.count == 3)
        #expect(abs(jdk.sorted()[1] - (row["jdk_responses_per_second"] as? Double ?? 0)) <= 1)
    }

    @Test("--jdk without the harness (or a JDK) is a usage error")
    func benchJDKMissing() throws {
        let result = try CommandRunner.run([
            "bench", "--jdk", "--jdk-source", "/nonexistent/JDKVerifyBench.java", "--threads", "1", "--seconds", "0.05", "--cert",
            "TestVectors/keys/rsa-2048.cert.pem", "TestVectors/responses/typical-rsa2048-assertion-signed.xml",
        ])
        #expect(result.status == 2)
        #expect(result.error.contains("--jdk needs javac and java"))
    }

    @Test("a tampered input makes the bench fail instead of run faster")
    func benchFailsOnTamperedInput() throws {
        let result = try CommandRunner.run([
            "bench", "--threads", "1", "--seconds", "0.05", "--cert", "TestVectors/keys/rsa-2048.cert.pem",
            "TestVectors/responses/tampered-attribute-value.xml",
        ])
        #expect(result.status == 1)
        #expect(result.error.contains("signature.digest-mismatch"))
    }

    @Test("bench FILE verifies inside the validity window: after every IssueInstant and NotBefore, before every NotOnOrAfter")
    func instantInsideTheWindow() throws {
        func outline(_ assertion: String, issued: String = "2026-11-21T12:00:00Z") throws -> DocumentOutline {
            let xml = """
                <samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" \
                ID="_r" Version="2.0" IssueInstant="\(issued)">\(assertion)</samlp:Response>
                """
            return try Array(xml.utf8).withUnsafeBytes { try DocumentOutline.read($0) }
        }
        // NotBefore an hour before the IssueInstant: the instant is after the IssueInstant.
        let old = try outline(
            #"<saml:Assertion ID="_a" Version="2.0" IssueInstant="2026-11-21T12:00:05Z"><saml:Subject><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="2026-11-21T12:05:00Z"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="2026-11-21T11:00:00Z" NotOnOrAfter="2026-11-21T13:00:00Z"/></saml:Assertion>"#
        )
        #expect(try BenchInput.validInstant(old) == SAMLInstant(xmlDateTime: "2026-11-21T12:00:06Z"))
        // A window under a second wide: its middle.
        let narrow = try outline(
            #"<saml:Assertion ID="_a" Version="2.0" IssueInstant="2026-11-21T12:00:00Z"><saml:Conditions NotBefore="2026-11-21T12:00:00Z" NotOnOrAfter="2026-11-21T12:00:00.500Z"/></saml:Assertion>"#
        )
        #expect(try BenchInput.validInstant(narrow) == SAMLInstant(xmlDateTime: "2026-11-21T12:00:00.250Z"))
        // No window at all.
        let empty = try outline(
            #"<saml:Assertion ID="_a" Version="2.0" IssueInstant="2026-11-21T12:00:00Z"><saml:Conditions NotOnOrAfter="2026-11-21T11:00:00Z"/></saml:Assertion>"#
        )
        #expect(throws: SAMLError.self) { try BenchInput.validInstant(empty) }
    }

    @Test("bench --now verifies at that instant: inside the window it runs, after it the expiry is reported")
    func benchNow() throws {
        let arguments = [
            "bench", "--no-baseline", "--threads", "1", "--seconds", "0.05", "--cert", "TestVectors/keys/rsa-2048.cert.pem",
            "TestVectors/responses/typical-rsa2048-assertion-signed.xml",
        ]
        let inside = try CommandRunner.run(arguments + ["--now", "2026-11-21T12:01:00Z"])
        #expect(inside.status == 0, "\(inside.error)")
        let after = try CommandRunner.run(arguments + ["--now", "2030-01-01T00:00:00Z"])
        #expect(after.status == 1 && after.error.contains("time."), "\(after.error)")
        #expect(try CommandRunner.run(arguments + ["--now", "yesterday"]).status != 0)
    }

    @Test("generate writes distinct signed responses that verify, encoded or not")
    func generateWritesVerifiableResponses() throws {
        // Not created here: generate makes the folder it is given.
        let folder = try TemporaryFiles.file("saml-generate")
        let generated = try CommandRunner.run([
            "generate", "--count", "3", "--key", "TestVectors/keys/rsa-2048.key.pem", "--cert", "TestVectors/keys/rsa-2048.cert.pem",
            "--sign", "both", "--attributes", "uid=u1,zip=1,zip=2", "--encode", "--out", folder.path,
        ])
        #expect(generated.status == 0, "\(generated.error)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["response-0001.txt", "response-0002.txt", "response-0003.txt"])
        let contents = try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
        #expect(Set(contents).count == 3)
        for name in names {
            let verified = try CommandRunner.run([
                "verify", "--json", "--cert", "TestVectors/keys/rsa-2048.cert.pem", "--require-fields", "uid,zip",
                folder.appendingPathComponent(name).path,
            ])
            #expect(verified.status == 0, "\(verified.outputText)")
        }
    }
}

@Suite("saml generate --encrypt-to and verify --sp-key")
struct EncryptionCommandTests {
    @Test("an encrypted, cookbook-encoded response verifies with the SP key and is refused without it")
    func encryptedRoundTrip() throws {
        let generated = try CommandRunner.run([
            "generate", "--key", "TestVectors/keys/rsa-2048.key.pem", "--cert", "TestVectors/keys/rsa-2048.cert.pem",
            "--sign", "both", "--encrypt-to", "TestVectors/keys/sp-rsa-2048.cert.pem", "--encode",
        ])
        #expect(generated.status == 0, "\(generated.error)")
        let verify = ["verify", "--json", "--cert", "TestVectors/keys/rsa-2048.cert.pem", "--require-fields", "uid,zip", "-"]
        let withKey = try CommandRunner.run(verify + ["--sp-key", "TestVectors/keys/sp-rsa-2048.key.pem"], input: generated.output)
        #expect(withKey.status == 0, "\(withKey.outputText)")
        let withoutKey = try CommandRunner.run(verify, input: generated.output)
        #expect(withoutKey.status == 1)
        #expect(withoutKey.outputText.contains("decryption.no-key"))
        let legacy = try CommandRunner.run([
            "verify", "--json", "--cert", "TestVectors/keys/rsa-2048.cert.pem", "--sp-key", "TestVectors/keys/sp-rsa-2048.key.pem",
            "--now", "2026-11-21T12:01:00Z", "TestVectors/responses/encrypted-assertion-rsa15-aes128cbc.xml",
        ])
        #expect(legacy.status == 1)
        #expect(legacy.outputText.contains("--allow-legacy-encryption"))
        let allowed = try CommandRunner.run([
            "verify", "--json", "--cert", "TestVectors/keys/rsa-2048.cert.pem", "--sp-key", "TestVectors/keys/sp-rsa-2048.key.pem",
            "--allow-legacy-encryption", "--now", "2026-11-21T12:01:00Z", "TestVectors/responses/encrypted-assertion-rsa15-aes128cbc.xml",
        ])
        #expect(allowed.status == 0)
    }
}
