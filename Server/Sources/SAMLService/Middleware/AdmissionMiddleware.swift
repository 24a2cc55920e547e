import AppleSSO
import Hummingbird

/// The routes whose work is CPU (a verification, a signature) run through ``AdmissionControl``: at most
/// so many at once and so many waiting, `503 service_unavailable` (with `Retry-After`) beyond. The slot
/// is in the context (``ServiceRequestContext/admission``) for the handler to give up when its request
/// reaches the store, and given back when the request ends.
struct AdmissionMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let admission: AdmissionControl
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let result = await admission.run { slot async -> Result<Response, any Error> in
            var context = context
            context.admission = slot
            do { return .success(try await next(request, context)) } catch { return .failure(error) }
        }
        guard let result else {
            metrics.rejection("verification-queue-full")
            return try ServiceAnswer.error(Self.overloaded).response(from: request, context: context)
        }
        return try result.get()
    }

    static let overloaded = EnhancedError(
        status: 503, code: "service_unavailable", message: "The service is busy; retry later.", details: nil, action: "retry")
}
