import AppleSSO
import Foundation
import Hummingbird

/// REST API v2's logout: `GET /api/v2/{serviceProvider}/logout/{mvpd}?redirectUrl=...` ("Initiate logout
/// for specific mvpd"), and `GET /api/v2/{serviceProvider}/logout?redirectUrl=...` for every MVPD of the
/// device (this service's extension: the pages document only the first). The device's profiles are
/// removed from the store, then the answer says what the app does next for each: `partner_logout` /
/// `partner_interactive` (no `url`) for an `appleSSO` profile, the only type this service keeps: the app
/// asks the user to sign out of the TV provider at the system level.
struct LogoutController: Sendable {
    let service: TokenExchangeService

    func addRoutes(to routes: ServiceRoutes) {
        let logout = routes.family()
        logout.get("/api/v2/:serviceProvider/logout/:mvpd") { request, context in
            await self.logout(
                serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: context.parameters.get("mvpd") ?? "",
                redirectURL: request.uri.queryParameters["redirectUrl"].map(String.init), headers: context.headers)
        }
        logout.get("/api/v2/:serviceProvider/logout") { request, context in
            await self.logout(
                serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: nil,
                redirectURL: request.uri.queryParameters["redirectUrl"].map(String.init), headers: context.headers)
        }
    }

    /// After the path, `AP-Device-Identifier`, a configured MVPD (`400 invalid_parameter_mvpd`) and a
    /// `redirectUrl` that is an absolute http(s) URL (`400 invalid_parameter_redirect_url`): the profiles
    /// removed, then `200 {"logouts": {"<mvpd>": {actionName, actionType, mvpd}}}`, one member per profile
    /// that was valid; for one MVPD without a valid profile, its member says `invalid` / `none`. A store
    /// that cannot remove answers `503` (`Retry-After`): nothing is said removed that was not. A device
    /// the shared store's directory knows has no profile is still deleted (a login on another instance in
    /// the last second), within the bounds of the anonymous profile reads (`503` beyond them).
    func logout(serviceProvider: String, mvpd id: String?, redirectURL: String?, headers: RequestHeaders) async -> ServiceAnswer {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: nil) ?? service.checkDevice(headers) {
            return refusal
        }
        if let id, service.mvpds.mvpd(id: id) == nil { return .error(.invalidMVPD) }
        guard let redirectURL, redirectURL.utf8.count <= 2048, SessionDecision.Parameters.redirectURL(redirectURL) != nil else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_redirect_url", message: "The redirect URL parameter value is missing or invalid.",
                    details: nil), mvpd: id)
        }
        let removed: [String]
        do {
            removed = try await service.removeProfiles(device: headers.deviceIdentifier ?? "", mvpd: id, by: "logout")
        } catch {
            // Shed (beyond the bounds of a device nobody knows a profile of) is counted there; a store's
            // failure here.
            if !(error is ProfileLookups.Shed) {
                service.metrics.storeError(operation: "logout")
                service.logger.warning("profiles not removed: logout refused (503)", metadata: ["mvpd": "\(id ?? "all")"])
            }
            return .error(
                EnhancedError(
                    status: 503, code: "service_unavailable", message: "The logout cannot be completed now; retry later.", details: nil,
                    action: "retry"), mvpd: id)
        }
        var logouts: [String: JSONValue] = [:]
        for mvpd in removed {
            logouts[mvpd] = .object(["actionName": "partner_logout", "actionType": "partner_interactive", "mvpd": .string(mvpd)])
        }
        if let id, logouts.isEmpty {
            logouts[id] = .object(["actionName": "invalid", "actionType": "none", "mvpd": .string(id)])
        }
        var answer = ServiceAnswer.json(200, ["logouts": .object(logouts)], code: removed.isEmpty ? "no-profile" : "ok", mvpd: id)
        answer.cacheControl = "no-store"
        return answer
    }
}
