import Foundation

extension AppleSSOClient {
    /// One MVPD of the service's configuration, as REST API v2 (`mvpds`, or `requestor.mvpds`) and v1
    /// (`mvpds.mvpd`) list it: what the app needs to decide on single sign-on. Unknown members are ignored.
    public struct MVPD: Sendable, Hashable, Decodable {
        public var id: String
        public var displayName: String?
        /// The MVPD is integrated through platform single sign-on.
        public var enablePlatformServices: Bool
        /// `SUPPORTED` (Apple SSO end to end), `PICKER` (in Apple's picker, authenticated by the regular
        /// flow), or absent (no Apple SSO).
        public var boardingStatus: String?
        public var displayInPlatformPicker: Bool
        /// The provider's identifier at Apple (`accountProviderIdentifier`).
        public var platformMappingId: String?
        /// The SAML attributes the service asks the provider for (v1; v2 sends them with each request).
        public var requiredMetadataFields: [String]

        /// Apple SSO completes for this MVPD: integrated and boarded as `SUPPORTED`.
        public var completesSingleSignOn: Bool { enablePlatformServices && boardingStatus == "SUPPORTED" }

        public init(
            id: String, displayName: String? = nil, enablePlatformServices: Bool, boardingStatus: String?, displayInPlatformPicker: Bool,
            platformMappingId: String?, requiredMetadataFields: [String] = []
        ) {
            self.id = id
            self.displayName = displayName
            self.enablePlatformServices = enablePlatformServices
            self.boardingStatus = boardingStatus
            self.displayInPlatformPicker = displayInPlatformPicker
            self.platformMappingId = platformMappingId
            self.requiredMetadataFields = requiredMetadataFields
        }

        private enum Keys: String, CodingKey {
            case id, displayName, enablePlatformServices, boardingStatus, displayInPlatformPicker, platformMappingId, requiredMetadataFields
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            id = try container.decode(String.self, forKey: .id)
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
            enablePlatformServices = try container.decodeIfPresent(Bool.self, forKey: .enablePlatformServices) ?? false
            boardingStatus = try container.decodeIfPresent(String.self, forKey: .boardingStatus)
            displayInPlatformPicker = try container.decodeIfPresent(Bool.self, forKey: .displayInPlatformPicker) ?? false
            platformMappingId = try container.decodeIfPresent(String.self, forKey: .platformMappingId)
            requiredMetadataFields = try container.decodeIfPresent([String].self, forKey: .requiredMetadataFields) ?? []
        }
    }

    /// The service's configuration answer, read leniently: the MVPDs at the top level, under `requestor`, or
    /// (v1) under `mvpds.mvpd`; the picker's lists when the service gives them, derived otherwise.
    public struct Configuration: Sendable, Hashable, Decodable {
        public var mvpds: [MVPD]
        /// `supportedAccountProviderIdentifiers` for Apple's picker: as the service lists them, else the
        /// `platformMappingId` of every MVPD integrated and shown in the picker.
        public var supportedProviderIdentifiers: [String]
        /// `featuredAccountProviderIdentifiers`: as the service lists them, else none.
        public var featuredProviderIdentifiers: [String]

        public init(mvpds: [MVPD], supportedProviderIdentifiers: [String]? = nil, featuredProviderIdentifiers: [String] = []) {
            self.mvpds = mvpds
            self.supportedProviderIdentifiers =
                supportedProviderIdentifiers
                ?? mvpds.filter { $0.enablePlatformServices && $0.displayInPlatformPicker }.compactMap(\.platformMappingId)
            self.featuredProviderIdentifiers = featuredProviderIdentifiers
        }

        /// The MVPD Apple knows as `providerIdentifier`.
        public func mvpd(providerIdentifier: String) -> MVPD? {
            mvpds.first { $0.platformMappingId == providerIdentifier }
        }

