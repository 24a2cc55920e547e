import SAML

/// Which resources an MVPD's subscribers may watch, from the MVPD's `authorization` member in the MVPD
/// configuration (JSON; this project's extension of Adobe Pass's format, docs/mvpd-configuration.md):
///
/// ```json
/// "authorization": {"allow": "all"}
/// "authorization": {"allow": ["REF30", "news"]}
/// "authorization": {"attribute": "channels", "separator": ","}
/// "authorization": {"allow": ["trailers"], "attribute": "channels"}
/// ```
///
/// A resource is permitted when the policy allows every resource (`"allow": "all"`), lists it (`"allow"`
/// as an array), or when the profile's attribute `attribute` (a value the MVPD signed, under its
/// user-metadata key) holds it: one of its values, each split at `separator` when one is given. Resources
/// are compared byte for byte as UTF-8 (an MRSS document is not parsed). An MVPD without the member permits
/// nothing: decisions fail closed until the operator says what its subscribers may watch.
public struct ResourcePolicy: Sendable, Hashable {
    /// Every resource, for any valid profile of the MVPD.
    public var allowsEverything: Bool
    /// Resources every subscriber of the MVPD may watch.
    public var resources: Set<String>
    /// The profile attribute (user-metadata key) listing the resources a subscriber may watch.
    public var attribute: String?
    /// Splits each value of ``attribute`` (`","` for `"HBO,ESPN"`); nil: each value is one resource.
    public var separator: String?

    public init(allowsEverything: Bool = false, resources: Set<String> = [], attribute: String? = nil, separator: String? = nil) {
        self.allowsEverything = allowsEverything
        self.resources = resources
        self.attribute = attribute
        self.separator = separator
    }

    /// Whether a subscriber whose profile holds `attributes` may watch `resource`.
    public func permits(_ resource: String, attributes: [String: [String]]) -> Bool {
        // Byte for byte: Swift's `==` would take a resource written in another Unicode normalisation form
        // (another id to a content server) for a listed one.
        func same(_ a: some StringProtocol, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
        if allowsEverything || resources.contains(where: { same($0, resource) }) { return true }
        guard let attribute, let values = attributes[attribute] else { return false }
        for value in values {
            if let separator, !separator.isEmpty {
                if value.split(separator: separator).contains(where: { same($0.trimmingSpaces, resource) }) { return true }
            } else if same(value, resource) {
                return true
            }
        }
        return false
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}

extension ResourcePolicy {
    /// The `authorization` member as the configuration decoder found it (a JSON object).
    init(member value: Any, position: String) throws {
        guard let object = value as? [String: Any] else {
            throw SAMLError(.mvpdConfigurationInvalidField, "expected \(position).authorization to be an object")
        }
        let known: Set<String> = ["allow", "attribute", "separator"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            // A misspelt member would silently permit less (or, read loosely, more): refused.
            throw SAMLError(
                .mvpdConfigurationInvalidField,
                "expected \(position).authorization's members among allow, attribute, separator, found \(unknown.debugDescription)")
        }
        self.init()
        switch object["allow"] {
        case nil: break
        case let all as String where all == "all": allowsEverything = true
        case let list as [Any]:
            for entry in list {
                guard let resource = entry as? String, !resource.isEmpty else {
                    throw SAMLError(
                        .mvpdConfigurationInvalidField, "expected \(position).authorization.allow to be \"all\" or an array of resource ids"
                    )
                }
                resources.insert(resource)
            }
        default:
            throw SAMLError(
                .mvpdConfigurationInvalidField, "expected \(position).authorization.allow to be \"all\" or an array of resource ids")
        }
        if let name = object["attribute"] {
            guard let name = name as? String, !name.isEmpty else {
                throw SAMLError(.mvpdConfigurationInvalidField, "expected \(position).authorization.attribute to be an attribute name")
            }
            attribute = name
        }
        if let separator = object["separator"] {
            guard let separator = separator as? String, !separator.isEmpty, attribute != nil else {
                throw SAMLError(
                    .mvpdConfigurationInvalidField,
                    "expected \(position).authorization.separator to be a non-empty string beside an attribute")
            }
            self.separator = separator
        }
    }
}
