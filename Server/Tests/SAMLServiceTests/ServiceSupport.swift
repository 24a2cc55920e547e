import AppleSSO
import Foundation
import Hummingbird
import Logging
import NIOPosix
import SAML
import SAMLLoad
import SAMLMockIdP
import SAMLService
import ServiceLifecycle
import Synchronization

/// Starts the service for real on an ephemeral loopback port and talks HTTP to it.
enum Service {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("TestVectors").path
    static let mvpds = try! LoadMVPD.bundled(vectors: vectors)
    static var mvpdA: LoadMVPD { mvpds[0] }
    static var mvpdB: LoadMVPD { mvpds[1] }
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func configuration(store: String = "memory") -> ServiceConfiguration {
        var configuration = ServiceConfiguration(
            serviceProvider: "REF30", mvpdConfigurationPath: "\(vectors)/exchange/mvpd-configuration.json",
            trustPath: "\(vectors)/exchange/trust.json")
        configuration.port = 0
        configuration.store = store
        // The bundled test IdPs (DevelopmentKeysTests checks that nothing else may use them).
        configuration.allowDevelopmentKeys = true
        configuration.userMetadataMapping = ["householdId": "householdID"]
        configuration.featuredMVPDs = ["MVPD-B"]
        // Instances sharing a store share request-ID keys.
        configuration.requestKeys = [try! RequestIDKey(id: 1, secret: Array(repeating: 0x5A, count: 32))]
        return configuration
    }

    /// Runs `body` with the port of a running service, then shuts it down gracefully.
    static func with<T: Sendable>(
        _ configuration: ServiceConfiguration = configuration(), store: (any SAMLStateStore)? = nil,
        metrics: ServiceMetrics = ServiceMetrics(),
        logger: Logger = quiet, _ body: (Int) async throws -> T
    ) async throws -> T {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = try ServiceApplication.buildApplication(
            configuration: configuration, store: store, metrics: metrics, logger: logger, onRunning: { continuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [application], logger: quiet))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        do {
            let result = try await body(port)
            await group.triggerGracefulShutdown()
            try await running.value
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
    }

    /// Runs a small HTTP server of `router` on a loopback port for the duration of `body` (a metadata
    /// source, a trace collector: what the service talks to).
    static func withServer<T: Sendable>(_ router: Router<BasicRequestContext>, _ body: (Int) async throws -> T) async throws -> T {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: quiet)
        let group = ServiceGroup(configuration: .init(services: [application], logger: quiet))
        let running = Task { try await group.run() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let result = try await body(port)
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        return result
    }

    static func send(
        _ port: Int, _ path: String, method: String = "POST", headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> HTTPConnection.Answer {
        try await HTTPConnection.with(host: "127.0.0.1", port: port) { connection in
            try await connection.send(method: .init(rawValue: method), path: path, headers: headers, body: body)
        }
    }

    static func send(_ port: Int, _ request: HTTPRequestParts) async throws -> HTTPConnection.Answer {
        try await HTTPConnection.with(host: "127.0.0.1", port: port) { try await $0.send(request) }
    }

    static func json(_ answer: HTTPConnection.Answer) -> [String: Any] {
        answer.jsonObject ?? [:]
    }

    /// The library code an error answer carries in `details` (`code: message`).
    static func detailCode(_ answer: HTTPConnection.Answer) -> String? {
        answer.libraryCode
    }

    static func pfs(_ providerID: String?, access: PartnerFrameworkStatus.AccessStatus? = .granted, expiresIn: Int64 = 86_400_000)
        -> PartnerFrameworkStatus
    {
        PartnerFrameworkStatus(
            accessStatus: access, providerID: providerID, expirationMilliseconds: SAMLInstant.now().millisecondsSinceEpoch + expiresIn)
    }

    static let deviceValue = "dGVzdC1kZXZpY2U="
    static let device: [(String, String)] = [("AP-Device-Identifier", "fingerprint \(deviceValue)")]

    /// sessions/sso for `mvpd`, from `device` (an `AP-Device-Identifier` fingerprint value).
    static func session(
        _ port: Int, _ header: String?, body: String = "domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example",
        device: String = deviceValue, authorization: String = "token"
    )
        async throws -> HTTPConnection.Answer
    {
        var headers = [
            ("AP-Device-Identifier", "fingerprint \(device)"), ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", "Bearer \(authorization)"),
        ]
        if let header { headers.append(("AP-Partner-Framework-Status", header)) }
        return try await send(port, "/api/v2/REF30/sessions/sso/Apple", headers: headers, body: Array(body.utf8))
    }

    /// The MVPD's signed answer to `requestID`, as the XML string the device receives.
    static func response(_ mvpd: LoadMVPD, to requestID: String?, nameID: String = "subscriber-\(UInt32.random(in: 0...UInt32.max))")
        throws -> String
    {
        var template = MockIdentityProvider.Template()
        template.issuer = mvpd.issuer
        template.inResponseTo = requestID
        template.nameID = nameID
        return String(decoding: try mvpd.identityProvider.response(template, issuedAt: .now(), placement: .assertion), as: UTF8.self)
    }

    /// The Token Exchange request a device sends for `response`.
    static func exchange(_ response: String, _ status: PartnerFrameworkStatus, device: String = deviceValue, accessToken: String = "token")
        -> HTTPRequestParts
    {
        TokenExchangeRequest.v2(
            samlAttributeQueryResponse: response, serviceProvider: "REF30", accessToken: accessToken, deviceIdentifier: device,
            deviceInfo: Data(#"{"model":"AppleTV"}"#.utf8).base64EncodedString(), partnerFrameworkStatus: status)
    }

    /// A fresh, accepted-to-be exchange for `mvpd` against the service on `port`, from a new device (a
    /// device that already has a profile for the MVPD is answered `authorize`, with no request).
    static func freshExchange(
        _ port: Int, _ mvpd: LoadMVPD, nameID: String = "subscriber-\(UInt32.random(in: 0...UInt32.max))", device: String = newDevice()
    )
        async throws
        -> HTTPRequestParts
    {
        let status = pfs(mvpd.providerID)
        let id = try await session(port, status.headerValue, device: device).partnerRequestID
        return exchange(try response(mvpd, to: id, nameID: nameID), status, device: device)
    }

    /// An `AP-Device-Identifier` fingerprint no test used before.
    static func newDevice() -> String {
        Data("device-\(UInt64.random(in: 0...UInt64.max))".utf8).base64EncodedString()
    }

    /// A port nothing listens on now.
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}

/// A loopback port held for the life of this value and refusing every connection: a socket bound without
/// `SO_REUSEADDR` and never listening. A port merely closed can be handed to another test's server running
/// in parallel (which then answers where nothing should); this one cannot be bound by anyone else.
final class RefusingPort: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard descriptor >= 0, bound == 0, named == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw CancellationError()
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// A store whose every operation fails (a database that went away): verification must fail closed.
struct FailingStore: SAMLStateStore, StoreHealthCheck {
    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        throw Self.error
    }
    func checkHealth() async throws { throw Self.error }
    static let error = SAMLError(.storeUnavailable, "expected the store to answer, found it unreachable")
}
