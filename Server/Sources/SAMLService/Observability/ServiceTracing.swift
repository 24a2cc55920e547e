import HTTPTypes
import Hummingbird
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// The service's traces (``ServiceConfiguration/tracing``), exported over OTLP/HTTP by swift-otel.
///
/// - A span per request (``RequestSpanMiddleware``), named by its route template, a child of the
///   caller's W3C `traceparent` when it sends one.
/// - Beneath it, the verifier's phases (`saml.decode`, `saml.parse`, `saml.signature`, `saml.decrypt`,
///   `saml.validate`, `saml.store.consume`: ``SAML/SAMLResponseVerifier/Configuration/tracer``) and
///   `saml.request.issue` where the service issues a SAML request.
/// - Every log line written while a request runs carries its `trace_id` and `span_id`
///   (``TraceContextLogHandler``).
///
/// The tracer is this instance's own, not the process's (`InstrumentationSystem` is left alone), so that
/// several services in one process (the tests) trace apart. Nothing of a request's content goes into a
/// span: route templates (never the path), status, the verdict's code and the MVPD as configured.
struct ServiceTracing: Sendable {
    let tracer: any Tracer
    let service: any Service

    init(_ settings: ServiceConfiguration.Tracing, logger: Logger) throws {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "swift-saml"
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        // W3C traceparent only (HTTPFieldsExtractor): neither baggage nor tracestate from anonymous callers.
        configuration.propagators = [.traceContext]
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.sampler =
            settings.sampleRatio >= 1 ? .parentBasedAlwaysOn : .parentBasedTraceIDRatio(ratio: settings.sampleRatio) ?? .parentBasedAlwaysOn
        configuration.traces.batchSpanProcessor.scheduleDelay = settings.exportInterval
        configuration.traces.batchSpanProcessor.maxQueueSize = 8192
        configuration.traces.otlpExporter.protocol = settings.encoding == .json ? .httpJSON : .httpProtobuf
        if let endpoint = settings.endpoint { configuration.traces.otlpExporter.endpoint = endpoint }
        let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
        self.tracer = tracer
        self.service = service
    }
}

/// One `SERVER` span per request but health probes and metric scrapes: `POST /api/v2/{serviceProvider}/profiles/sso/{partner}` (the route's
/// template as Hummingbird spells it), with `http.request.method`, `http.route`,
/// `http.response.status_code`, and, set by the controller, `saml.verdict` and `saml.mvpd`
/// (``RequestSpan``). The request's own `traceparent` is its parent (its `tracestate` is dropped). The span is the task's current
/// context while the request runs, so the verifier's phases are its children and the log lines name it.
struct RequestSpanMiddleware<Context: RequestContext>: RouterMiddleware {
    let tracer: any Tracer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Probes and scrapes are not traced: they would fill the export queue with noise.
        if let route = context.endpointPath, route.hasPrefix("/health") || route == "/metrics" { return try await next(request, context) }
        return try await RequestSpan.serve(
            tracer, method: request.method, route: context.endpointPath ?? "unmatched", headers: request.headers,
            status: { $0.status.code }
        ) { try await next(request, context) }
    }
}

/// The request's span, for the controller to annotate with what it decided.
enum RequestSpan {
    @TaskLocal static var current: (any Span)?

    /// Runs `body` as the request's `SERVER` span (``RequestSpanMiddleware``):
    /// named `"METHOD route"`, the child of the request's `traceparent`, the task's current context meanwhile;
    /// `status` reads the answer's status code.
    static func serve<Answer>(
        _ tracer: some Tracer, method: HTTPRequest.Method, route: String, headers: HTTPFields, status: (Answer) -> Int,
        _ body: () async throws -> Answer
    ) async rethrows -> Answer {
        var parent = ServiceContext.topLevel
        // Only a well-formed traceparent reaches the propagator, as the one value it reads: swift-otel logs
        // the carrier it could not read, and the request's headers (a bearer token, the device's
        // identifier) must never be written to a log.
        if let traceparent = TraceParent.validated(headers[.traceparent]) {
            tracer.extract(traceparent, into: &parent, using: TraceParent.Extractor())
        }
        let span = tracer.startSpan("\(method.rawValue) \(route)", context: parent, ofKind: .server)
        defer { span.end() }
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method.rawValue
            attributes["http.route"] = route
        }
        do {
            let answer = try await ServiceContext.$current.withValue(span.context) {
                try await RequestSpan.$current.withValue(span) { try await body() }
            }
            finish(span, status: status(answer))
            return answer
        } catch {
            finish(span, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }

    private static func finish(_ span: some Span, status: Int) {
        span.attributes["http.response.status_code"] = status
        // OpenTelemetry's HTTP conventions: a server span is an error for 5xx only (a 4xx is the caller's).
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }

    /// `saml.verdict` (`ok`, a library code or an Enhanced Error Code) and `saml.mvpd` (a configured MVPD).
    static func annotate(verdict: String, mvpd: String) {
        current?.updateAttributes { attributes in
            attributes["saml.verdict"] = verdict
            attributes["saml.mvpd"] = mvpd
        }
    }
}

/// The W3C Trace Context `traceparent` of a request, checked before anything reads it: version `00`,
/// exactly `00-<32 hex>-<16 hex>-<2 hex>` in lowercase, neither id all zeros; anything else (a later
/// version, a longer value, upper case) is no parent at all. `tracestate` is never read: an anonymous
/// caller's value would be copied into every span the request makes (W3C Trace Context lets a receiver
/// drop it).
enum TraceParent {
    static func validated(_ value: String?) -> String? {
        guard let value, value.utf8.count == 55 else { return nil }
        let bytes = Array(value.utf8)
        func hex(_ range: Range<Int>) -> Bool {
            bytes[range].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        func zeros(_ range: Range<Int>) -> Bool { bytes[range].allSatisfy { $0 == 0x30 } }
        guard bytes[0] == 0x30, bytes[1] == 0x30, bytes[2] == 0x2D, bytes[35] == 0x2D, bytes[52] == 0x2D,
            hex(3..<35), hex(36..<52), hex(53..<55), !zeros(3..<35), !zeros(36..<52)
        else { return nil }
        return value
    }

    /// Hands the validated value to the propagator as its `traceparent`, and nothing else.
    struct Extractor: Tracing.Extractor {
        func extract(key: String, from carrier: String) -> String? {
            key == "traceparent" ? carrier : nil
        }
    }
}

/// Adds the current span's `trace_id`, `span_id` and `trace_flags` to every line its handler writes, so
/// that a request's log lines and its trace find each other. Wraps whatever handler the logger had.
struct TraceContextLogHandler: LogHandler {
    var base: any LogHandler
    private let provider = OTel.makeLoggingMetadataProvider()

    init(wrapping base: any LogHandler) {
        self.base = base
    }

    /// `logger` with its handler wrapped.
    static func wrapping(_ logger: Logger) -> Logger {
        var logger = logger
        logger.handler = TraceContextLogHandler(wrapping: logger.handler)
        return logger
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        let trace = provider.get()
        guard !trace.isEmpty else { return base.log(event: event) }
        var event = event
        event.metadata = (event.metadata ?? [:]).merging(trace) { own, _ in own }
        base.log(event: event)
    }
}
