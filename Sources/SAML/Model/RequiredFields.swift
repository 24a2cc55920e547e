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
        var found: [(name: String, values: [String])] = []
        var missing: [String] = []
        for name in names {
            if let values = values(of: name) {
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

    private func values(of name: String) -> [String]? {
        if name == "NameID" {
            guard let nameID = assertion.nameID, !nameID.value.isEmpty else { return nil }
            return [nameID.value]
        }
        let attribute = assertion.attributes.first { $0.name == name } ?? assertion.attributes.first { $0.friendlyName == name }
        guard let attribute, attribute.attributeValues.contains(where: { !$0.isEmpty }) else { return nil }
        return attribute.values
    }
}
