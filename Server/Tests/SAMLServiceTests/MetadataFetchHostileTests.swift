import AppleSSO
import Foundation
import Hummingbird
import Logging
import SAML
import SAMLLoad
import SAMLMockIdP
import SAMLTestSupport
import Synchronization
import Testing

@testable import SAMLService

/// A metadata URL that misbehaves: trickles its answer, answers `304` to a first request, serves another
/// entity's document or an older one signed by the same signer; and the backing copy's write.
@Suite("Metadata fetches under attack")
struct MetadataFetchHostileTests {
    typealias Trust = TrustMaintenanceTests

    /// Another IdP, whose metadata the same federation signer also signs.
    static let otherIdP = LoadMVPD(
        id: "MVPD-A", providerID: Service.mvpdA.providerID, issuer: "https://idp.other.example",
        identityProvider: Trust.mvpdANextKey.identityProvider, profileFields: Service.mvpdA.profileFields, mapping: Service.mvpdA.mapping)

    static func metadata(entityID: String, _ certificates: [[UInt8]], validFor: Duration) throws -> [UInt8] {
        try Trust.signer.metadata(
            entityID: entityID, signingCertificates: certificates, validUntil: .now() + validFor, cacheDuration: "PT1S")
    }

    static func failures(_ metrics: ServiceMetrics, _ reason: String) -> Bool {
        String(decoding: metrics.exposition(), as: UTF8.self).contains(
            #"saml_trust_refresh_failures_total{mvpd="MVPD-A",reason="\#(reason)"}"#)
    }

    @Test("a signed document naming another entity is refused for a source bound to the first, logged at error")
    func entityBinding() async throws {
        let published = Trust.Published()
        published.publish(try Trust.metadata([Trust.certificateA]))
        try await Trust.withMetadataServer(published) { metadataPort in
            let trust = try Trust.trustFile(url: "http://127.0.0.1:\(metadataPort)/idp-a.xml")
            let metrics = ServiceMetrics()
            let logs = CapturedLogs()
            try await Service.with(Trust.configuration(trust: trust), metrics: metrics, logger: logs.logger) { port in
                #expect(try await Trust.login(port, Service.mvpdA).status == 201)
                published.publish(try Self.metadata(entityID: Self.otherIdP.issuer, [Trust.certificateB], validFor: .seconds(2 * 86_400)))
                #expect(try await Trust.eventually { Self.failures(metrics, "entity-changed") })
                #expect(try await Trust.login(port, Self.otherIdP).status != 201)
                #expect(try await Trust.login(port, Service.mvpdA).status == 201)
                #expect(logs.all.contains { $0.level == .error && $0.metadata["reason"] == "entity-changed" })
            }
        }
    }

    @Test(
        "an older document, still valid and signed, is not swapped back in over the one in force, with or without an entityID",
        arguments: [nil, Service.mvpdA.issuer])
    func noRollback(entityID: String?) async throws {
        let published = Trust.Published()
        let older = try Trust.metadata([Trust.certificateA], validFor: .seconds(86_400))
        published.publish(try Trust.metadata([Trust.certificateB], validFor: .seconds(2 * 86_400)))
        try await Trust.withMetadataServer(published) { metadataPort in
            let trust = try Trust.trustFile(url: "http://127.0.0.1:\(metadataPort)/idp-a.xml", entityID: entityID)
            let metrics = ServiceMetrics()
            try await Service.with(Trust.configuration(trust: trust), metrics: metrics) { port in
                let check1 = try await Trust.login(port, Trust.mvpdANextKey).status == 201
                #expect(check1)
                published.publish(older)
                let check2 = try await Trust.eventually { Self.failures(metrics, "rollback") }
                #expect(check2)
                let check3 = try await Trust.login(port, Service.mvpdA).code == "signature.untrusted-key"
                #expect(check3)
                let check4 = try await Trust.login(port, Trust.mvpdANextKey).status == 201
                #expect(check4)
            }
        }
    }

    @Test("a 304 to the first, unconditional request is a failure; the backing copy is used")
    func notModifiedUnasked() async throws {
        let router = Router()
        router.get("/idp-a.xml") { _, _ in Response(status: .notModified) }
        try await Service.withServer(router) { metadataPort in
            let backing = try TemporaryFiles.file("backing.xml").path
            try Data(try Trust.metadata([Trust.certificateA])).write(to: URL(fileURLWithPath: backing))
            let trust = try Trust.trustFile(url: "http://127.0.0.1:\(metadataPort)/idp-a.xml", backingFile: backing)
            let metrics = ServiceMetrics()
            try await Service.with(Trust.configuration(trust: trust), metrics: metrics) { port in
                #expect(Self.failures(metrics, "http-status"))
                let check5 = try await Trust.login(port, Service.mvpdA).status == 201
                #expect(check5)
            }
        }
    }

    @Test("a metadata URL that trickles its answer holds start-up a few seconds at most, and each refresh until its deadline")
    func tricklingURL() async throws {
        let server = try TricklingServer()
        defer { server.stop() }
        let trust = try Trust.trustFile(url: "http://127.0.0.1:\(server.port)/idp-a.xml")
        let metrics = ServiceMetrics()
        let started = ContinuousClock.now
        try await Service.with(Trust.configuration(trust: trust), metrics: metrics) { port in
            #expect(ContinuousClock.now - started < .seconds(8), "start-up waited \(ContinuousClock.now - started)")
            let answer = try await Service.send(
                port, Service.exchange(try Service.response(Service.mvpdA, to: nil), Service.pfs("ProviderA")))
            #expect(Service.detailCode(answer) == "trust.unavailable")
            #expect(try await Trust.login(port, Service.mvpdB).status == 201)
            #expect(Self.failures(metrics, "timeout"))
        }
        // The refresh loop: every fetch ends at its deadline and is counted, so that the alert on failures fires.
        let contents = try TrustFile.read(contentsOf: trust)
        let registry = try TrustRegistry(
            [:], template: .template(audience: .equals("x"), destination: .skip, replay: .skip))
        let loopMetrics = ServiceMetrics()
        let maintainer = TrustMaintainer(
            trustPath: trust, contents: contents, registry: registry, metrics: loopMetrics, logger: Service.quiet, clock: SystemClock(),
            listensForHangUp: false, startupBudget: .milliseconds(300), fetchTimeout: .milliseconds(700))
        let prepared = ContinuousClock.now
        await maintainer.prepare()
        #expect(ContinuousClock.now - prepared < .seconds(3))
        let running = Task { try await maintainer.run() }
        let counted = #"saml_trust_refresh_failures_total{mvpd="MVPD-A",reason="timeout"} "#
        #expect(
            try await Trust.eventually {
                let exposition = String(decoding: loopMetrics.exposition(), as: UTF8.self)
                guard let line = exposition.split(separator: "\n").first(where: { $0.hasPrefix(counted) }) else { return false }
                return (Int(line.dropFirst(counted.count)) ?? 0) >= 3
            })
        #expect(server.connections.load(ordering: .relaxed) >= 3)
        running.cancel()
        try await running.value
    }

