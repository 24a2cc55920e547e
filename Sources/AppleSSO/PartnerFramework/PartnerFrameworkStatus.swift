import Foundation
import SAML

extension SAMLError.Code {
    /// The `AP-Partner-Framework-Status` header is not standard Base64.
    public static let pfsMalformedBase64 = Self("pfs.malformed-base64")
    /// The header's Base64 does not hold the documented JSON object.
    public static let pfsMalformedJSON = Self("pfs.malformed-json")
}

/// The `AP-Partner-Framework-Status` header: standard Base64 (padded) of a JSON object describing the
/// user's TV-provider permission and provider as Apple's Video Subscriber Account framework reported them.
///
/// ```json
/// {"frameworkPermissionInfo": {"accessStatus": "granted"},
///  "frameworkProviderInfo": {"id": "Cablevision", "expirationDate": "1735689600000"}}
/// ```
public struct PartnerFrameworkStatus: Sendable, Hashable {
    /// `accessStatus`, mirroring `VSAccountAccessStatus`.
    public struct AccessStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let granted = AccessStatus(rawValue: "granted")
        public static let denied = AccessStatus(rawValue: "denied")
        public static let restricted = AccessStatus(rawValue: "restricted")
        public static let notDetermined = AccessStatus(rawValue: "notDetermined")
        public var description: String { rawValue }
    }

    /// An optional `error` object of either part.
    public struct FrameworkError: Sendable, Hashable {
        public var code: String?
        public var message: String?
        public init(code: String? = nil, message: String? = nil) {
            self.code = code
            self.message = message
        }
    }

    public var accessStatus: AccessStatus?
    public var permissionError: FrameworkError?
    /// The provider's `platformMappingId` (VSA `accountProviderIdentifier`).
    public var providerID: String?
    /// `expirationDate`: milliseconds since the Unix epoch (a string in the JSON).
    public var expirationMilliseconds: Int64?
    public var providerError: FrameworkError?

    public init(
        accessStatus: AccessStatus?, providerID: String?, expirationMilliseconds: Int64?,
        permissionError: FrameworkError? = nil, providerError: FrameworkError? = nil
    ) {
        self.accessStatus = accessStatus
        self.providerID = providerID
        self.expirationMilliseconds = expirationMilliseconds
        self.permissionError = permissionError
        self.providerError = providerError
    }

    /// The header value: standard padded Base64 of the JSON.
    public var headerValue: String {
        Data(json).base64EncodedString()
    }

    /// The JSON object, keys sorted.
    public var json: [UInt8] {
        func errorObject(_ error: FrameworkError?) -> JSONValue? {
            guard let error else { return nil }
            var object: [String: JSONValue] = [:]
            if let code = error.code { object["code"] = .string(code) }
            if let message = error.message { object["message"] = .string(message) }
            return .object(object)
        }
        var permission: [String: JSONValue] = [:]
        if let accessStatus { permission["accessStatus"] = .string(accessStatus.rawValue) }
        if let error = errorObject(permissionError) { permission["error"] = error }
        var provider: [String: JSONValue] = [:]
        if let providerID { provider["id"] = .string(providerID) }
        if let expirationMilliseconds { provider["expirationDate"] = .string(String(expirationMilliseconds)) }
        if let error = errorObject(providerError) { provider["error"] = error }
        return JSONValue.object(["frameworkPermissionInfo": .object(permission), "frameworkProviderInfo": .object(provider)]).bytes
    }

    /// Decodes a header value.
    ///
    /// - Throws: `SAMLError.Code.pfsMalformedBase64` or `SAMLError.Code.pfsMalformedJSON`.
    public init(headerValue: String) throws {
        // HTTP's optional whitespace (space, tab) around the value; the rest must be Base64.
        let bytes = headerValue.utf8
        let first = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        let last = bytes.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { bytes.index(after: $0) } ?? first
        let trimmed = bytes[first..<max(first, last)]
        // Standard Base64; the header page says only "Base64-encoded", so the URL-safe alphabet and
        // missing padding are read too.
        guard trimmed.count <= 16 * 1024,
            let data = Data(base64Encoded: Data(Self.standardBase64(trimmed)))
        else {
            throw SAMLError(
                .pfsMalformedBase64,
                "expected standard Base64 in AP-Partner-Framework-Status, found \(SAMLError.quote(String(Substring(trimmed))))")
        }
        let object: [String: JSONValue]
        do {
            guard case .object(let members) = try JSONValue(parsing: data, maxDepth: 8) else {
                throw SAMLError(.pfsMalformedJSON, "expected a JSON object in AP-Partner-Framework-Status, found another value")
            }
            object = members
        } catch let error as JSONValue.ParseError {
            throw SAMLError(.pfsMalformedJSON, "expected a JSON object in AP-Partner-Framework-Status, found malformed JSON: \(error)")
        }
        // Unknown members are ignored and `null` counts as absent; a known member of another type is an error.
        let permission = try Self.object(object, "frameworkPermissionInfo", path: "")
        let provider = try Self.object(object, "frameworkProviderInfo", path: "")
        accessStatus = try Self.string(permission, "accessStatus", path: "frameworkPermissionInfo.").map(AccessStatus.init(rawValue:))
        permissionError = try Self.error(permission, path: "frameworkPermissionInfo.")
        providerID = try Self.string(provider, "id", path: "frameworkProviderInfo.")
        providerError = try Self.error(provider, path: "frameworkProviderInfo.")
        if let text = try Self.string(provider, "expirationDate", path: "frameworkProviderInfo.") {
            guard let value = Int64(text) else {
                throw SAMLError(
                    .pfsMalformedJSON, "expected frameworkProviderInfo.expirationDate in milliseconds, found \(SAMLError.quote(text))")
            }
            expirationMilliseconds = value
        } else {
            expirationMilliseconds = nil
        }
    }

    /// The URL-safe alphabet mapped to the standard one, and the padding completed.
    private static func standardBase64(_ text: Substring.UTF8View) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case UInt8(ascii: "-"): out.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): out.append(UInt8(ascii: "/"))
            default: out.append(byte)
            }
        }
        while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) }
        return out
    }

    /// A member that must be an object when present.
    private static func object(_ parent: [String: JSONValue]?, _ name: String, path: String) throws -> [String: JSONValue]? {
        switch parent?[name] {
        case nil, .null?: return nil
        case .object(let members)?: return members
        default: throw SAMLError(.pfsMalformedJSON, "expected \(path)\(name) to be an object, found another type")
        }
    }

    /// A member that must be a string when present.
    private static func string(_ parent: [String: JSONValue]?, _ name: String, path: String) throws -> String? {
        switch parent?[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw SAMLError(.pfsMalformedJSON, "expected \(path)\(name) to be a string, found another type")
        }
    }

    /// The optional `error` object of either part.
    private static func error(_ parent: [String: JSONValue]?, path: String) throws -> FrameworkError? {
        guard let members = try object(parent, "error", path: path) else { return nil }
        return FrameworkError(
            code: try string(members, "code", path: path + "error."), message: try string(members, "message", path: path + "error."))
    }

}

