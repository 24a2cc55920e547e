import AppleSSO
import Hummingbird
import NIOCore
import SAML

/// The body of a `POST` route, in the one media type the route reads (a form, or REST API v2's JSON for
/// the decisions): `415` for a body of another type, `413` for one past the limit (announced by
/// `Content-Length`, or found while reading, never buffered past it), else the bytes in
/// ``ServiceRequestContext/body``.
struct BodyMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    /// ``ServiceConfiguration/maximumBodyBytes``.
    let limit: Int
    let mediaType: MediaType

    enum MediaType {
        /// `application/x-www-form-urlencoded`.
        case form
        /// `application/json`.
        case json

        var name: String {
            switch self {
            case .form: "application/x-www-form-urlencoded"
            case .json: "application/json"
            }
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.matches(request.headers[.contentType], mediaType) else {
            return try ServiceAnswer.error(Self.unsupportedMediaType(mediaType)).response(from: request, context: context)
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            return try ServiceAnswer.error(Self.tooLarge(limit)).response(from: request, context: context)
        }
        var context = context
        do {
            context.body = Array(try await request.body.collect(upTo: limit).readableBytesView)
        } catch is NIOTooManyBytesError {
            return try ServiceAnswer.error(Self.tooLarge(limit)).response(from: request, context: context)
        }
        return try await next(request, context)
    }

    /// `application/x-www-form-urlencoded`, parameters (`; charset=UTF-8`) allowed, any case.
    static func isForm(_ contentType: String?) -> Bool { matches(contentType, .form) }

    /// The media type `expected`, parameters allowed, any case.
    static func matches(_ contentType: String?, _ expected: MediaType) -> Bool {
        guard let contentType else { return false }
        // Bytes, not Foundation's trimming: this runs on every request (issue 28).
        let bytes = contentType.utf8
        let mediaType = bytes[..<(bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex)]
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = mediaType.firstIndex(where: { !isSpace($0) }), let last = mediaType.lastIndex(where: { !isSpace($0) }) else {
            return false
        }
        return mediaType[first...last].elementsEqual(expected.name.utf8) { (0x41...0x5A).contains($0) ? $0 | 0x20 == $1 : $0 == $1 }
    }

    static func tooLarge(_ limit: Int) -> EnhancedError {
        EnhancedError(
            status: 413, code: "request_too_large", message: "The request body is too large.",
            details: SAMLError(.decodeTooLarge, "expected a request body of at most \(limit) bytes, found a larger one"))
    }

    static func unsupportedMediaType(_ mediaType: MediaType) -> EnhancedError {
        EnhancedError(
            status: 415, code: "unsupported_media_type", message: "The request body must be \(mediaType.name).", details: nil)
    }
}
