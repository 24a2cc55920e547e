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
import Tracing

/// The Token Exchange service as a Hummingbird application: the routes of ``TokenExchangeService``,
/// `/health`, `/health/ready` and `/metrics`, request size and time limits, a connection cap, bounded
/// concurrent verifications, one access-log line per request and the metrics of ``ServiceMetrics``, and
/// the state store's lifecycle (a PostgreSQL pool runs as a service of the application; its schema is
/// prepared before the server accepts requests). With ``ServiceConfiguration/adminPort``, a second
/// listener answers `/health*` and `/metrics` outside the public listener's cap, with a small cap and
/// the same deadlines of its own.
///
/// Run it with ``run(_:configuration:logger:)`` (it stops gracefully on SIGTERM and SIGINT within
/// ``ServiceConfiguration/shutdownTimeout``: in-flight requests finish, then the store's pool closes) or
/// inside a `ServiceGroup`.
public enum ServiceApplication {
    /// Every answer's `Server` header.
    static let serverName = "swift-saml"

    /// - Parameters:
    ///   - store: a store of the caller's own (then ``ServiceConfiguration/store`` is not read; readiness
    ///     probes it when it conforms to ``StoreHealthCheck``); by default the configured one.
    ///   - authorizer: who decides `decisions/preauthorize` and `decisions/authorize` (for example a client
    ///     of the MVPD's own authorization service); by default the MVPD configuration's policies.
    ///   - onRunning: called with the bound port once the server accepts connections.
    public static func buildApplication(
        configuration: ServiceConfiguration, store custom: (any SAMLStateStore)? = nil, metrics: ServiceMetrics = ServiceMetrics(),
        authorizer: any ResourceAuthorizer = ConfiguredResourceAuthorizer(), logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        var services: [any Service] = []
        let tracing = try configuration.tracing.map { try ServiceTracing($0, logger: logger) }
        if let tracing { services.append(tracing.service) }
        let logger = tracing == nil ? logger : TraceContextLogHandler.wrapping(logger)
        let stores =
            try custom.map { ServiceStores.custom($0, configuration: configuration) }
            ?? ServiceStores.configured(configuration, metrics: metrics, logger: logger)
        let database = stores.database
        if let database { services.append(database) }
        let ready = stores.checkHealth
        let service = try TokenExchangeService(
            configuration: configuration, stores: stores, metrics: metrics, logger: logger, tracer: tracing?.tracer,
            authorizer: authorizer)
        let maintainer = TrustMaintainer(
            trustPath: configuration.trustPath, contents: service.trustContents, registry: service.trust, metrics: metrics,
            logger: logger, clock: configuration.clock, listensForHangUp: configuration.reloadsOnHangUp,
            allowsDevelopmentKeys: configuration.allowDevelopmentKeys, allowsExpiredCertificates: configuration.allowExpiredCertificates,
            onReload: { service.reload() })
        services.append(maintainer)
        let memory = MemoryStores(
            state: stores.memoryLogins, profiles: stores.memoryProfiles,
            retention: max(configuration.maximumAge + configuration.clockSkew, configuration.requestLifetime), database: database)
        if memory.state != nil {
            logger.info("in-memory store", metadata: memory.sizing.mapValues { .string($0) })
        }
        // With an admin listener, health and metrics are answered there only: the public listener serves the
        // API alone (per-MVPD metrics and readiness details are not the Internet's business).
        let router = buildRouter(
            service: service,
            admission: AdmissionControl(limit: configuration.maximumConcurrentVerifications, queue: configuration.verificationQueue),
            ready: ready, memory: memory, tracer: tracing?.tracer, health: configuration.adminPort == nil)
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: configuration.maximumHeaderBytes, maxHeaderListSize: configuration.maximumHeaderBytes,
            maxHeaderFieldCount: 100)
        if let adminPort = configuration.adminPort {
            // The admin listener is guarded as the public one, with its own small cap: connections held open
            // there must not take the process's descriptors from the public listener, nor the probes' slots.
            let limits = ConnectionGuard.Limits(
                maximumConnections: adminMaximumConnections, headerTimeout: configuration.headerTimeout,
                requestTimeout: configuration.requestTimeout, idleTimeout: min(configuration.idleTimeout, adminIdleTimeout))
            services.append(
                Application(
                    router: buildAdminRouter(
                        metrics: metrics, trust: service.trust, ready: ready, memory: memory, maintainer: maintainer,
                        credentials: configuration.adminTokens.isEmpty ? nil : service.credentials, service: service),
                    server: .http1(
                        configuration: http1(limits, ConnectionGuard.Registry(capacity: limits.maximumConnections), metrics, decoder)),
                    configuration: ApplicationConfiguration(
                        address: .hostname(configuration.adminHost, port: adminPort), serverName: serverName),
                    onServerRunning: { channel in
                        logger.info("admin listener", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
                    }, logger: logger))
        }
        let limits = ConnectionGuard.Limits(
            maximumConnections: configuration.maximumConnections, headerTimeout: configuration.headerTimeout,
            requestTimeout: configuration.requestTimeout, idleTimeout: configuration.idleTimeout)
        let registry = ConnectionGuard.Registry(capacity: configuration.maximumConnections)
        let storeKind = database == nil ? "memory" : "postgres"
        // Which release runs, at start and as a metric (saml_build_info).
        metrics.buildInfo(
            version: SAMLVersion.version, commit: SAMLVersion.commit,
            schema: database == nil ? "none" : "\(PostgresStateStore.schemaVersion)")
        logger.info(
            "saml-server starting",
            metadata: [
                "version": "\(SAMLVersion.version)", "commit": "\(SAMLVersion.commit)", "store": "\(storeKind)",
                "schema": "\(database == nil ? "none" : "\(PostgresStateStore.schemaVersion)")",
            ])
        var application = Application(
            router: router,
            server: .http1(configuration: http1(limits, registry, metrics, decoder)),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: serverName),
            services: services,
            onServerRunning: { channel in
                logger.info(
                    "listening",
                    metadata: [
                        "address": "\(channel.localAddress?.description ?? "?")", "store": "\(storeKind)",
                        "version": "\(SAMLVersion.version)",
                        "commit": "\(SAMLVersion.commit)",
                    ])
                await onRunning(channel.localAddress?.port ?? 0)
            },
            logger: logger
        )
        // Metadata URLs are read (or their backing copies) before the first request.
        application.beforeServerStarts { await maintainer.prepare() }
        if let database {
            // The store runs as a service beside the server: the schema is prepared through it, retried
            // while the database does not answer yet (it may be starting too).
            let limit = configuration.storeStartupTimeout
            application.beforeServerStarts { try await database.prepare(retryingFor: limit) }
        }
        return application
    }

    /// The admin listener's connection cap: probes and scrapes need a handful.
    static let adminMaximumConnections = 16
    /// The admin listener's longest idle connection (a scraper keeps its connection between scrapes).
    static let adminIdleTimeout: Duration = .seconds(30)

    /// A listener's HTTP/1.1 channel: ``ConnectionGuard`` after the decoder, Hummingbird's idle timer as well.
    private static func http1(
        _ limits: ConnectionGuard.Limits, _ registry: ConnectionGuard.Registry, _ metrics: ServiceMetrics,
        _ decoder: HTTP1Channel.Configuration.DecoderConfiguration
    ) -> HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionGuard(limits: limits, registry: registry, metrics: metrics)],
            idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds), httpDecoderConfiguration: decoder)
    }

    /// Runs `application` until SIGTERM or SIGINT, then lets in-flight requests finish within
    /// ``ServiceConfiguration/shutdownTimeout`` before cancelling them.
    public static func run(_ application: some ApplicationProtocol, configuration: ServiceConfiguration, logger: Logger) async throws {
        var group = ServiceGroupConfiguration(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        group.maximumCancellationDuration = .seconds(5)
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            // A listener that cannot bind says so with its address (NIO's error names neither host nor port).
            let listeners =
                "\(configuration.host):\(configuration.port)"
                + (configuration.adminPort.map { ", admin \(configuration.adminHost):\($0)" } ?? "")
            logger.error(
                "saml-server stopped on an error", metadata: ["error": "\(String(reflecting: error))", "listeners": "\(listeners)"])
            throw error
        }
        logger.info("saml-server stopped")
    }

    /// The public routes: the API of ``TokenExchangeService`` (one controller per API family, each in its
    /// file under `Controllers/` with its endpoints, through ``ServiceRoutes``), and the health and metrics
    /// routes unless an admin listener has them (`health` false).
    static func buildRouter(
        service: TokenExchangeService, admission: AdmissionControl, ready: @escaping @Sendable () async throws -> Void,
        memory: MemoryStores = MemoryStores(state: nil, profiles: nil), tracer: (any Tracer)? = nil, health: Bool = true
    ) -> Router<ServiceRequestContext> {
        let metrics = service.metrics
        let router = Router(context: ServiceRequestContext.self)
        if let tracer { router.add(middleware: RequestSpanMiddleware(tracer: tracer)) }
        router.add(middleware: ObservabilityMiddleware(metrics: metrics))
        let routes = ServiceRoutes(router: router, service: service, limit: service.configuration.maximumBodyBytes, admission: admission)
        SessionsController(service: service).addRoutes(to: routes)
        ProfilesController(service: service).addRoutes(to: routes)
        LegacyV1Controller(service: service).addRoutes(to: routes)
        MetadataController(service: service).addRoutes(to: routes)
        DecisionsController(service: service).addRoutes(to: routes)
        LogoutController(service: service).addRoutes(to: routes)
        routes.addMethodNotAllowed()
        if health { addHealthRoutes(to: router, metrics: metrics, trust: service.trust, ready: ready, memory: memory) }
        return router
    }

    /// The admin listener's routes: health and metrics, and with admin tokens at start `POST /admin/reload`
    /// (the trust file, the MVPD configuration and the secret files read again, as on SIGHUP; 202, or 401
    /// without a valid token, checked against the admin tokens as last read) and `POST /admin/sign-out`
    /// (``AdminSignOut``).
    static func buildAdminRouter(
        metrics: ServiceMetrics, trust: TrustRegistry, ready: @escaping @Sendable () async throws -> Void, memory: MemoryStores,
        maintainer: TrustMaintainer, credentials: Credentials?, service: TokenExchangeService
    ) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        addHealthRoutes(to: router, metrics: metrics, trust: trust, ready: ready, memory: memory)
        if let credentials {
            router.post("/admin/reload") { request, context in
                guard credentials.admitsAdmin(request.headers[.authorization]) else { return health(401, "unauthorized") }
                context.logger.info("admin: reloading the trust file, the MVPD configuration and the secret files")
                maintainer.reload()
                return health(202, "reloading")
            }
            AdminSignOut(service: service, credentials: credentials).addRoute(to: router)
        }
        return router
    }

    /// `/health/ready` is 503 only when the store does not answer, or the in-memory store is full of live
    /// entries (every login fails then). An MVPD whose trust expired or is unavailable is reported in the
    /// body (`"trust": {"MVPD": "expired"}`) but does not take the instance out of rotation: every instance
    /// shares that trust, and the others' MVPDs work. An in-memory store at 90% of its capacity is reported
    /// too (`"store": {"assertions": "near-full"}`).
    private static func addHealthRoutes<Context: RequestContext>(
        to router: Router<Context>, metrics: ServiceMetrics, trust: TrustRegistry,
        ready: @escaping @Sendable () async throws -> Void, memory: MemoryStores
    ) {
        router.get("/health") { _, _ in health(200, "ok") }
        router.get("/health/live") { _, _ in health(200, "ok") }
        router.get("/health/ready") { _, context in
            var degraded: [String: JSONValue] = [:]
            for (mvpd, status) in trust.status {
                switch status {
                case .trusted: break
                case .expired: degraded[mvpd] = "expired"
                case .unavailable: degraded[mvpd] = "unavailable"
                }
            }
            let store = memory.readiness
            do {
                try await ready()
                if store.values.contains("full") { return health(503, "store full", trust: degraded, store: store) }
                return health(200, "ok", trust: degraded, store: store)
            } catch {
                metrics.storeError(operation: "readiness")
                context.logger.warning(
                    "not ready: the store cannot serve a login",
                    metadata: ["reason": "\((error as? SAMLError)?.message ?? String(reflecting: type(of: error)))"])
                return health(503, "store unavailable", trust: degraded)
            }
        }
        router.get("/metrics") { _, _ in
            metrics.storeOccupancy(memory.occupancy)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
    }

    private static func health(_ status: Int, _ text: String, trust: [String: JSONValue] = [:], store: [String: String] = [:]) -> Response {
        var object: [String: JSONValue] = ["status": .string(text)]
        if !trust.isEmpty { object["trust"] = .object(trust) }
        if !store.isEmpty { object["store"] = .object(store.mapValues { .string($0) }) }
        return ServiceAnswer.json(status, JSONValue.object(object).bytes)
    }
}

extension Duration {
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

/// A store that can say whether it answers (for `/health/ready`).
public protocol StoreHealthCheck: Sendable {
    func checkHealth() async throws
}

extension PostgresStateStore: StoreHealthCheck {}

/// Times every request into `saml_http_request_duration_seconds` by route.
struct ObservabilityMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        metrics.duration(endpoint: context.endpointPath ?? "unmatched", status: response.status.code, ContinuousClock.now - started)
        return response
    }
}
