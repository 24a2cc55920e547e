import AppleSSO
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SAML
import SAMLPostgres
import SAMLTestSupport
import Synchronization
import Testing
import X509

@testable import SAMLLoad
@testable import SAMLService

/// Operator mistakes and anonymous costs that must fail closed or be shouted (issue 66).
@Suite("Fail closed")
struct FailClosedTests {
    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// A folder of files for one test (TemporaryFiles removes it when the test process exits).
    final class Folder {
        let url: URL
        init() throws { url = try TemporaryFiles.folder("saml-fail-closed") }

        @discardableResult
        func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
            let path = url.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return path
        }

        /// A service configuration naming `members` besides the three paths.
        func configuration(_ members: String) throws -> String {
            try write(
                "service.json",
                """
                {"serviceProvider": "REF30", "mvpdConfiguration": "\(Service.vectors)/exchange/mvpd-configuration.json",
                 "trust": "\(Service.vectors)/exchange/trust.json"\(members.isEmpty ? "" : ", " + members)}
                """, mode: 0o644)
        }
    }

    static func refusal(_ path: String, environment: [String: String] = [:]) async -> String? {
        do {
            _ = try await ServiceConfiguration.load(contentsOf: path, environment: environment)
            return nil
        } catch let error as SAMLError {
            return error.code == .configurationInvalid ? error.message : "other code: \(error.code)"
        } catch {
            return "\(error)"
        }
    }

    @Test("a secret file its group or others may read is refused, naming the mode and the owner, never the secret")
    func readableSecretFiles() async throws {
        let folder = try Folder()
        for (setting, text) in [
            ("bearerTokensFile", "token-secret-a"), ("adminTokensFile", "admin-secret"),
            ("requestKeysFile", "1:" + String(repeating: "ab", count: 32)), ("storePasswordFile", "password-secret"),
        ] {
            for mode in [0o644, 0o604, 0o660, 0o620, 0o606, 0o650] {
                try folder.write("secret", text, mode: mode)
                let message = try #require(await Self.refusal(try folder.configuration(#""\#(setting)": "secret""#)), "\(setting) \(mode)")
                #expect(message.contains(setting) && message.contains("mode 0\(String(mode, radix: 8))") && message.contains("uid "))
                #expect(!message.contains(text.prefix(8)))
            }
            try folder.write("secret", text, mode: 0o600)
            #expect(await Self.refusal(try folder.configuration(#""\#(setting)": "secret""#)) == nil, "\(setting) at 0600")
            try folder.write("secret", text, mode: 0o400)
            #expect(await Self.refusal(try folder.configuration(#""\#(setting)": "secret""#)) == nil, "\(setting) at 0400")
            // Read by this process's own group (Kubernetes' fsGroup mounts 0440): accepted; by another group: not.
            let secret = try folder.write("secret", text, mode: 0o440)
            #expect(await Self.refusal(try folder.configuration(#""\#(setting)": "secret""#)) == nil, "\(setting) at 0440, own group")
            if geteuid() == 0 {
                #expect(chown(secret, 0, 4242) == 0)
                let message = await Self.refusal(try folder.configuration(#""\#(setting)": "secret""#))
                #expect(message?.contains("group 4242") == true, "\(setting) at 0440, another group: \(message ?? "accepted")")
                #expect(chmod(secret, 0o600) == 0 && chown(secret, 4242, 0) == 0)
                let foreign = await Self.refusal(try folder.configuration(#""\#(setting)": "secret""#))
                #expect(foreign?.contains("owned by this process's user") == true, "\(setting) of another user: \(foreign ?? "accepted")")
                #expect(chown(secret, 0, 0) == 0)
            }
            try folder.write("secret", text, mode: 0o644)
            #expect(
                await Self.refusal(try folder.configuration(#""\#(setting)": "secret", "allowReadableSecretFiles": true"#)) == nil,
                "\(setting) allowed readable")
        }
        // A FIFO at the path does not hang the start; an empty password file is refused.
        let fifo = folder.url.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let kind = await Self.refusal(try folder.configuration(#""storePasswordFile": "fifo""#))
        #expect(kind?.contains("regular") == true, "\(kind ?? "accepted")")
        try folder.write("empty", "\n")
        let empty = await Self.refusal(try folder.configuration(#""storePasswordFile": "empty""#))
        #expect(empty?.contains("storePasswordFile") == true, "\(empty ?? "accepted")")
        // A file that is not there is told apart from one that does not read.
        let missing = try #require(await Self.refusal(try folder.configuration(#""bearerTokensFile": "absent""#)))
        #expect(missing.contains("bearerTokensFile") && missing.contains("found none"))
    }

    @Test("an empty token file or list is refused, naming the setting; allowUnauthenticatedAPI says none is meant")
    func emptyTokens() async throws {
        let folder = try Folder()
        for text in ["", "\n", " \n ,\n"] {
            try folder.write("tokens", text)
            for setting in ["bearerTokensFile", "adminTokensFile"] {
                let message = try #require(await Self.refusal(try folder.configuration(#""\#(setting)": "tokens""#)), "\(setting)")
                #expect(message.contains(setting) && message.contains("empty"))
            }
            let open = try await ServiceConfiguration.load(
                contentsOf: try folder.configuration(#""bearerTokensFile": "tokens", "allowUnauthenticatedAPI": true"#), environment: [:])
            #expect(open.bearerTokens.isEmpty && open.allowUnauthenticatedAPI)
        }
        let path = try folder.configuration("")
        for variable in ["SAML_SERVICE_BEARER_TOKENS", "SAML_SERVICE_ADMIN_TOKENS"] {
            let message = await Self.refusal(path, environment: [variable: ","])
            #expect(message?.contains("found none") == true, "\(variable): \(message ?? "accepted")")
        }
    }

    @Test("sslmode disable or prefer to a host beyond loopback is refused unless allowPlaintextStore; loopback and require pass")
    func plaintextStore() async throws {
        for (url, exposed) in [
            ("postgres://saml@db.example.com/saml", ["db.example.com"]), ("postgres://saml@10.0.0.5/saml?sslmode=disable", ["10.0.0.5"]),
            ("postgres://saml@127.0.0.1,db2.example.com/saml?sslmode=prefer", ["db2.example.com"]),
            ("postgres://saml@127.0.0.1/saml", []), ("postgres://saml@localhost/saml?sslmode=disable", []),
            ("postgres://saml@[::1]:5433/saml", []), ("postgres://saml@db.example.com/saml?sslmode=require", []),
            ("postgres://saml@127.0.0.1.evil.example/saml", ["127.0.0.1.evil.example"]),
            ("postgres://saml@db.localhost/saml", ["db.localhost"]),
        ] {
            #expect(try PostgresStateStore.Configuration(url: url).hostsWithoutRequiredTLS == exposed, "\(url)")
        }
        var configuration = Service.configuration(store: "postgres://saml@db.example.com/saml")
        #expect(throws: SAMLError(.configurationInvalid, "")) {
            _ = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
        }
        configuration.allowPlaintextStore = true
        _ = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
    }

    @Test("the bearer token is checked before the method, the media type and the size")
    func tokenFirst() async throws {
        var configuration = Service.configuration()
        configuration.bearerTokens = ["token"]
        configuration.maximumBodyBytes = 16
        let application = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
        try await application.test(.router) { client in
            for (path, method) in [
                ("/api/v2/REF30/sessions/sso/Apple", HTTPRequest.Method.put), ("/api/v2/REF30/profiles", .delete),
                ("/api/v1/tokens/authn", .get), ("/api/v2/REF30/configuration", .post),
            ] {
                let anonymous = try await client.execute(uri: path, method: method, headers: [.contentType: "text/plain"])
                #expect(anonymous.status == .unauthorized && anonymous.headers[.allow] == nil, "\(method) \(path)")
                let authenticated = try await client.execute(uri: path, method: method, headers: [.authorization: "Bearer token"])
                #expect(authenticated.status == .methodNotAllowed && authenticated.headers[.allow] != nil, "\(method) \(path)")
            }
            let large = try await client.execute(
                uri: "/api/v2/REF30/profiles/sso/Apple", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .contentLength: "100000"], body: ByteBuffer(string: ""))
            #expect(large.status == .unauthorized)
            // The SP's metadata is public: its 405 needs no token.
            let metadata = try await client.execute(uri: "/api/v2/REF30/saml/metadata", method: .post)
            #expect(metadata.status == .methodNotAllowed)
        }
    }

    @Test("device identifiers are their bytes: NFC and NFD, and invalid UTF-8, never one device")
    func deviceBytes() async throws {
        let nfc = Array("fingerprint caf\u{E9}".utf8)
        let nfd = Array("fingerprint cafe\u{301}".utf8)
        #expect(String(decoding: nfc, as: UTF8.self) == String(decoding: nfd, as: UTF8.self), "Swift's equality, the trap")
        let keys = [nfc, nfd, Array("fingerprint caf%C3%A9".utf8)].map { DeviceIdentifier.key(bytes: $0) }
        #expect(Set(keys.compactMap { $0.map { Array($0.utf8) } }).count == 3)
        #expect(DeviceIdentifier.key(bytes: Array("fingerprint abc".utf8)) == "fingerprint abc")
        #expect(DeviceIdentifier.key(bytes: Array("fingerprint ".utf8) + [0xFF, 0x41]) == nil)
        #expect(DeviceIdentifier.key(bytes: Array("fingerprint ".utf8) + [0xC3]) == nil)
        // What SwiftNIO and swift-http-types make of invalid bytes and controls: refused, never merged.
        #expect(DeviceIdentifier.key(bytes: Array("fingerprint a\u{FFFD}b".utf8)) == nil)
        #expect(DeviceIdentifier.key(bytes: Array("fingerprint a b".utf8)) == nil)
        #expect(DeviceIdentifier.key(bytes: Array("fingerprint a\tb".utf8)) == nil)

        // Over HTTP: device A signs in; B, A's identifier in NFD, is not A; invalid UTF-8 is refused.
        try await Service.with { port in
            let deviceA = "caf\u{E9}-\(UInt32.random(in: 0...UInt32.max))"
            let exchange = try await Service.freshExchange(port, Service.mvpdA, device: deviceA)
            #expect(try await Service.send(port, exchange).status == 201)
            let status = Service.pfs(Service.mvpdA.providerID).headerValue
            let again = Service.json(try await Service.session(port, status, device: deviceA))
            #expect(again["actionName"] as? String == "authorize")
            let deviceB = deviceA.decomposedStringWithCanonicalMapping
            #expect(Array(deviceB.utf8) != Array(deviceA.utf8) && deviceB == deviceA)
            let other = Service.json(try await Service.session(port, status, device: deviceB))
            #expect(other["actionName"] as? String != "authorize")
            let profiles = try await Service.send(
                port, "/api/v2/REF30/profiles", method: "GET", headers: [("AP-Device-Identifier", "fingerprint \(deviceB)")])
            #expect(
                profiles.status == 200 && (Service.json(profiles)["profiles"] as? [String: Any])?.isEmpty == true,
                "\(String(decoding: profiles.body, as: UTF8.self))")
            let mine = try await Service.send(
                port, "/api/v2/REF30/profiles", method: "GET", headers: [("AP-Device-Identifier", "fingerprint \(deviceA)")])
            #expect((Service.json(mine)["profiles"] as? [String: Any])?.count == 1)
        }
        // Over a real connection: the raw bytes 0xFF and 0xFE (each decoded to U+FFFD by SwiftNIO) are refused.
        try await Service.with { port in
            for byte: UInt8 in [0xFF, 0xFE, 0x01] {
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let body = Array("domainName=app.example".utf8)
                var request = Array(
                    "POST /api/v2/REF30/sessions/sso/Apple HTTP/1.1\r\nHost: x\r\nAP-Device-Identifier: fingerprint ab".utf8)
                request +=
                    [byte] + Array("cd\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
                    + body
                try connection.write(bytes: request)
                let statuses = try HTTPConnectionTests.statuses(connection, count: 1)
                #expect(statuses == [400], "byte \(byte): \(statuses)")
            }
        }
        let application = try ServiceApplication.buildApplication(configuration: Service.configuration(), logger: Service.quiet)
        try await application.test(.router) { client in
            var headers = ServiceRouterTests.form()
            headers[HTTPField.Name("AP-Device-Identifier")!] = nil
            headers.append(HTTPField(name: HTTPField.Name("AP-Device-Identifier")!, value: Array("fingerprint ".utf8) + [0xC3, 0x28]))
            let invalid = try await client.execute(uri: "/api/v2/REF30/sessions/sso/Apple", method: .post, headers: headers)
            let object = try JSONSerialization.jsonObject(with: Data(invalid.body.readableBytesView)) as? [String: Any]
            #expect(invalid.status == .badRequest && object?["code"] as? String == "invalid_header_device_identifier")
        }
    }

    /// `configuration` signing its requests with the bundled SP key.
    static func signing(_ configuration: ServiceConfiguration) -> ServiceConfiguration {
        var configuration = configuration
        configuration.requestSigningKeyPath = "\(Service.vectors)/keys/sp-rsa-2048.key.pem"
        configuration.requestSigningCertificatePath = "\(Service.vectors)/keys/sp-rsa-2048.cert.pem"
        return configuration
    }

    @Test("anonymous signing has a budget: past it 503 with Retry-After, without signing; v1's profile requests share it")
    func signingBudget() async throws {
        var configuration = Self.signing(Service.configuration())
        configuration.signaturesPerSecond = 1
        let metrics = ServiceMetrics()
        let application = try ServiceApplication.buildApplication(configuration: configuration, metrics: metrics, logger: Service.quiet)
        let clock = ContinuousClock()
        let started = clock.now
        try await application.test(.router) { client in
            let pfs = HTTPField.Name("AP-Partner-Framework-Status")!
            let status = Service.pfs("ProviderA").headerValue
            var signed = (v2: 0, v1: 0), refused = 0
            var retryAfter: String?
            for index in 0..<10 {
                if index % 2 == 0 {
                    let answer = try await client.execute(
                        uri: "/api/v2/REF30/sessions/sso/Apple", method: .post, headers: ServiceRouterTests.form([pfs: status]),
                        body: ByteBuffer(string: "domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example"))
                    if answer.status == .ok { signed.v2 += 1 }
                    if answer.status == .serviceUnavailable {
                        refused += 1
                        retryAfter = answer.headers[.retryAfter]
                    }
                } else {
                    let answer = try await client.execute(uri: "/api/v1/REF30/profile-requests/MVPD-A?deviceType=tvOS", method: .get)
                    if answer.status == .ok { signed.v1 += 1 }
                    if answer.status == .serviceUnavailable { refused += 1 }
                }
            }
            // One signature a second, the bucket holding one: the first request signs, then at most one more a
            // second of the run; the rest are refused before they sign.
            let seconds = (clock.now - started) / .seconds(1)
            #expect(signed.v2 >= 1 && signed.v2 + signed.v1 <= 1 + Int(seconds.rounded(.up)), "\(signed) in \(seconds) s")
            #expect(refused == 10 - signed.v2 - signed.v1 && refused > 0)
            if signed.v2 < 5 { #expect(retryAfter == "1") }
            let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
            #expect(exposition.contains(#"saml_overload_rejections_total{reason="signing-budget-spent"} \#(refused)"#), "\(exposition)")
            #expect(exposition.contains(#"saml_requests_issued_total{mvpd="MVPD-A",api="v2"} \#(signed.v2)"#), "\(exposition)")
        }
        // The calibration measures the key: an RSA-2048 signature takes well under a second.
        let key = try SigningKey(
            privateKeyPEM: Array(try Data(contentsOf: URL(fileURLWithPath: configuration.requestSigningKeyPath!))),
            certificatePEM: nil)
        let measured = SigningBudget.calibrated(for: key)
        #expect(measured.cost > .zero && measured.cost < .seconds(1) && measured.rate >= 100)
    }

    @Test("under a signing flood the signatures stay within their budget and logins keep their latency")
    func signingFlood() async throws {
        var configuration = Self.signing(Service.configuration())
        configuration.verificationQueue = 256
        // A budget the flood exceeds (the default, a quarter of a core of RSA-2048 signatures, is about
        // 1,500 a second here: more than this in-process client asks for).
        configuration.signaturesPerSecond = 50
        try await Service.with(configuration) { port in
            // A login's Token Exchange (its sessions/sso made before: during the flood a device's sessions/sso
            // competes with the flood for the signatures, and may be told to retry).
            func login(_ exchange: HTTPRequestParts) async throws -> Duration {
                let clock = ContinuousClock()
                let started = clock.now
                let status = try await Service.send(port, exchange).status
                #expect(status == 201)
                return clock.now - started
            }
            var exchanges: [HTTPRequestParts] = []
            for _ in 0..<10 { exchanges.append(try await Service.freshExchange(port, Service.mvpdA)) }
            var quiet: [Duration] = []
            for exchange in exchanges.prefix(5) { quiet.append(try await login(exchange)) }
            let stop = Flag()
            let clock = ContinuousClock()
            let floodStarted = clock.now
            // Eight connections asking sessions/sso, each as fast as it is answered.
            let flood = Task {
                try await withThrowingTaskGroup(of: (signed: Int, refused: Int).self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            var tally = (signed: 0, refused: 0)
                            try await HTTPConnection.with(host: "127.0.0.1", port: port) { connection in
                                while !stop.value.load(ordering: .relaxed) {
                                    let answer = try await connection.send(
                                        method: .POST, path: "/api/v2/REF30/sessions/sso/Apple",
                                        headers: [
                                            ("AP-Device-Identifier", "fingerprint \(Service.newDevice())"),
                                            ("Content-Type", "application/x-www-form-urlencoded"),
                                            ("AP-Partner-Framework-Status", Service.pfs(Service.mvpdA.providerID).headerValue),
                                        ], body: Array("domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example".utf8))
                                    if answer.partnerRequestID != nil {
                                        tally.signed += 1
                                    } else if answer.status == 503 {
                                        tally.refused += 1
                                    }
                                }
                            }
                            return tally
                        }
                    }
                    return try await group.reduce(into: (signed: 0, refused: 0)) {
                        $0.signed += $1.signed; $0.refused += $1.refused
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            var flooded: [Duration] = []
            for exchange in exchanges.suffix(5) { flooded.append(try await login(exchange)) }
            try await Task.sleep(until: floodStarted + .seconds(2), clock: clock)
            stop.value.store(true, ordering: .relaxed)
            let tally = try await flood.value
            let elapsed = (clock.now - floodStarted) / .seconds(1)
            let median = { (values: [Duration]) in values.sorted()[values.count / 2] }
            let rate = 50
            // The budget holds: at most a second's worth at once plus the rate over the flood.
            #expect(tally.signed <= Int(Double(rate) * (elapsed + 1) * 1.5) + 8, "\(tally) in \(elapsed) s at \(rate)/s")
            #expect(tally.refused > 0, "the flood was refused past the budget: \(tally)")
            // Token Exchanges are not starved: without the budget they took 1.9-3.2 s under such a flood.
            #expect(median(flooded) < .seconds(1), "quiet \(quiet), flooded \(flooded)")
        }
    }

    @Test("the configuration answers are built once per snapshot, equal to a fresh build, with an ETag and 304")
    func configurationAnswers() async throws {
        let clock = ServiceRouterTests.MovableClock(.now())
        var configuration = Service.configuration()
        configuration.clock = clock
        let featured = configuration.featuredMVPDs
        let application = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
        let mvpds = try MVPDConfiguration.decode(Array(try Data(contentsOf: URL(fileURLWithPath: configuration.mvpdConfigurationPath))))
        try await application.test(.router) { client in
            let info = HTTPField.Name("X-Device-Info")!
            let device = Data(#"{"osName":"tvOS \"18\""}"#.utf8).base64EncodedString()
            let first = try await client.execute(uri: "/api/v2/REF30/configuration", method: .get, headers: [info: device])
            let expected = mvpds.json(
                requestor: .init(id: "REF30", name: nil, domains: []), featured: featured, device: #"tvOS "18""#,
                time: clock.now(), completesSSO: { ["MVPD-A", "MVPD-B"].contains($0) })
            #expect(first.status == .ok && Array(first.body.readableBytesView) == expected)
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("W/\""))
            clock.advance(.seconds(5))
            let second = try await client.execute(uri: "/api/v2/REF30/configuration", method: .get, headers: [info: device])
            #expect(second.headers[.eTag] == etag && Array(second.body.readableBytesView) != expected, "time moved on")
            let other = try await client.execute(uri: "/api/v2/REF30/configuration", method: .get)
            #expect(other.headers[.eTag] != etag, "another device type, another tag")
            let unchanged = try await client.execute(
                uri: "/api/v2/REF30/configuration", method: .get, headers: [info: device, .ifNoneMatch: "\"x\", \(etag)"])
            #expect(unchanged.status == .notModified && unchanged.body.readableBytes == 0)
            for path in ["/api/v1/config/REF30", "/api/v1/config/REF30.xml"] {
                let v1 = try await client.execute(uri: path, method: .get)
                let tag = try #require(v1.headers[.eTag])
                #expect(v1.status == .ok && !tag.hasPrefix("W/"))
                let again = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: tag])
                #expect(again.status == .notModified)
            }
            #expect(ConfigurationAnswers.matches("*", etag) && !ConfigurationAnswers.matches(nil, etag))
        }
    }

    @Test("the signing budget is a bucket of one second's signatures, refilled at its rate")
    func signingBucket() async throws {
        let budget = SigningBudget(rate: 20)
        var taken = 0
        while budget.take() { taken += 1 }
        // A second's worth at once (plus what refilled while taking them, at most a few).
        #expect(taken >= 20 && taken <= 22, "\(taken)")
        try await Task.sleep(for: .milliseconds(200))
        var refilled = 0
        while budget.take() { refilled += 1 }
        #expect(refilled >= 2 && refilled <= 20, "\(refilled) after 200 ms at 20/s")
    }

    /// A self-signed certificate of the bundled ECDSA P-256 key (MVPD-B's) valid from `notBefore` to `notAfter`.
    static func certificate(notBefore: Date, notAfter: Date) throws -> String {
        let pem = try String(contentsOfFile: "\(Service.vectors)/keys/ecdsa-p256.key.pem", encoding: .utf8)
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        let name = try DistinguishedName { CommonName("MVPD-B test signer") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey), notValidBefore: notBefore,
            notValidAfter: notAfter, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(key))
        return try certificate.serializeAsPEM().pemString
    }

    @Test("a pinned certificate that has ended stops verifying unless allowExpiredCertificates; its end is a gauge")
    func expiredPinnedCertificate() async throws {
        let folder = try Folder()
        let now = Date()
        let expired = try folder.write(
            "expired.pem", try Self.certificate(notBefore: now - 30 * 86_400, notAfter: now - 86_400), mode: 0o644)
        let trust = try folder.write(
            "trust.json",
            """
            {"MVPD-A": {"metadata": "\(Service.vectors)/metadata/idp-a-signed.xml", "signer": "\(Service.vectors)/keys/metadata-signer-rsa-2048.cert.pem"},
             "MVPD-B": {"issuer": "https://idp.mvpd-b.example.com", "certificates": ["\(expired)"]}}
            """, mode: 0o644)
        let pinned = try IdentityProvider(
            entityID: "https://idp.mvpd-b.example.com",
            keys: try TrustedKey.all(pem: Array(try Data(contentsOf: URL(fileURLWithPath: expired)))))
        let usable = KeyExpiry.usable(pinned, now: .now(), allowExpired: false)
        #expect(usable.identityProvider == nil && usable.expired.count == 1)
        #expect(KeyExpiry.usable(pinned, now: .now(), allowExpired: true).identityProvider != nil)

        for allowed in [false, true] {
            var configuration = Service.configuration()
            configuration.trustPath = trust
            configuration.allowExpiredCertificates = allowed
            let metrics = ServiceMetrics()
            try await Service.with(configuration, metrics: metrics) { port in
                let exchange = try await Service.freshExchange(port, Service.mvpdB)
                let answer = try await Service.send(port, exchange)
                if allowed {
                    #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
                } else {
                    // Configured, with no key left: unavailable (503), not an unknown MVPD (500).
                    #expect(
                        answer.status == 503 && answer.libraryCode == "trust.unavailable", "\(answer.status) \(answer.libraryCode ?? "")")
                }
                // The validity loop publishes every trusted key's end at its first pass.
                var exposition = ""
                for _ in 0..<50 where !exposition.contains("saml_trust_key_not_after_timestamp_seconds") {
                    try await Task.sleep(for: .milliseconds(100))
                    exposition = String(decoding: metrics.exposition(), as: UTF8.self)
                }
                #expect(exposition.contains(#"saml_trust_key_not_after_timestamp_seconds{mvpd="MVPD-B",source="pinned""#), "\(exposition)")
            }
        }
    }

    @Test("the last pinned key of an MVPD whose certificate ends while running stops verifying: the MVPD is refused")
    func pinnedCertificateEndsWhileRunning() throws {
        let folder = try Folder()
        let now = Date()
        let ending = try folder.write("ending.pem", try Self.certificate(notBefore: now - 86_400, notAfter: now + 3_600), mode: 0o644)
        let trust = try folder.write(
            "trust.json", #"{"MVPD-B": {"issuer": "https://idp.mvpd-b.example.com", "certificates": ["\#(ending)"]}}"#, mode: 0o644)
        let contents = try TrustFile.read(contentsOf: trust)
        let pinned = try #require(contents.pinned["MVPD-B"])
        let registry = try TrustRegistry(["MVPD-B": pinned], template: .template(audience: .equals("x"), destination: .skip, replay: .skip))
        let clock = ServiceRouterTests.MovableClock(.now())
        let maintainer = TrustMaintainer(
            trustPath: trust, contents: contents, registry: registry, metrics: ServiceMetrics(), logger: Service.quiet, clock: clock,
            listensForHangUp: false)
        var ended: Set<String> = []
        maintainer.enforceKeyExpiry(now: clock.now(), ended: &ended)
        #expect(registry.status["MVPD-B"] == .trusted(validUntil: nil) && ended.isEmpty)
        // Two hours on: the certificate has ended, and the key it pinned with it.
        clock.advance(.seconds(7_200))
        maintainer.enforceKeyExpiry(now: clock.now(), ended: &ended)
        #expect(registry.status["MVPD-B"] == .unavailable && ended.count == 1)
        #expect(registry.identityProvider(for: "MVPD-B") == nil)
        // A reload then finds it ended too, and keeps it refused.
        maintainer.applyTrustFile()
        maintainer.enforceKeyExpiry(now: clock.now(), ended: &ended)
        #expect(registry.status["MVPD-B"] == .unavailable)
    }
}
