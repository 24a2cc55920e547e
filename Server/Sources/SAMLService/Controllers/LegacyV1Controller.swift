import AppleSSO
import Foundation
import Hummingbird
import Logging
@_spi(Spans) import SAML

// REST API v1: the legacy exchange, the MVPD list, the profile request.

extension TokenExchangeService {
    /// `POST /api/v1/tokens/authn`: `204`, or `400` with the error object (`503`/`500` when the service
    /// cannot decide: a failing store, its own configuration).
    public func legacyAuthentication(headers: RequestHeaders, body: [UInt8], format: V1Format = .json) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) { return Self.v1(refusal, format) }
        do {
            let profile = try await exchange.exchangeV1(body: body, requestor: configuration.serviceProvider)
            metrics.accepted(profile.response, mvpd: profile.mvpd, api: "v1")
            return ServiceAnswer(status: 204, body: [], code: "ok", mvpd: profile.mvpd)
        } catch {
            return Self.v1(refusal(error), format)
        }
    }

    /// REST API v1's representations: JSON, or XML when the client asks (`Accept: application/xml`, a
    /// `format=xml` parameter or a `.xml` extension).
    public enum V1Format: Sendable {
        case json, xml

        public init(accept: String?, format: String?, path: String) {
            if format?.lowercased() == "xml" || path.lowercased().hasSuffix(".xml") {
                self = .xml
            } else if format?.lowercased() == "json" || path.lowercased().hasSuffix(".json") {
                self = .json
            } else {
                self = accept?.lowercased().contains("application/xml") == true ? .xml : .json
            }
        }
    }

    /// `GET /api/v1/config/{requestorId}` ("Provide MVPD List"): the MVPDs with their platform SSO fields,
    /// JSON or XML.
    public func v1Configuration(requestor: String, headers: RequestHeaders, format: V1Format) -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkRequestor(requestor) { return Self.v1(refusal, format) }
        let answers = configurationAnswers
        return format == .xml
            ? ServiceAnswer(answers.v1XML, ifNoneMatch: headers.ifNoneMatch, contentType: "application/xml;charset=utf-8")
            : ServiceAnswer(answers.v1JSON, ifNoneMatch: headers.ifNoneMatch)
    }

    /// `GET /api/v1/{requestor}/profile-requests/{mvpd}?deviceType=iOS|tvOS` ("Retrieve Platform SSO
    /// profile request"): the SAML request (Base64, `application/octet-stream`, opaque to the app, which
    /// hands it to Apple's framework as the `verificationToken`), MACed for the requestor, the MVPD and `v1`.
    public func v1ProfileRequest(requestor: String, mvpd id: String, deviceType: String?, headers: RequestHeaders, format: V1Format)
        -> ServiceAnswer
    {
        if let refusal = checkAuthorization(headers) ?? checkRequestor(requestor) { return Self.v1(refusal, format) }
        guard deviceType == "iOS" || deviceType == "tvOS" else {
            return Self.v1(
                .error(
                    EnhancedError(
                        status: 400, code: "invalid_device_info", message: "The device type is missing or invalid (iOS or tvOS).",
                        details: nil)),
                format)
        }
        guard let mvpd = mvpds.mvpd(id: id), mvpd.enablePlatformServices, mvpd.boardingStatus == .supported,
            let idp = trust.identityProvider(for: mvpd.id)
        else {
            return Self.v1(
                .error(
                    EnhancedError(
                        status: 400, code: "unknown_integration",
                        message: "The integration between the requestor and the mvpd does not exist or is disabled.", details: nil,
                        action: "configuration")),
                format)
        }
        do {
            let request = try issueRequest(
                TokenExchange.Caller(serviceProvider: configuration.serviceProvider, device: "", api: "v1"), mvpd: mvpd,
                identityProvider: idp, now: configuration.clock.now())
            return ServiceAnswer(
                status: 200, body: Array(request.base64.utf8), code: "ok", mvpd: mvpd.id, contentType: "application/octet-stream")
        } catch is SigningBudget.Spent {
            return Self.v1(.error(ServiceResponder.signingBudgetSpent), format)
        } catch {
            logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
            return Self.v1(.error(EnhancedError(status: 500, code: "internal_error", message: "The request failed.", details: nil)), format)
        }
    }

    func checkRequestor(_ requestor: String) -> ServiceAnswer? {
        guard requestor == configuration.serviceProvider else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_requestor", message: "The requestor parameter is missing or invalid.", details: nil))
        }
        return nil
    }

    /// A refusal in REST API v1's terms (``AppleSSO/EnhancedError/v1``), in JSON or XML.
    static func v1(_ answer: ServiceAnswer, _ format: V1Format) -> ServiceAnswer {
        guard let error = answer.error?.v1 else { return answer }
        var result = answer
        switch format {
        case .xml:
            result.body = error.xml
            result.contentType = "application/xml;charset=utf-8"
        case .json:
            result.body = error.json
        }
        return result
    }
}

/// The family's routes, each answered through the shared ``ServiceResponder``.
struct LegacyV1Controller: Sendable {
    let responder: ServiceResponder

    /// REST API v1: `POST /api/v1/tokens/authn` (admitted), `GET /api/v1/config/{requestor}`, `GET /api/v1/{requestor}/profile-requests/{mvpd}`.
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        let service = responder.service
        let responder = responder
        routes.post("/api/v1/tokens/authn") { request, context in
            let format = TokenExchangeService.V1Format(
                accept: request.headers[.accept], format: request.uri.queryParameters.get("format"), path: request.uri.path)
            return try await responder.answer(request, context, verdictEndpoint: "tokens/authn", admitted: true) { headers, body in
                await service.legacyAuthentication(headers: headers, body: body, format: format)
            }
        }
        routes.get("/api/v1/config/:requestor") { request, context in
            let path = context.parameters.get("requestor") ?? ""
            let format = TokenExchangeService.V1Format(
                accept: request.headers[.accept], format: request.uri.queryParameters.get("format"), path: path)
            let requestor = path.hasSuffix(".json") ? String(path.dropLast(5)) : path.hasSuffix(".xml") ? String(path.dropLast(4)) : path
            return try await responder.answer(request, context, form: false) { headers, _ in
                service.v1Configuration(requestor: requestor, headers: headers, format: format)
            }
        }
        routes.get("/api/v1/:requestor/profile-requests/:mvpd") { request, context in
            let format = TokenExchangeService.V1Format(
                accept: request.headers[.accept], format: request.uri.queryParameters.get("format"), path: request.uri.path)
            let deviceType = request.uri.queryParameters.get("deviceType")
            // It signs, as sessions/sso does, when there is a request-signing key: admitted alike.
            return try await responder.answer(request, context, form: false, admitted: service.signingKey != nil) { headers, _ in
                service.v1ProfileRequest(
                    requestor: context.parameters.get("requestor") ?? "", mvpd: context.parameters.get("mvpd") ?? "",
                    deviceType: deviceType,
                    headers: headers, format: format)
            }
        }
        return routes
    }
}
