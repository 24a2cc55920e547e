import Testing

@testable import SAML

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs of combining marks as the verifier reads text: character references decoded, a node's text,
/// CDATA and comments joined across the markup between them (``StreamSafeTree``).
@Suite("Stream-safe text as read")
struct StreamSafeTreeTests {
    func parse(_ xml: String) throws {
        let bytes = Array(xml.utf8)
        _ = try bytes.withUnsafeBytes { try SafeXMLParser.parse($0, limits: XMLParserLimits()) }
    }

    static let mark = "\u{0301}"
    static func references(_ count: Int) -> String { String(repeating: "&#769;", count: count) }
    static func raw(_ count: Int) -> String { String(repeating: mark, count: count) }

    @Test(
        "30 non-starters in a row are read, 31 refused: as references, raw, mixed, or joined across comments, CDATA and child elements",
        arguments: [
            ("<r>a\(references(30))</r>", "<r>a\(references(31))</r>"),
            ("<r a=\"b\(references(30))\"/>", "<r a=\"b\(references(31))\"/>"),
            ("<r>a\(raw(15))\(references(15))</r>", "<r>a\(raw(15))\(references(16))</r>"),
            ("<r>a\(raw(20))<!---->b\(raw(20))</r>", "<r>a\(raw(20))<!---->\(raw(11))</r>"),
            ("<r>a\(raw(20))x<![CDATA[\(raw(20))]]></r>", "<r>a\(raw(20))<![CDATA[\(raw(11))]]></r>"),
            ("<r>a\(raw(20))<c/>b\(raw(20))</r>", "<r>a\(raw(20))<c>b</c>\(raw(11))</r>"),
            ("<r>a\(raw(20))<?p x?>b\(raw(20))</r>", "<r>a\(raw(20))<?p ?>\(raw(11))</r>"),
            // A comment or a processing instruction holding letters: text alone joins across it.
            ("<r>a\(raw(20))<!--x-->\(raw(10))</r>", "<r>a\(raw(20))<!--x-->\(raw(11))</r>"),
            ("<r>a\(raw(20))<?p x?>\(raw(10))</r>", "<r>a\(raw(20))<?p x?>\(raw(11))</r>"),
            ("<r>a\(raw(20))<!--\(raw(10))-->b</r>", "<r>a\(raw(20))<!--\(raw(11))-->b</r>"),
            ("<r xmlns:p=\"urn:a\(references(30))\"/>", "<r xmlns:p=\"urn:a\(references(31))\"/>"),
        ])
    func runs(read: String, refused: String) throws {
        try parse(read)
        let error = try #require(throws: SAMLError.self) { try parse(refused) }
        #expect(error.code == .xmlLimitExceeded && error.message.contains("non-starters"), "\(error)")
    }

    @Test("real text with marks reads: decomposed accents, Vietnamese, Devanagari, an emoji family, written or as references")
    func realText() throws {
        try parse("<r n=\"Jose\u{0301}\">Truye\u{0302}\u{0300}n hi\u{0300}nh &#7913; केबल टीवी 👨‍👩‍👧‍👦 &#x1F1EB;&#x1F1F7;</r>")
    }

    static func escaped(_ count: Int) -> String { String(repeating: "%CC%81", count: count) }

    @Test(
        "percent-encoded text is checked as decoded: escapes joined with raw marks, malformed escapes kept as written",
        arguments: [
            ("/a/\(escaped(30))", "/a/\(escaped(31))"),
            ("/a?x=\(raw(15))\(escaped(15))", "/a?x=\(raw(15))\(escaped(16))"),
            ("/a/%zz\(escaped(30))%", "/a/%C\(raw(31))%4"),
            ("/plain/path?q=1", "/b\(raw(31))"),
        ])
    func percentEncoded(read: String, refused: String) {
        var read = read, refused = refused
        #expect(read.withUTF8 { StreamSafeText.firstViolation(percentEncoded: $0) } == nil)
        #expect(refused.withUTF8 { StreamSafeText.firstViolation(percentEncoded: $0) } != nil)
    }

    @Test("the check reads no byte past the text: lengths around its 32- and 8-byte steps, ending where memory cannot be read")
    func readsNothingPastTheEnd() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let region = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(region != UnsafeMutableRawPointer(bitPattern: -1))
        defer { munmap(region, 2 * page) }
        // The second page unreadable: a read past the text's end crashes the test.
        try #require(mprotect(region + page, page, PROT_NONE) == 0)
        let end = region.assumingMemoryBound(to: UInt8.self) + page
        for length in [0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 96, 100] {
            let start = end - length
            start.initialize(repeating: UInt8(ascii: "a"), count: length)
            #expect(StreamSafeText.firstViolation(UnsafeBufferPointer(start: start, count: length)) == nil, "\(length)")
            // A combining mark (U+0301) in the last two bytes: the one-byte path up to the end.
            if length >= 2 {
                start[length - 2] = 0xCC
                start[length - 1] = 0x81
                #expect(StreamSafeText.firstViolation(UnsafeBufferPointer(start: start, count: length)) == nil, "\(length)")
            }
        }
    }

    @Test("lenient percent-decoding keeps a malformed escape as written; strict refuses it")
    func lenientPercentDecoding() throws {
        let input = Array("a%41%4%zz%".utf8)
        let lenient = try input.withUnsafeBufferPointer { try PercentDecoding.decode($0, plusAsSpace: false, lenient: true) }
        #expect(lenient == Array("aA%4%zz%".utf8))
        #expect(throws: SAMLError.self) { try PercentDecoding.decode(input) }
    }
}
