import AppleSSO
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
}

/// An endpoint's answer: status, JSON body, and what the access log and the verdict metric record.
public struct ServiceAnswer: Sendable {
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
