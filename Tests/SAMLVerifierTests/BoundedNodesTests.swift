import CSAMLShim
import Foundation
import Testing

@_spi(Stages) @testable import SAML

/// Issue 48: what a Reference with an empty URI covers, the nodes every document is held to, the
/// PrefixList as libxmlsec1 splits it, and the nested signatures recovery may keep without xmlsec.
@Suite("Bounded nodes and references")
struct BoundedNodesTests {
    let typical = Vector.named("typical-rsa2048-assertion-signed")

    func verdict(_ xml: [UInt8], _ adjust: (inout SAMLResponseVerifier.Configuration) -> Void = { _ in }) -> Verdict {
        Verdict {
            var configuration = try typical.configuration()
            adjust(&configuration)
            _ = try SAMLResponseVerifier(configuration).verifyWithoutReplayCheck(xml, at: typical.instant)
        }
    }

    @Test("a processing instruction before or after the document element is refused with its own code")
    func processingInstructionsOutside() {
        let forbidden = Verdict.invalid("xml.processing-instruction-forbidden")
        #expect(verdict(typical.bytes + Array("<?p?>".utf8)) == forbidden)
        #expect(verdict(typical.bytes + Array("\n<?xml-stylesheet href=\"a\"?>\n".utf8)) == forbidden)
        #expect(verdict(Array("<?p x?>\n".utf8) + typical.bytes) == forbidden)
        // `<?xml ` anywhere but first is no XML declaration.
        #expect(verdict(Array("<!-- c -->\n<?xml version=\"1.0\"?>".utf8) + typical.bytes) == forbidden)
    }

    @Test("the XML declaration, after a byte order mark or not, is not a processing instruction")
    func xmlDeclaration() {
        let declaration = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".utf8)
        #expect(verdict(declaration + typical.bytes) == .valid)
        #expect(verdict([0xEF, 0xBB, 0xBF] + declaration + typical.bytes) == .valid)
    }

    @Test("comments outside the document element are accepted up to the cap, and refused past it")
    func commentsOutside() {
        let eight = Array(String(repeating: "<!-- c -->", count: 8).utf8)
        #expect(verdict(eight + typical.bytes) == .valid)
        #expect(verdict(typical.bytes + eight) == .valid)
        #expect(verdict(eight + typical.bytes + Array("<!---->".utf8)) == .invalid("xml.limit-exceeded"))
        let seven = verdict(typical.bytes + eight) { $0.parserLimits.maximumCommentsOutsideDocumentElement = 7 }
        #expect(seven == .invalid("xml.limit-exceeded"))
    }

    @Test("elements, text runs, CDATA sections, comments and processing instructions all count as nodes")
    func everyNodeKindCounts() throws {
        let xml = Array("<r>t<?p?><!--c--><![CDATA[x]]><e/></r>".utf8)
        var limits = XMLParserLimits()
        limits.maximumNodes = 6
        #expect(try xml.withUnsafeBytes { try XMLPreScan.check($0, limits: limits) } == false)
        limits.maximumNodes = 5
        let error = try #require(throws: SAMLError.self) { try xml.withUnsafeBytes { try XMLPreScan.check($0, limits: limits) } }
        #expect(error.code == .xmlLimitExceeded)
        #expect(error.message.contains("at most 5 nodes"))
    }

