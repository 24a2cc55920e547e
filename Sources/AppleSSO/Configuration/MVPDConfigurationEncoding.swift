import Foundation

extension MVPDConfiguration {
    /// The v2 `GET /api/v2/{serviceProvider}/configuration` answer: `{"id", "mvpds": [...]}` with every
    /// field of ``MVPD`` (absent optionals left out), plus the lists an app hands to Apple's picker:
    /// `supportedAccountProviderIdentifiers` (``supportedProviderIdentifiers``) and
    /// `featuredAccountProviderIdentifiers` (``featuredProviderIdentifiers(_:)`` of `featured`). What
    /// ``decode(_:)`` reads back.
    public func json(serviceProvider: String, featured: [String] = []) -> [UInt8] {
        let list: [[String: Any]] = mvpds.map { mvpd in
            var object: [String: Any] = [
                "id": mvpd.id, "enablePlatformServices": mvpd.enablePlatformServices,
                "displayInPlatformPicker": mvpd.displayInPlatformPicker, "requiredMetadataFields": mvpd.requiredMetadataFields,
                "enforcePlatformPermissions": mvpd.enforcePlatformPermissions,
            ]
            object["displayName"] = mvpd.displayName
            object["boardingStatus"] = mvpd.boardingStatus?.rawValue
            object["platformMappingId"] = mvpd.platformMappingId
            return object
        }
        let object: [String: Any] = [
            "id": serviceProvider, "mvpds": list,
            "supportedAccountProviderIdentifiers": supportedProviderIdentifiers,
            "featuredAccountProviderIdentifiers": featuredProviderIdentifiers(featured),
        ]
        // Strings, booleans, arrays and dictionaries only: serialisation cannot fail.
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }
}
