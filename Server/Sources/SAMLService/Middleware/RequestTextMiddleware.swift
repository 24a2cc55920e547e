import AppleSSO
import Hummingbird
import SAML

/// Every header value and the path and query (percent-decoded) are Unicode stream-safe text, checked
/// before any other middleware or endpoint reads them: `400 malformed_request` otherwise (an extension
/// code, docs/service.md; REST API v1's `internal_error` on its routes).
///
/// Swift's `==`, `hasPrefix` and hashing of strings normalise, and normalising a run of combining marks
/// sorts it: quadratic in its length. Within the 16 KiB head an `If-None-Match` of such a run cost 230 ms
/// of CPU, an `Accept` 46 ms. Form fields and JSON strings are checked as they are read (`FormBody.text`,
/// `JSONValue(parsing:)`); this is the rest of a request's text, so that no comparison anywhere needs to
/// think about it. A request with nothing but ASCII costs one pass over its head, eight bytes at a time.
struct RequestTextMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    /// On REST API v1's routes, the refusal in its terms (``V1FormatMiddleware`` has not run yet: its
    /// `Accept` is not read before this check).
    let v1: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.isStreamSafe(request) else {
            var context = context
            if v1 { context.representation = .v1(.json) }
            return try ServiceAnswer.error(Self.refusal).response(from: request, context: context)
        }
        return try await next(request, context)
    }

    static let refusal = EnhancedError(
        status: 400, code: "malformed_request",
        message: "The request has a header, path or query with more than 30 combining characters in a row.", details: nil)

    static func isStreamSafe(_ request: Request) -> Bool {
        for field in request.headers where StreamSafeText.firstViolation(in: field.value) != nil { return false }
        var target = request.uri.description
        return target.withUTF8 { StreamSafeText.firstViolation(percentEncoded: $0) == nil }
    }
}
