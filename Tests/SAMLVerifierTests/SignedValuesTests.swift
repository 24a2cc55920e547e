import Foundation
@_spi(Stages) import SAML
import SAMLMockIdP
import Testing

/// Every value the verifier returns comes only from what the signature covers: changes an attacker can
/// make after signing without touching the digest (comments, unused declarations, rebinding a prefix
/// only a QName in text names, whitespace inside tags) verify, and change no value read.
@Suite("Values only as signed")
struct SignedValuesTests {
    static let vector = Vector.named("typical-rsa2048-assertion-signed")
    /// An AttributeValue with element content: a QName in text (`q:premium`) whose prefix's declaration
    /// nothing visibly uses, a nested element, an attribute.
    static let content = #"<x:card xmlns:x="urn:example:card" xmlns:q="urn:q:one" level="gold">q:premium<x:n>7</x:n></x:card>"#

    /// The bundled typical response, its signature removed, with an attribute holding `content`, signed
    /// again on its Assertion by the mock IdP with the bundled key.
    static func signed() throws -> String {
        var text = String(decoding: vector.bytes, as: UTF8.self)
        let start = try #require(text.range(of: "<ds:Signature"))
        let end = try #require(text.range(of: "</ds:Signature>"))
        text.removeSubrange(start.lowerBound..<end.upperBound)
        let statementEnd = try #require(text.range(of: "</saml:AttributeStatement>"))
        text.insert(
            contentsOf: #"<saml:Attribute Name="card"><saml:AttributeValue>"# + content + "</saml:AttributeValue></saml:Attribute>",
            at: statementEnd.lowerBound)
        func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: Vector.root.appendingPathComponent(path))) }
        let mock = try MockIdentityProvider(
            privateKeyPEM: try read("keys/rsa-2048.key.pem"), certificatePEM: try read("keys/rsa-2048.cert.pem"))
        return String(decoding: try mock.signing(Array(text.utf8), placement: .assertion), as: UTF8.self)
    }

    /// What a caller reads of a verified response.
    struct Read: Equatable {
        var nameID: String?
        var issuer: String
        var audiences: [String]
        var attributes: [String: [String]]
        var inResponseTo: String?
    }

    static func read(_ xml: String) throws -> Read {
        let response = try SAMLResponseVerifier(vector.configuration()).verifyWithoutReplayCheck(Array(xml.utf8), at: vector.instant)
        return Read(
            nameID: response.assertion.nameID?.value, issuer: response.assertion.issuer, audiences: response.assertion.audiences,
            attributes: Dictionary(response.assertion.attributes.map { ($0.name, $0.values) }, uniquingKeysWith: +),
            inResponseTo: response.inResponseTo)
    }

    @Test("element content is its exclusive canonical form: only the declarations it visibly uses")
    func canonicalContent() throws {
        let read = try Self.read(try Self.signed())
        #expect(read.attributes["card"] == [#"<x:card xmlns:x="urn:example:card" level="gold">q:premium<x:n>7</x:n></x:card>"#])
    }

    @Test(
        "a change the digest does not see changes no value",
        arguments: [
            ("a comment inside element content", "q:premium", "q:prem<!-- injected -->ium"),
            ("an unused declaration added", #"<x:card xmlns:x"#, #"<x:card xmlns:extra="urn:extra" xmlns:x"#),
            ("the prefix of a QName in text rebound", #"xmlns:q="urn:q:one""#, #"xmlns:q="urn:q:two""#),
            ("whitespace inside tags", #"<x:n>7</x:n>"#, "<x:n\n >7</x:n  >"),
            ("a comment inside the NameID", ">subscriber-0042</saml:NameID>", ">subscriber<!---->-0042</saml:NameID>"),
            ("a comment inside the Issuer", "idp.mvpd.example.com</saml:Issuer>", "idp.mvpd<!-- x -->.example.com</saml:Issuer>"),
            ("a comment inside the Audience", "saml.sp.auth.adobe.com</saml:Audience>", "saml.sp<!---->.auth.adobe.com</saml:Audience>"),
            ("a comment inside a text AttributeValue", ">hh-7731<", ">hh<!---->-7731<"),
        ])
    func unseenChange(what: String, original: String, changed: String) throws {
        let signed = try Self.signed()
        let expected = try Self.read(signed)
        #expect(signed.contains(original), "\(what)")
        let tampered = signed.replacingOccurrences(of: original, with: changed)
        #expect(tampered != signed)
        #expect(try Self.read(tampered) == expected, "\(what)")
    }

    @Test("a change the digest sees is refused")
    func seenChange() throws {
        let tampered = try Self.signed().replacingOccurrences(of: "q:premium", with: "q:platinum")
        let error = try #require(throws: SAMLError.self) { try Self.read(tampered) }
        #expect(error.code == .signatureDigestMismatch)
    }

    @Test("a namespaced URI, Algorithm or PrefixList attribute in SignedInfo is refused (the profile and xmlsec read the same one)")
    func namespacedSignedInfoAttributes() throws {
        let signed = try Self.signed()
        let reference = try #require(signed.range(of: "<ds:Reference "))
        var tampered = signed
        tampered.insert(contentsOf: ##"xmlns:x="urn:x" x:URI="#elsewhere" "##, at: reference.upperBound)
        let error = try #require(throws: SAMLError.self) { try Self.read(tampered) }
        #expect(error.code == .signatureMalformed)
        #expect(error.message.contains("no namespaced attribute on ds:Reference"))
        let method = try #require(signed.range(of: "<ds:DigestMethod "))
        tampered = signed
        tampered.insert(contentsOf: #"xml:lang="en" "#, at: method.upperBound)
        #expect(throws: SAMLError.self) { try Self.read(tampered) }
    }
}
