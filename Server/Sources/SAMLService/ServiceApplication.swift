import AppleSSO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import SAML
import SAMLPostgres
import ServiceLifecycle
import Synchronization

/// The Token Exchange service as a Hummingbird application: the routes of ``TokenExchangeService``,
/// `/health`, `/health/ready` and `/metrics`, request size limits, one access-log line per request and
/// the metrics of ``ServiceMetrics``, and the state store's lifecycle (a PostgreSQL pool runs as a
/// service of the application; its schema is prepared before the server accepts requests).
///
/// Run it with `runService()` (it stops gracefully on SIGTERM and SIGINT: in-flight requests finish,
/// then the store's pool closes) or inside a `ServiceGroup`.
public enum ServiceApplication {
    /// - Parameters:
    ///   - store: a store of the caller's own (then ``ServiceConfiguration/store`` is not read; readiness
    ///     probes it when it conforms to ``StoreHealthCheck``); by default the configured one.
    ///   - onRunning: called with the bound port once the server accepts connections.
    public static func make(
        configuration: ServiceConfiguration, store custom: (any SAMLStateStore)? = nil, metrics: ServiceMetrics = ServiceMetrics(),
        logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let store: any SAMLStateStore
        let ready: @Sendable () async throws -> Void
        var services: [any Service] = []
        var database: PostgresStateStore?
        var started: StartSignal?
        if let custom {
            store = custom
            ready = { if let probe = custom as? any StoreHealthCheck { try await probe.checkHealth() } }
        } else if configuration.store == "memory" {
            store = InMemoryStateStore()
            ready = {}
        } else {
            var storeConfiguration = try PostgresStateStore.Configuration(url: configuration.store)
            storeConfiguration.timeout = configuration.storeTimeout
            storeConfiguration.maximumConnections = configuration.storeConnections
            let postgres = PostgresStateStore(storeConfiguration, logger: logger)
            store = postgres
            ready = { try await postgres.checkHealth() }
            let service = StoreService(store: postgres)
            services.append(service)
            started = service.started
            database = postgres
        }
        let service = try TokenExchangeService(configuration: configuration, store: store, metrics: metrics, logger: logger)
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ObservabilityMiddleware(metrics: metrics))
        let limit = configuration.maximumBodyBytes

