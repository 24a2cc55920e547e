/// The JSON this module writes (profiles, Enhanced Error Codes, the partner-framework header, the MVPD
/// configuration): keys sorted by code point, no whitespace, `/` not escaped, non-ASCII as UTF-8.
///
/// Written by hand because `JSONSerialization` costs about 100 µs for a small profile on Linux, as much
/// as verifying the response it describes (docs/service.md); this writes the same object in about 1 µs.
public enum JSONValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null
    /// JSON already written by this type (a stored profile), embedded as it is.
    case raw([UInt8])

    /// The UTF-8 text.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .string(let text):
            Self.write(text, into: &out)
        case .integer(let value):
            out += String(value).utf8
        case .bool(let value):
            out += (value ? "true" : "false").utf8
        case .null:
            out += "null".utf8
        case .raw(let bytes):
            out += bytes
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.write(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A string with `"`, `\` and the control characters escaped (RFC 8259 section 7).
    static func write(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            case 0x08: out += #"\b"#.utf8
            case 0x0C: out += #"\f"#.utf8
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// A list of strings.
    public static func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }

    /// A string, or `null`.
    public static func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
}
