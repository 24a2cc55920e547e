import CookbookEncoding
import Foundation

extension AppleSSOClient {
    /// The REST API v1 cookbook's flow, where it differs from v2's: the MVPD list (`GET config`), the
    /// user's permission and provider, the profile request for that MVPD (`GET profile-requests`, the
    /// SAML request the framework takes as its verification token), the provider's answer with the MVPD's
    /// `requiredMetadataFields`, and `POST tokens/authn` (`204`: ``AppleSSOOutcome/signedIn(_:)`` with
    /// the MVPD alone; v1 answers no profile). v1 has no partner framework status header and no
    /// `sessions` step.
    public func signInV1() async -> AppleSSOOutcome {
        do throws(Stop) {
            let requestor = escaped(settings.serviceProvider)
            let configuration = try await configuration(path: "/api/v1/config/\(requestor)")
            let (_, mvpd) = try await provider(configuration, interactive: true)
            let request = try await send(
                "GET", "/api/v1/\(requestor)/profile-requests/\(escaped(mvpd.id))?deviceType=\(settings.deviceType.rawValue)",
                headers: v1Headers, expecting: 200)
            let token = String(decoding: request.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else {
                throw Stop(.unexpectedAnswer(status: 200, message: "expected a profile request, found an empty body"))
            }
            // REST API v1 cookbook, "Forward the Adobe request to Platform SSO": `isInterruptionAllowed` false.
            let (response, _) = try await providerAnswer(
                token: token, attributes: mvpd.requiredMetadataFields, configuration, mvpd, interactive: false)
            var headers = v1Headers
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            let form =
                FormEncoding.encode([
                    ("requestor", settings.serviceProvider), ("deviceId", settings.deviceIdentifier), ("mvpd", mvpd.id),
                    ("deviceType", settings.deviceType.rawValue),
                ]) + "&SAMLResponse=" + CookbookText.encode(response)
            _ = try await send("POST", "/api/v1/tokens/authn", headers: headers, body: Data(form.utf8), expecting: 204)
            // v1 answers no profile; it was made through Apple SSO (the SDK's `tokenSource` "Apple").
            return .signedIn(Profile(mvpd: mvpd.id, type: "appleSSO"))
        } catch {
            return error.outcome
        }
    }

    var v1Headers: [String: String] {
        ["Authorization": "Bearer \(settings.accessToken)", "Accept": "application/json"]
    }
}
