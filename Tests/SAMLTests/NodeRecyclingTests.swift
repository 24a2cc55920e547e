import CSAMLShim
import Testing

/// `saml_shim_free_document` (Sources/CSAMLShim/parser.c) hands a finished tree's nodes to the calling
/// thread's parser context, whose tree builder takes them for the next document. A synchronous test runs
/// on one thread, so its parses and frees share one context.
@Suite("Parser node recycling")
struct NodeRecyclingTests {
    /// Every kind of node a response can hold: namespace declarations, attributes short and long (kept
    /// inside the node or allocated), with and without a namespace, texts short and long, blank runs,
    /// comments, processing instructions, CDATA, character references and predefined entities.
    static let mixed = """
        <?xml version="1.0"?>
        <!-- before --><?before x?>
        <p:Response xmlns:p="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:s="urn:oasis:names:tc:SAML:2.0:assertion" \
        ID="_r" Destination="https://sp.example.com/a/very/long/destination/that/is/not/kept/inside/a/node">
          <s:Issuer Format="f">https://idp.example.com/issuer/with/a/long/name</s:Issuer>
          <s:Assertion ID="_a" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="t">
            <!-- a comment --><?pi data?>
            <s:AttributeValue a="x&amp;y&#x41;" b="&lt;&gt;">short</s:AttributeValue>
            <s:AttributeValue><![CDATA[<cdata & more>]]>tail &amp; &#233; text that is longer than sixteen bytes</s:AttributeValue>
            <Unqualified xmlns="urn:default" plain="v"><Deeper><Deepest/></Deeper></Unqualified>
          </s:Assertion>
        </p:Response>
        <!-- after -->
        """

    /// Parses with the thread's context, serialises, frees through the shim; nil when libxml2 refuses.
    static func roundTrip(_ text: String, options: Int32 = Int32(XML_PARSE_NONET.rawValue)) -> String? {
        var error = saml_shim_parse_error()
        let bytes = Array(text.utf8)
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                saml_shim_parse_document($0.baseAddress, Int32($0.count), options, &error)
            }
        }
        guard let document = parsed else { return nil }
        defer { saml_shim_free_document(document) }
        var output: UnsafeMutablePointer<xmlChar>?
        var length: Int32 = 0
        xmlDocDumpMemory(document, &output, &length)
        guard let output else { return nil }
        defer { saml_shim_free_buffer(output) }
        return String(decoding: UnsafeBufferPointer(start: output, count: Int(length)), as: UTF8.self)
    }

    static func kept() -> (nodes: Int, attributes: Int) {
        var nodes: Int32 = 0
        var attributes: Int32 = 0
        saml_shim_parser_kept(&nodes, &attributes)
        return (Int(nodes), Int(attributes))
    }

    @Test("a read gets exactly its own options: none is left on the thread's context by the read before")
    func optionsDoNotAccumulate() throws {
        // NOCDATA clears the tree builder's CDATA callback and NOBLANKS swaps its whitespace one; libxml2
        // leaves both as they are when the next read does not ask for them.
        let text = "<r><a><![CDATA[x]]></a> <b/></r>"
        let merged = try #require(Self.roundTrip(text, options: Int32(XML_PARSE_NOCDATA.rawValue | XML_PARSE_NOBLANKS.rawValue)))
        #expect(!merged.contains("CDATA"))
        #expect(merged.contains("</a><b/>"))
        let plain = try #require(Self.roundTrip(text))
        #expect(plain.contains("<![CDATA[x]]>"))
        #expect(plain.contains("</a> <b/>"))
    }

    @Test("a tree built from recycled nodes is the tree built from fresh ones")
    func sameTree() throws {
        let first = try #require(Self.roundTrip(Self.mixed))
        #expect(first.contains("<![CDATA[<cdata & more>]]>"))
        #expect(first.contains(#"a="x&amp;yA""#))
        let kept = Self.kept()
        #expect(kept.nodes > 20, "the freed tree's elements and texts wait for the next document")
        #expect(kept.attributes >= 8)
        for _ in 0..<5 {
            #expect(Self.roundTrip(Self.mixed) == first)
        }
        // Another document in between reuses the same nodes for other names and contents.
        let other = #"<a xmlns="urn:x" k="a value long enough to be allocated apart"><b>t</b><c/>tail text, long enough</a>"#
        let otherFirst = try #require(Self.roundTrip(other))
        #expect(Self.roundTrip(Self.mixed) == first)
        #expect(Self.roundTrip(other) == otherFirst)
    }

    @Test("under AddressSanitizer the waiting nodes are poisoned, so that reading a freed tree still fails")
    func poisonedUnderAddressSanitizer() throws {
        _ = try #require(Self.roundTrip(Self.mixed))
        #expect(Self.kept().nodes > 0)
        // -1: not an AddressSanitizer build, where there is nothing to poison (scripts/ci/sanitizer-tests
        // runs this suite with it).
        #expect(saml_shim_parser_kept_poisoned() != 0)
    }

    @Test("the free lists stay bounded whatever the size of the tree freed")
    func bounded() throws {
        let elements = String(repeating: #"<e a="1" b="2">text</e>"#, count: 3_000)
        _ = try #require(Self.roundTrip("<r>\(elements)</r>"))
        let kept = Self.kept()
        #expect(kept.nodes == 1_024)
        #expect(kept.attributes == 256)
        // A document with a DTD is left to xmlFreeDoc whole (its entity references point into the DTD):
        // its parse takes nodes from the lists, its free gives none back.
        let withDTD = #"<!DOCTYPE r [<!ENTITY e "x">]><r a="&e;">&e;<s/></r>"#
        #expect(Self.roundTrip(withDTD)?.contains("&e;") == true)
        #expect(Self.kept().nodes < kept.nodes)
        #expect(Self.kept().attributes < kept.attributes)
    }
}