    @Test("the backing copy replaces a symlink at its path, never writes through it, and leaves no temporary file")
    func backingCopyWrite() throws {
        let directory = try TemporaryFiles.folder("atomic")
        let victim = directory.appendingPathComponent("victim").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let path = directory.appendingPathComponent("mvpd.metadata.xml").path
        #expect(symlink(victim, path) == 0)
        try AtomicFile.replace(path, with: Array("<md/>".utf8))
        #expect(String(decoding: FileManager.default.contents(atPath: victim) ?? Data(), as: UTF8.self) == "precious")
        #expect(String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) == "<md/>")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["mvpd.metadata.xml", "victim"])
        // A directory that cannot be written: a typed failure, nothing left behind.
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.replace(directory.path + "/missing/x.xml", with: [1]) }
    }
}

/// An HTTP server on loopback that sends a `200` head announcing a large body, then one byte every 200 ms,
/// for as long as the client stays.
final class TricklingServer: Sendable {
    let port: Int
    let connections = Atomic<Int>(0)
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            connections.add(1, ordering: .relaxed)
            Thread.detachNewThread { [self] in trickle(client) }
        }
    }

    private func trickle(_ client: Int32) {
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = recv(client, &buffer, buffer.count, 0)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/samlmetadata+xml\r\nContent-Length: 100000\r\n\r\n<".utf8)
        guard head.withUnsafeBytes({ send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 else { return }
        while !stopped.load(ordering: .relaxed) {
            usleep(200_000)
            guard [UInt8(ascii: "a")].withUnsafeBytes({ send(client, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }) > 0 else { return }
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        close(listener)
    }
}
