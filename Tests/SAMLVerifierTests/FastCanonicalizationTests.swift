import Foundation
@_spi(Stages) import SAML
import Testing

/// The fast canonicalisation (fast_c14n.c) must give exactly libxmlsec1's verdicts: on every bundled
/// vector, on the third-party corpus, and on seeded mutations of signed content.
@Suite("Fast canonicalisation agrees with libxmlsec1's")
struct FastCanonicalizationTests {
    static func verdicts(_ xml: [UInt8], verifier: SAMLResponseVerifier) -> (Verdict, Verdict) {
        func run(_ fast: Bool) -> Verdict {
            Verdict {
                let parsed = try xml.withUnsafeBytes { try verifier.parse($0) }
                _ = try verifier.verifySignatures(parsed, fastCanonicalization: fast)
            }
        }
        return (run(true), run(false))
    }

    @Test("same signature verdict on every bundled vector", arguments: Vector.all)
    func bundledVectors(vector: Vector) throws {
        let verifier = try SAMLResponseVerifier(vector.configuration())
        let (fast, stock) = Self.verdicts(vector.bytes, verifier: verifier)
        #expect(fast == stock)
    }

    @Test("same signature verdict on 300 seeded mutations of signed responses")
    func mutations() throws {
        var state: UInt64 = 0xC14E
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var disagreements: [String] = []
        for id in ["typical-rsa2048-assertion-signed", "typical-rsa2048-both-signed", "comment-in-nameid-signature-intact"] {
            let vector = Vector.named(id)
            let verifier = try SAMLResponseVerifier(vector.configuration())
            for round in 0..<100 {
                var bytes = vector.bytes
                switch round % 3 {
                case 0: bytes[next(bytes.count)] ^= UInt8(1 << next(8))
                case 1:
                    // A comment, a CDATA section or whitespace inserted between two elements.
                    let positions = bytes.indices.filter { bytes[$0] == UInt8(ascii: ">") }
                    let at = positions[next(positions.count)] + 1
                    let insert = ["<!-- x -->", "<![CDATA[y]]>", " \n", "<?pi z?>"][next(4)]
                    bytes.insert(contentsOf: Array(insert.utf8), at: at)
                default:
                    bytes.removeSubrange(next(bytes.count)...)
                }
                let (fast, stock) = Self.verdicts(bytes, verifier: verifier)
                if fast != stock { disagreements.append("\(id) round \(round): fast \(fast), stock \(stock)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    /// xmlsec resolves `#ID` directly (xmlGetID) on the fast path and through `xpointer(id('ID'))` on the
    /// stock one; IDs that the XPointer route reads differently keep it (shim.c).
    @Test(
        "same verdict when the signed ID holds what XPointer reads differently",
        arguments: ["a b", "a\tb", "a'b", "a(b)", "a)b", "a^b", "x'", "'", "(", "caf\u{E9}", "a\"b", "a#b", "a&amp;b"])
    func oddIdentifiers(id: String) throws {
        for vectorID in ["typical-rsa2048-assertion-signed", "typical-rsa2048-both-signed"] {
            let vector = Vector.named(vectorID)
            let verifier = try SAMLResponseVerifier(vector.configuration())
            let text = String(decoding: vector.bytes, as: UTF8.self)
            let attribute = id.replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "\t", with: "&#9;")
            let assertion = try #require(text.range(of: "<saml:Assertion "))
            let start = try #require(text.range(of: "ID=\"", range: assertion.upperBound..<text.endIndex))
            let end = try #require(text.range(of: "\"", range: start.upperBound..<text.endIndex))
            let signedID = text[start.upperBound..<end.lowerBound]
            let renamed = text.replacingOccurrences(of: "\"\(signedID)\"", with: "\"\(attribute)\"")
                .replacingOccurrences(of: "\"#\(signedID)\"", with: "\"#\(attribute)\"")
            #expect(renamed != text)
            let (fast, stock) = Self.verdicts(Array(renamed.utf8), verifier: verifier)
            #expect(fast == stock, "\(vectorID) with ID \(id): fast \(fast), stock \(stock)")
        }
    }

    /// libxml2's C14N refuses a relative namespace URI after writing what precedes it; the refused
    /// canonicalisation gives no bytes either way (a fuzz finding: the stock path handed out the partial
    /// buffer, the fast one refuses before writing).
    @Test("no canonical bytes, fast or stock, for signed content with a relative namespace URI")
    func relativeNamespaceGivesNoBytes() throws {
        let vector = Vector.named("typical-rsa2048-both-signed")
        let verifier = try SAMLResponseVerifier(vector.configuration())
        let text = String(decoding: vector.bytes, as: UTF8.self)
        let status = try #require(text.range(of: "</samlp:Status>"))
        var mutated = text
        mutated.insert(contentsOf: #"<x:E xmlns:x="htt/w/:pww.w3.org/2001/04/xmlenc#"/>"#, at: status.upperBound)
        let bytes = Array(mutated.utf8)
        let fast = try bytes.withUnsafeBytes { verifier.canonicalReferenceBytes(try verifier.parse($0), fastCanonicalization: true) }
        let stock = try bytes.withUnsafeBytes { verifier.canonicalReferenceBytes(try verifier.parse($0), fastCanonicalization: false) }
        #expect(fast.count == 2 && fast[0] == nil, "the response's reference holds the relative namespace")
        #expect(fast == stock)
        let (fastVerdict, stockVerdict) = Self.verdicts(bytes, verifier: verifier)
        #expect(fastVerdict == stockVerdict)
    }

    static func compareBytes(_ xml: [UInt8], named name: String, into total: inout CanonicalizationComparison.Report) {
        guard let report = try? xml.withUnsafeBytes({ try CanonicalizationComparison.compareEveryElement($0) }) else { return }
        total.same += report.same
        total.declined += report.declined
        total.differences += report.differences.map { "\(name): \($0)" }
    }

    @Test("the canonicaliser writes libxml2's exact bytes in every mode for every element of every bundled vector")
    func canonicalBytesOfVectors() throws {
        var total = CanonicalizationComparison.Report()
        for vector in Vector.all {
            Self.compareBytes(vector.bytes, named: vector.id, into: &total)
        }
        #expect(total.differences.isEmpty, "\(total.differences.prefix(20))")
        #expect(total.same > 10_000, "compared \(total.same), declined \(total.declined)")
        #expect(total.declined * 20 < total.same, "declined \(total.declined) of \(total.same + total.declined)")
    }

    @Test("the canonicaliser writes libxml2's exact bytes on documents built to probe namespaces, xml:* inheritance and escaping")
    func canonicalBytesOfProbes() throws {
        let probes = [
            // Default namespaces, xmlns="" undeclarations, a prefix rebound lower down, attributes in
            // namespaces sorted by URI rather than prefix, the xml namespace, escapes in text and values.
            #"<r xmlns="urn:a" xmlns:p="urn:p" a="1" p:b="&lt;&amp;&gt;&quot;&#9;&#10;&#13;" xml:lang="en"><c xmlns=""><d/></c>"#
                + #"<p:e xmlns:p="urn:q" xmlns:z="urn:a" z:y="2" p:x="3"><f xmlns="urn:b">t&amp;&lt;&gt;&#13;"'</f></p:e>"#
                + #"<g><!-- c --><?pi data?><?pi?><![CDATA[<x>&]]></g></r>"#,
            #"<a:r xmlns:a="http://example.com/a#" xmlns:b="http://example.com/b"><b:s b:q="1" a:q="2" q="3"/>"#
                + #"<a:t xmlns="urn:d"><u xmlns=""/><v xmlns:a="http://example.com/a#"/></a:t></a:r>"#,
            // Namespace URIs the fast check does not accept on sight and xmlParseURI decides.
            #"<r xmlns="mailto:x@example.com" xmlns:w="tag:example.com,2026:x"><w:s/></r>"#,
            #"<r xmlns:rel="relative/path"><s/></r>"#,
            // Inclusive C14N's xml:* inheritance: the apex takes the nearest xml:lang and xml:space of its
            // ancestors (1.0: every xml:* attribute, 1.1: not xml:id), unless it sets them itself; xml:base
            // below the apex, empty or not.
            #"<r xml:lang="en" xml:space="preserve" xml:id="r1" xmlns="urn:d"><s xml:lang="fr"><t xml:space="default" a="1">"#
                + #"<u xml:base="http://example.com/x/" xml:lang=""><v xml:base=""/></u></t></s><w xmlns=""><x xml:lang="de"/></w></r>"#,
            // Declarations redeclared with the same and another URI, the default namespace undeclared and
            // declared again, attributes of two prefixes bound to one URI.
            #"<a:r xmlns:a="urn:a" xmlns:b="urn:a" xmlns="urn:d" b:y="1" a:x="2"><a:s xmlns:a="urn:a"><t xmlns="">"#
                + #"<u xmlns="urn:d"><a:v xmlns:a="urn:other" xmlns:b="urn:a" a:z="3" b:z="4"/></u></t></a:s></a:r>"#,
        ]
        var total = CanonicalizationComparison.Report()
        for (index, probe) in probes.enumerated() {
            Self.compareBytes(Array(probe.utf8), named: "probe \(index)", into: &total)
        }
        #expect(total.differences.isEmpty, "\(total.differences.prefix(20))")
        #expect(total.same > 50)
        #expect(total.declined > 0, "the relative namespace URI is refused, as libxml2 refuses it")
    }

    @Test("same signature verdict on the third-party corpus", .enabled(if: ConformanceTests.available))
    func corpus() throws {
        var compared = 0
        var bytes = CanonicalizationComparison.Report()
        for (id, input, verifier) in try ConformanceTests.signatureCases() {
            let (fast, stock) = Self.verdicts(input, verifier: verifier)
            #expect(fast == stock, "\(id)")
            Self.compareBytes(input, named: id, into: &bytes)
            compared += 1
        }
        #expect(compared > 100)
        #expect(bytes.differences.isEmpty, "\(bytes.differences.prefix(20))")
        #expect(bytes.same > 10_000, "compared \(bytes.same), declined \(bytes.declined)")
    }
}