/// The documented server-side outcomes of checking the header against an MVPD and a clock.
public enum PartnerFrameworkOutcome: String, Sendable, Hashable, Error {
    case accessNotPresent = "invalid_header_pfs_permission_access_not_present"
    case accessNotDetermined = "invalid_header_pfs_permission_access_not_determined"
    case accessNotGranted = "invalid_header_pfs_permission_access_not_granted"
    case providerNotDetermined = "invalid_header_pfs_provider_id_not_determined"
    case providerMismatch = "invalid_header_pfs_provider_id_mismatch"
    case providerExpired = "invalid_header_pfs_provider_info_expired"

    /// A short explanation for the error object's message.
    public var message: String {
        switch self {
        case .accessNotPresent: "The partner framework status carries no permission access status."
        case .accessNotDetermined: "The user has not decided whether to grant access to the TV provider."
        case .accessNotGranted: "The user did not grant access to the TV provider."
        case .providerNotDetermined: "The partner framework status names no known provider."
        case .providerMismatch: "The partner framework provider does not match the requested MVPD."
        case .providerExpired: "The partner framework provider information has expired."
        }
    }
}

extension PartnerFrameworkStatus {
    /// Checks the header (section 4 of the token-exchange digest), in the documented order: access
    /// status present, determined, granted; provider id known; matching `mvpd` when one is requested;
    /// not expired at `now`. Returns the MVPD the provider id maps to.
    public func validate(configuration: MVPDConfiguration, requestedMVPD: String?, now: SAMLInstant) throws(PartnerFrameworkOutcome) -> MVPD
    {
        guard let accessStatus else { throw .accessNotPresent }
        guard accessStatus != .notDetermined else { throw .accessNotDetermined }
        guard accessStatus == .granted else { throw .accessNotGranted }
        guard let providerID, let provider = configuration.mvpd(platformMappingId: providerID) else { throw .providerNotDetermined }
        if let requestedMVPD, requestedMVPD != provider.id { throw .providerMismatch }
        if let expirationMilliseconds, expirationMilliseconds <= now.millisecondsSinceEpoch { throw .providerExpired }
        return provider
    }
}
