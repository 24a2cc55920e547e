import Foundation
import Testing

@testable import SAML

/// The SP's own metadata (``ServiceProviderMetadata``): what it writes, read back by the package's reader
/// (the root signature verified as IdP metadata's is), by xmllint against the OASIS metadata schema and by
/// pysaml2's MetadataStore (scripts/interop/request-interop).
@Suite("SP metadata")
struct ServiceProviderMetadataTests {
    static let entityID = "https://saml.sp.auth.adobe.com"
    static let acs = ["https://sp.example.com/api/v2/REF30/profiles/sso/Apple", "https://sp.example.com/acs?a=1&b=2"]
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:00:00Z")!

    static func file(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: Vector.root.appendingPathComponent("keys/\(name)"))) }
    static func signingKey(_ name: String) throws -> SigningKey {
        try SigningKey(privateKeyPEM: try file("\(name).key.pem"), certificatePEM: try file("\(name).cert.pem"))
    }
    static func certificate(_ name: String) throws -> TrustedKey { try TrustedKey(pem: try file("\(name).cert.pem")) }
    static func options(signers: [TrustedKey] = [], now: SAMLInstant = now) -> ServiceProviderMetadata.Options {
        ServiceProviderMetadata.Options(signers: signers, now: now)
    }

    /// The SP of the Adobe Pass flow: requests signed with sp-rsa-2048, the next key (rsa-2048) announced,
    /// assertions encrypted to sp-rsa-2048.
    static func metadata(entityID: String = entityID) throws -> ServiceProviderMetadata {
        try ServiceProviderMetadata(
            entityID: entityID, assertionConsumerServiceURLs: acs, signingKey: try signingKey("sp-rsa-2048"),
            additionalSigningKeys: [try certificate("rsa-2048")], encryptionKeys: [try certificate("sp-rsa-2048")])
    }

    /// One of each shape: unsigned and signed (RSA and ECDSA), with keys and without, the entity ID with
    /// every character that needs escaping.
    static func documents() throws -> [(name: String, xml: [UInt8])] {
        var minimal = try ServiceProviderMetadata(entityID: "urn:example:sp", assertionConsumerServiceURLs: ["https://sp.example/acs"])
        minimal.validity = nil
        minimal.cacheDuration = nil
        minimal.nameIDFormats = []
        return [
            ("unsigned", try metadata().xml(now: now)),
            ("signed with RSA", try metadata().xml(signedWith: try signingKey("sp-rsa-2048"), now: now)),
            ("signed with ECDSA", try metadata().xml(signedWith: try signingKey("ecdsa-p256"), now: now)),
            ("minimal", try minimal.xml(now: now)),
            (
                "escaped entity ID, signed",
                try metadata(entityID: #"https://sp.example/?a=1&b=<2>"x""#).xml(signedWith: try signingKey("sp-rsa-2048"), now: now)
            ),
        ]
    }

    @Test("the document is compact, in the schema's element order, and reads back as it was written")
    func roundTrip() throws {
        let written = try Self.metadata()
        let xml = try written.xml(now: Self.now)
        let text = String(decoding: xml, as: UTF8.self)
        #expect(text.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<md:EntityDescriptor "))
        #expect(text.filter { $0 == "\n" }.count == 2 && text.hasSuffix("</md:EntityDescriptor>\n"))
        #expect(text.contains(#" validUntil="2026-11-28T12:00:00Z" cacheDuration="PT6H">"#))
        #expect(text.contains(#"AuthnRequestsSigned="true" WantAssertionsSigned="true""#))
        let order = try [
            #"<md:KeyDescriptor use="signing">"#, #"<md:KeyDescriptor use="encryption">"#,
            #"<md:EncryptionMethod Algorithm="http://www.w3.org/2009/xmlenc11#aes256-gcm"/>"#, "<md:NameIDFormat>",
            #"<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/api/v2/REF30/profiles/sso/Apple" index="0" isDefault="true"/>"#,
            #"<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/acs?a=1&amp;b=2" index="1"/>"#,
        ].map { try #require(text.range(of: $0), "\($0)").lowerBound }
        #expect(order == order.sorted())

        let read = try ServiceProviderMetadata.read(xml, options: Self.options())
        #expect(read.entityID == written.entityID)
        #expect(read.assertionConsumerServices == written.assertionConsumerServices)
        #expect(read.signingKeys.map(\.fingerprint) == written.signingKeys.map(\.fingerprint) && read.signingKeys.count == 2)
        #expect(read.encryptionKeys.map(\.fingerprint) == [try Self.certificate("sp-rsa-2048").fingerprint])
        #expect(read.encryptionMethods == written.encryptionMethods && read.nameIDFormats == written.nameIDFormats)
        #expect(read.authnRequestsSigned && read.wantAssertionsSigned)
        #expect(read.validity == .seconds(7 * 86_400) && read.cacheDuration == .seconds(6 * 3600))
        #expect(try Self.metadata().xml(now: Self.now) != xml, "a fresh ID for every document")
    }

    @Test("the defaults: HTTP-POST, transient and persistent NameIDs, algorithms the strict decryption policy accepts")
    func defaults() throws {
        let metadata = try ServiceProviderMetadata(entityID: Self.entityID, assertionConsumerServiceURLs: ["https://sp.example/acs"])
        #expect(metadata.assertionConsumerServices == [.init(location: "https://sp.example/acs", index: 0, isDefault: true)])
        #expect(metadata.assertionConsumerServices.first?.binding == "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST")
        #expect(metadata.nameIDFormats == [ServiceProviderMetadata.transientNameID, ServiceProviderMetadata.persistentNameID])
        #expect(!metadata.authnRequestsSigned && metadata.wantAssertionsSigned)
        #expect(metadata.validity == .seconds(7 * 86_400) && metadata.cacheDuration == .seconds(6 * 3600))
        for algorithm in metadata.encryptionMethods {
            let transport = (try? EncryptionAlgorithmPolicy.strict.checkKeyTransport(algorithm)) != nil
            let data = (try? EncryptionAlgorithmPolicy.strict.checkDataEncryption(algorithm)) != nil
            #expect(transport || data, "\(algorithm)")
        }
        #expect(metadata.encryptionMethods.count == 4)
    }

    @Test("validUntil is written to the second and cacheDuration as hours, minutes and seconds")
    func times() throws {
        var metadata = try ServiceProviderMetadata(entityID: Self.entityID, assertionConsumerServiceURLs: ["https://sp.example/acs"])
        for (duration, expected) in [
            (Duration.seconds(5400), "PT1H30M"), (.milliseconds(1500), "PT1.5S"), (.milliseconds(50), "PT0.05S"),
            (.seconds(86_400 * 2), "PT48H"),
        ] {
            metadata.cacheDuration = duration
            let xml = try metadata.xml(now: Self.now + .milliseconds(999))
            #expect(String(decoding: xml, as: UTF8.self).contains(#"validUntil="2026-11-28T12:00:00Z" cacheDuration="\#(expected)""#))
            #expect(try ServiceProviderMetadata.read(xml, options: Self.options()).cacheDuration == duration)
        }
    }

    @Test("an entity ID and a location with & < > and quotes are escaped and read back unchanged, signed or not")
    func escaping() throws {
        let entityID = #"https://sp.example/?a=1&b=<2>"x""#
        var metadata = try Self.metadata(entityID: entityID)
        metadata.assertionConsumerServices[1].location = "https://sp.example/acs?x=<&>"
        for key in [nil, try Self.signingKey("sp-rsa-2048")] {
            let xml = try metadata.xml(signedWith: key, now: Self.now)
            let text = String(decoding: xml, as: UTF8.self)
            #expect(!text.contains("&b=") && !text.contains("<2>"))
            let signers = key == nil ? [] : [try Self.certificate("sp-rsa-2048")]
            let read = try ServiceProviderMetadata.read(xml, options: Self.options(signers: signers))
            #expect(read.entityID == entityID)
            #expect(read.assertionConsumerServices.map(\.location) == [Self.acs[0], "https://sp.example/acs?x=<&>"])
        }
    }

    @Test("signed metadata verifies with the signer's certificate only; tampered, unsigned or another key's is refused")
    func signature() throws {
        let signer = try Self.certificate("sp-rsa-2048")
        let xml = try Self.metadata().xml(signedWith: try Self.signingKey("sp-rsa-2048"), now: Self.now)
        let text = String(decoding: xml, as: UTF8.self)
        #expect(text.contains(#"cacheDuration="PT6H"><ds:Signature "#), "the signature is the root's first child")
        _ = try ServiceProviderMetadata.read(xml, options: Self.options(signers: [signer]))
        let ecdsa = try Self.metadata().xml(signedWith: try Self.signingKey("ecdsa-p256"), now: Self.now)
        _ = try ServiceProviderMetadata.read(ecdsa, options: Self.options(signers: [try Self.certificate("ecdsa-p256")]))

        let refusals: [(String, [UInt8], SAMLError.Code)] = [
            ("another key", xml, .signatureUntrustedKey),
            ("tampered", Array(text.replacingOccurrences(of: "REF30", with: "REF31").utf8), .signatureDigestMismatch),
            ("unsigned", try Self.metadata().xml(now: Self.now), .metadataUnsigned),
        ]
        for (name, document, code) in refusals {
            let signers = name == "another key" ? [try Self.certificate("attacker-rsa-2048")] : [signer]
            #expect(throws: SAMLError(code, ""), "\(name)") {
                try ServiceProviderMetadata.read(document, options: Self.options(signers: signers))
            }
        }
    }

    @Test("values the schema or SAML Metadata refuses are configuration errors, before anything is written")
    func refusals() throws {
        let base = try Self.metadata()
        var cases: [(String, ServiceProviderMetadata, SAMLError.Code)] = []
        func add(_ name: String, _ code: SAMLError.Code = .configurationInvalid, _ change: (inout ServiceProviderMetadata) -> Void) {
            var metadata = base
            change(&metadata)
            cases.append((name, metadata, code))
        }
        add("empty entity ID") { $0.entityID = "" }
        add("entity ID over 1,024 characters") { $0.entityID = "urn:" + String(repeating: "a", count: 1021) }
        add("no endpoint") { $0.assertionConsumerServices = [] }
        add("one index twice") { $0.assertionConsumerServices[1].index = 0 }
        add("two defaults") { $0.assertionConsumerServices[1].isDefault = true }
        add("a line break in a location") { $0.assertionConsumerServices[0].location = "https://sp.example/\nacs" }
        add("a NUL in a NameID format") { $0.nameIDFormats = ["urn:a\u{0}"] }
        add("an empty encryption method") { $0.encryptionMethods = [""] }
        add("no validity") { $0.validity = .zero }
        add("a negative cache duration") { $0.cacheDuration = .seconds(-1) }
        add("AuthnRequestsSigned without a signing key") { $0.signingKeys = [] }
        let publicKeyOnly = try TrustedKey(der: try Self.certificate("rsa-2048").publicKeyDERForTests)
        add("a public key without its certificate", .configurationInvalidKey) { $0.encryptionKeys = [publicKeyOnly] }
        for (name, metadata, code) in cases {
            #expect(throws: SAMLError(code, ""), "\(name)") { try metadata.xml(now: Self.now) }
        }
        #expect(try base.xml(now: Self.now).count > 0)

        let keyAlone = try SigningKey(privateKeyPEM: try Self.file("sp-rsa-2048.key.pem"))
        #expect(throws: SAMLError(.configurationInvalidKey, "")) {
            try ServiceProviderMetadata(entityID: Self.entityID, assertionConsumerServiceURLs: Self.acs, signingKey: keyAlone)
        }
        #expect(throws: SAMLError(.configurationInvalidKey, "")) { try base.xml(signedWith: keyAlone, now: Self.now) }
        #expect(throws: SAMLError(.configurationInvalidKey, ""), "another key's certificate") {
            try SigningKey(privateKeyPEM: try Self.file("sp-rsa-2048.key.pem"), certificatePEM: try Self.file("rsa-2048.cert.pem"))
        }
    }

    @Test("reading refuses expired metadata, a document without a SAML 2.0 SP role, and a bad boolean")
    func readingRefusals() throws {
        let xml = try Self.metadata().xml(now: Self.now)
        #expect(throws: SAMLError(.metadataExpired, "")) {
            try ServiceProviderMetadata.read(xml, options: Self.options(now: Self.now + .seconds(7 * 86_400)))
        }
        let idp = Array(try Data(contentsOf: Vector.root.appendingPathComponent("metadata/idp-a.xml")))
        #expect(throws: SAMLError(.metadataMalformed, "")) { try ServiceProviderMetadata.read(idp, options: Self.options()) }
        let text = String(decoding: xml, as: UTF8.self)
        for (from, to) in [
            ("urn:oasis:names:tc:SAML:2.0:protocol", "urn:oasis:names:tc:SAML:1.1:protocol"),
            (#"WantAssertionsSigned="true""#, #"WantAssertionsSigned="yes""#),
            (#"index="1""#, #"index="65536""#),
        ] {
            let changed = Array(text.replacingOccurrences(of: from, with: to).utf8)
            #expect(throws: SAMLError(.metadataMalformed, ""), "\(to)") {
                try ServiceProviderMetadata.read(changed, options: Self.options())
            }
        }
    }

    @Test("every document validates against the OASIS SAML 2.0 metadata schema (xmllint)", .enabled(if: RequestInterop.enabled))
    func schema() throws {
        try RequestInterop.requireAvailable()
        for (name, xml) in try Self.documents() {
            let result = try RequestInterop.run(["schema"], document: xml)
            #expect(result.status == 0, "\(name): \(result.error)")
        }
        // The check can fail: the schema wants NameIDFormat before AssertionConsumerService.
        let text = String(decoding: try Self.metadata().xml(now: Self.now), as: UTF8.self)
        let formats = try #require(text.range(of: "<md:NameIDFormat>")).lowerBound
        let services = try #require(text.range(of: "<md:AssertionConsumerService ")).lowerBound
        let moved =
            text[..<formats]
            + text[services...].replacingOccurrences(of: "</md:SPSSODescriptor>", with: text[formats..<services] + "</md:SPSSODescriptor>")
        let refused = try RequestInterop.run(["schema"], document: Array(moved.utf8))
        #expect(refused.status != 0 && refused.error.contains("NameIDFormat"), "\(refused.error)")
    }

    @Test(
        "pysaml2's MetadataStore loads every document as an SP with its endpoints, checks the signature, refuses a tampered one",
        .enabled(if: RequestInterop.enabled))
    func pysaml2() throws {
        try RequestInterop.requireAvailable()
        // pysaml2 checks validUntil against the real clock.
        let now = SAMLInstant.now()
        let signer = Vector.root.appendingPathComponent("keys/sp-rsa-2048.cert.pem").path
        let entityID = #"https://sp.example/?a=1&b=<2>"x""#
        let unsigned = try Self.metadata(entityID: entityID).xml(now: now)
        let signed = try Self.metadata(entityID: entityID).xml(signedWith: try Self.signingKey("sp-rsa-2048"), now: now)
        for (name, xml, after) in [("unsigned", unsigned, []), ("signed", signed, ["--signer", signer])] {
            let result = try RequestInterop.run(["sp-metadata"], document: xml, after: after)
            try #require(result.status == 0, "\(name): \(result.error)")
            let entities = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
            let entity = try #require(entities.first)
            #expect(entities.count == 1 && entity["entityID"] as? String == entityID, "\(name)")
            let services = try #require(entity["assertionConsumerServices"] as? [[String: Any]])
            #expect(services.map { $0["location"] as? String } == Self.acs, "\(name)")
            #expect(services.map { $0["isDefault"] as? Bool } == [true, false], "\(name)")
            #expect(entity["signingCertificates"] as? Int == 2 && entity["encryptionCertificates"] as? Int == 1, "\(name)")
            #expect(entity["authnRequestsSigned"] as? String == "true" && entity["wantAssertionsSigned"] as? String == "true", "\(name)")
        }
        let tampered = String(decoding: signed, as: UTF8.self).replacingOccurrences(of: "REF30", with: "REF31")
        let refused = try RequestInterop.run(["sp-metadata"], document: Array(tampered.utf8), after: ["--signer", signer])
        #expect(refused.status == 1 && refused.error.contains("refused: SignatureError"), "\(refused.output) \(refused.error)")
        let other = Vector.root.appendingPathComponent("keys/attacker-rsa-2048.cert.pem").path
        let wrongSigner = try RequestInterop.run(["sp-metadata"], document: signed, after: ["--signer", other])
        #expect(wrongSigner.status == 1, "pysaml2 accepted another key's signature")
    }
}

extension TrustedKey {
    /// The SubjectPublicKeyInfo of the key, to build a key that has no certificate.
    var publicKeyDERForTests: [UInt8] { handle.publicKeyDER ?? [] }
}
