import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

/// `saml-server`: the commands that share state through a store, so that several processes given the
/// same `--store` URL act as several instances of one service. In this package (not in `saml`) because
/// PostgreSQL brings SwiftNIO. Exit status: 0 success, 1 rejected, 2 usage or I/O error.
@main
struct SAMLServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saml-server",
        abstract: "The Token Exchange service, its load harness, and SAML requests and verification with state shared through PostgreSQL.",
        subcommands: [
            ServeCommand.self, LoadCommand.self, RequestCommand.self, VerifyCommand.self, ExchangeCommand.self, BenchCommand.self,
        ]
    )
}

/// `--store postgres://user@host:port/db` or `memory`.
struct StoreOptions: ParsableArguments {
    @Option(help: "The state store: postgres://user[:password]@host[:port]/database, or memory (this process only).")
    var store: String = "memory"

    @Option(help: "Seconds before a store operation is abandoned (the verification then fails closed).")
    var storeTimeout: Double = 2

    /// Runs `body` with the store running and its schema prepared.
    func with<T: Sendable>(_ body: @Sendable (any SAMLStateStore) async throws -> T) async throws -> T {
        if store == "memory" { return try await body(InMemoryStateStore()) }
        var configuration = try PostgresStateStore.Configuration(url: store)
        configuration.timeout = .milliseconds(Int64(storeTimeout * 1000))
        let postgres = PostgresStateStore(configuration)
        let running = Task { await postgres.run() }
        defer { running.cancel() }
        try await postgres.prepare()
        return try await body(postgres)
    }
}

func fail(_ error: SAMLError, json: Bool = false) -> Never {
    if !json { FileHandle.standardError.write(Data("error: \(error.code): \(error.message)\n".utf8)) }
    Foundation.exit(1)
}

func read(_ path: String) throws -> [UInt8] {
    if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
    guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
    return Array(data)
}

struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Print a SAML request (Base64, as REST API v2 carries it), its ID and until when it can be answered.",
        discussion: """
            With --request-keys (the service's key file, <id>:<hex> per line), the ID is MACed for the \
            --service-provider, --mvpd, --identity-provider, --device and --api given, as the service's \
            sessions/sso issues it; otherwise a random ID that the caller must remember (verify --in-response-to).
            """)

    @Option(help: "The SP entity ID.") var issuer: String
    @Option(help: "The IdP endpoint.") var destination: String
    @Flag(help: "An AttributeQuery instead of an AuthnRequest.") var attributeQuery = false
    @Option(help: "Comma-separated attribute names (AttributeQuery).") var attributes: String?
    @Option(help: "The SP private key (PEM) to sign with.") var signKey: String?
    @Option(help: "The SP certificate (PEM) to put in KeyInfo.") var signCert: String?
    @Option(help: "Seconds the request can be answered.") var lifetime: Int = 300
    @Option(help: "A file of request-ID keys (<id>:<hex secret> per line), to MAC the ID as the service does.") var requestKeys: String?
    @Option(help: "Binding: the service provider.") var serviceProvider = ""
    @Option(help: "Binding: the MVPD id.") var mvpd = ""
    @Option(help: "Binding: the MVPD's IdP entity ID (default: --destination).") var identityProvider: String?
    @Option(help: "Binding: the device (AP-Device-Identifier value).") var device = ""
    @Option(help: "Binding: the API (v2 or v1).") var api = "v2"

    func run() async throws {
        let key = try signKey.map { try SigningKey(privateKeyPEM: try read($0), certificatePEM: try signCert.map(read)) }
        let names = (attributes ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        var issued: IssuedRequestID?
        do {
            if let requestKeys {
                let keys = try ServiceConfiguration.parseRequestKeys(
                    String(decoding: try read(requestKeys), as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init))
                let binding = RequestBinding(
                    serviceProvider: serviceProvider, mvpd: mvpd, identityProvider: identityProvider ?? destination, device: device,
                    api: api)
                issued = try RequestIDAuthority(keys: keys).issue(for: binding, lifetime: .seconds(lifetime), now: .now())
            }
        } catch let error as SAMLError {
            fail(error)
        }
        let request = try SAMLRequest(
            attributeQuery ? .attributeQuery(attributes: names) : .authnRequest, id: issued?.id, issuer: issuer, destination: destination,
            signingKey: key)
        let expiry = issued?.expiry ?? request.issueInstant + .seconds(lifetime)
        let object: [String: Any] = [
            "id": request.id, "request": request.base64, "type": "saml", "attributesNames": names, "notOnOrAfter": "\(expiry)",
        ]
        FileHandle.standardOutput.write(
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
    }
}

/// What verify and exchange share.
struct TrustOptions: ParsableArguments {
    @Option(name: .customLong("cert"), help: "A pinned IdP certificate (PEM). Repeatable.") var certificates: [String] = []
    @Option(name: .customLong("metadata"), help: "IdP metadata whose keys and entity ID are trusted.") var metadata: String?
    @Option(help: "The IdP entity ID (required with --cert).") var issuer: String?
    @Option(help: "The expected Audience.") var audience: String?
    @Option(help: "The endpoint the response was posted to.") var destination: String?
    @Option(help: "Also require this request ID (checked as a value, besides the store).") var inResponseTo: String?
    @Flag(help: "Accept responses that answer no request (IdP-initiated).") var allowUnsolicited = false
    @Flag(help: "Accept SHA-1.") var allowSHA1 = false

    func identityProvider() throws -> IdentityProvider {
        if let metadata {
            return IdentityProvider(metadata: try IdentityProviderMetadata.read(try read(metadata), entityID: issuer))
        }
        guard let issuer, !certificates.isEmpty else { throw ValidationError("give --metadata, or --issuer with --cert") }
        return try IdentityProvider(entityID: issuer, keys: try certificates.flatMap { try TrustedKey.all(pem: try read($0)) })
    }

    func template(_ store: any SAMLStateStore) -> SAMLResponseVerifier.Configuration {
        var configuration = SAMLResponseVerifier.Configuration.template(
            audience: ExpectedValue(orSkip: audience), destination: ExpectedValue(orSkip: destination),
            replay: .store(store, unsolicited: allowUnsolicited ? .allow : .refuse))
        configuration.inResponseTo = ExpectedValue(orSkip: inResponseTo)
        configuration.algorithms = allowSHA1 ? .allowingSHA1 : .strict
        return configuration
    }
}

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a response (XML, Base64 or form body) with replay detection and outstanding requests in the store.")

    @OptionGroup var trust: TrustOptions
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The response, or - for standard input.") var file: String = "-"

    func run() async throws {
        let input = try read(file)
        let identity = try trust.identityProvider()
        do {
            let response = try await storeOptions.with { store in
                var configuration = trust.template(store)
                configuration.trustedKeys = identity.keys
                configuration.issuer = .equals(identity.entityID)
                return try await SAMLResponseVerifier(configuration).verify(try SAMLResponseDecoder().decode(input))
            }
            let object: [String: Any] = [
                "valid": true, "assertionID": response.assertion.id, "inResponseTo": response.inResponseTo ?? NSNull(),
                "nameID": response.assertion.nameID?.value ?? NSNull(), "signingKeySHA256": response.signingKeyFingerprint,
            ]
            FileHandle.standardOutput.write(
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
        } catch let error as SAMLError {
            let object: [String: Any] = ["valid": false, "error": ["code": error.code.identifier, "message": error.message]]
            FileHandle.standardOutput.write(
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
            fail(error, json: true)
        }
    }
}

struct ExchangeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract: "The Token Exchange on a request body, with state in the store: the profile (exit 0) or the error object (exit 1).")

    @Option(help: "The MVPD configuration.") var config: String
    @Option(help: "The trust file (MVPD id -> IdP).") var trustFile: String
    @Option(help: "The AP-Partner-Framework-Status header value.") var pfs: String
    @Option(help: "The expected Audience.") var audience: String?
    @Flag(help: "Accept responses that answer no request (IdP-initiated).") var allowUnsolicited = false
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The request body, or - for standard input.") var body: String = "-"

    func run() async throws {
        let input = try read(body)
        let configuration = try MVPDConfiguration.decode(try read(config))
        let identityProviders = try TrustFile.load(contentsOf: trustFile)
        let result = try await storeOptions.with { store in
            let template = SAMLResponseVerifier.Configuration.template(
                audience: ExpectedValue(orSkip: audience), destination: .skip,
                replay: .store(store, unsolicited: allowUnsolicited ? .allow : .refuse))
            let exchange = TokenExchange(configuration: configuration, trust: try TrustRegistry(identityProviders, template: template))
            return await exchange.exchange(body: input, partnerFrameworkStatus: pfs)
        }
        switch result {
        case .success(let profile):
            FileHandle.standardOutput.write(Data(profile.json + [0x0A]))
        case .failure(let error):
            FileHandle.standardOutput.write(Data(error.json + [0x0A]))
            Foundation.exit(1)
        }
    }
}

