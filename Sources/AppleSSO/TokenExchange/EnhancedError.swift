import Foundation
import SAML
import Synchronization

/// An Enhanced Error Code object, as Adobe Pass's Enhanced Error Codes page defines it: `{"action",
/// "status", "code", "message", "details", "helpUrl", "trace"}`, `details` (the library's code) omitted
/// when there is none, `trace` the request's identifier when the service sets one. Codes are those the
/// page lists for REST API v2 (`invalid_parameter_*`, `invalid_header_pfs_*`,
/// `invalid_access_token_service_provider`, `internal_server_error`, ...); docs/service.md lists the few
/// extensions and why.
public struct EnhancedError: Error, Sendable {
    public let action: String
    public let status: Int
    public let code: String
    public let message: String
    /// The library's own error, when one caused this (its code goes into `details`).
    public let cause: SAMLError?
    /// The MVPD the request was for, once known (for logs; not part of the JSON).
    public internal(set) var mvpd: String?
    /// The identifier of the request that got this answer, for support (`trace`).
    public var trace: String?

    /// The Enhanced Error Codes page, the `helpUrl` of every error.
    public static let helpURL =
        "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html"

    public init(status: Int, code: String, message: String, details: SAMLError?, action: String = "none") {
        self.action = action
        self.status = status
        self.code = code
        self.message = message
        self.cause = details
    }

    /// The answer for a library error, after its HTTP meaning.
    public init(saml error: SAMLError) {
        if error.code == .trustUnknownMVPD {
            self.init(
                status: 500, code: "invalid_configuration_mvpd_platform_profile_exchange",
                message: "The partner profile exchange is not configured for this MVPD.", details: error, action: "configuration")
            return
        }
        switch error.code.httpStatus {
        case 503:
            // An extension (docs/service.md): a store or the MVPD's trust that cannot decide now; the
            // client retries rather than sending the user through another flow.
            self.init(
                status: 503, code: "service_unavailable", message: "The service cannot verify the SAML response now; retry later.",
                details: error, action: "retry")
        case 500..<600:
            self.init(
                status: 500, code: "internal_server_error", message: "The service is not configured to verify this SAML response.",
                details: error)
        default:
            // 413 included: a SAML response over the size limit is an invalid parameter value.
            self.init(
                status: 400, code: "invalid_parameter_saml_response", message: "The SAML response parameter value is missing or invalid.",
                details: error)
        }
    }

    /// `400 invalid_header_pfs_permission_access_not_present`: the `AP-Partner-Framework-Status` header
    /// cannot be decoded, so it presents no permission access status (the library's reason in `details`).
    public static func partnerFrameworkStatusMalformed(_ cause: (any Error)?) -> EnhancedError {
        EnhancedError(
            status: 400, code: PartnerFrameworkOutcome.accessNotPresent.rawValue, message: PartnerFrameworkOutcome.accessNotPresent.message,
            details: cause as? SAMLError)
    }

    /// `400 invalid_parameter_<name>`: a form field that cannot be decoded.
    public static func malformedParameter(_ name: String, _ cause: (any Error)?) -> EnhancedError {
        EnhancedError(
            status: 400, code: "invalid_parameter_\(name)", message: "The \(name) parameter is malformed.", details: cause as? SAMLError)
    }

    /// An error that is not the library's: the server's fault, never the client's.
    public static let internalError = EnhancedError(
        status: 500, code: "internal_server_error", message: "The service failed to process the request.", details: nil)

    init(pfs outcome: PartnerFrameworkOutcome) {
        self.init(status: 400, code: outcome.rawValue, message: outcome.message, details: nil)
    }

    /// `details`: the library's stable code, e.g. `signature.digest-mismatch`. Never its message, which
    /// names what was found (bytes of the request, signed values): that goes to the debug log only.
    public var details: String? { cause.map { $0.code.identifier } }

    /// The JSON object; `details` and `trace` only when set.
    public var object: JSONValue {
        Self.object(action: action, status: status, code: code, message: message, details: details, trace: trace)
    }

    /// An Enhanced Error Code object (this error's, or a decision's `Deny`: ``ResourceDecision/Denial``).
    static func object(action: String, status: Int, code: String, message: String, details: String?, trace: String?) -> JSONValue {
        var object: [String: JSONValue] = [
            "action": .string(action), "status": .integer(Int64(status)), "code": .string(code), "message": .string(message),
            "helpUrl": .string(helpURL),
        ]
        if let details { object["details"] = .string(details) }
        if let trace { object["trace"] = .string(trace) }
        return .object(object)
    }

    public var json: [UInt8] { object.bytes }
    /// ``json`` as text.
    public var jsonText: String { String(decoding: json, as: UTF8.self) }

    /// The same error in REST API v1's terms (Enhanced Error Codes, "REST API v1"): a code v1 lists stays,
    /// `invalid_parameter_service_provider` is `invalid_requestor`, an access-token code is `internal_error`
    /// with action `application-registration` (v1 has none; the status says it), anything else is
    /// `internal_error` with action `none`.
    public var v1: EnhancedError {
        var mapped = self
        switch code {
        case "invalid_requestor", "invalid_device_info", "invalid_device_id", "unknown_integration", "internal_error",
            "service_unavailable":
            return self
        case "invalid_parameter_service_provider":
            mapped = EnhancedError(status: status, code: "invalid_requestor", message: message, details: cause, action: action)
        case _ where code.hasPrefix("invalid_access_token"):
            mapped = EnhancedError(
                status: status, code: "internal_error", message: message, details: cause, action: "application-registration")
        default:
            mapped = EnhancedError(status: status, code: "internal_error", message: message, details: cause, action: "none")
        }
        mapped.mvpd = mvpd
        mapped.trace = trace
        return mapped
    }

    /// The XML representation REST API v1 answers when asked: `<error><action/><status/><code/><message/>
    /// <details/><helpUrl/><trace/></error>`, `details` and `trace` only when set.
    public var xml: [UInt8] {
        var fields = [("action", action), ("status", String(status)), ("code", code), ("message", message)]
        if let details { fields.append(("details", details)) }
        fields.append(("helpUrl", Self.helpURL))
        if let trace { fields.append(("trace", trace)) }
        let elements = fields.map { "<\($0)>\(XMLEscaping.escape($1))</\($0)>" }.joined()
        return Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?><error>" + elements + "</error>").utf8)
    }
}
