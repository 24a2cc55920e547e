import AppleSSO
import Crypto
import Foundation
import SAML
import SAMLMediaToken
import SAMLTestSupport
import Testing

@testable import SAMLLoad
@testable import SAMLService

/// Bearer tokens, admin tokens and request-ID keys rotated without a restart: their files read again on
/// `POST /admin/reload` (as on SIGHUP), old and new accepted during the overlap (issue 68).
@Suite("Secret rotation")
struct SecretRotationTests {
    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    static func key(_ id: Int, _ byte: String) -> String { "\(id):" + String(repeating: byte, count: 32) }

    static func reload(_ adminPort: Int, _ token: String) async throws -> Int {
        try await Service.send(adminPort, "/admin/reload", headers: [("Authorization", "Bearer \(token)")]).status
    }

    /// `condition` within 5 s (a reload is carried out within 200 ms).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<100 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("tokens and request-ID keys rotate on reload: the new one works at once, the old one until it is removed")
    func rotation() async throws {
        let folder = try TemporaryFiles.folder("rotation")
        let tokens = folder.appendingPathComponent("bearer-tokens").path
        let admin = folder.appendingPathComponent("admin-tokens").path
        let keys = folder.appendingPathComponent("request-keys").path
        try Self.write("old-token\n", to: tokens)
        try Self.write("admin-old\n", to: admin)
        try Self.write(Self.key(1, "ab") + "\n", to: keys)
        let adminPort = try await Service.freePort()
        let file = folder.appendingPathComponent("service.json").path
        try """
        {"serviceProvider": "REF30", "mvpdConfiguration": "\(Service.vectors)/exchange/mvpd-configuration.json",
         "trust": "\(Service.vectors)/exchange/trust.json", "port": 0, "adminPort": \(adminPort),
         "bearerTokensFile": "bearer-tokens", "adminTokensFile": "admin-tokens", "requestKeysFile": "request-keys",
         "userMetadataMapping": {"householdId": "householdID"}}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        var configuration = try await ServiceConfiguration.load(
            contentsOf: file, environment: ["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS": "true"])
        configuration.port = 0
        try await Service.with(configuration) { port in
            func api(_ token: String) async throws -> Int {
                try await Service.send(port, "/api/v2/REF30/configuration", method: "GET", headers: [("Authorization", "Bearer \(token)")])
                    .status
            }
            func reload(_ token: String) async throws -> Int { try await Self.reload(adminPort, token) }
            #expect(try await api("old-token") == 200)
            #expect(try await api("new-token") == 401)
            // A request issued under key 1, answered after the rotation.
            let status = Service.pfs(Service.mvpdA.providerID)
            let device = Service.newDevice()
            let pending = try await Service.session(port, status.headerValue, device: device, authorization: "old-token")
            let pendingID = try #require(pending.partnerRequestID)
            let staleDevice = Service.newDevice()
            let staleID = try #require(
                try await Service.session(port, status.headerValue, device: staleDevice, authorization: "old-token").partnerRequestID)

            // Overlap: both tokens, both keys (the new one first: it MACs new IDs).
            try Self.write("old-token\nnew-token\n", to: tokens)
            try Self.write("admin-old\nadmin-new\n", to: admin)
            try Self.write(Self.key(2, "cd") + "\n" + Self.key(1, "ab") + "\n", to: keys)
            #expect(try await reload("admin-old") == 202)
            #expect(try await Self.eventually { try await api("new-token") == 200 })
            #expect(try await api("old-token") == 200)
            let exchange = Service.exchange(
                try Service.response(Service.mvpdA, to: pendingID), status, device: device, accessToken: "new-token")
            #expect(try await Service.send(port, exchange).status == 201, "an ID of the old key still verifies during the overlap")

            // The old ones removed: refused, without a restart.
            try Self.write("new-token\n", to: tokens)
            try Self.write("admin-new\n", to: admin)
            try Self.write(Self.key(2, "cd") + "\n", to: keys)
            let oldKeyDevice = Service.newDevice()
            let oldKeyID = try #require(
                try await Service.session(port, status.headerValue, device: oldKeyDevice, authorization: "new-token").partnerRequestID)
            #expect(try await reload("admin-new") == 202)
            #expect(try await Self.eventually { try await api("old-token") == 401 })
            #expect(try await api("new-token") == 200)
            #expect(try await reload("admin-old") == 401)
            // An ID made with key 2 verifies; one made with key 1, now removed, is refused. An empty token
            // file at reload is refused, keeping the tokens in force.
            let late = Service.exchange(
                try Service.response(Service.mvpdA, to: oldKeyID), status, device: oldKeyDevice, accessToken: "new-token")
            #expect(try await Service.send(port, late).status == 201)
            let stale = Service.exchange(
                try Service.response(Service.mvpdA, to: staleID), status, device: staleDevice, accessToken: "new-token")
            let refused = try await Service.send(port, stale)
            #expect(refused.status == 400 && refused.libraryCode?.hasPrefix("in-response-to.") == true, "\(refused.libraryCode ?? "")")
            try Self.write("\n", to: tokens)
            #expect(try await reload("admin-new") == 202)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await api("new-token") == 200)
            #expect(try await api("anything") == 401)
        }
    }

    @Test("a reload applies the trust file's rules as now written, and a trust file that does not read still lets tokens rotate")
    func trustReload() async throws {
        let folder = try FailClosedTests.Folder()
        let tokens = try folder.write("bearer-tokens", "old-token\n")
        try folder.write("admin-tokens", "admin\n")
        let trust = folder.url.appendingPathComponent("trust.json").path
        func trustFile(signer: String) -> String {
            """
            {"MVPD-A": {"metadata": "\(Service.vectors)/metadata/idp-a-signed.xml", "signer": "\(Service.vectors)/keys/\(signer).cert.pem"},
             "MVPD-B": {"issuer": "https://idp.mvpd-b.example.com", "certificates": ["\(Service.vectors)/keys/ecdsa-p256.cert.pem"]}}
            """
        }
        try trustFile(signer: "metadata-signer-rsa-2048").write(toFile: trust, atomically: true, encoding: .utf8)
        let adminPort = try await Service.freePort()
        let file = folder.url.appendingPathComponent("service.json").path
        try """
        {"serviceProvider": "REF30", "mvpdConfiguration": "\(Service.vectors)/exchange/mvpd-configuration.json",
         "trust": "trust.json", "port": 0, "adminPort": \(adminPort), "bearerTokensFile": "bearer-tokens", "adminTokensFile": "admin-tokens",
         "requestKeys": ["\(Self.key(1, "ab"))"], "userMetadataMapping": {"householdId": "householdID"}}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        var configuration = try await ServiceConfiguration.load(
            contentsOf: file, environment: ["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS": "true"])
        configuration.port = 0
        try await Service.with(configuration) { port in
            func login(_ mvpd: LoadMVPD, _ token: String) async throws -> Int {
                let status = Service.pfs(mvpd.providerID)
                let device = Service.newDevice()
                // No request at all (an MVPD without trust is offered none) is a refusal too.
                guard let id = try await Service.session(port, status.headerValue, device: device, authorization: token).partnerRequestID
                else { return 0 }
                return try await Service.send(
                    port, Service.exchange(try Service.response(mvpd, to: id), status, device: device, accessToken: token)
                )
                .status
            }
            func reload() async throws -> Int { try await Self.reload(adminPort, "admin") }
            #expect(try await login(Service.mvpdA, "old-token") == 201)
            // The metadata's signer replaced by one that did not sign it: MVPD-A is refused from the reload on
            // (its document is read again under the new rule), MVPD-B untouched.
            try trustFile(signer: "attacker-rsa-2048").write(toFile: trust, atomically: true, encoding: .utf8)
            #expect(try await reload() == 202)
            #expect(try await Self.eventually { try await login(Service.mvpdA, "old-token") != 201 })
            #expect(try await login(Service.mvpdB, "old-token") == 201)
            // Back to the right signer: accepted again.
            try trustFile(signer: "metadata-signer-rsa-2048").write(toFile: trust, atomically: true, encoding: .utf8)
            #expect(try await reload() == 202)
            #expect(try await Self.eventually { try await login(Service.mvpdA, "old-token") == 201 })
            // A trust file that does not read keeps the trust in force, and the token rotation goes through.
            try "{not json".write(toFile: trust, atomically: true, encoding: .utf8)
            try Self.write("new-token\n", to: tokens)
            #expect(try await reload() == 202)
            #expect(try await Self.eventually { try await login(Service.mvpdB, "new-token") == 201 })
            #expect(try await login(Service.mvpdA, "new-token") == 201)
            #expect(
                try await Service.send(port, "/api/v2/REF30/configuration", method: "GET", headers: [("Authorization", "Bearer old-token")])
                    .status == 401)
        }
    }

    @Test(
        "media-token keys: read from their file (0600), a file others may read refused at start; on reload the new key is published beside the old, then signs"
    )
    func mediaTokenKeys() async throws {
        let folder = try TemporaryFiles.folder("media-keys")
        let keys = folder.appendingPathComponent("media-token-keys").path
        let old = P256.Signing.PrivateKey().pemRepresentation, new = P256.Signing.PrivateKey().pemRepresentation
        try Self.write(old, to: keys)
        let file = folder.appendingPathComponent("service.json").path
        try """
        {"serviceProvider": "REF30", "mvpdConfiguration": "\(Service.vectors)/exchange/mvpd-configuration.json",
         "trust": "\(Service.vectors)/exchange/trust.json", "mediaTokenKeysFile": "media-token-keys", "mediaTokenLifetimeSeconds": 60}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let environment = ["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS": "true"]
        let configuration = try await ServiceConfiguration.load(contentsOf: file, environment: environment)
        #expect(configuration.mediaTokenLifetime == .seconds(60))
        let service = try TokenExchangeService(
            configuration: configuration, stores: .memory(configuration), metrics: ServiceMetrics(), logger: Service.quiet, tracer: nil)
        let first = try #require(service.mediaTokens.keys.first?.keyID)
        #expect(service.mediaTokens.keys.count == 1)
        try Self.write(old + "\n" + new, to: keys)
        service.reload()
        #expect(service.mediaTokens.keys.map(\.keyID).first == first && service.mediaTokens.keys.count == 2)
        try Self.write(new + "\n" + old, to: keys)
        service.reload()
        let rotated = service.mediaTokens.keys.map(\.keyID)
        #expect(rotated.count == 2 && rotated[1] == first)
        let token = try await service.mediaTokens.issue(serviceProvider: "REF30", resource: "r", mvpd: "MVPD-A", device: "fingerprint d")
        #expect(token.claims.keyID == rotated[0])
        // A file that no longer reads leaves the keys in place.
        try Self.write("not a key", to: keys)
        service.reload()
        #expect(service.mediaTokens.keys.map(\.keyID) == rotated)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keys)
        await #expect(throws: SAMLError.self) { try await ServiceConfiguration.load(contentsOf: file, environment: environment) }
    }
}
