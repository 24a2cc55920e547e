import CookbookEncoding
import SAML

/// Reading JSON text (RFC 8259) into a ``JSONValue``: the headers a device sends
/// (`AP-Partner-Framework-Status`, `X-Device-Info`) are read on every Token Exchange, before anything is
/// proven. With Foundation's `JSONDecoder` the partner-framework header was 7.3% of a service request on
/// Linux; with this reader it is 0.85% (`perf`, docs/benchmarks-history.md, issue 28).
///
/// Strict where leniency would be ambiguous: one value and nothing after it but whitespace, UTF-8 only
/// (a malformed sequence or a lone surrogate escape is refused), no duplicate member names (two readers
/// could otherwise disagree on which one counts), no control characters inside strings, strings that are
/// Unicode stream-safe text (at most 30 combining characters in a row: Swift hashes and compares strings
/// by normalising them, quadratic in such a run; a 160 KB body with one such member name cost 7.8 s of
/// CPU before), at most `maxDepth` nested arrays and objects. A number is ``JSONValue/integer(_:)`` when it is an integer
/// that fits an `Int64`, otherwise ``JSONValue/raw(_:)`` holding its text as written.
extension JSONValue {
    /// Where and why text is not the JSON expected: a byte offset and what was expected there (never
    /// the text itself, which came from the caller).
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The byte offset at which reading stopped.
        public var offset: Int
        /// What was expected at `offset`.
        public var expected: String

        public init(offset: Int, expected: String) {
            self.offset = offset
            self.expected = expected
        }

        public var description: String { "expected \(expected) at offset \(offset)" }
    }

    /// Reads one JSON value from `text`.
    ///
    /// - Throws: ``ParseError`` when `text` is not exactly one JSON value, or nests deeper than `maxDepth`.
    public init(parsing text: some Collection<UInt8>, maxDepth: Int = 64) throws(ParseError) {
        let result: Result<JSONValue, ParseError> =
            text.withContiguousStorageIfAvailable { buffer in
                var reader = JSONReader(buffer, maxDepth: maxDepth)
                return Result { () throws(ParseError) in try reader.document() }
            }
            ?? Array(text).withUnsafeBufferPointer { buffer in
                var reader = JSONReader(buffer, maxDepth: maxDepth)
                return Result { () throws(ParseError) in try reader.document() }
            }
        self = try result.get()
    }
}

/// A recursive-descent reader over UTF-8 bytes.
private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func document() throws(JSONValue.ParseError) -> JSONValue {
        skipWhitespace()
        let value = try value()
        skipWhitespace()
        guard index == bytes.count else { throw failure("the end of the text") }
        return value
    }

    private func failure(_ expected: String) -> JSONValue.ParseError {
        JSONValue.ParseError(offset: index, expected: expected)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws(JSONValue.ParseError) -> JSONValue {
        guard let byte = current else { throw failure("a JSON value") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("a JSON value")
        }
    }

    /// Entering an array or an object.
    private mutating func enter() throws(JSONValue.ParseError) {
        guard depth < maxDepth else { throw failure("at most \(maxDepth) nested arrays and objects") }
        depth += 1
        index += 1
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONValue.ParseError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count,
            UnsafeBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[index..<index + count])
        else { throw failure("a JSON value") }
        index += count
        return value
    }

    private mutating func object() throws(JSONValue.ParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("a member name") }
            let nameOffset = index
            let name = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("':' after a member name") }
            index += 1
            skipWhitespace()
            let value = try value()
            guard members.updateValue(value, forKey: name) == nil else {
                throw JSONValue.ParseError(offset: nameOffset, expected: "member names that differ")
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("',' or '}' in an object")
            }
        }
    }

    private mutating func array() throws(JSONValue.ParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("',' or ']' in an array")
            }
        }
    }

    private mutating func number() throws(JSONValue.ParseError) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { throw failure("a digit") }
        if first == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        var integral = true
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard skipRequiredDigits() else { throw failure("a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard skipRequiredDigits() else { throw failure("a digit in the exponent") }
        }
        let text = bytes[start..<index]
        if integral, let value = Int64(String(decoding: text, as: UTF8.self)) { return .integer(value) }
        return .raw(Array(text))
    }

    private mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }

    private mutating func skipRequiredDigits() -> Bool {
        let start = index
        skipDigits()
        return index > start
    }

    private mutating func string() throws(JSONValue.ParseError) -> String {
        index += 1  // "
        let start = index
        // The common case: no escape, read in place.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard let string = String(validating: text, as: UTF8.self) else {
                    index = start
                    throw failure("UTF-8 text in a string")
                }
                try checkStreamSafe(text, from: start)
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("an escaped control character") }
            index += 1
        }
        var out = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: out, as: UTF8.self) else {
                    index = start
                    throw failure("UTF-8 text in a string")
                }
                try out.withUnsafeBufferPointer { text throws(JSONValue.ParseError) in try checkStreamSafe(text, from: start) }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &out)
            case 0..<0x20:
                throw failure("an escaped control character")
            default:
                out.append(byte)
                index += 1
            }
        }
        throw failure("'\"' closing a string")
    }

    /// A string's text (escapes decoded) is stream-safe; the offset given is its first character's (an
    /// escape makes the text's offsets differ from the input's).
    private func checkStreamSafe(_ text: UnsafeBufferPointer<UInt8>, from start: Int) throws(JSONValue.ParseError) {
        guard StreamSafeText.firstViolation(text) == nil else {
            throw JSONValue.ParseError(
                offset: start, expected: "at most \(StreamSafeText.maximumNonStarters) combining characters in a row in a string")
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(JSONValue.ParseError) {
        guard let byte = current else { throw failure("an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure("a low surrogate escape")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("a low surrogate escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw failure("a high surrogate before a low one")
            }
            out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            index -= 1
            throw failure("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)")
        }
    }

    private mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(bytes[index]) else { throw failure("four hex digits") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
