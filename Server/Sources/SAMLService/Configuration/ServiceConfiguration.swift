import AppleSSO
import Foundation
import Logging
import SAML

/// What the Token Exchange service needs, read from a JSON file and the environment.
///
/// ```json
/// {
///   "serviceProvider": "REF30",
///   "mvpdConfiguration": "exchange/mvpd-configuration.json",
///   "trust": "exchange/trust.json",
///   "spEntityID": "https://saml.sp.auth.adobe.com",
///   "store": "memory",
///   "host": "127.0.0.1", "port": 8080
/// }
/// ```
///
/// Paths are relative to the file. Every other member has the default documented below. The
/// environment overrides the file: `SAML_SERVICE_HOST`, `SAML_SERVICE_PORT`, `SAML_SERVICE_STORE`,
/// `SAML_SERVICE_LOG_LEVEL`. Secrets never need the file or the process arguments: the database password
/// (`SAML_SERVICE_STORE_PASSWORD` or `storePasswordFile`), bearer tokens (`SAML_SERVICE_BEARER_TOKENS`
/// or `bearerTokensFile`) and request-ID keys (`SAML_SERVICE_REQUEST_KEYS` or `requestKeysFile`) come
/// from the environment or from files the configuration names.
public struct ServiceConfiguration: Sendable {
    /// Whether the trust may hold a key of the repository's `TestVectors/`, whose private keys are public
    /// (``DevelopmentKeys``). Default false: the service refuses to start with one, and refuses metadata
    /// that brings one. Only `saml-server serve --allow-development-keys` or
    /// `SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS=true` set it; the configuration file cannot.
    public var allowDevelopmentKeys = false
    /// The address to listen on. Default `127.0.0.1`: TLS is a proxy's job, so the service listens
    /// behind one (README).
    public var host = "127.0.0.1"
    /// Default 8080; 0 picks a free port (tests).
    public var port = 8080
    /// The service provider (requestor) id this service answers for: `{serviceProvider}` in the paths,
    /// `requestor` in REST API v1.
    public var serviceProvider: String
    /// The MVPD configuration (the v2 JSON or v1 XML/JSON ``AppleSSO/MVPDConfiguration/decode(_:)`` reads).
    public var mvpdConfigurationPath: String
    /// The trust file (``AppleSSO/TrustFile``): which identity provider each MVPD trusts.
    public var trustPath: String
    /// The SP's entity ID: the Issuer of the SAML requests this service issues, and the Audience it
    /// requires. Default `https://saml.sp.auth.adobe.com`.
    public var spEntityID = "https://saml.sp.auth.adobe.com"
    /// The Destination a response must name (the public URL of the Token Exchange endpoint), or nil to
    /// not check it (the MVPD's answer reaches the service through Apple's framework and the app).
    public var destination: String?
    /// `memory` (default: this process only) or `postgres://user[:password]@host[:port]/database[?sslmode=...]`.
    public var store = "memory"
    /// The database password, when not in the URL (from `SAML_SERVICE_STORE_PASSWORD` or `storePasswordFile`).
    public var storePassword: String?
    /// The deadline of one store operation; past it the request fails closed (503). Default 2 s.
    public var storeTimeout: Duration = .seconds(2)
    /// How long the service waits at start-up for the database to answer (preparing the schema, retried
    /// with backoff) before it stops. Default 60 s.
    public var storeStartupTimeout: Duration = .seconds(60)
    /// Connections to PostgreSQL, each carrying one transaction (a batch of logins) at a time. Default 4
    /// (docs/service.md: what it costs).
    public var storeConnections = 4
    /// The store's batching window: while the store is busy, a small transaction waits this long for more
    /// logins to carry (`PostgresStateStore.Configuration.batchWindow`). Default 1 ms; zero: off; at most 50 ms.
    public var storeBatchWindow: Duration = .milliseconds(1)
    /// With a shared store: the profile reads a second that `sessions/sso` and `GET .../profiles` (both
    /// anonymous) may send it from this instance; beyond, `sessions/sso` answers as if the device had no
    /// profile and `GET .../profiles` answers `503` (docs/service.md, "Limits"). Default 1,000.
    public var profileLookupsPerSecond = 1000
    /// With a shared store: the profile reads waiting on it at once from this instance. Default 8.
    public var profileLookupConcurrency = 8
    /// How long a SAML request issued by `sessions/sso` can be answered. Default 300 s.
    public var requestLifetime: Duration = .seconds(300)
    /// The oldest IssueInstant accepted (``SAML/SAMLResponseVerifier/Configuration/maximumAge``). Default
    /// 600 s. With ``clockSkew`` it bounds how long the store keeps an accepted assertion's ID.
    public var maximumAge: Duration = .seconds(600)
    /// The clock difference tolerated with the IdPs (``SAML/SAMLResponseVerifier/Configuration/clockSkew``).
    /// Default 180 s.
    public var clockSkew: Duration = .seconds(180)
    /// The largest request body accepted (413 above it). Default 256 KiB: a SAMLResponse is a few KiB;
    /// the library's own decode limit stays the last line.
    public var maximumBodyBytes = 256 * 1024
    /// The largest request header block accepted. Default 16 KiB.
    public var maximumHeaderBytes = 16 * 1024
    /// SAML attribute name → user-metadata key (``AppleSSO/UserMetadataMapping``).
    public var userMetadataMapping: [String: String] = [:]
    /// MVPD ids listed, in order, as `featuredAccountProviderIdentifiers` by the configuration endpoint.
    public var featuredMVPDs: [String] = []
    /// When not empty, every `/api/` request must carry `Authorization: Bearer <one of these>` (401
    /// otherwise). Empty (default): the service trusts the gateway in front of it to authenticate apps.
    public var bearerTokens: [String] = []
    /// Bearer tokens of the admin listener's `POST /admin/reload` (``adminPort``): without one the endpoint
    /// is absent. Secrets: `SAML_SERVICE_ADMIN_TOKENS` or `adminTokensFile`.
    public var adminTokens: [String] = []
    /// Accept responses that answer no request of this service (IdP-initiated). Default false.
    public var allowUnsolicited = false
    /// The SP's key and certificate (PEM paths) to sign the SAML requests with; unsigned when absent.
    public var requestSigningKeyPath: String?
    public var requestSigningCertificatePath: String?
    /// The SP's assertion consumer service URLs published in its metadata (`GET /api/v2/{sp}/saml/metadata`),
    /// the default first. Default: ``destination`` alone; with neither, the endpoint answers 404.
    public var assertionConsumerServiceURLs: [String] = []
    /// The certificate (PEM) of the SP's decryption key, published as its encryption key in its metadata.
    public var encryptionCertificatePath: String?
    /// The basic authentication flow a `sessions/sso` fallback sends the app to (this service does not
    /// host it): `{serviceProvider}`, `{code}` and `{mvpd}` are filled in, `domainName` and `redirectUrl`
    /// appended. Default `/api/v2/authenticate/{serviceProvider}/{code}` (Adobe Pass's path).
    public var authenticationURL = "/api/v2/authenticate/{serviceProvider}/{code}"
    /// How long a profile is valid after its exchange (`notAfter`): per MVPD, else the default (30 days).
    public var authenticationTTL: Duration = .seconds(30 * 86_400)
    public var mvpdAuthenticationTTLs: [String: Duration] = [:]
    /// The configuration endpoint's `requestor.name` (default: ``serviceProvider``) and `requestor.domains`.
    public var requestorName: String?
    public var domains: [String] = []
    /// Default `info`.
    public var logLevel: Logger.Level = .info
    /// The one clock of the service: the instants requests are issued at, the partner-framework header's
    /// expiry, every verification (and the in-memory store's expiries). Tests pin it; a shared store
    /// still compares request expiries with the database's clock.
    public var clock: any SAMLClock = SystemClock()
    /// The keys that MAC the IDs of issued requests (``SAML/RequestIDAuthority``), the first signing.
    /// Required with a shared store (every instance must check every other's IDs); with `memory`, a
    /// random key per process when empty. Read from `requestKeysFile` or `SAML_SERVICE_REQUEST_KEYS`:
    /// one key per line (or comma), `<id 0-255>:<secret, at least 64 hexadecimal digits>`.
    public var requestKeys: [RequestIDKey] = []
    /// With the `memory` store: the most assertion IDs, and the most answered requests, kept at once (each
    /// until the verifier would refuse its response anyway: at most `maximumAge` + `clockSkew`, 780 s by
    /// default). Full of live entries, logins fail closed (`503`, `replay.cache-full`). Default
    /// ``SAML/InMemoryStateStore/defaultCapacity`` (3,000,000: 3,000 logins a second for 780 s; about
    /// 100 bytes an entry, docs/service.md, "The in-memory store").
    public var memoryStoreCapacity = InMemoryStateStore.defaultCapacity
    /// With the `memory` store: the most profiles kept at once (when full, the one that expires soonest
    /// makes room). Default ``AppleSSO/InMemoryProfileStore/defaultCapacity`` (100,000).
    public var memoryProfileCapacity = InMemoryProfileStore.defaultCapacity
    /// Connections open at once on the public listener; one more closes the connection that has waited
    /// longest without a request in progress (or is refused when all are busy). Default 1,024.
    public var maximumConnections = 1024
    /// A request's head must arrive within this of the connection's start (or of the previous answer).
    /// Default 10 s.
    public var headerTimeout: Duration = .seconds(10)
    /// A whole request (head and body) must arrive within this of its first byte. Default 30 s.
    public var requestTimeout: Duration = .seconds(30)
    /// A keep-alive connection idle this long is closed. Default 60 s.
    public var idleTimeout: Duration = .seconds(60)
    /// Token Exchanges verified at once; more wait in a queue of ``verificationQueue``, and beyond it are
    /// answered `503` with `Retry-After`. Default 2 per core.
    public var maximumConcurrentVerifications = 2 * ProcessInfo.processInfo.activeProcessorCount
    /// Default 64.
    public var verificationQueue = 64
    /// A second listener for `/health*` and `/metrics` only (not subject to the public listener's
    /// connection cap), when set. The public listener answers them too.
    public var adminPort: Int?
    /// Default `127.0.0.1`.
    public var adminHost = "127.0.0.1"
    /// On SIGTERM, in-flight requests get this long to finish. Default 10 s.
    public var shutdownTimeout: Duration = .seconds(10)
    /// Whether SIGHUP reloads the trust file and the MVPD configuration (``TrustMaintainer``). Default true;
    /// tests that run several services in one process turn it off (a signal reaches the whole process).
    public var reloadsOnHangUp = true
    /// Traces over OpenTelemetry (docs/observability.md). nil, the default, traces nothing and costs
    /// nothing. The file's `tracing` object, `SAML_SERVICE_TRACING_ENDPOINT`, or the standard
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` turn it on;
    /// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off. Every other standard `OTEL_*`
    /// variable (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_HEADERS`, ...)
    /// overrides what is set here, as the OpenTelemetry specification has it.
    public var tracing: Tracing?

    /// Where and how spans are exported: OTLP over HTTP.
    public struct Tracing: Sendable, Equatable {
        /// The OTLP/HTTP traces URL (`http://collector:4318/v1/traces`); a URL with no path gets
        /// `/v1/traces`. nil: from the environment, else `http://localhost:4318/v1/traces`.
        public var endpoint: String?
        /// `http/protobuf` (the default, as OTLP's) or `http/json`.
        public var encoding: Encoding = .protobuf
        /// The share of traces kept among those that start here; a request whose `traceparent` says
        /// sampled, or not, is followed. Default 1.
        public var sampleRatio: Double = 1
        /// How often finished spans are sent (and whenever 8,192 wait; beyond that they are dropped and
        /// the drop is logged). Default 1 s.
        public var exportInterval: Duration = .seconds(1)

        public enum Encoding: String, Sendable {
            case protobuf = "http/protobuf"
            case json = "http/json"
        }

        public init(endpoint: String? = nil) {
            self.endpoint = endpoint
        }

        /// An absolute `http` or `https` URL with a host; with no path, OTLP/HTTP's `/v1/traces`.
        static func checkedEndpoint(_ text: String) throws -> String {
            guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty
            else {
                throw SAMLError(.configurationInvalid, "expected the tracing endpoint as an http(s) URL with a host, found \(quoted(text))")
            }
            return url.path.isEmpty || url.path == "/" ? (text.hasSuffix("/") ? String(text.dropLast()) : text) + "/v1/traces" : text
        }
    }

    /// Turns tracing on, exporting to `endpoint` (an http(s) URL; with no path, `/v1/traces`), the other
    /// tracing settings as they are: `SAML_SERVICE_TRACING_ENDPOINT`, `saml-server serve --tracing-endpoint`.
    public mutating func trace(to endpoint: String) throws {
        var settings = tracing ?? Tracing()
        settings.endpoint = try Tracing.checkedEndpoint(endpoint)
        tracing = settings
    }

    public init(serviceProvider: String, mvpdConfigurationPath: String, trustPath: String) {
        self.serviceProvider = serviceProvider
        self.mvpdConfigurationPath = mvpdConfigurationPath
        self.trustPath = trustPath
    }

    /// Reads the JSON file at `path`, then applies the environment.
    public static func load(contentsOf path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> ServiceConfiguration
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable service configuration at \(quoted(path)), found none")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let error as SAMLError {
            throw error
        } catch let DecodingError.typeMismatch(type, context), let DecodingError.valueNotFound(type, context) {
            throw SAMLError(
                .configurationInvalid, "expected \(type) for \(quoted(Self.keyPath(context))) in \(quoted(path)), found another value")
        } catch let DecodingError.keyNotFound(key, _) {
            throw SAMLError(.configurationInvalid, "expected \(quoted(key.stringValue)) in \(quoted(path)), found none")
        } catch {
            throw SAMLError(
                .configurationInvalid, "expected a JSON object in the service configuration \(quoted(path)), found another form")
        }
        var configuration = try file.configuration(relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent())
        try configuration.apply(environment: environment)
        return configuration
    }

    private static func keyPath(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    /// The configuration file as JSON: every member optional but the three paths, an unknown member
    /// refused (a misspelt security setting must not be silently ignored).
    private struct File: Decodable {
        var serviceProvider: String
        var mvpdConfiguration: String
        var trust: String
        var host: String?
        var port: Int?
        var spEntityID: String?
        var destination: String?
        var store: String?
        var storePasswordFile: String?
        var bearerTokensFile: String?
        var adminTokensFile: String?
        var requestKeysFile: String?
        var maximumConnections: Int?
        var memoryStoreCapacity: Int?
        var memoryProfileCapacity: Int?
        var headerTimeoutSeconds: Double?
        var requestTimeoutSeconds: Double?
        var idleTimeoutSeconds: Double?
        var maximumConcurrentVerifications: Int?
        var verificationQueue: Int?
        var adminPort: Int?
        var adminHost: String?
        var shutdownTimeoutSeconds: Double?
        var storeTimeoutSeconds: Double?
        var storeStartupTimeoutSeconds: Double?
        var storeConnections: Int?
        var storeBatchWindowMilliseconds: Double?
        var profileLookupsPerSecond: Int?
        var profileLookupConcurrency: Int?
        var requestLifetimeSeconds: Double?
        var maximumAgeSeconds: Double?
        var clockSkewSeconds: Double?
        var maximumBodyBytes: Int?
        var maximumHeaderBytes: Int?
        var userMetadataMapping: [String: String]?
        var featuredMVPDs: [String]?
        var bearerTokens: [String]?
        var allowUnsolicited: Bool?
        var requestSigningKey: String?
        var requestSigningCertificate: String?
        var assertionConsumerServiceURLs: [String]?
        var encryptionCertificate: String?
        var authenticationURL: String?
        var authenticationTTLSeconds: Double?
        var mvpdAuthenticationTTLSeconds: [String: Double]?
        var requestorName: String?
        var domains: [String]?
        var logLevel: String?
        var tracing: TracingFile?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case serviceProvider, mvpdConfiguration, trust, host, port, spEntityID, destination, store, storePasswordFile
            case bearerTokensFile, adminTokensFile, requestKeysFile, maximumConnections, headerTimeoutSeconds, requestTimeoutSeconds
            case memoryStoreCapacity, memoryProfileCapacity
            case idleTimeoutSeconds, maximumConcurrentVerifications, verificationQueue, adminPort, adminHost
            case shutdownTimeoutSeconds, storeTimeoutSeconds, storeStartupTimeoutSeconds, storeConnections, storeBatchWindowMilliseconds
            case profileLookupsPerSecond, profileLookupConcurrency
            case maximumAgeSeconds, clockSkewSeconds
            case requestLifetimeSeconds, maximumBodyBytes, maximumHeaderBytes, userMetadataMapping, featuredMVPDs
            case bearerTokens, allowUnsolicited, requestSigningKey, requestSigningCertificate, logLevel
            case assertionConsumerServiceURLs, encryptionCertificate, authenticationURL, authenticationTTLSeconds
            case mvpdAuthenticationTTLSeconds, requestorName, domains, tracing
        }

        init(from decoder: any Decoder) throws {
            try refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue), in: "the service configuration")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            serviceProvider = try container.decode(String.self, forKey: .serviceProvider)
            mvpdConfiguration = try container.decode(String.self, forKey: .mvpdConfiguration)
            trust = try container.decode(String.self, forKey: .trust)
            host = try container.decodeIfPresent(String.self, forKey: .host)
            port = try container.decodeIfPresent(Int.self, forKey: .port)
            spEntityID = try container.decodeIfPresent(String.self, forKey: .spEntityID)
            destination = try container.decodeIfPresent(String.self, forKey: .destination)
            store = try container.decodeIfPresent(String.self, forKey: .store)
            storePasswordFile = try container.decodeIfPresent(String.self, forKey: .storePasswordFile)
            bearerTokensFile = try container.decodeIfPresent(String.self, forKey: .bearerTokensFile)
            adminTokensFile = try container.decodeIfPresent(String.self, forKey: .adminTokensFile)
            requestKeysFile = try container.decodeIfPresent(String.self, forKey: .requestKeysFile)
            maximumConnections = try container.decodeIfPresent(Int.self, forKey: .maximumConnections)
            memoryStoreCapacity = try container.decodeIfPresent(Int.self, forKey: .memoryStoreCapacity)
            memoryProfileCapacity = try container.decodeIfPresent(Int.self, forKey: .memoryProfileCapacity)
            headerTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .headerTimeoutSeconds)
            requestTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .requestTimeoutSeconds)
            idleTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .idleTimeoutSeconds)
            maximumConcurrentVerifications = try container.decodeIfPresent(Int.self, forKey: .maximumConcurrentVerifications)
            verificationQueue = try container.decodeIfPresent(Int.self, forKey: .verificationQueue)
            adminPort = try container.decodeIfPresent(Int.self, forKey: .adminPort)
            adminHost = try container.decodeIfPresent(String.self, forKey: .adminHost)
            shutdownTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .shutdownTimeoutSeconds)
            storeTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .storeTimeoutSeconds)
            storeStartupTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .storeStartupTimeoutSeconds)
            storeConnections = try container.decodeIfPresent(Int.self, forKey: .storeConnections)
            storeBatchWindowMilliseconds = try container.decodeIfPresent(Double.self, forKey: .storeBatchWindowMilliseconds)
            profileLookupsPerSecond = try container.decodeIfPresent(Int.self, forKey: .profileLookupsPerSecond)
            profileLookupConcurrency = try container.decodeIfPresent(Int.self, forKey: .profileLookupConcurrency)
            requestLifetimeSeconds = try container.decodeIfPresent(Double.self, forKey: .requestLifetimeSeconds)
            maximumAgeSeconds = try container.decodeIfPresent(Double.self, forKey: .maximumAgeSeconds)
            clockSkewSeconds = try container.decodeIfPresent(Double.self, forKey: .clockSkewSeconds)
            maximumBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maximumBodyBytes)
            maximumHeaderBytes = try container.decodeIfPresent(Int.self, forKey: .maximumHeaderBytes)
            userMetadataMapping = try container.decodeIfPresent([String: String].self, forKey: .userMetadataMapping)
            featuredMVPDs = try container.decodeIfPresent([String].self, forKey: .featuredMVPDs)
            bearerTokens = try container.decodeIfPresent([String].self, forKey: .bearerTokens)
            allowUnsolicited = try container.decodeIfPresent(Bool.self, forKey: .allowUnsolicited)
            requestSigningKey = try container.decodeIfPresent(String.self, forKey: .requestSigningKey)
            requestSigningCertificate = try container.decodeIfPresent(String.self, forKey: .requestSigningCertificate)
            logLevel = try container.decodeIfPresent(String.self, forKey: .logLevel)
            assertionConsumerServiceURLs = try container.decodeIfPresent([String].self, forKey: .assertionConsumerServiceURLs)
            encryptionCertificate = try container.decodeIfPresent(String.self, forKey: .encryptionCertificate)
            authenticationURL = try container.decodeIfPresent(String.self, forKey: .authenticationURL)
            authenticationTTLSeconds = try container.decodeIfPresent(Double.self, forKey: .authenticationTTLSeconds)
            mvpdAuthenticationTTLSeconds = try container.decodeIfPresent([String: Double].self, forKey: .mvpdAuthenticationTTLSeconds)
            requestorName = try container.decodeIfPresent(String.self, forKey: .requestorName)
            domains = try container.decodeIfPresent([String].self, forKey: .domains)
            tracing = try container.decodeIfPresent(TracingFile.self, forKey: .tracing)
        }

        /// The configuration this file describes, its paths relative to `base`.
        func configuration(relativeTo base: URL) throws -> ServiceConfiguration {
            func relative(_ file: String) -> String {
                file.hasPrefix("/") ? file : base.appendingPathComponent(file).path
            }
            func duration(_ seconds: Double?) -> Duration? {
                seconds.map { .milliseconds(Int64($0 * 1000)) }
            }
            var configuration = ServiceConfiguration(
                serviceProvider: serviceProvider, mvpdConfigurationPath: relative(mvpdConfiguration), trustPath: relative(trust))
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            if let spEntityID { configuration.spEntityID = spEntityID }
            configuration.destination = destination
            if let store { configuration.store = store }
            if let storePasswordFile { configuration.storePassword = try secretText(relative(storePasswordFile)) }
            if let bearerTokensFile { configuration.bearerTokens = try secret(relative(bearerTokensFile)) }
            if let bearerTokens { configuration.bearerTokens = bearerTokens }
            if let adminTokensFile { configuration.adminTokens = try secret(relative(adminTokensFile)) }
            if let requestKeysFile { configuration.requestKeys = try parseRequestKeys(try secret(relative(requestKeysFile))) }
            if let maximumConnections { configuration.maximumConnections = maximumConnections }
            for (name, value) in [("memoryStoreCapacity", memoryStoreCapacity), ("memoryProfileCapacity", memoryProfileCapacity)] {
                if let value, value < 1 {
                    throw SAMLError(.configurationInvalid, "expected \(name) of at least 1, found \(value)")
                }
            }
            if let memoryStoreCapacity { configuration.memoryStoreCapacity = memoryStoreCapacity }
            if let memoryProfileCapacity { configuration.memoryProfileCapacity = memoryProfileCapacity }
            if let value = duration(headerTimeoutSeconds) { configuration.headerTimeout = value }
            if let value = duration(requestTimeoutSeconds) { configuration.requestTimeout = value }
            if let value = duration(idleTimeoutSeconds) { configuration.idleTimeout = value }
            if let maximumConcurrentVerifications { configuration.maximumConcurrentVerifications = maximumConcurrentVerifications }
            if let verificationQueue { configuration.verificationQueue = verificationQueue }
            configuration.adminPort = adminPort
            if let adminHost { configuration.adminHost = adminHost }
            if let value = duration(shutdownTimeoutSeconds) { configuration.shutdownTimeout = value }
            if let value = duration(storeTimeoutSeconds) { configuration.storeTimeout = value }
            if let value = duration(storeStartupTimeoutSeconds) { configuration.storeStartupTimeout = value }
            if let storeConnections { configuration.storeConnections = storeConnections }
            if let storeBatchWindowMilliseconds {
                guard (0...50).contains(storeBatchWindowMilliseconds) else {
                    throw SAMLError(.configurationInvalid, "expected storeBatchWindowMilliseconds from 0 to 50, found another value")
                }
                configuration.storeBatchWindow = .microseconds(Int64(storeBatchWindowMilliseconds * 1000))
            }
            for (name, value) in [
                ("profileLookupsPerSecond", profileLookupsPerSecond), ("profileLookupConcurrency", profileLookupConcurrency),
            ] {
                if let value, value < 1 {
                    throw SAMLError(.configurationInvalid, "expected \(name) of at least 1, found \(value)")
                }
            }
            if let profileLookupsPerSecond { configuration.profileLookupsPerSecond = profileLookupsPerSecond }
            if let profileLookupConcurrency { configuration.profileLookupConcurrency = profileLookupConcurrency }
            if let value = duration(requestLifetimeSeconds) { configuration.requestLifetime = value }
            if let value = duration(maximumAgeSeconds) { configuration.maximumAge = value }
            if let clockSkewSeconds {
                guard clockSkewSeconds >= 0, clockSkewSeconds <= 3600 else {
                    throw SAMLError(.configurationInvalid, "expected clockSkewSeconds from 0 to 3600, found \(clockSkewSeconds)")
                }
                configuration.clockSkew = .milliseconds(Int64(clockSkewSeconds * 1000))
            }
            if let maximumBodyBytes { configuration.maximumBodyBytes = maximumBodyBytes }
            if let maximumHeaderBytes { configuration.maximumHeaderBytes = maximumHeaderBytes }
            if let userMetadataMapping { configuration.userMetadataMapping = userMetadataMapping }
            if let featuredMVPDs { configuration.featuredMVPDs = featuredMVPDs }
            if let allowUnsolicited { configuration.allowUnsolicited = allowUnsolicited }
            configuration.requestSigningKeyPath = requestSigningKey.map(relative)
            configuration.requestSigningCertificatePath = requestSigningCertificate.map(relative)
            if let assertionConsumerServiceURLs { configuration.assertionConsumerServiceURLs = assertionConsumerServiceURLs }
            configuration.encryptionCertificatePath = encryptionCertificate.map(relative)
            if let authenticationURL { configuration.authenticationURL = authenticationURL }
            if let value = duration(authenticationTTLSeconds) { configuration.authenticationTTL = value }
            if let mvpdAuthenticationTTLSeconds {
                configuration.mvpdAuthenticationTTLs = mvpdAuthenticationTTLSeconds.compactMapValues(duration)
            }
            configuration.requestorName = requestorName
            if let domains { configuration.domains = domains }
            if let logLevel { configuration.logLevel = try level(logLevel) }
            configuration.tracing = try tracing?.settings()
            return configuration
        }
    }

    /// The file's `tracing` object: `endpoint`, `protocol`, `sampleRatio`, `exportIntervalSeconds`.
    private struct TracingFile: Decodable {
        var endpoint: String?
        var encoding: String?
        var sampleRatio: Double?
        var exportIntervalSeconds: Double?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case endpoint, encoding = "protocol", sampleRatio, exportIntervalSeconds
        }

        init(from decoder: any Decoder) throws {
            try refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue), in: "tracing")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            endpoint = try container.decodeIfPresent(String.self, forKey: .endpoint)
            encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
            sampleRatio = try container.decodeIfPresent(Double.self, forKey: .sampleRatio)
            exportIntervalSeconds = try container.decodeIfPresent(Double.self, forKey: .exportIntervalSeconds)
        }

        func settings() throws -> Tracing {
            var settings = Tracing(endpoint: try endpoint.map(Tracing.checkedEndpoint))
            if let encoding {
                guard let value = Tracing.Encoding(rawValue: encoding) else {
                    throw SAMLError(
                        .configurationInvalid, "expected tracing.protocol \"http/protobuf\" or \"http/json\", found \(quoted(encoding))")
                }
                settings.encoding = value
            }
            if let sampleRatio {
                guard (0...1).contains(sampleRatio) else {
                    throw SAMLError(.configurationInvalid, "expected tracing.sampleRatio from 0 to 1, found \(sampleRatio)")
                }
                settings.sampleRatio = sampleRatio
            }
            if let exportIntervalSeconds {
                guard exportIntervalSeconds > 0, exportIntervalSeconds <= 3600 else {
                    throw SAMLError(
                        .configurationInvalid,
                        "expected tracing.exportIntervalSeconds above 0 and at most 3600, found \(exportIntervalSeconds)"
                    )
                }
                settings.exportInterval = .milliseconds(Int64(exportIntervalSeconds * 1000))
            }
            return settings
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A misspelt setting must not be silently ignored: a member not in `known` is refused.
    private static func refuseUnknownMembers(_ decoder: any Decoder, known: [String], in object: String) throws {
        let known = Set(known)
        if let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted().first(where: {
            !known.contains($0)
        }) {
            throw SAMLError(.configurationInvalid, "expected only documented members in \(object), found \(quoted(unknown))")
        }
    }

    /// `SAML_SERVICE_HOST`, `SAML_SERVICE_PORT`, `SAML_SERVICE_STORE`, `SAML_SERVICE_LOG_LEVEL`,
    /// `SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS` (`true` or `false`), and the
    /// secrets `SAML_SERVICE_STORE_PASSWORD`, `SAML_SERVICE_BEARER_TOKENS`, `SAML_SERVICE_ADMIN_TOKENS` (comma- or line-separated) and
    /// `SAML_SERVICE_REQUEST_KEYS` (as `requestKeysFile`).
    public mutating func apply(environment: [String: String]) throws {
        if let value = environment["SAML_SERVICE_STORE_PASSWORD"] { storePassword = value }
        if let value = environment["SAML_SERVICE_BEARER_TOKENS"] { bearerTokens = Self.entries(value) }
        if let value = environment["SAML_SERVICE_ADMIN_TOKENS"] { adminTokens = Self.entries(value) }
        if let value = environment["SAML_SERVICE_REQUEST_KEYS"] { requestKeys = try Self.parseRequestKeys(Self.entries(value)) }
        if let value = environment["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS"] {
            guard value == "true" || value == "false" else {
                throw SAMLError(
                    .configurationInvalid, "expected true or false in SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS, found \(quoted(value))")
            }
            allowDevelopmentKeys = value == "true"
        }
        if let value = environment["SAML_SERVICE_HOST"] { host = value }
        if let value = environment["SAML_SERVICE_PORT"] {
            guard let number = Int(value), (0...65535).contains(number) else {
                throw SAMLError(.configurationInvalid, "expected a port number in SAML_SERVICE_PORT, found \(quoted(value))")
            }
            port = number
        }
        if let value = environment["SAML_SERVICE_STORE"] { store = value }
        if let value = environment["SAML_SERVICE_LOG_LEVEL"] { logLevel = try Self.level(value) }
        if let value = environment["SAML_SERVICE_TRACING_ENDPOINT"] { try trace(to: value) }
        if tracing == nil, environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil || environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil {
            tracing = Tracing()
        }
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none" {
            tracing = nil
        }
    }

    /// The non-empty lines (or comma-separated entries) of a secret file, trimmed.
    private static func secret(_ path: String) throws -> [String] {
        entries(try secretText(path))
    }

    /// A secret file's text without its final line break.
    private static func secretText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable secret file at \(quoted(path)), found none")
        }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }

    private static func entries(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "," || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
    }

    /// Request-ID keys from `<id>:<hex>` entries (as `requestKeysFile` holds them); never quotes a secret in an error.
    public static func parseRequestKeys(_ entries: [String]) throws -> [RequestIDKey] {
        try entries.enumerated().map { index, entry in
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let id = UInt8(parts[0]), parts[1].count % 2 == 0,
                let secret = Optional(Array(parts[1].utf8)).flatMap(hexBytes)
            else {
                throw SAMLError(
                    .configurationInvalid, "expected request-ID key \(index + 1) as <id 0-255>:<hexadecimal secret>, found another form")
            }
            return try RequestIDKey(id: id, secret: secret)
        }
    }

    private static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text) else {
            throw SAMLError(
                .configurationInvalid, "expected a log level (trace, debug, info, notice, warning, error, critical), found \(quoted(text))")
        }
        return level
    }
}

private func quoted(_ text: String) -> String { "\"" + text + "\"" }
