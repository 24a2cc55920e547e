extension MVPDConfiguration {
    /// The v2 `GET /api/v2/{serviceProvider}/configuration` answer: `{"id", "mvpds": [...]}` with every
    /// field of ``MVPD`` (absent optionals left out), plus the lists an app hands to Apple's picker:
    /// `supportedAccountProviderIdentifiers` (``supportedProviderIdentifiers``) and
    /// `featuredAccountProviderIdentifiers` (``featuredProviderIdentifiers(_:)`` of `featured`). What
    /// ``decode(_:)`` reads back.
    public func json(serviceProvider: String, featured: [String] = []) -> [UInt8] {
        let list: [JSONValue] = mvpds.map { mvpd in
            var object: [String: JSONValue] = [
                "id": .string(mvpd.id), "enablePlatformServices": .bool(mvpd.enablePlatformServices),
                "displayInPlatformPicker": .bool(mvpd.displayInPlatformPicker),
                "requiredMetadataFields": .strings(mvpd.requiredMetadataFields),
                "enforcePlatformPermissions": .bool(mvpd.enforcePlatformPermissions),
            ]
            if let value = mvpd.displayName { object["displayName"] = .string(value) }
            if let value = mvpd.boardingStatus?.rawValue { object["boardingStatus"] = .string(value) }
            if let value = mvpd.platformMappingId { object["platformMappingId"] = .string(value) }
            return .object(object)
        }
        let object: JSONValue = [
            "id": .string(serviceProvider), "mvpds": .array(list),
            "supportedAccountProviderIdentifiers": .strings(supportedProviderIdentifiers),
            "featuredAccountProviderIdentifiers": .strings(featuredProviderIdentifiers(featured)),
        ]
        return object.bytes
    }
}
