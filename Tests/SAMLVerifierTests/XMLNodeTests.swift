import Testing

@testable import SAML

/// The tree helpers the reader relies on, on small documents.
@Suite("Tree helpers")
struct XMLNodeTests {
    @Test("a repeated attribute value is shared only when its bytes are the same")
    func sharedValues() throws {
        let xml = Array(#"<r><a f="x"/><a f="x"/><a f="y"/><a/><a f="y"/><a f=""/><a f=""/><a f="x&amp;"/><a f="x&amp;"/></r>"#.utf8)
        let tree = try xml.withUnsafeBytes { try SafeXMLParser.parse($0, limits: XMLParserLimits()) }
        var previous: String?
        var values: [String?] = []
        for element in tree.root.elementChildren {
            values.append(element.attribute("f", sameAs: &previous))
            #expect(values.last! == element.attribute("f"))
        }
        #expect(values == ["x", "x", "y", nil, "y", "", "", "x&", "x&"])
        #expect(previous == "x&")
    }

    @Test("names are compared whole: a prefix, a longer name or another namespace is not the name")
    func names() throws {
        let xml = Array(#"<s:Response xmlns:s="urn:oasis:names:tc:SAML:2.0:protocol" ID="1" IDx="2"/>"#.utf8)
        let tree = try xml.withUnsafeBytes { try SafeXMLParser.parse($0, limits: XMLParserLimits()) }
        let root = tree.root
        #expect(root.is(Namespace.samlProtocol, "Response"))
        #expect(!root.is(Namespace.samlProtocol, "Respons"))
        #expect(!root.is(Namespace.samlProtocol, "Responses"))
        #expect(!root.is(Namespace.samlAssertion, "Response"))
        for near in [
            "urn:oasis:names:tc:SAML:2.0:protocolX", "urn:oasis:names:tc:SAML:2.0:protoco", "urn:oasis:names:tc:SAML:2.0:protocoL",
        ] {
            let other = Array(#"<s:Response xmlns:s="\#(near)"/>"#.utf8)
            let otherTree = try other.withUnsafeBytes { try SafeXMLParser.parse($0, limits: XMLParserLimits()) }
            #expect(!otherTree.root.is(Namespace.samlProtocol, "Response"), "\(near)")
        }
        #expect(root.attribute("ID") == "1")
        #expect(root.attribute("IDx") == "2")
        #expect(root.attribute("I") == nil)
    }
}
