import AppleSSO
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SAML

/// The API routes of ``TokenExchangeService`` on a Hummingbird router: reads each request's headers and
/// body within the limits, refuses a body that is not a form (`415`), admits Token Exchanges through
/// ``AdmissionControl`` (`503` with `Retry-After` beyond it), and writes one access-log line per request
/// (never the body, a header value or an attribute value at `info`; the library's refusal message,
/// escaped, at `debug`).
///
/// Refusals are answers (``ServiceAnswer`` built from an ``AppleSSO/EnhancedError``), not thrown
/// `HTTPResponseError`s: every outcome, accepted or refused, then goes through the one place that logs it,
/// counts its verdict and sets `Retry-After`, and an error Hummingbird itself throws (a route not found, a
/// malformed request) stays distinguishable in the logs from a verdict of the service.
struct TokenExchangeController: Sendable {
    let service: TokenExchangeService
    let limit: Int
    let admission: AdmissionControl

    func add(to router: Router<BasicRequestContext>) {
        let service = service
        router.post("/api/v2/:serviceProvider/sessions/sso/:partner") { request, context in
            try await answer(request, context) { headers, body in
                await service.session(
                    serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                    headers: headers, body: body)
            }
        }
        router.post("/api/v2/:serviceProvider/profiles/sso/:partner") { request, context in
            try await answer(request, context, verdictEndpoint: "profiles/sso", admitted: true) { headers, body in
                await service.profile(
                    serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                    headers: headers, body: body)
            }
        }
        router.post("/api/v1/tokens/authn") { request, context in
            try await answer(request, context, verdictEndpoint: "tokens/authn", admitted: true) { headers, body in
                await service.legacyAuthentication(headers: headers, body: body)
            }
        }
        router.get("/api/v2/:serviceProvider/saml/metadata") { request, context in
            try await answer(request, context, form: false, authenticated: false) { _, _ in
                service.spMetadata(serviceProvider: context.parameters.get("serviceProvider") ?? "")
            }
        }
        router.get("/api/v2/:serviceProvider/configuration") { request, context in
            try await answer(request, context, form: false) { headers, _ in
                service.mvpdConfiguration(serviceProvider: context.parameters.get("serviceProvider") ?? "", headers: headers)
            }
        }
    }

    /// Reads the body within the limit and the headers, runs `handler` (through the admission control
    /// when `admitted`), and turns its answer into a response.
    private func answer(
        _ request: Request, _ context: BasicRequestContext, form: Bool = true, verdictEndpoint: String? = nil, admitted: Bool = false,
        authenticated: Bool = true,
        _ handler: @escaping @Sendable (RequestHeaders, [UInt8]) async -> ServiceAnswer
    ) async throws -> Response {
        let started = ContinuousClock.now
        let headers = RequestHeaders(
            authorization: request.headers[.authorization], deviceIdentifier: request.headers[Self.deviceIdentifier],
            deviceInfo: request.headers[Self.deviceInfo], partnerFrameworkStatus: request.headers[Self.partnerFrameworkStatus])
        var result: ServiceAnswer
        if authenticated, let refusal = service.checkAuthorization(headers) {
            // Authentication first: nothing about the path or the body is told to an unauthenticated caller.
            result = refusal
        } else if form, !Self.isForm(request.headers[.contentType]) {
            result = .error(Self.unsupportedMediaType)
        } else if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            result = .error(Self.tooLarge(limit))
        } else {
            do {
                let body = Array(try await request.body.collect(upTo: limit).readableBytesView)
                if admitted {
                    if let answer = await admission.run({ await handler(headers, body) }) {
                        result = answer
                    } else {
                        service.metrics.rejection("verification-queue-full")
                        result = .error(Self.overloaded)
                    }
                } else {
                    result = await handler(headers, body)
                }
            } catch is NIOTooManyBytesError {
                result = .error(Self.tooLarge(limit))
            }
        }
        let elapsed = ContinuousClock.now - started
        if let verdictEndpoint {
            service.metrics.verdict(endpoint: verdictEndpoint, code: result.code)
        }
        var metadata: Logger.Metadata = [
            "status": "\(result.status)", "code": "\(result.code)", "latency_us": "\(elapsed.nanoseconds / 1000)",
        ]
        if let mvpd = result.mvpd { metadata["mvpd"] = "\(mvpd)" }
        context.logger.info("\(request.method) \(context.endpointPath ?? "unmatched")", metadata: metadata)
        if let detail = result.detail {
            context.logger.debug("refusal detail", metadata: ["detail": "\(detail)"])
        }
        var response = Self.json(result.status, result.body)
        if let contentType = result.contentType { response.headers[.contentType] = contentType }
        if result.status == 503 { response.headers[.retryAfter] = "1" }
        return response
    }

    /// `application/x-www-form-urlencoded`, parameters (`; charset=UTF-8`) allowed, any case.
    static func isForm(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return mediaType.lowercased() == "application/x-www-form-urlencoded"
    }

    /// A JSON response (no content type for an empty body, as `204`).
    static func json(_ status: Int, _ body: [UInt8]) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: body.isEmpty ? [:] : [.contentType: "application/json;charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func tooLarge(_ limit: Int) -> EnhancedError {
        EnhancedError(
            status: 413, code: "request_too_large", message: "The request body is too large.",
            details: SAMLError(.decodeTooLarge, "expected a request body of at most \(limit) bytes, found a larger one"))
    }

    static let unsupportedMediaType = EnhancedError(
        status: 415, code: "unsupported_media_type", message: "The request body must be application/x-www-form-urlencoded.",
        details: nil)

    static let overloaded = EnhancedError(
        status: 503, code: "service_unavailable", message: "The service is busy; retry later.", details: nil, action: "retry")

    static let deviceIdentifier = HTTPField.Name("AP-Device-Identifier")!
    static let deviceInfo = HTTPField.Name("X-Device-Info")!
    static let partnerFrameworkStatus = HTTPField.Name("AP-Partner-Framework-Status")!
}