    @Test("the pre-scan reads each `&` of text and attribute values, and none in comments, CDATA or processing instructions")
    func referencesAroundSkippedMarkup() throws {
        func scan(_ text: String) throws -> Bool {
            try Array(text.utf8).withUnsafeBytes { try XMLPreScan.check($0, limits: XMLParserLimits()) }
        }
        func refused(_ text: String) throws -> SAMLError.Code {
            try #require(throws: SAMLError.self) { try scan(text) }.code
        }
        // `&` where no reference is read: passed over, and the references after them still checked.
        #expect(try scan("<r a=\"x\"><!-- & &ext; --><![CDATA[ &bad; ]]><?p & ?>t &amp; u</r>") == false)
        #expect(try refused("<r><!-- &ext; -->&ext;</r>") == .xmlEntityForbidden)
        #expect(try refused("<r><![CDATA[&]]><e a=\"&ext;\"/></r>") == .xmlEntityForbidden)
        #expect(try refused("<r><?p &?><e a=\"&lt;\" b=\"&ext;\"/></r>") == .xmlEntityForbidden)
        #expect(try refused("<r a=\"&amp;\">&lt;&gt;&quot;&apos;<e/>&unknown;</r>") == .xmlEntityForbidden)
        // Character references: read as text that may hold non-starters (checked once parsed).
        #expect(try scan("<r a=\"&lt;\">&gt;</r>") == false)
        #expect(try scan("<r a=\"&#x41;\"/>") == true)
        #expect(try scan("<r><!-- &#769; -->&#769;</r>") == true)
        #expect(try scan("<r><!-- &#769; --></r>") == false)
        // A `&` that ends a run of text is left to libxml2, which refuses it.
        #expect(try scan("<r>a&</r>") == true)
        var text = String(decoding: typical.bytes, as: UTF8.self)
        let issuer = try #require(text.range(of: "</saml:Issuer>"))
        text.insert(contentsOf: "a&", at: issuer.lowerBound)
        #expect(verdict(Array(text.utf8)) == .invalid("xml.malformed"))
    }

    @Test("the shapes of issue 48 are refused with their codes")
    func hostileShapes() throws {
        let names = [
            "empty-uri-trailing-processing-instructions", "empty-uri-trailing-comments", "processing-instructions-and-comments-inside",
            "exc-c14n-rendered-namespace-stack",
        ]
        for name in names {
            let shape = try #require(HostileShapeTests.shapes.first { $0.name == name }, "\(name)")
            let verdict = Verdict { _ = try shape.verifier.verifyWithoutReplayCheck(shape.xml, at: shape.now) }
            #expect(verdict == .invalid(shape.expectedCode), "\(name)")
        }
    }