/// `saml-server bench`: the cost of shared state, in one run: verifications per second and latency
/// percentiles with the in-memory store and with PostgreSQL (two instances, each its own pool).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Verifications/s and latency (p50, p99) with the in-memory store beside PostgreSQL, two instances.")

    @Option(help: "The PostgreSQL store (postgres://...).") var store: String
    @Option(help: "Responses per store.") var count: Int = 5000
    @Option(help: "Concurrent verifications.") var concurrency: Int = 8
    @Option(help: "The TestVectors folder (for the mock MVPD's key).") var vectors: String = "TestVectors"

    func run() async throws {
        let provider = try MockIdentityProvider(
            privateKeyPEM: try read("\(vectors)/keys/ecdsa-p256.key.pem"), certificatePEM: try read("\(vectors)/keys/ecdsa-p256.cert.pem"))
        let idp = try IdentityProvider(
            entityID: MockIdentityProvider.Template().issuer, keys: try TrustedKey.all(pem: try read("\(vectors)/keys/ecdsa-p256.cert.pem"))
        )
        print("| store | instances | verifications/s | p50 µs | p99 µs |")
        print("|---|---:|---:|---:|---:|")
        let memory = InMemoryStateStore()
        try await measure("in-memory", stores: [memory], provider: provider, idp: idp)
        var configuration = try PostgresStateStore.Configuration(url: store)
        configuration.maximumConnections = concurrency
        let a = PostgresStateStore(configuration), b = PostgresStateStore(configuration)
        let tasks = [Task { await a.run() }, Task { await b.run() }]
        defer { tasks.forEach { $0.cancel() } }
        try await a.prepare()
        try await measure("PostgreSQL", stores: [a, b], provider: provider, idp: idp)
    }

    func measure(_ name: String, stores: [any SAMLStateStore], provider: MockIdentityProvider, idp: IdentityProvider) async throws {
        // Generation (signing) first, outside the timed phase.
        var responses: [(xml: [UInt8], request: String)] = []
        for _ in 0..<count {
            let request = try SAMLRequest(issuer: "https://saml.sp.auth.adobe.com", destination: "https://idp.mvpd.example.com/sso")
            var template = MockIdentityProvider.Template()
            template.inResponseTo = request.id
            responses.append((try provider.response(template, issuedAt: .now(), placement: .assertion), request.id))
        }
        let verifiers = try stores.map { store in
            var configuration = SAMLResponseVerifier.Configuration(
                identityProvider: idp, audience: .equals(MockIdentityProvider.Template().audience), destination: .skip,
                replay: .store(store))
            configuration.maximumAge = nil
            return try SAMLResponseVerifier(configuration)
        }
        let all = responses
        let clock = ContinuousClock()
        let start = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var latencies: [Duration] = []
                    for index in stride(from: worker, to: all.count, by: concurrency) {
                        let began = clock.now
                        _ = try await verifiers[index % verifiers.count].verify(
                            all[index].xml, expecting: .init(inResponseTo: all[index].request))
                        latencies.append(clock.now - began)
                    }
                    return latencies
                }
            }
            var latencies: [Duration] = []
            for try await part in group { latencies += part }
            return latencies.sorted()
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        func micros(_ q: Double) -> Int {
            let d = latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))]
            return Int(d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000)
        }
        print("| \(name) | \(verifiers.count) | \(Int(Double(count) / seconds)) | \(micros(0.5)) | \(micros(0.99)) |")
    }
}
