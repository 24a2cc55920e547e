import CookbookEncoding
import Testing

@testable import SAML

@Suite("Decoding what a Token Exchange endpoint receives")
struct SAMLResponseDecoderTests {
    let xml = "<samlp:Response ID=\"_1\">??>>~~ \u{FF}\u{FB}</samlp:Response>"
    // Base64 of `xml`, which contains '+', '/' and '=' so that every escaping rule is exercised.
    var base64: String { Base64Text.encode(Array(xml.utf8)) }
    var percentEncoded: String {
        base64.replacingAll("+", "%2B").replacingAll("/", "%2F").replacingAll("=", "%3D")
    }

    @Test("accepts a form body, a form value, bare Base64 and raw XML alike")
    func acceptsEveryShape() throws {
        let decoder = SAMLResponseDecoder()
        let cases: [(String, SAMLResponseDecoder.InputFormat)] = [
            ("requestor=abc&SAMLResponse=\(percentEncoded)&deviceType=tvOS", .formBody),
            ("SAMLResponse=\(percentEncoded)", .formBody),
            (percentEncoded, .formValue),
            (base64, .base64),
            ("  \(base64)\r\n", .base64),
            (xml, .xml),
            ("\u{FEFF}" + xml, .xml),
        ]
        for (input, format) in cases {
            let decoded = try decoder.decode(input)
            #expect(decoded.format == format, "\(input)")
            #expect(decoded.repairs.isEmpty)
            #expect(String(decoding: decoded.bytes, as: UTF8.self).hasSuffix(xml))
        }
        #expect(base64.contains("+") && base64.contains("/") && base64.hasSuffix("="))
    }

    @Test("accepts Base64 with line breaks and without padding")
    func acceptsLineBreaksAndMissingPadding() throws {
        var wrapped = ""
        for (index, character) in base64.enumerated() {
            if index > 0, index % 16 == 0 { wrapped += "\r\n" }
            wrapped.append(character)
        }
        let unpadded = String(base64.prefix { $0 != "=" })
        for input in [wrapped, unpadded] {
            #expect(try SAMLResponseDecoder().decode(input).bytes == Array(xml.utf8))
        }
    }

    @Test("repairs '+' turned into a space by a form decoder, and says so")
    func repairsSpaceAsPlus() throws {
        let damaged = base64.replacingAll("+", " ")
        let decoded = try SAMLResponseDecoder().decode(damaged)
        #expect(decoded.bytes == Array(xml.utf8))
        #expect(decoded.repairs == [.spaceAsPlus])
    }

    @Test("accepts Base64 wrapped with spaces and tabs (at 64 or 76 columns, alone or with line breaks)", arguments: [64, 76])
    func acceptsWrappingSpaces(columns: Int) throws {
        let document = String(repeating: xml, count: 8)
        let encoded = Base64Text.encode(Array(document.utf8))
        #expect(encoded.contains("+"))
        for separator in [" ", "\t", " \r\n", "\r\n ", "  "] {
            var wrapped = ""
            for (index, character) in encoded.enumerated() {
                if index > 0, index % columns == 0 { wrapped += separator }
                wrapped.append(character)
            }
            let decoded = try SAMLResponseDecoder().decode(wrapped)
            #expect(decoded.bytes == Array(document.utf8), "wrapped with \(separator.debugDescription)")
            #expect(decoded.repairs.isEmpty)
            // The same inside a form body, percent-encoded as the cookbook does.
            let form = "SAMLResponse=" + wrapped.replacingAll("+", "%2B").replacingAll("/", "%2F").replacingAll("=", "%3D")
            #expect(try SAMLResponseDecoder().decode(form).bytes == Array(document.utf8))
        }
    }

