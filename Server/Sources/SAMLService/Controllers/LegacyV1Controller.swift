import AppleSSO
import Foundation
import Hummingbird
import Logging
@_spi(Spans) import SAML

/// REST API v1: the legacy exchange, the MVPD list, the profile request. Every answer, refusals of the
/// middleware included, in v1's terms (``AppleSSO/EnhancedError/v1``) and in JSON or XML as the client
/// asks (``V1FormatMiddleware``): a `.xml` or `.json` suffix is read on every route.
struct LegacyV1Controller: Sendable {
    let service: TokenExchangeService

    func addRoutes(to routes: ServiceRoutes) {
        let exchange = routes.family(verdict: "tokens/authn", v1: true).group().add(middleware: routes.form)
            .add(middleware: routes.admission)
        // The suffix chooses the format (V1FormatMiddleware), as on every v1 route.
        for path in ["/api/v1/tokens/authn", "/api/v1/tokens/authn.xml", "/api/v1/tokens/authn.json"] {
            exchange.post(RouterPath(path)) { _, context in await authentication(body: context.body, admission: context.admission) }
        }
        let reads = routes.family(v1: true)
        reads.get("/api/v1/config/:requestor") { _, context in
            configuration(requestor: V1FormatMiddleware.stripped(context.parameters.get("requestor")), context: context)
        }
        // It signs, as sessions/sso does, when there is a request-signing key: admitted alike.
        let profileRequests = service.signingKey == nil ? reads.group() : reads.group().add(middleware: routes.admission)
        profileRequests.get("/api/v1/:requestor/profile-requests/:mvpd") { request, context in
            profileRequest(
                requestor: context.parameters.get("requestor") ?? "", mvpd: V1FormatMiddleware.stripped(context.parameters.get("mvpd")),
                deviceType: request.uri.queryParameters.get("deviceType"))
        }
    }

    /// `POST /api/v1/tokens/authn`: `204`, or `400` with the error object (`503`/`500` when the service
    /// cannot decide: a failing store, its own configuration).
    func authentication(body: [UInt8], admission: AdmissionControl.Slot?) async -> ServiceAnswer {
        do {
            // The verification's CPU is spent once the response reaches the store: the slot is given up there.
            let profile = try await service.exchange.exchangeV1(
                body: body, requestor: service.configuration.serviceProvider,
                expecting: AdmissionControl.Slot.givenUpAtTheStore(admission))
            service.metrics.accepted(profile.response, mvpd: profile.mvpd, api: "v1")
            return ServiceAnswer(status: 204, body: [], code: "ok", mvpd: profile.mvpd)
        } catch {
            return service.refusal(error)
        }
    }

    /// `GET /api/v1/config/{requestorId}` ("Provide MVPD List"): the MVPDs with their platform SSO fields,
    /// JSON or XML.
    func configuration(requestor: String, context: ServiceRequestContext) -> ServiceAnswer {
        if let refusal = checkRequestor(requestor) { return refusal }
        let answers = service.configurationAnswers
        return context.representation == .v1(.xml)
            ? ServiceAnswer(answers.v1XML, ifNoneMatch: context.headers.ifNoneMatch, contentType: "application/xml;charset=utf-8")
            : ServiceAnswer(answers.v1JSON, ifNoneMatch: context.headers.ifNoneMatch)
    }

    /// `GET /api/v1/{requestor}/profile-requests/{mvpd}?deviceType=iOS|tvOS` ("Retrieve Platform SSO
    /// profile request"): the SAML request (Base64, `application/octet-stream`, opaque to the app, which
    /// hands it to Apple's framework as the `verificationToken`), MACed for the requestor, the MVPD and `v1`.
    func profileRequest(requestor: String, mvpd id: String, deviceType: String?) -> ServiceAnswer {
        if let refusal = checkRequestor(requestor) { return refusal }
        guard deviceType == "iOS" || deviceType == "tvOS" else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_device_info", message: "The device type is missing or invalid (iOS or tvOS).", details: nil)
            )
        }
        guard let mvpd = service.mvpds.mvpd(id: id), mvpd.enablePlatformServices, mvpd.boardingStatus == .supported,
            let idp = service.trust.identityProvider(for: mvpd.id)
        else {
            return .error(
                EnhancedError(
                    status: 400, code: "unknown_integration",
                    message: "The integration between the requestor and the mvpd does not exist or is disabled.", details: nil,
                    action: "configuration"))
        }
        do {
            let request = try service.issueRequest(
                TokenExchange.Caller(serviceProvider: service.configuration.serviceProvider, device: "", api: "v1"), mvpd: mvpd,
                identityProvider: idp, now: service.configuration.clock.now())
            return ServiceAnswer(
                status: 200, body: Array(request.base64.utf8), code: "ok", mvpd: mvpd.id, contentType: "application/octet-stream")
        } catch is SigningBudget.Spent {
            return .error(SigningBudget.spent)
        } catch {
            service.logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
            return .error(EnhancedError(status: 500, code: "internal_error", message: "The request failed.", details: nil))
        }
    }

    private func checkRequestor(_ requestor: String) -> ServiceAnswer? {
        guard requestor == service.configuration.serviceProvider else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_requestor", message: "The requestor parameter is missing or invalid.", details: nil))
        }
        return nil
    }
}