    @Test("the rendered-namespace stack as the review sent it (19,800 leaves of two namespaced attributes) stops at the attribute cap")
    func reviewedStackShape() throws {
        let nested = (0..<55).map { level in
            "<a:n" + (level == 0 ? " xmlns:a=\"urn:a\" xmlns:b=\"urn:b\" xmlns:c=\"urn:c\" xmlns:d=\"urn:d\"" : "")
                + (0..<60).map { " a:x\($0)=\"\"" }.joined() + ">"
        }.joined()
        let leaves = String(repeating: "<b:l c:y=\"vvvvvvvvvvvv\" d:z=\"vvvvvvvvvvvv\"/>", count: 19_800)
        var text = String(decoding: typical.bytes, as: UTF8.self)
        let end = try #require(text.range(of: "</saml:AttributeStatement>"))
        text.insert(
            contentsOf: "<saml:Attribute Name=\"h\"><saml:AttributeValue>" + nested + leaves + String(repeating: "</a:n>", count: 55)
                + "</saml:AttributeValue></saml:Attribute>", at: end.lowerBound)
        let bytes = Array(text.utf8)
        let error = try #require(throws: SAMLError.self) {
            try bytes.withUnsafeBytes { try XMLPreScan.check($0, limits: XMLParserLimits()) }
        }
        #expect(error.code == .xmlLimitExceeded)
        #expect(error.message.contains("attributes"))
    }

    /// The typical vector with a default namespace declared on its Response and `prefixList` on the
    /// Reference's exclusive C14N: what libxmlsec1 digests for the Assertion, and what the recovery's
    /// canonicalisation (`saml_shim_canonicalize`) writes for it.
    func canonicalized(prefixList: String) throws -> (xmlsec: [UInt8], recovery: [UInt8]) {
        var text = String(decoding: typical.bytes, as: UTF8.self)
        text = text.replacingOccurrences(of: "<samlp:Response ", with: "<samlp:Response xmlns=\"urn:example:default\" ")
        text = text.replacingOccurrences(
            of: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>",
            with: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"><ec:InclusiveNamespaces "
                + "xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\"\(prefixList)\"/></ds:Transform>")
        let verifier = try SAMLResponseVerifier(try typical.configuration())
        return try Array(text.utf8).withUnsafeBytes { bytes in
            let parsed = try verifier.parse(bytes)
            let assertion = try #require(parsed.structure.assertion)
            let signature = try #require(parsed.structure.assertionSignature)
            let xmlsec = try #require(
                SignatureVerification.referenceBytes(
                    signature: signature, key: try typical.keys()[0], algorithms: .strict, fastCanonicalization: false
                ).bytes)
            var output: UnsafeMutablePointer<UInt8>?
            var count = 0
            let status = saml_shim_canonicalize(
                assertion.pointee.doc, assertion, signature, SAML_SHIM_C14N_EXCLUSIVE, 0, prefixList, 8, 1_000_000, &output, &count)
            defer { saml_shim_free_buffer(output) }
            try #require(status == 0)
            return (xmlsec, Array(UnsafeBufferPointer(start: try #require(output), count: count)))
        }
    }

    @Test(
        "a PrefixList is split as libxmlsec1 splits it: at each single space, an empty entry naming the default namespace",
        arguments: ["saml  ds", " saml", "saml #default", "saml ", "saml\tds", "saml", ""])
    func prefixListSplit(prefixList: String) throws {
        let (xmlsec, recovery) = try canonicalized(prefixList: prefixList)
        #expect(recovery == xmlsec)
        let rendersDefault = String(decoding: xmlsec, as: UTF8.self).contains("xmlns=\"urn:example:default\"")
        #expect(rendersDefault == ["saml  ds", " saml", "saml #default"].contains(prefixList))
    }

    @Test("recovery keeps a nested candidate without its own xmlsec run only for the one Assertion signature verified afterwards")
    func nestedCandidatesDecidedLater() throws {
        let both = Vector.named("typical-rsa2048-both-signed")
        let verifier = try SAMLResponseVerifier(try both.configuration())
        try both.bytes.withUnsafeBytes { bytes in
            let parsed = try verifier.parse(bytes)
            let response = parsed.structure.response
            let nested = try #require(parsed.structure.assertionSignature)
            #expect(SignatureRecovery.isDecidedLater(nested, nestedIn: response, verifiedAfterwards: nested))
            #expect(!SignatureRecovery.isDecidedLater(nested, nestedIn: response, verifiedAfterwards: nil))
            let outer = try #require(parsed.structure.responseSignature)
            #expect(!SignatureRecovery.isDecidedLater(nested, nestedIn: response, verifiedAfterwards: outer))
            let assertion = try #require(parsed.structure.assertion)
            #expect(!SignatureRecovery.isDecidedLater(nested, nestedIn: assertion, verifiedAfterwards: nested))
        }
        // A signature where the verifier's structure allows none (a second Assertion) is never decided later.
        var text = String(decoding: both.bytes, as: UTF8.self)
        let end = try #require(text.range(of: "</saml:Assertion>"))
        text.insert(contentsOf: "<saml:Assertion ID=\"_second\"/>", at: end.upperBound)
        let tree = try Array(text.utf8).withUnsafeBytes { try SafeXMLParser.parse($0, limits: XMLParserLimits()) }
        let signatures = tree.root.descendants(where: { $0.is(Namespace.xmlDSig, "Signature") })
        let nested = try #require(signatures.first { $0.pointee.parent != tree.root })
        #expect(!SignatureRecovery.isDecidedLater(nested, nestedIn: tree.root, verifiedAfterwards: nested))
    }
}
