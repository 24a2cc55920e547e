import AppleSSO
import Foundation
import Testing

@Suite("JSON writing")
struct JSONValueTests {
    static let values: [JSONValue] = [
        ["a": "x", "b": 1, "c": true, "d": .null, "e": ["y", -7, false], "f": ["g": [:], "h": []]],
        ["quote": "\"", "backslash": "\\", "slash": "a/b", "controls": "\n\r\t\u{08}\u{0C}\u{01}\u{1F}", "unicode": "é€😀\u{2028}"],
        [
            "profiles": [
                "MVPD-A": ["notBefore": 1_795_000_000_000, "attributes": ["zip": ["value": ["10001", "10002"], "state": "plain"]]]
            ]
        ],
        .array([]), .string(""), .integer(Int64.min), .integer(Int64.max),
    ]

    @Test("what it writes, JSONSerialization reads back as the same value", arguments: values)
    func roundTrip(value: JSONValue) throws {
        let parsed = try JSONSerialization.jsonObject(with: Data(value.bytes), options: [.fragmentsAllowed])
        #expect(Self.value(parsed) == value)
    }

    @Test("the same bytes as JSONSerialization with sorted keys and unescaped slashes, for lower-case keys")
    func sameBytesAsFoundation() throws {
        let value: JSONValue = [
            "profiles": [
                "mvpd": [
                    "issuer": "Apple", "notafter": 2, "type": "app/sso", "attributes": ["userid": ["state": "plain", "value": "u \"1\""]],
                ]
            ]
        ]
        let foundation = try JSONSerialization.data(
            withJSONObject: try JSONSerialization.jsonObject(with: Data(value.bytes)), options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(value.bytes == Array(foundation))
    }

    @Test("keys are sorted by code point, control characters escaped as \\u00xx")
    func exactText() {
        let value: JSONValue = ["b": 1, "B": 2, "a": "\u{01}/"]
        #expect(String(decoding: value.bytes, as: UTF8.self) == #"{"B":2,"a":"\u0001/","b":1}"#)
    }

    /// JSONSerialization's objects as a `JSONValue` (numbers as integers: the values above have no fractions).
    static func value(_ object: Any) -> JSONValue? {
        switch object {
        case let text as String: return .string(text)
        case let number as NSNumber:
            if isBoolean(number) { return .bool(number.boolValue) }
            return .integer(number.int64Value)
        case is NSNull: return .null
        case let list as [Any]:
            let values = list.compactMap(value)
            return values.count == list.count ? .array(values) : nil
        case let dictionary as [String: Any]:
            var members: [String: JSONValue] = [:]
            for (key, member) in dictionary {
                guard let converted = value(member) else { return nil }
                members[key] = converted
            }
            return .object(members)
        default: return nil
        }
    }

    /// Whether an NSNumber from JSONSerialization is a boolean.
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c" || type(of: number) == type(of: NSNumber(value: true))
    }
}
