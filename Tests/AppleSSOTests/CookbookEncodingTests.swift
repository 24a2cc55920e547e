import AppleSSO
import SAML
import SAMLTestSupport
import Testing

@Suite("Cookbook encoding")
struct CookbookEncodingTests {
    @Test(
        "matches the cookbook's Foundation code",
        arguments: CookbookNormalizationTests.table.map(\.0) + ["a", "ab", "abc", "abcd", "\u{FB}\u{FF}", "???>>>", "~~~"]
    )
    func matchesOracle(input: String) throws {
        let expected = CookbookOracle.encode(input)
        #expect(Cookbook.encode(input) == expected)
        #expect(try Cookbook.encode(utf8: Array(input.utf8)) == Array(expected.utf8))
    }

    @Test("percent-encodes exactly '+', '/' and '='")
    func percentEncodesBase64Specials() {
        // "<a>x</a>" is PGE+eDwvYT4= in Base64.
        #expect(Cookbook.encode("<a>x</a>") == "PGE%2BeDwvYT4%3D")
        // 0xFB 0xFF encodes to "+/8=" territory: "w7vDvw==".
        #expect(Cookbook.encode("\u{FB}\u{FF}") == "w7vDvw%3D%3D")
        #expect(Cookbook.encode("???") == "Pz8%2F")
    }

    @Test("decoding the encoding gives the normalised text, for 20,000 seeded strings")
    func roundTrips() throws {
        var generator = SeededGenerator(seed: 2026_11_21)
        var options = SAMLResponseDecoder.Options()
        options.content = .any
        let decoder = SAMLResponseDecoder(options: options)
        for _ in 0..<20_000 {
            let input = WhitespaceHeavyStrings.make(using: &generator)
            let decoded = try decoder.decode(Cookbook.encode(input))
            #expect(decoded.bytes == Array(Cookbook.normalize(input).utf8))
            #expect(decoded.repairs.isEmpty)
        }
    }

    @Test("decoding the encoding of a SAML response gives its normalised XML")
    func roundTripsAResponse() throws {
        let response = try TestVectorFiles.text("responses/pretty-printed-unsigned.xml")
        let decoded = try SAMLResponseDecoder().decode("SAMLResponse=" + Cookbook.encode(response) + "&deviceType=tvOS")
        #expect(decoded.bytes == Array(Cookbook.normalize(response).utf8))
        #expect(decoded.format == .formBody)
    }
}

@Suite("Cookbook encoding, in place and streamed")
struct CookbookStreamingEncodingTests {
    @Test("the in-place and streamed entry points give the same bytes as the String one")
    func inPlaceAndStreamedAgree() throws {
        // Large enough to span several 48 KiB pieces, with a length that is not a multiple of three.
        let response = try TestVectorFiles.text("responses/pretty-printed-unsigned.xml")
        let input = String(repeating: response, count: 97) + "\u{3000}x "
        let expected = Array(CookbookOracle.encode(input).utf8)

        var inPlace = Array(input.utf8)
        #expect(try Cookbook.encode(normalizingInPlace: &inPlace) == expected)
        #expect(inPlace == Array(CookbookOracle.normalize(input).utf8))

        var streamedInput = Array(input.utf8)
        var streamed: [UInt8] = []
        var pieces = 0
        try Cookbook.encode(normalizingInPlace: &streamedInput) { piece in
            streamed.append(contentsOf: piece)
            pieces += 1
        }
        #expect(streamed == expected)
        #expect(pieces > 1)
    }
}
