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
    /// - Throws: ``SAML/SAMLError/Code/pfsMalformedBase64`` or ``SAML/SAMLError/Code/pfsMalformedJSON``.
    public init(headerValue: String) throws {
        // HTTP's optional whitespace (space, tab) around the value; the rest must be Base64.
        let bytes = headerValue.utf8
        let first = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        let last = bytes.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { bytes.index(after: $0) } ?? first
        let trimmed = Substring(headerValue.utf8[first..<max(first, last)])
        // Standard Base64; the header page says only "Base64-encoded", so the URL-safe alphabet and
        // missing padding are read too.
        var normalized = String(trimmed).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if normalized.utf8.count % 4 != 0 { normalized += String(repeating: "=", count: 4 - normalized.utf8.count % 4) }
        guard normalized.utf8.count <= 16 * 1024, let data = Data(base64Encoded: normalized) else {
            throw SAMLError(
                .pfsMalformedBase64, "expected standard Base64 in AP-Partner-Framework-Status, found \(SAMLError.quote(String(trimmed)))")
        }
        let decoded: Wire
        do {
            decoded = try JSONDecoder().decode(Wire.self, from: data)
        } catch DecodingError.typeMismatch(_, let context) {
            throw SAMLError(.pfsMalformedJSON, "expected \(Self.path(context)) to be \(Self.expectedKind(context)), found another type")
        } catch {
            throw SAMLError(.pfsMalformedJSON, "expected a JSON object in AP-Partner-Framework-Status, found something else")
        }
        let permission = decoded.frameworkPermissionInfo
        let provider = decoded.frameworkProviderInfo
        accessStatus = permission?.accessStatus.map(AccessStatus.init(rawValue:))
        permissionError = permission?.error.map { FrameworkError(code: $0.code, message: $0.message) }
        providerID = provider?.id
        providerError = provider?.error.map { FrameworkError(code: $0.code, message: $0.message) }
        if let text = provider?.expirationDate {
            guard let value = Int64(text) else {
                throw SAMLError(
                    .pfsMalformedJSON, "expected frameworkProviderInfo.expirationDate in milliseconds, found \(SAMLError.quote(text))")
            }
            expirationMilliseconds = value
        } else {
            expirationMilliseconds = nil
        }
    }

    /// The header's JSON as it travels (unknown members ignored, `null` as absent).
    private struct Wire: Decodable {
        struct Error: Decodable {
            var code: String?
            var message: String?
        }
        struct Permission: Decodable {
            var accessStatus: String?
            var error: Error?
        }
        struct Provider: Decodable {
            var id: String?
            var expirationDate: String?
            var error: Error?
        }
        var frameworkPermissionInfo: Permission?
        var frameworkProviderInfo: Provider?
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map(\.stringValue).joined(separator: ".")
    }

    private static func expectedKind(_ context: DecodingError.Context) -> String {
        ["accessStatus", "id", "expirationDate", "code", "message"].contains(context.codingPath.last?.stringValue ?? "")
            ? "a string" : "an object"
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
