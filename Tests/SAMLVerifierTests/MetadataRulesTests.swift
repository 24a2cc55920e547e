import Foundation
import SAML
import Testing

/// The SAML Metadata rules of issue 33 on ``IdentityProviderMetadata``: SAML 2.0 roles only, a role's own
/// `validUntil`, one KeyInfo = one key, SHA-1 signatures only with an opt-in, IDs that are xs:NCNames.
/// The documents are `TestVectors/metadata/` (made and signed by signxml in `generate.py`), read at the
/// vectors' instant.
@Suite("Metadata rules (issue 33)")
struct MetadataRulesTests {
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:01:00Z")!
    static let idp = "https://idp.mvpd.example.com"

    static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Vector.root.appendingPathComponent(path)))
    }

    static func metadata(_ name: String) throws -> [UInt8] { try file("metadata/\(name)") }

    static func fingerprint(_ key: String) throws -> String {
        try TrustedKey.all(pem: try file("keys/\(key).cert.pem"))[0].fingerprint
    }

    static var signer: [TrustedKey] {
        get throws { try TrustedKey.all(pem: try file("keys/metadata-signer-rsa-2048.cert.pem")) }
    }

    /// The code a read fails with, or "read".
    static func outcome(_ xml: [UInt8], entityID: String? = nil, options: IdentityProviderMetadata.Options) -> String {
        do {
            _ = try IdentityProviderMetadata.read(xml, entityID: entityID, options: options)
            return "read"
        } catch let error as SAMLError {
            return error.code.identifier
        } catch {
            return "\(error)"
        }
    }

    static func message(_ xml: [UInt8], entityID: String? = nil, options: IdentityProviderMetadata.Options) -> String {
        do {
            _ = try IdentityProviderMetadata.read(xml, entityID: entityID, options: options)
            return ""
        } catch let error as SAMLError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// An `md:EntitiesDescriptor` around the documents' entities.
    static func aggregate(_ names: [String]) throws -> [UInt8] {
        var xml = Array(#"<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">"#.utf8)
        for name in names { xml += try metadata(name) }
        return xml + Array("</md:EntitiesDescriptor>".utf8)
    }

    // MARK: protocolSupportEnumeration

    @Test("a role whose protocolSupportEnumeration lacks SAML 2.0 is no SAML 2.0 IdP: metadata.no-identity-provider")
    func saml11OnlyRoleIsNotAnIdentityProvider() throws {
        let options = IdentityProviderMetadata.Options(now: Self.now)
        let xml = try Self.metadata("idp-saml11-only.xml")
        #expect(Self.outcome(xml, options: options) == "metadata.no-identity-provider")
        #expect(Self.outcome(xml, entityID: Self.idp, options: options) == "metadata.no-identity-provider")
        #expect(Self.message(xml, options: options).contains("protocolSupportEnumeration lists SAML 2.0"))
    }

    @Test("only the SAML 2.0 roles of an entity give keys and endpoints; the list is split on any XML whitespace")
    func mixedProtocolsKeepOnlySAML2Roles() throws {
        let idp = try IdentityProviderMetadata.read(
            try Self.metadata("idp-mixed-protocols.xml"), entityID: nil, options: .init(now: Self.now))
        #expect(idp.signingKeys.map(\.fingerprint) == [try Self.fingerprint("rsa-2048")])
        #expect(idp.singleSignOnServices.map(\.location) == ["\(Self.idp)/saml2/post"])
    }

    @Test("in an aggregate a SAML 1.1-only entity is left out; asked for by name it says why")
    func aggregateLeavesOutSAML11Entity() throws {
        let xml = try Self.aggregate(["idp-saml11-only.xml", "idp-b.xml"])
        let options = IdentityProviderMetadata.Options(now: Self.now)
        #expect(try IdentityProviderMetadata.read(xml, options: options).map(\.entityID) == ["https://idp.mvpd-b.example.com"])
        #expect(Self.outcome(xml, entityID: Self.idp, options: options) == "metadata.no-identity-provider")
        #expect(Self.message(xml, entityID: Self.idp, options: options).contains("for other protocols only"))
    }

    // MARK: A role's validUntil and cacheDuration

    @Test("an entity whose only SAML 2.0 role has expired is metadata.expired, naming the role")
    func expiredRoleRefusesEntity() throws {
        let xml = try Self.metadata("idp-role-expired.xml")
        #expect(Self.outcome(xml, options: .init(now: Self.now)) == "metadata.expired")
        #expect(Self.message(xml, options: .init(now: Self.now)).contains("md:IDPSSODescriptor"))
        // Before the role's validUntil it is read, valid until the role's instant (earlier than the entity's).
        let before = try IdentityProviderMetadata.read(
            xml, entityID: nil, options: .init(now: SAMLInstant(xmlDateTime: "2026-05-01T00:00:00Z")!))
        #expect(before.validUntil == SAMLInstant(xmlDateTime: "2026-06-01T00:00:00Z"))
    }

    @Test("a role whose validUntil is at now is not used; the valid role's validUntil and cacheDuration narrow the entity's")
    func expiredRoleBesideValidRole() throws {
        let idp = try IdentityProviderMetadata.read(
            try Self.metadata("idp-role-expired-beside-valid.xml"), entityID: nil, options: .init(now: Self.now))
        #expect(idp.signingKeys.map(\.fingerprint) == [try Self.fingerprint("rsa-2048")])
        #expect(idp.singleSignOnServices.map(\.location) == ["\(Self.idp)/new/post"])
        #expect(idp.validUntil == SAMLInstant(xmlDateTime: "2030-01-01T00:00:00Z"))
        #expect(idp.cacheDuration == .seconds(3600))
    }

    @Test("a role's validUntil or cacheDuration that does not parse is metadata.malformed")
    func malformedRoleValidity() throws {
        let xml = String(decoding: try Self.metadata("idp-role-expired.xml"), as: UTF8.self)
        for bad in [
            xml.replacingOccurrences(of: #"validUntil="2026-06-01T00:00:00Z""#, with: #"validUntil="next year""#),
            xml.replacingOccurrences(of: #"validUntil="2026-06-01T00:00:00Z""#, with: #"cacheDuration="PT1X""#),
        ] {
            #expect(bad != xml)
            #expect(Self.outcome(Array(bad.utf8), options: .init(now: Self.now)) == "metadata.malformed")
        }
    }

    // MARK: One KeyInfo = one key

    @Test(
        "a KeyInfo describing two different keys is metadata.key-conflict",
        arguments: [
            "idp-keyinfo-certificate-and-other-rsa-key.xml", "idp-keyinfo-two-certificates.xml",
            "idp-keyinfo-certificate-and-other-ec-key.xml",
        ])
    func keyInfoWithTwoKeysIsRefused(_ name: String) throws {
        let xml = try Self.metadata(name)
        #expect(Self.outcome(xml, options: .init(now: Self.now)) == "metadata.key-conflict")
        #expect(Self.outcome(xml, entityID: Self.idp, options: .init(now: Self.now)) == "metadata.key-conflict")
        #expect(Self.message(xml, options: .init(now: Self.now)).contains("XML-DSig 4.5"))
    }

    @Test("a certificate, its KeyValue and the certificate again are one key; KeyDescriptors stay pooled")
    func sameKeyDescribedSeveralWaysIsOneKey() throws {
        let idp = try IdentityProviderMetadata.read(
            try Self.metadata("idp-keyinfo-same-key-three-ways.xml"), entityID: nil, options: .init(now: Self.now))
        #expect(idp.signingKeys.map(\.fingerprint) == [try Self.fingerprint("rsa-2048"), try Self.fingerprint("ecdsa-p256")])
        #expect(idp.signingKeys.allSatisfy { $0.certificateDER != nil })
    }

    @Test("a chain in one X509Data is one key, its first certificate; the chain's others are never trusted")
    func chainInOneX509DataIsOneKey() throws {
        func base64(_ key: String) throws -> String {
            String(decoding: try Self.file("keys/\(key).cert.pem"), as: UTF8.self).split(separator: "\n")
                .filter { !$0.hasPrefix("-----") }.joined()
        }
        let chain =
            "<ds:X509Data><ds:X509Certificate>\(try base64("rsa-2048"))</ds:X509Certificate>"
            + "<ds:X509Certificate>\(try base64("attacker-rsa-2048"))</ds:X509Certificate></ds:X509Data>"
        let xml = """
            <md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" \
            entityID="\(Self.idp)"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">\
            <md:KeyDescriptor use="signing"><ds:KeyInfo>\(chain)</ds:KeyInfo></md:KeyDescriptor>\
            <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.mvpd.example.com/sso"/>\
            </md:IDPSSODescriptor></md:EntityDescriptor>
            """
        let idp = try IdentityProviderMetadata.read(Array(xml.utf8), entityID: nil, options: .init(now: Self.now))
        #expect(idp.signingKeys.map(\.fingerprint) == [try Self.fingerprint("rsa-2048")])
    }

    @Test("a conflicting entity is left out of an aggregate; the others are read")
    func keyConflictIsScopedToItsEntity() throws {
        let xml = try Self.aggregate(["idp-keyinfo-two-certificates.xml", "idp-b.xml"])
        let options = IdentityProviderMetadata.Options(now: Self.now)
        #expect(try IdentityProviderMetadata.read(xml, options: options).map(\.entityID) == ["https://idp.mvpd-b.example.com"])
        #expect(Self.outcome(xml, entityID: Self.idp, options: options) == "metadata.key-conflict")
    }

    // MARK: SHA-1 signatures

    @Test("metadata signed with RSA-SHA1 is refused by default and read with algorithms = .allowingSHA1")
    func sha1SignedMetadataNeedsTheOptIn() throws {
        let xml = try Self.metadata("idp-a-signed-sha1.xml")
        #expect(Self.outcome(xml, options: .init(signers: try Self.signer, now: Self.now)) == "signature.algorithm-not-allowed")
        let options = IdentityProviderMetadata.Options(signers: try Self.signer, algorithms: .allowingSHA1, now: Self.now)
        let idp = try IdentityProviderMetadata.read(xml, entityID: nil, options: options)
        #expect(idp.signingKeys.map(\.fingerprint) == [try Self.fingerprint("rsa-2048")])
        // The opt-in accepts SHA-1, not a changed document.
        let tampered = Array(String(decoding: xml, as: UTF8.self).replacingOccurrences(of: "/sso/post", with: "/sso/evil").utf8)
        #expect(tampered != xml)
        #expect(Self.outcome(tampered, options: options) == "signature.digest-mismatch")
    }

    // MARK: IDs

    @Test(
        "signed metadata whose ID is not an xs:NCName is id.malformed before xmlsec sees it",
        arguments: ["idp-signed-id-xpath.xml", "idp-signed-id-colon.xml"])
    func signedMetadataWithMalformedID(_ name: String) throws {
        let xml = try Self.metadata(name)
        #expect(Self.outcome(xml, options: .init(signers: try Self.signer, now: Self.now)) == "id.malformed")
        // Without a signer the signature, and so the ID, is not used.
        #expect(Self.outcome(xml, options: .init(now: Self.now)) == "read")
    }

    @Test("every ID of signed metadata is checked: the root's, a nested one, a signature Id; non-ASCII letters are name letters")
    func idsAreNCNames() throws {
        func document(rootID: String, nestedID: String = "_role", signatureID: String = "_sig") -> [UInt8] {
            Array(
                """
                <md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" \
                ID="\(rootID)" entityID="https://idp.example"><ds:Signature Id="\(signatureID)"/>\
                <md:IDPSSODescriptor ID="\(nestedID)" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/>\
                </md:EntityDescriptor>
                """.utf8)
        }
        let options = IdentityProviderMetadata.Options(signers: try Self.signer, now: Self.now)
        for bad in ["a b", "a:b", "a'b", "a(b)", "a|b", "a/b", "a[1]", "a*", "a=b", ""] {
            #expect(Self.outcome(document(rootID: bad), options: options) == "id.malformed", "\(bad)")
        }
        #expect(Self.outcome(document(rootID: "_ok", nestedID: "x y"), options: options) == "id.malformed")
        #expect(Self.outcome(document(rootID: "_ok", signatureID: "id('x')"), options: options) == "id.malformed")
        // Well-formed IDs pass the ID check; the empty signature then fails the profile. A name character
        // first (a digit, '-', '.') is accepted as in responses: bare UUIDs (NCName.isAcceptedID).
        for good in ["_a", "a.b-c_1", "éte", "Ωmega", "x\u{0301}", "1abc", "-a", ".a"] {
            #expect(Self.outcome(document(rootID: good), options: options) == "signature.malformed", "\(good)")
        }
    }

    @Test("the signature's Reference URI is \"\" or # + the root's ID, nothing else")
    func referenceURIIsTheRootID() throws {
        let xml = String(decoding: try Self.metadata("idp-a-signed.xml"), as: UTF8.self)
        let options = IdentityProviderMetadata.Options(signers: try Self.signer, now: Self.now)
        for uri in ["#xpointer(/)", "#xpointer(id('_md-a-signed'))", "#_other"] {
            let changed = xml.replacingOccurrences(of: ##"URI="#_md-a-signed""##, with: "URI=\"\(uri)\"")
            #expect(changed != xml)
            #expect(Self.outcome(Array(changed.utf8), options: options) == "signature.reference-mismatch", "\(uri)")
        }
    }
}