    @Test("text with spaces that is Base64 of no document is refused for what it is, not as ill-formed UTF-8")
    func spacedTextThatIsNoDocument() throws {
        for text in ["hello world", "abcd efgh ijkl", "PHNhbWxw OlJlc3Bvbn"] {
            let error = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode(text) }
            #expect(error.code != .decodeNotUTF8, "\(text): \(error)")
        }
        let error = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode("hello world") }
        #expect(error.code == .decodeNotXML)
    }

    @Test("reads UTF-16 documents, raw or in Base64, as their UTF-8 form; refuses broken UTF-16 with its own code")
    func utf16Documents() throws {
        let document = #"<?xml version="1.0" encoding="UTF-16"?><r a="caf\#u{E9}">\#u{1F4FA} \#u{4E2D}</r>"#
        let utf8 = Array(document.utf8)
        func utf16(_ text: String, littleEndian: Bool, bom: Bool) -> [UInt8] {
            var bytes: [UInt8] = bom ? (littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]) : []
            for unit in text.utf16 {
                bytes += littleEndian ? [UInt8(unit & 0xFF), UInt8(unit >> 8)] : [UInt8(unit >> 8), UInt8(unit & 0xFF)]
            }
            return bytes
        }
        for (littleEndian, bom) in [(true, true), (false, true), (true, false), (false, false)] {
            let bytes = utf16(document, littleEndian: littleEndian, bom: bom)
            #expect(try SAMLResponseDecoder().decode(bytes).bytes == utf8)
            #expect(try SAMLResponseDecoder().decode(Base64Text.encode(bytes)).bytes == utf8)
        }
        let good = utf16(document, littleEndian: true, bom: true)
        let broken: [[UInt8]] = [
            good + [0x3E],  // an odd length
            good.prefix(good.count - 2) + [0x00, 0xD8],  // a high surrogate at the end
            [0xFF, 0xFE, 0x3C, 0x00, 0x00, 0xDC, 0x3E, 0x00],  // an unpaired low surrogate
            [0xFF, 0xFE, 0x3C, 0x00, 0x00, 0x00, 0x3E, 0x00],  // U+0000
            utf16(#"<?xml version="1.0" encoding="ISO-8859-1"?><r/>"#, littleEndian: true, bom: true),
        ]
        for bytes in broken {
            #expect(throws: SAMLError(.decodeNotUTF16, "")) { try SAMLResponseDecoder().decode(bytes) }
        }
    }

    @Test("repairs double URL-encoding by default and rejects it when told to")
    func handlesDoubleEncoding() throws {
        let doubled = "SAMLResponse=" + percentEncoded.replacingAll("%", "%25")
        let decoded = try SAMLResponseDecoder().decode(doubled)
        #expect(decoded.bytes == Array(xml.utf8))
        #expect(decoded.repairs == [.doubleURLEncoding])

        var options = SAMLResponseDecoder.Options()
        options.doubleEncoding = .reject
        #expect(throws: SAMLError(.decodeDoubleURLEncoded, "")) { try SAMLResponseDecoder(options: options).decode(doubled) }
    }

    @Test("reads a percent-encoded XML form value with '+' as space")
    func decodesFormEncodedXML() throws {
        let decoded = try SAMLResponseDecoder().decode("SAMLResponse=%3Ca+b%3D%22c%2Bd%22%2F%3E")
        #expect(decoded.bytes == Array("<a b=\"c+d\"/>".utf8))
    }

    @Test(
        "rejects broken input with its own code",
        arguments: [
            ("", SAMLError.Code.decodeEmpty),
            (" \r\n\t", .decodeEmpty),
            ("PHNhbWxw*nNl", .decodeInvalidBase64),
            ("PHNhbWxwOlJlc3BvbnNl==PH", .decodeInvalidBase64),
            ("PHNhbWxwOlJlc3BvbnNlP===", .decodeInvalidBase64),
            ("PHNhbWxwOlJlc3BvbnNlPv8=", .decodeNotUTF8),
            ("PHNhbWxwOlJlc3BvbnNlP", .decodeTruncatedBase64),
            ("PHNhbWxwOlJlc3BvbnNl", .decodeTruncatedXML),
            ("aGVsbG8gd29ybGQ=", .decodeNotXML),
            // Plain text that happens to be Base64 decodes to bytes that are not XML (0x85 first here).
            ("hello world", .decodeNotXML),
            ("SAMLResponse=hello+world", .decodeNotXML),
            ("SAMLResponse=%2", .decodeInvalidPercentEncoding),
            ("SAMLResponse=%zz", .decodeInvalidPercentEncoding),
            ("requestor=abc&deviceId=1", .decodeMissingField),
            ("SAMLResponse=PGE%2B&SAMLResponse=PGE%2B", .decodeDuplicateField),
            ("<a>\u{FFFD}", .decodeTruncatedXML),
            ("foo=bar", .decodeInvalidBase64),
        ]
    )
    func rejects(input: String, code: SAMLError.Code) {
        #expect(throws: SAMLError(code, "")) { try SAMLResponseDecoder().decode(input) }
    }

    @Test("decodes every length and cap exactly, and names the offset of a byte outside the alphabet")
    func everyLengthAndOffset() throws {
        // Lengths around the decoder's two-group and one-group loops and its symbol-by-symbol tail.
        var generator = SystemRandomNumberGenerator()
        for length in 2...40 {
            // What is decoded must look like XML: '<' first, '>' last.
            let middle = (2..<length).map { _ in UInt8.random(in: 0x21...0x7E, using: &generator) }
            let plain = [UInt8(ascii: "<")] + middle + [UInt8(ascii: ">")]
            let encoded = Base64Text.encode(plain)
            #expect(try SAMLResponseDecoder().decode(encoded).bytes == plain, "\(length)")
            var options = SAMLResponseDecoder.Options()
            options.maximumDecodedBytes = length
            #expect(try SAMLResponseDecoder(options: options).decode(encoded).bytes == plain, "\(length)")
            options.maximumDecodedBytes = length - 1
            #expect(throws: SAMLError(.decodeTooLarge, "")) { try SAMLResponseDecoder(options: options).decode(encoded) }
            let symbols = Array(encoded.utf8)
            // Bytes beside each range of the alphabet, and outside ASCII.
            for bad in Array("!*,-.:@[`{_~".utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF] {
                for offset in 0..<symbols.count where symbols[offset] != UInt8(ascii: "=") {
                    var damaged = symbols
                    damaged[offset] = bad
                    let error = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode(damaged) }
                    #expect(error.code == .decodeInvalidBase64)
                    #expect(error.message.contains("offset \(offset),"), "\(bad) at \(offset): \(error.message)")
                }
            }
        }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Symbol by symbol, for comparison (whole groups and padding only).
    static func referenceDecode(_ symbols: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var bits: UInt32 = 0
        var count = 0
        for symbol in symbols where symbol != UInt8(ascii: "=") {
            bits = bits << 6 | UInt32(alphabet.firstIndex(of: symbol)!)
            count += 6
            if count >= 8 {
                count -= 8
                output.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
        }
        return output
    }

    @Test("every symbol at every position of a block, every length to 200, line breaks: the bytes encoded")
    func blocksAndGroups() throws {
        var repairs: [SAMLResponseDecoder.Repair] = []
        for rotation in 0..<64 {
            let symbols = (0..<64).map { Self.alphabet[($0 + rotation) % 64] }
            let decoded = try Base64Decoding.decode(symbols, maximumBytes: 48, repairs: &repairs)
            #expect(decoded == Self.referenceDecode(symbols), "rotation \(rotation)")
        }
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let plain = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Array(Base64Text.encode(plain).utf8)
            #expect(try Base64Decoding.decode(encoded, maximumBytes: length, repairs: &repairs) == plain, "\(length)")
            // Broken into lines of 76 and of 13 symbols: blocks stop at each break and resume after it.
            for width in [76, 13] {
                var wrapped: [UInt8] = []
                for (index, symbol) in encoded.enumerated() {
                    if index > 0, index % width == 0 { wrapped += [0x0D, 0x0A] }
                    wrapped.append(symbol)
                }
                #expect(try Base64Decoding.decode(wrapped, maximumBytes: length, repairs: &repairs) == plain, "\(length)/\(width)")
            }
        }
        #expect(repairs.isEmpty)
    }

    enum PercentOutcome: Equatable {
        case bytes([UInt8])
        case refused(at: Int)
    }

    /// The byte-at-a-time decoder the run-copying one replaced (issue 28): the oracle.
    static func referencePercentDecode(_ input: [UInt8], plusAsSpace: Bool) -> PercentOutcome {
        var out: [UInt8] = []
        var i = 0
        while i < input.count {
            let byte = input[i]
            if byte == UInt8(ascii: "%") {
                guard i + 2 < input.count, let high = Hex.value(input[i + 1]), let low = Hex.value(input[i + 2]) else {
                    return .refused(at: i)
                }
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i += 1
            }
        }
        return .bytes(out)
    }

    @Test("percent-decoding: the same bytes, or the same offset refused, as a byte-at-a-time decoder, on 10,000 random inputs")
    func percentDecodingMatchesReference() {
        var generator = SystemRandomNumberGenerator()
        // Few symbols, so that escapes, '+', runs and broken escapes at every position all occur.
        let alphabet = Array("%%++2Bb4fFgZ/=A".utf8)
        for index in 0..<10_000 {
            let length = index < 64 ? index : Int.random(in: 0...300, using: &generator)
            let input = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            for plusAsSpace in [false, true] {
                let expected = Self.referencePercentDecode(input, plusAsSpace: plusAsSpace)
                let found: PercentOutcome
                do {
                    found = .bytes(try PercentDecoding.decode(input, plusAsSpace: plusAsSpace))
                } catch let error as SAMLError where error.code == .decodeInvalidPercentEncoding {
                    let message = error.message
                    let offset = message.split(separator: " ").drop { $0 != "offset" }.dropFirst().first.flatMap { Int($0.dropLast()) }
                    found = .refused(at: offset ?? -1)
                } catch {
                    found = .refused(at: -2)
                }
                #expect(found == expected, "\(String(decoding: input, as: UTF8.self)) plusAsSpace \(plusAsSpace)")
                if found != expected { return }
            }
        }
    }

    @Test("rejects XML that is not UTF-8")
    func rejectsNonUTF8XML() {
        let latin1: [UInt8] = Array("<a>".utf8) + [0xE9] + Array("</a>".utf8)
        #expect(throws: SAMLError(.decodeNotUTF8, "")) { try SAMLResponseDecoder().decode(latin1) }
        // UTF-16 is read (utf16Documents); UCS-4 is not.
        let ucs4: [UInt8] = [0xFF, 0xFE, 0x00, 0x00, 0x3C, 0x00, 0x00, 0x00, 0x3E, 0x00, 0x00, 0x00]
        #expect(throws: SAMLError.self) { try SAMLResponseDecoder().decode(ucs4) }
    }

    @Test("enforces the size caps before and after decoding")
    func enforcesSizeCaps() throws {
        var options = SAMLResponseDecoder.Options()
        options.maximumDecodedBytes = 16
        #expect(throws: SAMLError(.decodeTooLarge, "")) { try SAMLResponseDecoder(options: options).decode(base64) }
        #expect(throws: SAMLError(.decodeTooLarge, "")) { try SAMLResponseDecoder(options: options).decode(xml) }
        options = SAMLResponseDecoder.Options()
        options.maximumInputBytes = 8
        #expect(throws: SAMLError(.decodeTooLarge, "")) { try SAMLResponseDecoder(options: options).decode(base64) }
        #expect(try SAMLResponseDecoder().decode(base64).bytes.count == xml.utf8.count)
    }

    @Test("messages name what was expected and found, without echoing long input")
    func messagesAreBoundedAndSpecific() throws {
        let hostile = "SAMLResponse=%" + String(repeating: "\u{1}<script>", count: 500)
        let error = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode(hostile) }
        #expect(error.code == .decodeInvalidPercentEncoding)
        #expect(error.message.contains("expected"))
        #expect(error.message.count < 200)
        #expect(!error.message.contains("\u{1}"))
    }

    @Test("a form field is found by its decoded name, once; a missing one's message names the first eight fields")
    func formFields() throws {
        let body = Array("a=1&&device%49d=x+y&c&SAMLResponse=PGE%2B".utf8)
        #expect(try FormBody.text(named: "deviceId", in: body) == "x y")
        #expect(try FormBody.text(named: "c", in: body) == "")
        #expect(try FormBody.text(named: "b", in: body) == nil)
        #expect(throws: SAMLError(.decodeDuplicateField, "")) { try FormBody.text(named: "a", in: Array("a=1&a=2".utf8)) }
        let many = (1...12).map { "f\($0)=v" }.joined(separator: "&")
        let missing = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode(many + "&d%2Bx=1") }
        #expect(missing.code == .decodeMissingField)
        #expect(missing.message.contains("\"f1\"") && missing.message.contains("\"f8\"") && !missing.message.contains("\"f9\""))
        let decodedName = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode("d%2Bx=1&requestor=abc") }
        #expect(decodedName.message.contains("\"d+x\"") && decodedName.message.contains("\"requestor\""))
        // A name is matched decoded (a second `a` spelled `%61` is a duplicate); one that is not valid
        // percent-encoding stays as written; a quoted name stops at 32 bytes; a body of separators has none.
        #expect(throws: SAMLError(.decodeDuplicateField, "")) { try FormBody.text(named: "a", in: Array("a=1&%61=2".utf8)) }
        #expect(try FormBody.text(named: "b%zz", in: Array("b%zz=3".utf8)) == "3")
        let long = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode(String(repeating: "n", count: 100) + "=1&x=2") }
        let quoted = "\"" + String(repeating: "n", count: 32) + "\""
        #expect(long.message.contains(quoted) && !long.message.contains(String(repeating: "n", count: 33)))
        let none = try #require(throws: SAMLError.self) { try SAMLResponseDecoder().decode("&&&") }
        #expect(none.code == .decodeMissingField && none.message.hasSuffix("found no fields"))
    }

    @Test("a form field's text is stream-safe: 30 combining marks in a row read, 31 or a run of 60,000 pairs refused at once")
    func formFieldsStreamSafe() throws {
        let marks = "\u{0301}\u{0327}\u{0308}"
        let thirty = "a" + String(repeating: marks, count: 10)
        #expect(try FormBody.text(named: "mvpd", in: Array(("mvpd=" + thirty).utf8)) == thirty)
        // Real text with marks: Vietnamese, Devanagari, a flag and a family emoji.
        for text in ["Truyền hình cáp Việt Nam", "केबल टीवी", "🇫🇷 Canal+", "👨‍👩‍👧‍👦"] {
            let encoded = Array(text.utf8).map { "%" + String($0, radix: 16, uppercase: true) }.joined()
            #expect(try FormBody.text(named: "mvpd", in: Array(("mvpd=" + encoded).utf8)) == text)
        }
        for body in [
            "mvpd=a" + String(repeating: marks, count: 10) + "%CC%81",
            "requestor=REF&mvpd=a" + String(repeating: "%CC%81%CC%A7", count: 60_000),
        ] {
            let refused = try #require(throws: SAMLError.self) { try FormBody.text(named: "mvpd", in: Array(body.utf8)) }
            #expect(refused.code == .decodeNotStreamSafe && refused.message.contains("mvpd field"))
        }
        // A run split by a starter is two runs.
        let split = "mvpd=a" + String(repeating: marks, count: 10) + "b" + String(repeating: marks, count: 10)
        #expect(try FormBody.text(named: "mvpd", in: Array(split.utf8))?.unicodeScalars.count == 62)
    }
}

/// An independent Base64 encoder for the tests (the library's is package-internal).
enum Base64Text {
    static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 0x3F] : "=")
            }
            index += 3
        }
        return out
    }
}

extension String {
    func replacingAll(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for character in self {
            if character == target { out += replacement } else { out.append(character) }
        }
        return out
    }
}
