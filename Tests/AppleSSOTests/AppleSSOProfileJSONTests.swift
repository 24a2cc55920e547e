import Foundation
import Testing

@testable import AppleSSO

/// The profile's text is written straight to bytes (issue 28); the general JSON writer, over the
/// dictionaries the profile used to be built from, is the oracle it must match byte for byte.
@Suite("appleSSO profile JSON")
struct AppleSSOProfileJSONTests {
    typealias Attributes = [(key: String, values: [String])]

    static let cases: [Attributes] = [
        [],
        [("upstreamUserID", ["u-1"])],
        [("zip", ["10001", "10002"]), ("householdID", ["hh-1"]), ("upstreamUserID", ["u-1"])],
        // A repeated key keeps its last values, wherever the repeats are.
        [("zip", ["1"]), ("a", ["x"]), ("zip", ["2", "3"]), ("a", ["y"]), ("zip", ["4"])],
        // No values, and keys that sort by code point (upper case before lower, prefixes first, UTF-8).
        [("b", []), ("B", ["v"]), ("ab", ["w"]), ("a", ["z"]), ("é", ["e"]), ("z", ["é€😀"])],
        // Canonically equivalent spellings are one key, as in a dictionary: the first spelling, the
        // last values, wherever the other spelling sorts.
        [("é", ["1"]), ("e\u{301}", ["2"])],
        [("e\u{301}", ["1"]), ("é", ["2"])],
        [("é", ["1"]), ("f", ["x"]), ("e\u{301}", ["2"])],
        // Escaping in keys and values.
        [("quote\"key", ["\"", "\\", "a/b"]), ("controls", ["\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F}"]), ("", [""])],
    ]

    static func oracle(notBefore: Int64, notAfter: Int64, attributes: Attributes) -> [UInt8] {
        var object: [String: JSONValue] = [:]
        for (key, values) in attributes {
            object[key] = ["value": values.count == 1 ? .string(values[0]) : .strings(values), "state": "plain"]
        }
        let profile: JSONValue = [
            "notBefore": .integer(notBefore), "notAfter": .integer(notAfter), "issuer": "Apple", "type": "appleSSO",
            "attributes": .object(object),
        ]
        return profile.bytes
    }

    @Test("the same bytes as the dictionaries written by JSONValue", arguments: cases.indices)
    func matchesOracle(index: Int) {
        let attributes = Self.cases[index]
        for (notBefore, notAfter) in [(Int64(1_795_262_460_000), Int64(1_797_854_460_000)), (0, -1), (Int64.min, Int64.max)] {
            let written = AppleSSOProfile.write(notBefore: notBefore, notAfter: notAfter, attributes: attributes)
            #expect(written == Self.oracle(notBefore: notBefore, notAfter: notAfter, attributes: attributes))
        }
    }

    @Test("an exchange's profile: its object text and its answer are the JSONValue ones")
    func exchangeProfile() async throws {
        let body = TokenExchangeTests.deviceBody(try TokenExchangeTests.file("responses/typical-rsa2048-assertion-signed.xml"))
        let result = try await TokenExchangeTests.exchange().result(
            body: body, partnerFrameworkStatus: TokenExchangeTests.granted.headerValue)
        let profile = try result.get()
        #expect(!profile.attributes.isEmpty)
        #expect(profile.objectJSON == profile.object.bytes)
        #expect(profile.json == JSONValue.object(["profiles": .object([profile.mvpd: profile.object])]).bytes)
    }
}
