import CookbookEncoding
import SAML

/// An HTTP request to send, as plain parts (no HTTP client dependency).
public struct HTTPRequestParts: Sendable, Hashable {
    public var method: String
    /// The path, with the URL-encoded path parameters.
    public var path: String
    public var headers: [HTTPHeader]
    /// `application/x-www-form-urlencoded` body.
    public var body: [UInt8]

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

public struct HTTPHeader: Sendable, Hashable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Builds Token Exchange requests as a device (or a proxying backend) sends them.
///
/// The `SAMLResponse` is the cookbook's encoding of `samlAttributeQueryResponse` (``Cookbook/encode(_:)-(String)``):
/// already Base64 and percent-encoded, it goes into the form body as it is. Every other field is
/// form-encoded here. Nothing is encoded twice.
public enum TokenExchangeRequest {
    /// `deviceType` of REST API v1.
    public enum DeviceType: String, Sendable {
        case iOS
        case tvOS
    }

    /// REST API v1: `POST /api/v1/tokens/authn` with `requestor`, `deviceId`, `mvpd`, `deviceType`,
    /// `SAMLResponse`.
    public static func v1(
        samlAttributeQueryResponse: String, requestor: String, deviceID: String, mvpd: String, deviceType: DeviceType
    ) -> HTTPRequestParts {
        let body =
            FormEncoding.encode([
                ("requestor", requestor), ("deviceId", deviceID), ("mvpd", mvpd), ("deviceType", deviceType.rawValue),
            ]) + "&SAMLResponse=" + Cookbook.encode(samlAttributeQueryResponse)
        return HTTPRequestParts(
            method: "POST", path: "/api/v1/tokens/authn",
            headers: [HTTPHeader("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8)
        )
    }

    /// REST API v2: `POST /api/v2/{serviceProvider}/profiles/sso/{partner}` with the form field
    /// `SAMLResponse` and the headers `Authorization`, `AP-Device-Identifier`, `X-Device-Info`,
    /// `AP-Partner-Framework-Status`.
    public static func v2(
        samlAttributeQueryResponse: String, serviceProvider: String, partner: String = "Apple", accessToken: String,
        deviceIdentifier: String, deviceInfo: String, partnerFrameworkStatus: PartnerFrameworkStatus
    ) -> HTTPRequestParts {
        HTTPRequestParts(
            method: "POST",
            path: "/api/v2/\(FormEncoding.percentEncode(serviceProvider))/profiles/sso/\(FormEncoding.percentEncode(partner))",
            headers: [
                HTTPHeader("Authorization", "Bearer \(accessToken)"),
                HTTPHeader("AP-Device-Identifier", "fingerprint \(deviceIdentifier)"),
                HTTPHeader("X-Device-Info", deviceInfo),
                HTTPHeader("AP-Partner-Framework-Status", partnerFrameworkStatus.headerValue),
                HTTPHeader("Content-Type", "application/x-www-form-urlencoded"),
                HTTPHeader("Accept", "application/json;charset=utf-8"),
            ],
            body: Array(("SAMLResponse=" + Cookbook.encode(samlAttributeQueryResponse)).utf8)
        )
    }
}
