import AppleSSO
import Foundation
import SAMLTestSupport
import Testing

@Suite("JSON reading")
struct JSONParsingTests {
    @Test("what the writer writes reads back as the same value", arguments: JSONValueTests.values)
    func roundTrip(value: JSONValue) throws {
        #expect(try JSONValue(parsing: value.bytes) == value)
    }

    @Test("what Foundation writes, pretty-printed and escaped, reads as Foundation read it", arguments: JSONValueTests.values)
    func foundationText(value: JSONValue) throws {
        let object = try JSONSerialization.jsonObject(with: Data(value.bytes), options: [.fragmentsAllowed])
        let text = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .fragmentsAllowed])
        #expect(try JSONValue(parsing: text) == value)
    }

    @Test(
        "accepted text and its value",
        arguments: [
            (" \t\r\n{ \"a\" : [ 1 , -2 ] } \n", ["a": [1, -2]] as JSONValue),
            (#""\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\""#, .string("é😀/\u{08}\u{0C}\n\r\t\"\\")),
            ("0", .integer(0)), ("-0", .integer(0)), ("9223372036854775807", .integer(Int64.max)),
            ("9223372036854775808", .raw(Array("9223372036854775808".utf8))), ("1.5", .raw(Array("1.5".utf8))),
            ("-1E+3", .raw(Array("-1E+3".utf8))), ("true", true), ("false", false), ("null", .null), ("[]", []), ("{}", [:]),
            ("\"é\"", "é"),
        ] as [(String, JSONValue)])
    func accepted(text: String, value: JSONValue) throws {
        #expect(try JSONValue(parsing: Array(text.utf8)) == value)
    }

    @Test(
        "refused text, with the offset where reading stopped",
        arguments: [
            ("", 0), ("{", 1), ("[1,]", 3), (#"{"a":1,}"#, 7), ("01", 1), ("1.", 2), ("-", 1), ("1e", 2), ("tru", 0), ("nul", 0),
            (#""\x""#, 2), ("\"\u{01}\"", 1), (#""\ud800""#, 7), (#""\ud800\u0041""#, 13), (#""\udc00""#, 7), (#""\u12g4""#, 5),
            ("\"abc", 4), ("1 2", 2), ("'a'", 0), ("NaN", 0), ("[1 2]", 3), (#"{"a" 1}"#, 5), ("{1:2}", 1),
            (#"{"a":1,"a":2}"#, 7), (#"{"b":{"x":1,"x":1}}"#, 12),
        ] as [(String, Int)])
    func refused(text: String, offset: Int) {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Array(text.utf8)) }
        do {
            _ = try JSONValue(parsing: Array(text.utf8))
        } catch {
            #expect(error.offset == offset, "\(text): \(error)")
        }
    }

    @Test("ill-formed UTF-8 in a string is refused; the message never quotes the text")
    func illFormedUTF8() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0x5C, 0x6E, 0xC0, 0x80, 0x22],
        ] {
            #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: bytes) }
        }
        do {
            _ = try JSONValue(parsing: Array(#"{"secret-value" 1}"#.utf8))
        } catch {
            #expect(!error.description.contains("secret"))
        }
    }

    @Test("strings are stream-safe: 30 combining marks in a row read, 31 refused at the string's first character, written or escaped")
    func streamSafeStrings() throws {
        let thirty = "a" + String(repeating: "\u{0301}\u{0327}\u{0308}", count: 10)
        #expect(try JSONValue(parsing: Array("{\"\(thirty)\": \"\(thirty)\"}".utf8)) == [thirty: .string(thirty)])
        let thirtyOne = thirty + "\u{0301}"
        for text in [
            "{\"\(thirtyOne)\": 1}", "[1, \"\(thirtyOne)\"]", "[1, \"a" + String(repeating: #"\u0301"#, count: 31) + "\"]",
        ] {
            let error = try #require(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Array(text.utf8)) }
            #expect(error.expected == "at most 30 combining characters in a row in a string")
            #expect(error.offset == (text.hasPrefix("{") ? 2 : 5))
        }
        // A member name of 40,000 pairs (a 160 KB body): refused before it is hashed into the object.
        let hostile = "{\"a" + String(repeating: "\u{0301}\u{0327}", count: 40_000) + "\": 1}"
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Array(hostile.utf8)) }
    }

    @Test("nesting is bounded: maxDepth levels read, one more refused, a hostile 100,000 levels refused at once")
    func depth() throws {
        let ok = String(repeating: "[", count: 8) + String(repeating: "]", count: 8)
        _ = try JSONValue(parsing: Array(ok.utf8), maxDepth: 8)
        let deeper = String(repeating: "[", count: 9) + String(repeating: "]", count: 9)
        #expect(throws: JSONValue.ParseError(offset: 8, expected: "at most 8 nested arrays and objects")) {
            try JSONValue(parsing: Array(deeper.utf8), maxDepth: 8)
        }
        let hostile = Array(String(repeating: "{\"a\":", count: 100_000).utf8)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: hostile) }
    }

    @Test("random byte strings (seeded) either read or throw, and what reads writes back and reads the same")
    func randomBytes() {
        var generator = SeededGenerator(seed: 0x4A53_4F4E)
        let alphabet = Array(#"{}[]:,"\ u0123456789abcdefnrtl-+.eE"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...24, using: &generator)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            if let value = try? JSONValue(parsing: bytes) {
                #expect((try? JSONValue(parsing: value.bytes)) == value)
            }
        }
    }
}
