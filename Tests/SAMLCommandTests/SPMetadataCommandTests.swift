import Foundation
import SAML
import SAMLTestSupport
import Testing

@Suite("saml sp-metadata")
struct SPMetadataCommandTests {
    static let keys = "TestVectors/keys/"
    static let base = [
        "sp-metadata", "--entity-id", "https://saml.sp.auth.adobe.com", "--acs", "https://sp.example/acs", "--acs",
        "https://sp.example/acs2", "--now", "2026-11-21T12:00:00Z",
    ]

    static func certificate(_ name: String) throws -> TrustedKey {
        try TrustedKey(pem: Array(try Data(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent(keys + name))))
    }

    @Test("writes signed metadata to a file that verifies with the signing certificate and lists what was given")
    func signed() throws {
        let output = try TemporaryFiles.file("sp-metadata.xml")
        let result = try CommandRunner.run(
            Self.base + [
                "--signing-cert", Self.keys + "sp-rsa-2048.cert.pem", "--signing-key", Self.keys + "sp-rsa-2048.key.pem",
                "--encryption-cert", Self.keys + "sp-rsa-2048.cert.pem", "--encryption-cert", Self.keys + "rsa-2048.cert.pem",
                "--name-id-format", "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified", "--valid-for", "3600",
                "--cache-duration", "600", "--output", output.path,
            ])
        #expect(result.status == 0 && result.output.isEmpty, "\(result.error)")
        let xml = Array(try Data(contentsOf: output))
        var options = ServiceProviderMetadata.Options(signers: [try Self.certificate("sp-rsa-2048.cert.pem")])
        options.now = SAMLInstant(xmlDateTime: "2026-11-21T12:00:00Z")!
        let read = try ServiceProviderMetadata.read(xml, options: options)
        #expect(read.entityID == "https://saml.sp.auth.adobe.com")
        #expect(read.assertionConsumerServices.map(\.location) == ["https://sp.example/acs", "https://sp.example/acs2"])
        #expect(read.assertionConsumerServices.map(\.isDefault) == [true, false])
        #expect(read.signingKeys.map(\.fingerprint) == [try Self.certificate("sp-rsa-2048.cert.pem").fingerprint])
        #expect(read.encryptionKeys.count == 2 && read.authnRequestsSigned)
        #expect(read.nameIDFormats == ["urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"])
        #expect(read.validity == .seconds(3600) && read.cacheDuration == .seconds(600))
    }

    @Test("without a key the document goes to standard output unsigned; --valid-for 0 leaves validUntil out")
    func unsigned() throws {
        let result = try CommandRunner.run(Self.base + ["--signing-cert", Self.keys + "sp-rsa-2048.cert.pem", "--valid-for", "0"])
        #expect(result.status == 0, "\(result.error)")
        let text = result.outputText
        #expect(text.hasPrefix("<?xml ") && !text.contains("<ds:Signature") && !text.contains("validUntil="))
        #expect(text.contains(#"AuthnRequestsSigned="false""#) && text.contains(#"<md:KeyDescriptor use="signing">"#))
    }

    @Test("a key without its certificate, another key's certificate and an over-long entity ID are refused with their codes")
    func refusals() throws {
        for (arguments, status, prefix) in [
            (["--signing-key", Self.keys + "sp-rsa-2048.key.pem"], Int32(2), "Error: --signing-key needs --signing-cert"),
            (
                ["--signing-key", Self.keys + "sp-rsa-2048.key.pem", "--signing-cert", Self.keys + "rsa-2048.cert.pem"], 1,
                "error: configuration.invalid-key"
            ),
            (["--entity-id", String(repeating: "a", count: 1025)], 1, "error: configuration.invalid"),
        ] {
            let result = try CommandRunner.run(Self.base + arguments)
            #expect(result.status == status && result.error.hasPrefix(prefix), "\(arguments): \(result.error)")
        }
        let noEndpoint = try CommandRunner.run(["sp-metadata", "--entity-id", "urn:sp"])
        #expect(noEndpoint.status == 2 && noEndpoint.error.contains("--acs"), "\(noEndpoint.error)")
    }
}
