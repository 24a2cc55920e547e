import SAML

extension MVPDConfiguration {
    /// Who the configuration is for, as REST API v2 names it (`requestor {id, name, domains}`) and the
    /// device asking (`device`, from its `X-Device-Info`).
    public struct Requestor: Sendable {
        public var id: String
        public var name: String
        public var domains: [String]

        public init(id: String, name: String? = nil, domains: [String] = []) {
            self.id = id
            self.name = name ?? id
            self.domains = domains
        }
    }

    /// One MVPD as REST API v2 lists it: `id`, `displayName`, `logoUrl`, `isTempPass`, `isProxy`,
    /// `boardingStatus`, `platformMappingId`, `enablePlatformServices`, `displayInPlatformPicker`,
    /// `enforcePlatformPermissions`, and (v1) `requiredMetadataFields`. This service has no TempPass and
    /// no proxied MVPD: both flags are false.
    static func object(_ mvpd: MVPD) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            "id": .string(mvpd.id), "displayName": .string(mvpd.displayName ?? mvpd.id), "isTempPass": false, "isProxy": false,
            "enablePlatformServices": .bool(mvpd.enablePlatformServices), "displayInPlatformPicker": .bool(mvpd.displayInPlatformPicker),
            "enforcePlatformPermissions": .bool(mvpd.enforcePlatformPermissions),
            "requiredMetadataFields": .strings(mvpd.requiredMetadataFields),
        ]
        if let value = mvpd.logoUrl { object["logoUrl"] = .string(value) }
        if let value = mvpd.boardingStatus?.rawValue { object["boardingStatus"] = .string(value) }
        if let value = mvpd.platformMappingId { object["platformMappingId"] = .string(value) }
        return object
    }

    /// The REST API v2 `GET /api/v2/{serviceProvider}/configuration` answer: `requestor {id, name, domains,
    /// mvpds}`, `mvpds` again at the top level (the API page's table lists it there, its sample and the
    /// cookbook's code read `requestor.mvpds`), `device`, `clientType`, `time` (milliseconds), plus the
    /// lists an app hands to Apple's picker: `supportedAccountProviderIdentifiers`
    /// (``supportedProviderIdentifiers``) and `featuredAccountProviderIdentifiers`
    /// (``featuredProviderIdentifiers(_:)`` of `featured`). What ``decode(_:)-([UInt8])`` reads back.
    ///
    /// - Parameters:
    ///   - requestor: the service provider (id, name, domains) whose configuration this is.
    ///   - featured: the MVPD ids Apple's picker features.
    ///   - device: the answer's `device` (from the device's `X-Device-Info`).
    ///   - time: the answer's `time` (milliseconds since 1970).
    ///   - completesSSO: whether an MVPD's Apple SSO can complete here (an identity provider is
    ///     trusted for it); the picker lists leave out those that cannot, so that Apple's picker does not
    ///     offer a provider whose login would fall back anyway.
    public func json(
        requestor: Requestor, featured: [String] = [], device: String = "unknown", time: SAMLInstant = .now(),
        completesSSO: (String) -> Bool = { _ in true }
    ) -> [UInt8] {
        let list = JSONValue.array(mvpds.map { .object(Self.object($0)) })
        let supported = Set(mvpds.filter { completesSSO($0.id) }.compactMap(\.platformMappingId))
        let object: JSONValue = [
            "requestor": [
                "id": .string(requestor.id), "name": .string(requestor.name),
                "domains": .array(requestor.domains.map { ["name": .string($0), "mvpdInitiated": false] }), "mvpds": list,
            ],
            "mvpds": list, "device": .string(device), "clientType": "native", "time": .integer(time.millisecondsSinceEpoch),
            "supportedAccountProviderIdentifiers": .strings(supportedProviderIdentifiers.filter(supported.contains)),
            "featuredAccountProviderIdentifiers": .strings(featuredProviderIdentifiers(featured).filter(supported.contains)),
        ]
        return object.bytes
    }

    /// The REST API v1 `GET /api/v1/config/{requestorId}` answer in JSON: `{"requestor": {"id"}, "mvpds":
    /// {"mvpd": [...]}}`, each MVPD with the platform SSO fields the v1 page adds. What ``decode(_:)-([UInt8])`` reads back.
    public func jsonV1(requestor: String) -> [UInt8] {
        let object: JSONValue = [
            "requestor": ["id": .string(requestor)], "mvpds": ["mvpd": .array(mvpds.map { .object(Self.object($0)) })],
        ]
        return object.bytes
    }

    /// The same in XML: `<config><requestor><id/></requestor><mvpds><mvpd><id/>...<requiredMetadataFields>
    /// <field/>...</requiredMetadataFields></mvpd></mvpds></config>`. What ``decode(_:)-([UInt8])`` reads back.
    public func xmlV1(requestor: String) -> [UInt8] {
        func element(_ name: String, _ text: String) -> String { "<\(name)>\(XMLEscaping.escape(text))</\(name)>" }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><config><requestor>" + element("id", requestor) + "</requestor><mvpds>"
        for mvpd in mvpds {
            xml += "<mvpd>" + element("id", mvpd.id) + element("displayName", mvpd.displayName ?? mvpd.id)
            if let logo = mvpd.logoUrl { xml += element("logoUrl", logo) }
            xml += element("isTempPass", "false") + element("isProxy", "false")
            xml += element("enablePlatformServices", "\(mvpd.enablePlatformServices)")
            if let status = mvpd.boardingStatus?.rawValue { xml += element("boardingStatus", status) }
            xml += element("displayInPlatformPicker", "\(mvpd.displayInPlatformPicker)")
            if let mapping = mvpd.platformMappingId { xml += element("platformMappingId", mapping) }
            xml +=
                "<requiredMetadataFields>" + mvpd.requiredMetadataFields.map { element("field", $0) }.joined() + "</requiredMetadataFields>"
            xml += element("enforcePlatformPermissions", "\(mvpd.enforcePlatformPermissions)") + "</mvpd>"
        }
        return Array((xml + "</mvpds></config>").utf8)
    }
}
