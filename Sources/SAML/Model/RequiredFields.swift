/// The values of an MVPD's `requiredMetadataFields` (SAML attribute names, and `NameID`).
public struct RequiredFields: Sendable, Hashable {
    /// Each found field with its values, in the order asked for.
    public let values: [(name: String, values: [String])]
    /// The names that were asked for and not found, in the order asked for.
    public let missing: [String]

    public subscript(name: String) -> [String]? {
        values.first { $0.name == name }?.values
    }

    public static func == (lhs: RequiredFields, rhs: RequiredFields) -> Bool {
        lhs.missing == rhs.missing && lhs.values.map(\.name) == rhs.values.map(\.name)
            && lhs.values.map(\.values) == rhs.values.map(\.values)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(missing)
        for (name, values) in values {
            hasher.combine(name)
            hasher.combine(values)
        }
    }
}

extension VerifiedResponse {
    /// The values of `names` as `requiredMetadataFields` / `attributesNames` carry them.
    ///
    /// `NameID` means the subject's NameID. Other names match an Attribute's `Name` first, then its
    /// `FriendlyName`. A multi-valued attribute keeps every value, in order. A field whose values are all
    /// empty (or `xsi:nil`) is missing: an empty value never satisfies a required field.
    ///
    /// - Throws: ``SAMLError/Code/fieldsMissing`` listing every missing name, unless `allowMissing` is
    ///   true, in which case ``RequiredFields/missing`` lists them.
    public func fields(_ names: [String], allowMissing: Bool = false) throws -> RequiredFields {
        // The first attribute of each Name and of each FriendlyName, found in one pass (a lookup per name
        // would be quadratic in the attributes when every one is asked for).
        var byName: [String: Int] = [:]
        var byFriendlyName: [String: Int] = [:]
        for (index, attribute) in assertion.attributes.enumerated() {
            if byName[attribute.name] == nil { byName[attribute.name] = index }
            if let friendlyName = attribute.friendlyName, byFriendlyName[friendlyName] == nil { byFriendlyName[friendlyName] = index }
        }
        var found: [(name: String, values: [String])] = []
        var missing: [String] = []
        for name in names {
            if let values = values(of: name, byName: byName, byFriendlyName: byFriendlyName) {
                found.append((name, values))
            } else {
                missing.append(name)
            }
        }
        if !missing.isEmpty, !allowMissing {
            let list = missing.prefix(16).map { SAMLError.quote($0) }.joined(separator: ", ")
            throw SAMLError(.fieldsMissing, "expected the required fields, found none for \(list)")
        }
        return RequiredFields(values: found, missing: missing)
    }

    private func values(of name: String, byName: [String: Int], byFriendlyName: [String: Int]) -> [String]? {
        if name == "NameID" {
            guard let nameID = assertion.nameID, !nameID.value.isEmpty else { return nil }
            return [nameID.value]
        }
        guard let index = byName[name] ?? byFriendlyName[name] else { return nil }
        let attribute = assertion.attributes[index]
        guard attribute.attributeValues.contains(where: { !$0.isEmpty }) else { return nil }
        return attribute.values
    }
}
