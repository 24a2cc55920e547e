import Hummingbird
import Logging

/// The outermost middleware of every API route (``ServiceRoutes``): reads the request's headers once into
/// the context, then, after `next`, writes what the answer was (``ServiceRequestContext/Outcome``) into one
/// access-log line (never the body, a header value or an attribute value at `info`; the library's refusal
/// message at `debug`), the verdict metric of the verifying routes, and the span's annotations, and sets
/// `Retry-After` on a `503`.
///
/// Refusals are answers (``ServiceAnswer``), not thrown `HTTPResponseError`s: every outcome of the
/// service, accepted or refused, is recorded, and an error Hummingbird itself throws (a malformed
/// request) stays distinguishable in the logs from a verdict of the service.
struct AnswerMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let service: TokenExchangeService
    /// The verdict metric's `endpoint` (`profiles/sso`, `tokens/authn`), on the routes that verify.
    let verdict: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var context = context
        context.headers = RequestHeaders(request.headers)
        var response = try await next(request, context)
        guard let result = context.outcome.recorded else { return response }
        let elapsed = ContinuousClock.now - started
        let mvpd = service.metricLabel(mvpd: result.mvpd)
        if let verdict {
            service.metrics.verdict(endpoint: verdict, code: result.code, mvpd: mvpd, elapsed)
        }
        RequestSpan.annotate(verdict: result.code, mvpd: mvpd)
        let logger = context.logger
        if logger.logLevel <= .info {
            var metadata: Logger.Metadata = [
                "status": "\(result.status)", "code": "\(result.code)", "latency_us": "\(elapsed.nanoseconds / 1000)",
            ]
            if let mvpd = result.mvpd { metadata["mvpd"] = "\(mvpd)" }
            if let trace = result.trace { metadata["trace"] = "\(trace)" }
            logger.info("\(request.method) \(context.endpointPath ?? "unmatched")", metadata: metadata)
        }
        if let detail = result.detail {
            logger.debug("refusal detail", metadata: ["detail": "\(detail)"])
        }
        if result.status == 503 { response.headers[.retryAfter] = "1" }
        return response
    }
}
