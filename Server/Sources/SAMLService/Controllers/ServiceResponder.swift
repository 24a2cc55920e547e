import AppleSSO
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SAML

/// What every API route of ``TokenExchangeService`` does around its handler (the controllers, one per
/// API family, hand it their handlers): reads the request's headers and body within the limits, refuses a body that is not a form (`415`), admits Token Exchanges through
/// ``AdmissionControl`` (`503` with `Retry-After` beyond it), and writes one access-log line per request
/// (never the body, a header value or an attribute value at `info`; the library's refusal message,
/// escaped, at `debug`).
///
/// Refusals are answers (``ServiceAnswer`` built from an ``AppleSSO/EnhancedError``), not thrown
/// `HTTPResponseError`s: every outcome, accepted or refused, then goes through the one place that logs it,
/// counts its verdict and sets `Retry-After`, and an error Hummingbird itself throws (a route not found, a
/// malformed request) stays distinguishable in the logs from a verdict of the service.
struct ServiceResponder: Sendable {
    let service: TokenExchangeService
    let limit: Int
    let admission: AdmissionControl

    /// Every family's controller (each in its file under `Controllers/`, beside its endpoints), then
    /// `405` for the methods a path does not answer.
    func add(to router: Router<BasicRequestContext>) {
        router.addRoutes(SessionsController(responder: self).routes)
        router.addRoutes(ProfilesController(responder: self).routes)
        router.addRoutes(LegacyV1Controller(responder: self).routes)
        router.addRoutes(MetadataController(responder: self).routes)
        addMethodNotAllowed(to: router)
    }

    /// The API's paths and the methods each answers: any other method gets `405` with `Allow`.
    static let methods: [(path: String, allowed: [HTTPRequest.Method])] = [
        ("/api/v2/:serviceProvider/sessions/sso/:partner", [.post]), ("/api/v2/:serviceProvider/profiles/sso/:partner", [.post]),
        ("/api/v1/tokens/authn", [.post]), ("/api/v1/config/:requestor", [.get]), ("/api/v1/:requestor/profile-requests/:mvpd", [.get]),
        ("/api/v2/:serviceProvider/profiles", [.get]), ("/api/v2/:serviceProvider/profiles/:mvpd", [.get]),
        ("/api/v2/:serviceProvider/configuration", [.get]), ("/api/v2/:serviceProvider/saml/metadata", [.get]),
    ]

