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
    /// `NameID` means the subject's NameID. Other names match an Attribute's `Name`, and only its `Name`:
    /// SAML Core 2.7.3.1 says `FriendlyName` must not be used for processing (two IdPs may give the same
    /// FriendlyName to different attributes). A name found only as a FriendlyName is missing, and the
    /// error names the `Name` to ask for instead. A multi-valued attribute keeps every value, in order. An
    /// AttributeValue holding a `saml:NameID` gives that NameID's value. A field whose values are all empty
    /// (or `xsi:nil`) is missing: an empty value never satisfies a required field.
    ///
    /// - Throws: ``SAMLError/Code/fieldsMissing`` listing every missing name, unless `allowMissing` is
    ///   true, in which case ``RequiredFields/missing`` lists them.
    public func fields(_ names: [String], allowMissing: Bool = false) throws -> RequiredFields {
        let attributes = assertion.attributes
        // Each asked-for name's first attribute by Name (-1: none), in one pass over the attributes. A
        // configuration asks for a few names: each attribute's Name is compared with them in turn, without
        // hashing. A long list is hashed instead, so that the pass stays linear in the attributes.
        var first = [Int](repeating: -1, count: names.count)
        var unmatched = names.count { $0 != "NameID" }
        if names.count <= 16 {
            for (index, attribute) in attributes.enumerated() where unmatched > 0 {
                for slot in names.indices where first[slot] < 0 && names[slot] == attribute.name && names[slot] != "NameID" {
                    first[slot] = index
                    unmatched -= 1
                }
            }
        } else {
            var byName = [String: Int](minimumCapacity: names.count)
            for name in names where name != "NameID" { byName[name] = -1 }
            unmatched = byName.count
            for (index, attribute) in attributes.enumerated() where unmatched > 0 {
                guard let slot = byName.index(forKey: attribute.name), byName.values[slot] < 0 else { continue }
                byName.values[slot] = index
                unmatched -= 1
            }
            for slot in names.indices { first[slot] = byName[names[slot]] ?? -1 }
        }
        var found: [(name: String, values: [String])] = []
        found.reserveCapacity(names.count)
        var missing: [String] = []
        for (slot, name) in names.enumerated() {
            if let values = values(of: name, at: first[slot]) {
                found.append((name, values))
            } else {
                missing.append(name)
            }
        }
        if !missing.isEmpty, !allowMissing {
            let list = missing.prefix(16).map { SAMLError.quote($0) }.joined(separator: ", ")
            // Where a missing name is some attribute's FriendlyName, say which Name to ask for.
            let hints = missing.prefix(16).compactMap { name -> String? in
                guard let attribute = attributes.first(where: { $0.friendlyName == name && $0.name != name }) else { return nil }
                return
                    "\(SAMLError.quote(name)) is only the FriendlyName of the attribute \(SAMLError.quote(attribute.name)): ask for that Name"
            }
            throw SAMLError(
                .fieldsMissing,
                "expected the required fields, found none for \(list)"
                    + (hints.isEmpty ? "" : " (\(hints.joined(separator: "; ")); FriendlyName is never used, SAML Core 2.7.3.1)"))
        }
        return RequiredFields(values: found, missing: missing)
    }

    /// The values of `name`, found at `index` of the attributes (-1: none), or nil when it is missing.
    private func values(of name: String, at index: Int) -> [String]? {
        if name == "NameID" {
            guard let nameID = assertion.nameID, !nameID.value.isEmpty else { return nil }
            return [nameID.value]
        }
        guard index >= 0 else { return nil }
        let attribute = assertion.attributes[index]
        guard attribute.attributeValues.contains(where: { !$0.isEmpty }) else { return nil }
        return attribute.values
    }
}
