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
    /// Whether the state store kept it with the login, in the same step (a ``SAML/SAMLAttachingStateStore``
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
    /// point, a repeated attribute key keeping its last values), without building its dictionaries: this
    /// runs on every accepted login, and the dictionaries and their sorting cost about 2% of a request on
    /// one core (issue 28).
    static func write(notBefore: Int64, notAfter: Int64, attributes: [(key: String, values: [String])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + attributes.reduce(0) { $0 + $1.key.utf8.count + $1.values.reduce(16) { $0 + $1.utf8.count + 3 } })
        out += #"{"attributes":{"#.utf8
        // Sorted by key, then by position: the last of each run of equal keys is the one kept.
        let order = attributes.indices.sorted { left, right in
            let (a, b) = (attributes[left].key.utf8, attributes[right].key.utf8)
            return a.elementsEqual(b) ? left < right : a.lexicographicallyPrecedes(b)
        }
        var first = true
        for (position, index) in order.enumerated() {
            if position + 1 < order.count, attributes[order[position + 1]].key == attributes[index].key { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.write(attributes[index].key, into: &out)
            out += #":{"state":"plain","value":"#.utf8
            let values = attributes[index].values
            if values.count == 1 {
                JSONValue.write(values[0], into: &out)
            } else {
                out.append(UInt8(ascii: "["))
                for (offset, value) in values.enumerated() {
                    if offset > 0 { out.append(UInt8(ascii: ",")) }
                    JSONValue.write(value, into: &out)
                }
                out.append(UInt8(ascii: "]"))
            }
            out.append(UInt8(ascii: "}"))
        }
        out += #"},"issuer":"Apple","notAfter":"#.utf8
        out += String(notAfter).utf8
        out += #","notBefore":"#.utf8
        out += String(notBefore).utf8
        out += #","type":"appleSSO"}"#.utf8
        return out
    }

    /// The profile object (`{"notBefore", "notAfter", "issuer": "Apple", "type": "appleSSO", "attributes"}`).
    public var object: JSONValue {
        var attributeObject: [String: JSONValue] = [:]
        for (key, values) in attributes {
            attributeObject[key] = ["value": values.count == 1 ? .string(values[0]) : .strings(values), "state": "plain"]
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
