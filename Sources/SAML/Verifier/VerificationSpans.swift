public import Tracing

/// The spans of one verification, children of the caller's current span (`ServiceContext.current`):
/// `saml.decode`, `saml.parse`, `saml.signature`, `saml.decrypt`, `saml.validate` and `saml.store.consume`.
/// Without a tracer (``SAMLResponseVerifier/Configuration/tracer`` nil, the default) a phase runs its body
/// and nothing else: no span, no task-local read.
///
/// A span says what happened, never what the response said: its name, a refusal's stable code
/// (`saml.error.code`, and the span's status), and for the store the outcome. A thrown error's message is
/// never recorded (it may quote bytes of the request), so spans are not made with `withSpan`, which would
/// record it.
///
/// Phases are siblings under the caller's span, even where one runs inside another (the decryption of an
/// encrypted assertion happens between its two signatures): each is one step of the request, and the
/// caller's span stays the one its log lines name.
///
/// SPI (`@_spi(Spans) import SAML`) for this package's other modules and the service, whose own steps
/// (`saml.request.issue`) follow the same rules; not an API for applications.
@_spi(Spans)
public struct VerificationSpans: Sendable {
    public let tracer: (any Tracer)?

    public init(_ tracer: (any Tracer)?) {
        self.tracer = tracer
    }

    /// Runs `body` within the span `name`.
    public func phase<T>(_ name: String, _ body: () throws -> T) throws -> T {
        guard let tracer else { return try body() }
        return try Self.run(tracer, name, body)
    }

    /// Runs `body` within the span `name`, then sets the attributes `annotate` gives for its result.
    public func phase<T>(_ name: String, _ body: () async throws -> T, annotate: (T) -> SpanAttributes) async throws -> T {
        guard let tracer else { return try await body() }
        return try await Self.run(tracer, name, body, annotate: annotate)
    }

    private static func run<Spans: Tracer, T>(_ tracer: Spans, _ name: String, _ body: () throws -> T) throws -> T {
        let span = tracer.startSpan(name, ofKind: .internal)
        defer { span.end() }
        do {
            return try body()
        } catch {
            failed(span, error)
            throw error
        }
    }

    private static func run<Spans: Tracer, T>(
        _ tracer: Spans, _ name: String, _ body: () async throws -> T, annotate: (T) -> SpanAttributes
    ) async throws -> T {
        let span = tracer.startSpan(name, ofKind: .internal)
        defer { span.end() }
        do {
            let result = try await body()
            span.updateAttributes { $0.merge(annotate(result)) }
            return result
        } catch {
            failed(span, error)
            throw error
        }
    }

    /// The refusal's code, never its message.
    private static func failed(_ span: some Span, _ error: any Error) {
        let code = (error as? SAMLError)?.code.identifier ?? "internal"
        span.attributes["saml.error.code"] = code
        span.setStatus(SpanStatus(code: .error, message: code))
    }
}
