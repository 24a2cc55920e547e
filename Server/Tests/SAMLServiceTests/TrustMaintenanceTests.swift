import AppleSSO
import Foundation
import Hummingbird
import SAML
import SAMLLoad
import SAMLMockIdP
import SAMLService
import SAMLTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// Issue 27: trust that follows the IdP's metadata, served over HTTP on loopback and changed while the
/// service runs (key added, used, removed; a bad signature; the server failing; expiry; the backing copy;
/// a reload of the trust file).
@Suite("Trust maintained from metadata")
struct TrustMaintenanceTests {
    static let vectors = Service.vectors
    static func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: "\(vectors)/\(path)"))) }

    /// Signs metadata as the IdP's metadata signer does (the trust file pins its certificate).
    static let signer = try! MockIdentityProvider(
        privateKeyPEM: read("keys/metadata-signer-rsa-2048.key.pem"), certificatePEM: read("keys/metadata-signer-rsa-2048.cert.pem"))
    static let attacker = try! MockIdentityProvider(
        privateKeyPEM: read("keys/attacker-rsa-2048.key.pem"), certificatePEM: read("keys/attacker-rsa-2048.cert.pem"))
    static let certificateA = try! read("keys/rsa-2048.cert.pem")
    static let certificateB = try! read("keys/rsa-4096.cert.pem")
    /// MVPD-A's IdP signing with its next key (RSA-4096).
    static let mvpdANextKey = LoadMVPD(
        id: "MVPD-A", providerID: Service.mvpdA.providerID, issuer: Service.mvpdA.issuer,
        identityProvider: try! MockIdentityProvider(privateKeyPEM: read("keys/rsa-4096.key.pem"), certificatePEM: certificateB),
        profileFields: Service.mvpdA.profileFields, mapping: Service.mvpdA.mapping)

    static func metadata(_ certificates: [[UInt8]], validFor: Duration = .seconds(86_400), by signer: MockIdentityProvider = signer)
        throws -> [UInt8]
    {
        try signer.metadata(
            entityID: Service.mvpdA.issuer, signingCertificates: certificates, validUntil: .now() + validFor, cacheDuration: "PT1S")
    }

    /// What the metadata server answers: a document (with its ETag), or a status.
    final class Published: Sendable {
        let state = Mutex<(status: Int, body: [UInt8], etag: String, requests: Int, notModified: Int)>((200, [], "\"0\"", 0, 0))
        func publish(_ body: [UInt8]) {
            state.withLock { $0 = (200, body, "\"\(UInt64.random(in: 0...UInt64.max))\"", $0.requests, $0.notModified) }
        }
        func fail(_ status: Int) { state.withLock { $0.status = status } }
    }

    /// Runs a metadata server on loopback serving `published` at `/idp-a.xml`.
    static func withMetadataServer<T: Sendable>(_ published: Published, _ body: (Int) async throws -> T) async throws -> T {
        let router = Router()
        router.get("/idp-a.xml") { request, _ -> Response in
            let (status, document, etag) = published.state.withLock { state in
                state.requests += 1
                let unchanged = request.headers[.ifNoneMatch] == state.etag && state.status == 200
                if unchanged { state.notModified += 1 }
                return (unchanged ? 304 : state.status, state.body, state.etag)
            }
            guard status == 200 else { return Response(status: .init(code: status)) }
            return Response(
                status: .ok, headers: [.contentType: "application/samlmetadata+xml", .eTag: etag],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: document)))
        }
        return try await Service.withServer(router, body)
    }

    /// A trust file in a fresh directory: MVPD-A from `url` (refreshed every 0.2-0.3 s), MVPD-B pinned.
    static func trustFile(url: String, backingFile: String? = nil, entityID: String? = nil, includeB: Bool = true) throws -> String {
        let directory = try TemporaryFiles.folder("trust")
        var entries = [
            "\"MVPD-A\": {\"metadataURL\": \"\(url)\", \"signer\": \"\(vectors)/keys/metadata-signer-rsa-2048.cert.pem\", "
                + "\"minimumRefreshSeconds\": 0.2, \"maximumRefreshSeconds\": 0.3"
                + (backingFile.map { ", \"backingFile\": \"\($0)\"" } ?? "") + (entityID.map { ", \"entityID\": \"\($0)\"" } ?? "") + "}"
        ]
        if includeB {
            entries.append(
                "\"MVPD-B\": {\"issuer\": \"https://idp.mvpd-b.example.com\", \"certificates\": [\"\(vectors)/keys/ecdsa-p256.cert.pem\"]}")
        }
        let path = directory.appendingPathComponent("trust.json").path
        try Data(("{" + entries.joined(separator: ", ") + "}").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func configuration(trust: String, adminPort: Int? = nil) -> ServiceConfiguration {
        var configuration = Service.configuration()
        configuration.trustPath = trust
        configuration.reloadsOnHangUp = false
        configuration.adminPort = adminPort
        configuration.adminTokens = ["admin-secret"]
        return configuration
    }

    /// A login for `mvpd` from start to end: its HTTP status and, when refused, the library code.
    static func login(_ port: Int, _ mvpd: LoadMVPD) async throws -> (status: Int, code: String?) {
        let answer = try await Service.send(port, try await Service.freshExchange(port, mvpd))
        return (answer.status, Service.detailCode(answer))
    }

    /// Polls `condition` until it holds or `timeout` passes.
    static func eventually(_ timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test("a key added, used and removed in the IdP's metadata is followed without a restart, with no failed login")
    func rollover() async throws {
        let published = Published()
        published.publish(try Self.metadata([Self.certificateA]))
        try await Self.withMetadataServer(published) { metadataPort in
            let backing = try TemporaryFiles.file("backing.xml").path
            let trust = try Self.trustFile(url: "http://127.0.0.1:\(metadataPort)/idp-a.xml", backingFile: backing)
            let metrics = ServiceMetrics()
            let adminPort = try await Service.freePort()
            try await Service.with(Self.configuration(trust: trust, adminPort: adminPort), metrics: metrics) { port in
                #expect(try await Self.login(port, Service.mvpdA).status == 201)
                #expect(try await Self.login(port, Self.mvpdANextKey).code == "signature.untrusted-key")
                // The unchanged document is asked for conditionally and answered 304.
                #expect(try await Self.eventually { published.state.withLock { $0.notModified } > 0 })

                // Logins run all along, each signed with the key the IdP uses at the time: none may fail.
                let usesNextKey = Atomic<Bool>(false)
                let stop = Atomic<Bool>(false)
                let background = Task { () -> (logins: Int, failures: [String]) in
                    var logins = 0
                    var failures: [String] = []
                    while !stop.load(ordering: .relaxed) {
                        let next = usesNextKey.load(ordering: .relaxed)
                        let result = try await Self.login(port, next ? Self.mvpdANextKey : Service.mvpdA)
                        logins += 1
                        if result.status != 201 { failures.append("\(next ? "next" : "old") key: \(result.status) \(result.code ?? "")") }
                    }
                    return (logins, failures)
                }
                // Step 1: the new key is published beside the old one.
                published.publish(try Self.metadata([Self.certificateA, Self.certificateB]))
                #expect(try await Self.eventually { try await Self.login(port, Self.mvpdANextKey).status == 201 })
                // Step 2: the IdP signs with the new key.
                usesNextKey.store(true, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(500))
                // Step 3: the old key is removed; its responses are refused, the new key's accepted.
                published.publish(try Self.metadata([Self.certificateB]))
                #expect(try await Self.eventually { try await Self.login(port, Service.mvpdA).code == "signature.untrusted-key" })
                try await Task.sleep(for: .milliseconds(500))
                stop.store(true, ordering: .relaxed)
                let (logins, failures) = try await background.value
                #expect(failures.isEmpty, "\(failures)")
                #expect(logins >= 4, "logins ran all along (a few a second in a debug build under a parallel suite)")
                #expect(try await Self.login(port, Self.mvpdANextKey).status == 201)
                // The backing copy holds the last good document.
                #expect(
                    try await Self.eventually {
                        FileManager.default.contents(atPath: backing).map(Array.init) == published.state.withLock { $0.body }
                    })

                // A document signed by another key, then a failing server: the last good trust stays.
                published.publish(try Self.metadata([Self.certificateA], by: Self.attacker))
                try await Task.sleep(for: .seconds(1))
                #expect(try await Self.login(port, Self.mvpdANextKey).status == 201)
                #expect(try await Self.login(port, Service.mvpdA).code == "signature.untrusted-key")
                published.fail(500)
                try await Task.sleep(for: .seconds(1))
                #expect(try await Self.login(port, Self.mvpdANextKey).status == 201)
                let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
                #expect(exposition.contains(#"saml_trust_refresh_failures_total{mvpd="MVPD-A",reason="http-status"}"#))
                #expect(
                    exposition.contains(#"saml_trust_refresh_failures_total{mvpd="MVPD-A",reason="signature.untrusted-key"}"#)
                        || exposition.contains(#"reason="signature.invalid""#))
                #expect(exposition.contains(#"saml_trust_last_refresh_timestamp_seconds{mvpd="MVPD-A"}"#))
                #expect(exposition.contains(#"saml_trust_expiry_seconds{mvpd="MVPD-A"}"#))

                // A reload of the trust file: MVPD-B removed. A wrong admin token changes nothing.
                try Data(
                    String(decoding: try Data(contentsOf: URL(fileURLWithPath: trust)), as: UTF8.self)
                        .replacingOccurrences(
                            of:
                                #", "MVPD-B": {"issuer": "https://idp.mvpd-b.example.com", "certificates": ["\#(Self.vectors)/keys/ecdsa-p256.cert.pem"]}"#,
                            with: ""
                        ).utf8
                )
                .write(to: URL(fileURLWithPath: trust))
                let refused = try await Service.send(adminPort, "/admin/reload", headers: [("Authorization", "Bearer wrong")])
                #expect(refused.status == 401)
                #expect(try await Self.login(port, Service.mvpdB).status == 201)
                let reload = try await Service.send(adminPort, "/admin/reload", headers: [("Authorization", "Bearer admin-secret")])
                #expect(reload.status == 202)
                #expect(try await Self.eventually { try await Self.login(port, Service.mvpdB).code == "trust.unknown-mvpd" })
                published.publish(try Self.metadata([Self.certificateB]))
                #expect(try await Self.eventually { try await Self.login(port, Self.mvpdANextKey).status == 201 })
            }
        }
    }

    @Test("expired metadata refuses the MVPD with trust.expired; a backing copy starts a service whose source is down")
    func expiryAndBackingCopy() async throws {
        let published = Published()
        // Valid long enough for a start and a first login on a loaded CI machine (3 s was not).
        published.publish(try Self.metadata([Self.certificateA], validFor: .seconds(10)))
        try await Self.withMetadataServer(published) { metadataPort in
            let backing = try TemporaryFiles.file("backing.xml").path
            let trust = try Self.trustFile(url: "http://127.0.0.1:\(metadataPort)/idp-a.xml", backingFile: backing)
            try await Service.with(Self.configuration(trust: trust)) { port in
                let first = try await Self.login(port, Service.mvpdA)
                #expect(first.status == 201, "\(first.code ?? "")")
                published.fail(503)
                #expect(try await Self.eventually(.seconds(25)) { try await Self.login(port, Service.mvpdA).code == "trust.expired" })
                let ready = try await Service.send(port, "/health/ready", method: "GET")
                #expect(ready.status == 200)
                #expect((Service.json(ready)["trust"] as? [String: Any])?["MVPD-A"] as? String == "expired")
                // Other MVPDs are untouched.
                #expect(try await Self.login(port, Service.mvpdB).status == 201)
            }
        }
        // The source is down: a valid backing copy is trusted; without one, the MVPD is unavailable.
        let dead = try RefusingPort()
        let deadPort = dead.port
        let backing = try TemporaryFiles.file("backing.xml").path
        try Data(try Self.metadata([Self.certificateA])).write(to: URL(fileURLWithPath: backing))
        let fromBacking = try Self.trustFile(url: "http://127.0.0.1:\(deadPort)/idp-a.xml", backingFile: backing)
        try await Service.with(Self.configuration(trust: fromBacking)) { port in
            let login = try await Self.login(port, Service.mvpdA)
            #expect(login.status == 201, "\(login.code ?? "")")
        }
        let nothing = try Self.trustFile(url: "http://127.0.0.1:\(deadPort)/idp-a.xml")
        try await Service.with(Self.configuration(trust: nothing)) { port in
            let answer = try await Service.send(
                port, Service.exchange(try Service.response(Service.mvpdA, to: nil), Service.pfs("ProviderA")))
            #expect(answer.status == 503)
            #expect(Service.detailCode(answer) == "trust.unavailable")
            let ready = try await Service.send(port, "/health/ready", method: "GET")
            #expect((Service.json(ready)["trust"] as? [String: Any])?["MVPD-A"] as? String == "unavailable")
        }
        withExtendedLifetime(dead) {}
    }

    @Test("a URL source must be signed and carry validUntil, within the maximum the operator sets")
    func sourceRules() throws {
        #expect(throws: SAMLError.self) { try MetadataSource(location: .url("http://idp.example/md")).validate() }
        #expect(throws: SAMLError.self) { try MetadataSource(location: .url("http://idp.example/md")).validate(allowingUnsigned: true) }
        try MetadataSource(location: .url("https://idp.example/md")).validate(allowingUnsigned: true)
        let signers = try TrustedKey.all(pem: Self.read("keys/metadata-signer-rsa-2048.cert.pem"))
        let source = MetadataSource(location: .url("http://idp.example/md"), signers: signers)
        try source.validate()
        let now = SAMLInstant.now()
        let unbounded = try Self.signer.metadata(
            entityID: Service.mvpdA.issuer, signingCertificates: [Self.certificateA], validUntil: nil)
        #expect(throws: SAMLError.self) { try source.read(unbounded, now: now) }
        // No maximum validity unless the operator sets one.
        let tooFar = try Self.metadata([Self.certificateA], validFor: .seconds(40 * 86_400))
        #expect(try source.read(tooFar, now: now).validUntil != nil)
        var bounded = source
        bounded.maximumValidity = .seconds(30 * 86_400)
        let error = #expect(throws: SAMLError.self) { try bounded.read(tooFar, now: now) }
        #expect(error?.code == .metadataValidUntilTooFar)
        let unsigned = try Self.signer.metadata(
            entityID: Service.mvpdA.issuer, signingCertificates: [Self.certificateA], validUntil: now + .seconds(3600), signed: false)
        let unsignedError = #expect(throws: SAMLError.self) { try source.read(unsigned, now: now) }
        #expect(unsignedError?.code == .metadataUnsigned)
        let good = try source.read(try Self.metadata([Self.certificateA]), now: now)
        // cacheDuration PT1S, clamped to the minimum (5 s by default).
        #expect(source.refreshInterval(for: good, now: now) == .seconds(5))
    }
}
