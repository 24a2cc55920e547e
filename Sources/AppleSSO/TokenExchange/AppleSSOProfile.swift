import Foundation
import SAML
import Synchronization

/// The v2 `appleSSO` profile: `{"profiles": {"<mvpd>": {"notBefore", "notAfter", "issuer": "Apple",
/// "type": "appleSSO", "attributes": {"<key>": {"value", "state": "plain"}}}}}`.
public struct AppleSSOProfile: Sendable {
    public let mvpd: String
    /// When the exchange happened, in milliseconds.
    public let notBefore: Int64
    /// `notBefore` plus the MVPD's authentication TTL (``TokenExchange/authenticationTTLs``), in milliseconds.
    public let notAfter: Int64
    /// User-metadata key → values (one value is written as a string, several as an array).
    public let attributes: [(key: String, values: [String])]
    /// The verified response it came from.
    public let response: VerifiedResponse
    /// Whether the state store kept it with the login, in the same step (a `SAMLAttachingStateStore`
    /// given a caller); otherwise the caller keeps it (``ProfileStore/save(_:)``).
    public internal(set) var isStored = false
    /// ``object`` as JSON text, written once: the answer (``json``) and the stored profile both carry it.
    public let objectJSON: [UInt8]

    init(
        mvpd: String, response: VerifiedResponse, fields: RequiredFields, mapping: UserMetadataMapping, notBefore: SAMLInstant,
        notAfter: SAMLInstant
    ) {
        self.mvpd = mvpd
        self.response = response
        self.notBefore = notBefore.millisecondsSinceEpoch
        self.notAfter = notAfter.millisecondsSinceEpoch
        attributes = fields.values.map { (mapping.key(for: $0.name), $0.values) }
        objectJSON = Self.write(notBefore: self.notBefore, notAfter: self.notAfter, attributes: attributes)
    }

    /// ``object``'s text written straight to bytes, the same bytes as `object.bytes` (keys sorted by code
    /// point, a repeated attribute key keeping its first spelling and its last values), without building its
    /// `JSONValue` dictionaries: this
    /// runs on every accepted login, and the dictionaries and their sorting cost about 2% of a request on
    /// one core (issue 28).
    static func write(notBefore: Int64, notAfter: Int64, attributes: [(key: String, values: [String])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + attributes.reduce(0) { $0 + $1.key.utf8.count + $1.values.reduce(16) { $0 + $1.utf8.count + 3 } })
        out += #"{"attributes":{"#.utf8
        // One member per key as a dictionary counts keys (canonically equivalent spellings are one key):
        // the first spelling, the last values; then sorted by the spelling's UTF-8.
        var members: [(key: String, values: [String])] = []
        var position: [String: Int] = [:]
        members.reserveCapacity(attributes.count)
        for (key, values) in attributes {
            if let index = position[key] {
                members[index].values = values
            } else {
                position[key] = members.count
                members.append((key, values))
            }
        }
        members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.write(member.key, into: &out)
            out += #":{"state":"plain","value":"#.utf8
            Self.value(member.values).write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out += #"},"issuer":"Apple","notAfter":"#.utf8
        out += String(notAfter).utf8
        out += #","notBefore":"#.utf8
        out += String(notBefore).utf8
        out += #","type":"appleSSO"}"#.utf8
        return out
    }

    /// An attribute's `value`: one value as a string, several (or none) as an array.
    static func value(_ values: [String]) -> JSONValue {
        values.count == 1 ? .string(values[0]) : .strings(values)
    }

    /// The profile object (`{"notBefore", "notAfter", "issuer": "Apple", "type": "appleSSO", "attributes"}`).
    public var object: JSONValue {
        var attributeObject: [String: JSONValue] = [:]
        for (key, values) in attributes {
            attributeObject[key] = ["value": Self.value(values), "state": "plain"]
        }
        return [
            "notBefore": .integer(notBefore), "notAfter": .integer(notAfter), "issuer": "Apple", "type": "appleSSO",
            "attributes": .object(attributeObject),
        ]
    }

    /// The JSON body of the `201 Created` answer: `{"profiles": {"<mvpd>": object}}`.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(objectJSON.count + mvpd.utf8.count + 20)
        out += #"{"profiles":{"#.utf8
        JSONValue.write(mvpd, into: &out)
        out.append(UInt8(ascii: ":"))
        out += objectJSON
        out += "}}".utf8
        return out
    }

    /// ``json`` as text.
    public var jsonText: String { String(decoding: json, as: UTF8.self) }
}
