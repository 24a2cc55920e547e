/// How SAML attribute names become Adobe Pass user-metadata keys (`userID`, `upstreamUserID`,
/// `householdID`, `zip`, ...). No public document lists the MVPDs' names, so the mapping is configured;
/// unmapped names keep their SAML name, and `NameID` maps to `userID` unless told otherwise.
public struct UserMetadataMapping: Sendable, Hashable {
    public var keys: [String: String]

    public init(_ keys: [String: String] = [:]) {
        self.keys = keys
    }

    /// The user-metadata key of a SAML attribute name (or `NameID`).
    public func key(for samlName: String) -> String {
        if let key = keys[samlName] { return key }
        return samlName == "NameID" ? "userID" : samlName
    }
}
