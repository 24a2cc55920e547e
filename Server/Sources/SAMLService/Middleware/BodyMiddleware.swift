import AppleSSO
import Hummingbird
import NIOCore
import SAML

/// The form body of a `POST` route: `415` for a body that is not `application/x-www-form-urlencoded`,
/// `413` for one past the limit (announced by `Content-Length`, or found while reading, never buffered past
/// it), else the bytes in ``ServiceRequestContext/form``.
struct FormBodyMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    /// ``ServiceConfiguration/maximumBodyBytes``.
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isForm(request.headers[.contentType]) else {
            return try ServiceAnswer.error(Self.unsupportedMediaType).response(from: request, context: context)
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            return try ServiceAnswer.error(Self.tooLarge(limit)).response(from: request, context: context)
        }
        var context = context
        do {
            context.form = Array(try await request.body.collect(upTo: limit).readableBytesView)
        } catch is NIOTooManyBytesError {
            return try ServiceAnswer.error(Self.tooLarge(limit)).response(from: request, context: context)
        }
        return try await next(request, context)
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

    static func tooLarge(_ limit: Int) -> EnhancedError {
        EnhancedError(
            status: 413, code: "request_too_large", message: "The request body is too large.",
            details: SAMLError(.decodeTooLarge, "expected a request body of at most \(limit) bytes, found a larger one"))
    }

    static let unsupportedMediaType = EnhancedError(
        status: 415, code: "unsupported_media_type", message: "The request body must be application/x-www-form-urlencoded.",
        details: nil)
}