    /// `405 Method Not Allowed` with `Allow` for every method a path does not answer (the Enhanced Error
    /// Codes list has no code for it: `method_not_allowed`, an extension, docs/service.md). The bearer
    /// token is checked first, as on every authenticated route: an unauthenticated caller learns nothing
    /// of which methods a path answers.
    func addMethodNotAllowed(to router: Router<BasicRequestContext>) {
        let all: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head, .options]
        let service = service
        for (path, allowed) in Self.methods {
            let authenticated = !Self.unauthenticatedPaths.contains(path)
            for method in all where !allowed.contains(method) {
                router.on(RouterPath(path), method: method) { request, _ in
                    if authenticated,
                        let refusal = service.checkAuthorization(RequestHeaders(authorization: request.headers[.authorization]))
                    {
                        return Self.json(refusal.status, method == .head ? [] : refusal.body)
                    }
                    var error = EnhancedError(
                        status: 405, code: "method_not_allowed", message: "The HTTP method is not allowed for this resource.", details: nil)
                    error.trace = RandomIdentifier.uuid()
                    var response = Self.json(405, method == .head ? [] : error.json)
                    response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
                    return response
                }
            }
        }
    }

    /// The paths any caller may read without a bearer token (the SP's metadata, which the MVPDs fetch).
    static let unauthenticatedPaths: Set<String> = ["/api/v2/:serviceProvider/saml/metadata"]

    /// Answers `request` through ``reply(method:headers:route:logger:form:verdictEndpoint:admitted:authenticated:body:_:)``.
    func answer(
        _ request: Request, _ context: BasicRequestContext, form: Bool = true, verdictEndpoint: String? = nil, admitted: Bool = false,
        authenticated: Bool = true,
        _ handler: @escaping @Sendable (RequestHeaders, [UInt8]) async -> ServiceAnswer
    ) async throws -> Response {
        try await reply(
            method: request.method, headers: request.headers, route: context.endpointPath ?? "unmatched", logger: context.logger,
            form: form, verdictEndpoint: verdictEndpoint, admitted: admitted, authenticated: authenticated, body: body(of: request),
            handler
        )
    }

    /// Whether the request's `Content-Length` is past the limit (refused before its body is read).
    private func announcesTooLarge(_ fields: HTTPFields) -> Bool {
        fields[.contentLength].flatMap(Int.init).map { $0 > limit } ?? false
    }

    /// Reads `request`'s body within the limit: nil when it is larger.
    private func body(of request: Request) -> () async throws -> [UInt8]? {
        let limit = limit
        return {
            do {
                return Array(try await request.body.collect(upTo: limit).readableBytesView)
            } catch is NIOTooManyBytesError {
                return nil
            }
        }
    }

    /// Checks the headers, reads the body within the limit (`body` answers nil when it is larger), runs
    /// `handler` (through the admission control when `admitted`), and turns its answer into a reply; the
    /// verdict metric, the span's annotations and the access-log line are written here, for every route.
    private func reply(
        method: HTTPRequest.Method, headers fields: HTTPFields, route: String, logger: Logger, form: Bool = true,
        verdictEndpoint: String? = nil, admitted: Bool = false, authenticated: Bool = true,
        body readBody: () async throws -> [UInt8]?,
        _ handler: @escaping @Sendable (RequestHeaders, [UInt8]) async -> ServiceAnswer
    ) async rethrows -> Response {
        let started = ContinuousClock.now
        let headers = RequestHeaders(
            authorization: fields[.authorization], deviceIdentifier: DeviceIdentifier.key(fields[fields: Self.deviceIdentifier]),
            deviceInfo: fields[Self.deviceInfo], partnerFrameworkStatus: fields[Self.partnerFrameworkStatus],
            accept: fields[.accept], ifNoneMatch: fields[.ifNoneMatch])
        var result: ServiceAnswer
        if authenticated, let refusal = service.checkAuthorization(headers) {
            // Authentication first: nothing about the path or the body is told to an unauthenticated caller.
            result = refusal
        } else if form, !Self.isForm(fields[.contentType]) {
            result = .error(Self.unsupportedMediaType)
        } else if announcesTooLarge(fields) {
            result = .error(Self.tooLarge(limit))
        } else if let body = try await readBody() {
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
        } else {
            result = .error(Self.tooLarge(limit))
        }
        let elapsed = ContinuousClock.now - started
        let mvpd = service.metricLabel(mvpd: result.mvpd)
        if let verdictEndpoint {
            service.metrics.verdict(endpoint: verdictEndpoint, code: result.code, mvpd: mvpd, elapsed)
        }
        RequestSpan.annotate(verdict: result.code, mvpd: mvpd)
        if logger.logLevel <= .info {
            var metadata: Logger.Metadata = [
                "status": "\(result.status)", "code": "\(result.code)", "latency_us": "\(elapsed.nanoseconds / 1000)",
            ]
            if let mvpd = result.mvpd { metadata["mvpd"] = "\(mvpd)" }
            if let trace = result.trace { metadata["trace"] = "\(trace)" }
            logger.info("\(method) \(route)", metadata: metadata)
        }
        if let detail = result.detail {
            logger.debug("refusal detail", metadata: ["detail": "\(detail)"])
        }
        var response = Self.json(result.status, result.body)
        if let contentType = result.contentType { response.headers[.contentType] = contentType }
        if result.status == 503 { response.headers[.retryAfter] = "1" }
        if let etag = result.etag {
            response.headers[.eTag] = etag
            // v2's configuration names the device type it read from X-Device-Info.
            response.headers[.vary] = "X-Device-Info"
        }
        return response
    }

    /// `application/x-www-form-urlencoded`, parameters (`; charset=UTF-8`) allowed, any case.
    static func isForm(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        // Bytes, not Foundation's trimming: this runs on every request (issue 28).
        let bytes = contentType.utf8
        let mediaType = bytes[..<(bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex)]
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = mediaType.firstIndex(where: { !isSpace($0) }), let last = mediaType.lastIndex(where: { !isSpace($0) }) else {
            return false
        }
        return mediaType[first...last].elementsEqual(formMediaType) { (0x41...0x5A).contains($0) ? $0 | 0x20 == $1 : $0 == $1 }
    }

    private static let formMediaType = Array("application/x-www-form-urlencoded".utf8)

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

    /// Anonymous signing past its budget (``SigningBudget``): the same `503` as a full admission queue.
    static let signingBudgetSpent = EnhancedError(
        status: 503, code: "service_unavailable", message: "The service is busy; retry later.", details: nil, action: "retry")

    static let deviceIdentifier = HTTPField.Name("AP-Device-Identifier")!
    static let deviceInfo = HTTPField.Name("X-Device-Info")!
    static let partnerFrameworkStatus = HTTPField.Name("AP-Partner-Framework-Status")!
}
