import AppleSSO
import HTTPTypes
import Hummingbird
import NIOCore
import SAML

/// The request headers the endpoints read.
public struct RequestHeaders: Sendable {
    public var authorization: String?
    public var deviceIdentifier: String?
    public var deviceInfo: String?
    public var partnerFrameworkStatus: String?
    /// `Accept` (REST API v1 answers XML when it asks for `application/xml`).
    public var accept: String?
    /// `If-None-Match` (the configuration answers' `ETag`s).
    public var ifNoneMatch: String?

    public init(
        authorization: String? = nil, deviceIdentifier: String? = nil, deviceInfo: String? = nil, partnerFrameworkStatus: String? = nil,
        accept: String? = nil, ifNoneMatch: String? = nil
    ) {
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
        self.authorization = authorization
        self.deviceIdentifier = deviceIdentifier
        self.deviceInfo = deviceInfo
        self.partnerFrameworkStatus = partnerFrameworkStatus
    }

    /// The request's headers, each read once (``AnswerMiddleware``).
    init(_ fields: HTTPFields) {
        self.init(
            authorization: fields[.authorization], deviceIdentifier: DeviceIdentifier.key(fields[fields: Self.deviceIdentifierName]),
            deviceInfo: fields[Self.deviceInfoName], partnerFrameworkStatus: fields[Self.partnerFrameworkStatusName],
            accept: fields[.accept], ifNoneMatch: fields[.ifNoneMatch])
    }

    static let deviceIdentifierName = HTTPField.Name("AP-Device-Identifier")!
    static let deviceInfoName = HTTPField.Name("X-Device-Info")!
    static let partnerFrameworkStatusName = HTTPField.Name("AP-Partner-Framework-Status")!
}

/// An endpoint's answer: status, JSON body, and what the access log and the verdict metric record. A
/// `ResponseGenerator`: rendered in the request's representation (an error in REST API v1's code and
/// format on v1's routes), recorded for ``AnswerMiddleware``, without a body for `HEAD`.
public struct ServiceAnswer: Sendable, ResponseGenerator {
    public var status: Int
    public var body: [UInt8]
    /// `ok`, the library's error code, or the Enhanced Error Code / session answer.
    public var code: String
    public var mvpd: String?
    /// The library's message, logged at `debug` only (it may quote bytes of the request).
    public var detail: String?
    /// The body's media type; nil: JSON.
    public var contentType: String?
    /// An error's `trace`.
    public var trace: String?
    /// The answer's `ETag`, when it has one.
    public var etag: String?
    /// The error this answer carries, if it is one.
    public var error: EnhancedError?
    /// `Allow` (a `405`).
    var allow: String?
    /// `Cache-Control`, when the answer may be cached.
    var cacheControl: String?

    init(
        status: Int, body: [UInt8], trace: String? = nil, code: String, mvpd: String?, detail: String? = nil, contentType: String? = nil
    ) {
        self.status = status
        self.body = body
        self.trace = trace
        self.code = code
        self.mvpd = mvpd
        self.detail = detail
        self.contentType = contentType
    }

    /// A configuration answer (``ConfigurationAnswers``): `200` with its `ETag`, or `304` without a body
    /// when `If-None-Match` names it.
    init(_ built: ConfigurationAnswers.Built, ifNoneMatch: String?, contentType: String? = nil) {
        let unchanged = ConfigurationAnswers.matches(ifNoneMatch, built.etag)
        self.init(
            status: unchanged ? 304 : 200, body: unchanged ? [] : built.body, code: unchanged ? "not-modified" : "ok", mvpd: nil,
            contentType: unchanged ? nil : contentType)
        etag = built.etag
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        guard let context = context as? ServiceRequestContext else { return rendered(head: request.method == .head) }
        var answer = self
        if case .v1(let format) = context.representation, let error = error?.v1 {
            switch format {
            case .xml:
                answer.body = error.xml
                answer.contentType = "application/xml;charset=utf-8"
            case .json:
                answer.body = error.json
                answer.contentType = nil
            }
        }
        context.outcome.record(.init(status: status, code: code, mvpd: mvpd, trace: trace, detail: detail))
        return answer.rendered(head: request.method == .head)
    }

    private func rendered(head: Bool) -> Response {
        var response = Self.json(status, head ? [] : body)
        if let contentType, !head { response.headers[.contentType] = contentType }
        if let etag {
            response.headers[.eTag] = etag
            // v2's configuration names the device type it read from X-Device-Info.
            response.headers[.vary] = "X-Device-Info"
        }
        if let allow { response.headers[.allow] = allow }
        if let cacheControl { response.headers[.cacheControl] = cacheControl }
        return response
    }

    /// A JSON response (no content type for an empty body, as `204`).
    static func json(_ status: Int, _ body: [UInt8]) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: body.isEmpty ? [:] : [.contentType: "application/json;charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func json(_ status: Int, _ object: JSONValue, code: String, mvpd: String?) -> ServiceAnswer {
        ServiceAnswer(status: status, body: object.bytes, code: code, mvpd: mvpd)
    }

    /// An error answer, with a fresh `trace` (also the access log's) for support to find the request by.
    static func error(_ error: EnhancedError, mvpd: String? = nil) -> ServiceAnswer {
        var error = error
        error.trace = error.trace ?? RandomIdentifier.uuid()
        var answer = ServiceAnswer(
            status: error.status, body: error.json, trace: error.trace, code: error.cause?.code.identifier ?? error.code,
            mvpd: mvpd ?? error.mvpd,
            detail: error.cause?.message)
        answer.error = error
        return answer
    }
}
