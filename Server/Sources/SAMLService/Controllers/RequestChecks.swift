import AppleSSO
import Foundation
import SAML

// The checks every endpoint shares: the bearer token, the path, the device headers, the `mvpd` field.

extension TokenExchangeService {
    /// An answer that ends a request early.
    struct Refusal: Error {
        let answer: ServiceAnswer
    }

    /// The optional `mvpd` form field.
    func requestedMVPD(_ body: [UInt8]) throws(Refusal) -> String? {
        do {
            return try FormBody.text(named: "mvpd", in: body)
        } catch {
            throw Refusal(answer: .error(.malformedParameter("mvpd", error)))
        }
    }

    func checkPath(serviceProvider: String, partner: String?) -> ServiceAnswer? {
        guard serviceProvider == configuration.serviceProvider else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_service_provider",
                    message: "The service provider parameter value is missing or invalid.",
                    details: nil))
        }
        if let partner, partner.lowercased() != "apple" {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_partner", message: "The partner parameter value is missing or invalid.",
                    details: nil))
        }
        return nil
    }

    /// `Authorization: Bearer <token>` (scheme in any case, RFC 9110 11.1), compared with every configured
    /// token over their SHA-256 digests in constant time.
    func checkAuthorization(_ headers: RequestHeaders) -> ServiceAnswer? {
        guard !bearerDigests.isEmpty else { return nil }
        if let value = headers.authorization, let token = BearerToken.credentials(in: value), BearerToken.matches(token, bearerDigests) {
            return nil
        }
        return .error(
            EnhancedError(
                status: 401, code: "invalid_access_token_service_provider",
                message: "The access token is invalid due to invalid service provider.", details: nil, action: "application-registration"))
    }

    func checkDevice(_ headers: RequestHeaders) -> ServiceAnswer? {
        guard let identifier = headers.deviceIdentifier, identifier.utf8.starts(with: "fingerprint ".utf8), identifier.utf8.count > 12,
            identifier.utf8.count <= 512
        else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_header_device_identifier",
                    message: "The AP-Device-Identifier header must be \"fingerprint <value>\".", details: nil))
        }
        if let info = headers.deviceInfo {
            let decoded = Data(base64Encoded: info)
            guard let decoded, case .object? = try? JSONValue(parsing: decoded, maxDepth: 16) else {
                return .error(
                    EnhancedError(
                        status: 400, code: "invalid_header_device_info",
                        message: "The X-Device-Info header must be Base64 of a JSON object.",
                        details: nil))
            }
        }
        return nil
    }
}
