import SAML

/// One MVPD (TV provider) of an Adobe Pass service's configuration, with the fields Apple SSO uses.
public struct MVPD: Sendable, Hashable {
    /// The service's MVPD id.
    public var id: String
    public var displayName: String?
    /// Where the MVPD's logo is downloaded from.
    public var logoUrl: String?
    /// Whether the MVPD is integrated through platform SSO.
    public var enablePlatformServices: Bool
    /// Apple SSO boarding: `SUPPORTED`, `PICKER`, or absent (no Apple SSO).
    public var boardingStatus: BoardingStatus?
    /// Whether Apple's picker shows the MVPD.
    public var displayInPlatformPicker: Bool
    /// The MVPD's id as Apple knows it (VSA `accountProviderIdentifier`).
    public var platformMappingId: String?
    /// SAML attribute names (and `NameID`) the MVPD's response must carry.
    public var requiredMetadataFields: [String]
    /// (v2) Whether the user's Allow/Deny of TV-provider access must be respected.
    public var enforcePlatformPermissions: Bool
    /// Which resources its subscribers may watch (the `authorization` member, this project's extension:
    /// ``ResourcePolicy``); nil: none, every decision is a `Deny`. Never written into the configuration
    /// answers.
    public var authorization: ResourcePolicy?

    public init(
        id: String, displayName: String? = nil, enablePlatformServices: Bool = false, boardingStatus: BoardingStatus? = nil,
        displayInPlatformPicker: Bool = false, platformMappingId: String? = nil, requiredMetadataFields: [String] = [],
        enforcePlatformPermissions: Bool = false, logoUrl: String? = nil
    ) {
        self.id = id
        self.logoUrl = logoUrl
        self.displayName = displayName
        self.enablePlatformServices = enablePlatformServices
        self.boardingStatus = boardingStatus
        self.displayInPlatformPicker = displayInPlatformPicker
        self.platformMappingId = platformMappingId
        self.requiredMetadataFields = requiredMetadataFields
        self.enforcePlatformPermissions = enforcePlatformPermissions
    }

    /// Shown in Apple's picker: platform services enabled and displayed in the picker.
    public var isSupportedInPicker: Bool { enablePlatformServices && displayInPlatformPicker }
}

/// `boardingStatus`. Values other than the two documented ones are kept as they came.
public struct BoardingStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Full Apple SSO.
    public static let supported = BoardingStatus(rawValue: "SUPPORTED")
    /// Shown in Apple's picker; authentication is done by the service.
    public static let picker = BoardingStatus(rawValue: "PICKER")

    public var description: String { rawValue }
}

/// The MVPD list of a service provider's configuration (v1 `/api/v1/config/{requestorId}`, XML or JSON;
/// v2 `/api/v2/{serviceProvider}/configuration`, JSON).
public struct MVPDConfiguration: Sendable, Hashable {
    public var mvpds: [MVPD]

    public init(mvpds: [MVPD]) {
        self.mvpds = mvpds
    }

    /// The MVPD with this service id (the same bytes: a request's value is compared with every MVPD's,
    /// and Swift's `==` normalises, quadratic in a run of combining marks).
    public func mvpd(id: String) -> MVPD? {
        mvpds.first { $0.id.hasSameBytes(as: id) }
    }

    /// The MVPD Apple knows by this provider identifier (`platformMappingId`, the same bytes).
    public func mvpd(platformMappingId: String) -> MVPD? {
        mvpds.first { $0.platformMappingId?.hasSameBytes(as: platformMappingId) == true }
    }

    /// `supportedAccountProviderIdentifiers` for Apple's picker: the `platformMappingId` of every MVPD
    /// with `enablePlatformServices` and `displayInPlatformPicker`, in configuration order. (The docs give
    /// no rule; this is the natural one.)
    public var supportedProviderIdentifiers: [String] {
        mvpds.filter(\.isSupportedInPicker).compactMap(\.platformMappingId)
    }

    /// `featuredAccountProviderIdentifiers`: the caller's ordered choice of MVPD ids, kept in that order,
    /// limited to supported MVPDs, as `platformMappingId`s.
    public func featuredProviderIdentifiers(_ mvpdIDs: [String]) -> [String] {
        mvpdIDs.compactMap { id in mvpd(id: id).flatMap { $0.isSupportedInPicker ? $0.platformMappingId : nil } }
    }
}