        private enum Keys: String, CodingKey {
            case mvpds, requestor, supportedAccountProviderIdentifiers, featuredAccountProviderIdentifiers
        }
        private enum V1Keys: String, CodingKey { case mvpd }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            func list(_ container: KeyedDecodingContainer<Keys>) throws -> [MVPD]? {
                guard container.contains(.mvpds) else { return nil }
                if let list = try? container.decode([MVPD].self, forKey: .mvpds) { return list }
                return try container.nestedContainer(keyedBy: V1Keys.self, forKey: .mvpds).decode([MVPD].self, forKey: .mvpd)
            }
            var mvpds = try list(container)
            if mvpds == nil, container.contains(.requestor) {
                mvpds = try list(try container.nestedContainer(keyedBy: Keys.self, forKey: .requestor))
            }
            guard let mvpds else {
                throw DecodingError.keyNotFound(Keys.mvpds, .init(codingPath: decoder.codingPath, debugDescription: "no MVPD list"))
            }
            self.init(
                mvpds: mvpds,
                supportedProviderIdentifiers: try container.decodeIfPresent([String].self, forKey: .supportedAccountProviderIdentifiers),
                featuredProviderIdentifiers: try container.decodeIfPresent([String].self, forKey: .featuredAccountProviderIdentifiers) ?? []
            )
        }
    }

    /// An Enhanced Error Code object as the service answers it (`action`, `status`, `code`, `message`,
    /// `details`, `trace`).
    public struct ServiceError: Sendable, Hashable, Decodable {
        public var status: Int
        public var code: String
        public var message: String?
        /// `none`, `configuration`, `application-registration`, `authentication`, `authorization`,
        /// `degradation`, `retry`, `retry-after`.
        public var action: String?
        public var details: String?
        public var trace: String?

        public init(status: Int, code: String, message: String? = nil, action: String? = nil, details: String? = nil, trace: String? = nil)
        {
            self.status = status
            self.code = code
            self.message = message
            self.action = action
            self.details = details
            self.trace = trace
        }
    }

    /// What the service did for one MVPD at logout: `partner_logout` / `partner_interactive` for a profile
    /// made through Apple SSO (the user signs out of the provider in Settings), another action (with the
    /// MVPD's logout `url` to open) for a profile of the regular flow.
    public struct Logout: Sendable, Hashable {
        public var mvpd: String
        public var actionName: String
        public var actionType: String?
        public var url: String?
        /// `partner_logout`: the device stays signed in to the provider until the user signs out in
        /// Settings (`VSA203`).
        public var requiresProviderSignOut: Bool { actionName == "partner_logout" }

        public init(mvpd: String, actionName: String, actionType: String? = nil, url: String? = nil) {
            self.mvpd = mvpd
            self.actionName = actionName
            self.actionType = actionType
            self.url = url
        }
    }

    /// The `appleSSO` profile the Token Exchange created (v2's `201`), or what v1's `204` implies.
    public struct Profile: Sendable, Hashable {
        public var mvpd: String
        /// `notBefore` and `notAfter`, when the service says them (v2).
        public var notBefore: Date?
        public var notAfter: Date?
        /// `type`: `appleSSO` for a profile made from a partner response.
        public var type: String?
        /// The user metadata, each value as a list (a single value is a list of one).
        public var attributes: [String: [String]]

        public init(mvpd: String, notBefore: Date? = nil, notAfter: Date? = nil, type: String? = nil, attributes: [String: [String]] = [:])
        {
            self.mvpd = mvpd
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.type = type
            self.attributes = attributes
        }
    }
}

/// The answers' JSON shapes, as this client reads them.
enum Wire {
    struct Session: Decodable {
        var actionName: String
        var actionType: String?
        var reasonType: String?
        var mvpd: String?
        var url: String?
        var code: String?
        var missingParameters: [String]?
        var authenticationRequest: AuthenticationRequest?
    }

    struct AuthenticationRequest: Decodable {
        var type: String?
        var request: String
        var attributesNames: [String]?
    }

    struct Profiles: Decodable {
        var profiles: [String: Profile]
    }

    struct Profile: Decodable {
        var notBefore: Int64?
        var notAfter: Int64?
        var type: String?
        var attributes: [String: Attribute]?
    }

    struct Attribute: Decodable {
        var value: [String]

        private enum Keys: String, CodingKey { case value }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            if let one = try? container.decode(String.self, forKey: .value) {
                value = [one]
            } else {
                value = try container.decode([String].self, forKey: .value)
            }
        }
    }

    struct Logouts: Decodable {
        var logouts: [String: Logout]
    }

    struct Logout: Decodable {
        var actionName: String
        var actionType: String?
        var url: String?
    }

    static func profile(_ mvpd: String, _ profile: Profile) -> AppleSSOClient.Profile {
        AppleSSOClient.Profile(
            mvpd: mvpd, notBefore: profile.notBefore.map { Date(timeIntervalSince1970: Double($0) / 1000) },
            notAfter: profile.notAfter.map { Date(timeIntervalSince1970: Double($0) / 1000) }, type: profile.type,
            attributes: (profile.attributes ?? [:]).mapValues(\.value))
    }
}
