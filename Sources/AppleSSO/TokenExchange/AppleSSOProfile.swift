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

    init(
        mvpd: String, response: VerifiedResponse, fields: RequiredFields, mapping: UserMetadataMapping, notBefore: SAMLInstant,
        notAfter: SAMLInstant
    ) {
        self.mvpd = mvpd
        self.response = response
        self.notBefore = notBefore.millisecondsSinceEpoch
        self.notAfter = notAfter.millisecondsSinceEpoch
        attributes = fields.values.map { (mapping.key(for: $0.name), $0.values) }
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
        JSONValue.object(["profiles": .object([mvpd: object])]).bytes
    }

    /// ``json`` as text.
    public var jsonText: String { String(decoding: json, as: UTF8.self) }
}