        router.post("/api/v2/:serviceProvider/sessions/sso/:partner") { request, context in
            try await answer(request, context, limit: limit) { headers, body in
                await service.session(
                    serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                    headers: headers, body: body)
            }
        }
        router.post("/api/v2/:serviceProvider/profiles/sso/:partner") { request, context in
            try await answer(request, context, limit: limit, metrics: metrics, endpoint: "profiles/sso") { headers, body in
                await service.profile(
                    serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                    headers: headers, body: body)
            }
        }
        router.post("/api/v1/tokens/authn") { request, context in
            try await answer(request, context, limit: limit, metrics: metrics, endpoint: "tokens/authn") { headers, body in
                await service.legacyAuthentication(headers: headers, body: body)
            }
        }
        router.get("/api/v2/:serviceProvider/configuration") { request, context in
            try await answer(request, context, limit: limit) { headers, _ in
                service.mvpdConfiguration(serviceProvider: context.parameters.get("serviceProvider") ?? "", headers: headers)
            }
        }
        router.get("/health") { _, _ in health(200, "ok") }
        router.get("/health/live") { _, _ in health(200, "ok") }
        router.get("/health/ready") { _, context in
            do {
                try await ready()
                return health(200, "ok")
            } catch {
                metrics.storeError(operation: "readiness")
                context.logger.warning("not ready: the store does not answer")
                return health(503, "store unavailable")
            }
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }

        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: configuration.maximumHeaderBytes, maxHeaderListSize: configuration.maximumHeaderBytes,
            maxHeaderFieldCount: 100)
        let storeKind = database == nil ? "memory" : "postgres"
        var application = Application(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: .seconds(60), httpDecoderConfiguration: decoder)),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "swift-saml"),
            services: services,
            onServerRunning: { channel in
                logger.info("listening", metadata: ["address": "\(channel.localAddress?.description ?? "?")", "store": "\(storeKind)"])
                await onRunning(channel.localAddress?.port ?? 0)
            },
            logger: logger
        )
        if let database, let started {
            // The pool runs as a service beside the server: the schema is prepared once it runs.
            application.beforeServerStarts {
                await started.wait()
                try await database.prepare()
            }
        }
        return application
    }

    /// Reads the body within the limit and the headers, runs `handler`, and turns its answer into a
    /// response; logs one line per request (never the body or attribute values at `info`).
    private static func answer(
        _ request: Request, _ context: BasicRequestContext, limit: Int, metrics: ServiceMetrics? = nil,
        endpoint: String = "",
        _ handler: (RequestHeaders, [UInt8]) async -> ServiceAnswer
    ) async throws -> Response {
        let started = ContinuousClock.now
        var result: ServiceAnswer
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            result = tooLarge(limit)
        } else {
            do {
                let buffer = try await request.body.collect(upTo: limit)
                let headers = RequestHeaders(
                    authorization: request.headers[.authorization], deviceIdentifier: request.headers[Self.deviceIdentifier],
                    deviceInfo: request.headers[Self.deviceInfo], partnerFrameworkStatus: request.headers[Self.partnerFrameworkStatus])
                result = await handler(headers, Array(buffer.readableBytesView))
            } catch is NIOTooManyBytesError {
                result = tooLarge(limit)
            }
        }
        let elapsed = ContinuousClock.now - started
        if let metrics {
            metrics.verdict(endpoint: endpoint, code: result.code)
        }
        var metadata: Logger.Metadata = [
            "status": "\(result.status)", "code": "\(result.code)",
            "latency_us": "\(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)",
        ]
        if let mvpd = result.mvpd { metadata["mvpd"] = "\(mvpd)" }
        context.logger.info("\(request.method) \(context.endpointPath ?? request.uri.path)", metadata: metadata)
        if let detail = result.detail { context.logger.debug("refusal detail", metadata: ["detail": "\(detail)"]) }
        return json(result.status, result.body)
    }

    /// A JSON response (no content type for an empty body, as `204`).
    private static func json(_ status: Int, _ body: [UInt8]) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: body.isEmpty ? [:] : [.contentType: "application/json;charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    private static func tooLarge(_ limit: Int) -> ServiceAnswer {
        .error(
            EnhancedError(
                status: 413, code: "request_too_large", message: "The request body is over \(limit) bytes.",
                details: SAMLError(.decodeTooLarge, "expected a request body of at most \(limit) bytes, found a larger one")))
    }

    private static func health(_ status: Int, _ text: String) -> Response {
        json(status, JSONValue.object(["status": .string(text)]).bytes)
    }

    static let deviceIdentifier = HTTPField.Name("AP-Device-Identifier")!
    static let deviceInfo = HTTPField.Name("X-Device-Info")!
    static let partnerFrameworkStatus = HTTPField.Name("AP-Partner-Framework-Status")!
}

/// A store that can say whether it answers (for `/health/ready`).
public protocol StoreHealthCheck: Sendable {
    func checkHealth() async throws
}

extension PostgresStateStore: StoreHealthCheck {}

/// Times every request into `saml_http_request_duration_seconds` by route.
struct ObservabilityMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        metrics.duration(endpoint: context.endpointPath ?? "unmatched", status: response.status.code, ContinuousClock.now - started)
        return response
    }
}

/// Runs the PostgreSQL pool and its clean-up for as long as the application runs.
struct StoreService: Service {
    let store: PostgresStateStore
    let started = StartSignal()

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await store.run() }
                // Let the pool's run() begin before anything leases a connection.
                await Task.yield()
                started.signal()
            }
        }
    }
}

/// Fires once; waiters before and after it are released.
final class StartSignal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func signal() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
