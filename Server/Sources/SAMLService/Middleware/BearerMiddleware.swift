import AppleSSO
import Hummingbird

/// `Authorization: Bearer <token>` on every authenticated route, checked once and first: nothing about
/// the path, the method or the body is told to an unauthenticated caller. `401
/// invalid_access_token_service_provider` (in REST API v1's terms on its routes) otherwise. No
/// configured token (``ServiceConfiguration/allowUnauthenticatedAPI``): every caller passes.
struct BearerMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    /// The tokens as last read (``TokenExchangeService/reload()`` replaces them).
    let credentials: Credentials

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = refusal(context.headers.authorization) { return try refusal.response(from: request, context: context) }
        return try await next(request, context)
    }

    /// The scheme in any case (RFC 9110 11.1), the token compared with every configured one over their
    /// SHA-256 digests in constant time.
    func refusal(_ authorization: String?) -> ServiceAnswer? {
        let digests = credentials.bearer
        guard !digests.isEmpty else { return nil }
        if let authorization, let token = BearerToken.credentials(in: authorization), BearerToken.matches(token, digests) { return nil }
        return .error(
            EnhancedError(
                status: 401, code: "invalid_access_token_service_provider",
                message: "The access token is invalid due to invalid service provider.", details: nil, action: "application-registration"))
    }
}
