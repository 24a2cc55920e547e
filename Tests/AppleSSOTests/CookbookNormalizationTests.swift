import AppleSSO
import SAML
import SAMLTestSupport
import Testing

@Suite("Cookbook normalisation")
struct CookbookNormalizationTests {
    /// Each case: input and the output the cookbook's Foundation code produces, written out, so that a
    /// change in Foundation shows up here as well as a change in the library.
    static let table: [(String, String)] = [
        ("", ""),
        ("   \t\t  ", ""),
        ("\n\r\n\u{0B}\u{0C}\u{85}\u{2028}\u{2029}", ""),
        ("a \n b", "a  b"),
        ("a\r\nb", "ab"),
        ("a\n\rb", "ab"),
        ("a\u{0B}b\u{0C}c\u{85}d\u{2028}e\u{2029}f\rg\nh", "abcdefgh"),
        ("a \t \t b", "a b"),
        ("a\t\tb", "a b"),
        ("\u{A0}abc\u{3000}", "abc"),
        ("\u{3000}\u{A0} a \u{A0}\u{3000}", "a"),
        ("a\u{A0}\u{A0}b", "a\u{A0}\u{A0}b"),
        ("a \u{A0} b", "a \u{A0} b"),
        ("\u{1680}\u{2000}\u{2005}\u{200A}\u{202F}\u{205F}x\u{200B}", "x"),
        ("\u{180E}x\u{FEFF}", "\u{180E}x\u{FEFF}"),
        (" \u{301}x", "\u{301}x"),
        ("x \u{301}", "x \u{301}"),
        ("Grüße, 世界", "Grüße, 世界"),
        ("  😀 \n 👍🏽  ", "😀  👍🏽"),
        ("<Issuer>\n    https://idp.example.com\n  </Issuer>", "<Issuer> https://idp.example.com </Issuer>"),
    ]

    @Test("matches the written-out cookbook output", arguments: table)
    func matchesTable(input: String, expected: String) throws {
        #expect(Cookbook.normalize(input) == expected)
        #expect(try Cookbook.normalize(utf8: Array(input.utf8)) == Array(expected.utf8))
        #expect(CookbookOracle.normalize(input) == expected, "the Foundation oracle itself changed")
    }

    @Test("matches the cookbook's Foundation code on a pretty-printed SAML response")
    func matchesOracleOnPrettyPrintedResponse() throws {
        let response = try TestVectorFiles.text("responses/pretty-printed-unsigned.xml")
        #expect(Cookbook.normalize(response) == CookbookOracle.normalize(response))
        #expect(Cookbook.encode(response) == CookbookOracle.encode(response))
    }

    @Test("matches the cookbook's Foundation code on 100,000 seeded whitespace-heavy strings")
    func matchesOracleOnGeneratedStrings() throws {
        var generator = SeededGenerator(seed: 0x5A4D_4C20_2026)
        var mismatches: [String] = []
        for _ in 0..<100_000 {
            let input = WhitespaceHeavyStrings.make(using: &generator)
            let expected = CookbookOracle.normalize(input)
            if try Cookbook.normalize(input) != expected || Cookbook.normalize(utf8: Array(input.utf8)) != Array(expected.utf8) {
                mismatches.append(input.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
            }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(5))")
    }

    @Test("rejects bytes that are not UTF-8 with input.not-utf8")
    func rejectsIllFormedUTF8() {
        for bytes: [UInt8] in [[0x61, 0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x80], [0xF4, 0x90, 0x80, 0x80]] {
            #expect(throws: SAMLError(.inputNotUTF8, "")) { try Cookbook.normalize(utf8: bytes) }
            #expect(throws: SAMLError(.inputNotUTF8, "")) { try Cookbook.encode(utf8: bytes) }
        }
    }
}
