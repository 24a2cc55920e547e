import AppleSSO
import Foundation
import Logging
import SAML

/// What the Token Exchange service needs: built in code, or read by
/// ``load(contentsOf:arguments:environment:accessReporter:)`` through swift-configuration from a JSON file,
/// the environment over it and the command line over both.
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
/// Paths in the file are relative to it. Every other member has the default documented below. Each key
/// is also a `SAML_SERVICE_*` variable and a `--option` (``ServiceSettings``, docs/service.md); secrets
/// (the database password, bearer tokens, request-ID keys) never come from the command line, and are best
/// kept in files the configuration names (`storePasswordFile`, `bearerTokensFile`, `requestKeysFile`).
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
    /// The store's batching window: while logins arrive more often than this, a small transaction waits up
    /// to this long for more logins to carry (`PostgresStateStore.Configuration.batchWindow`). Default
    /// 20 ms; zero: off; at most 50 ms.
    public var storeBatchWindow: Duration = .milliseconds(20)
    /// With a shared store: the profile reads a second that `sessions/sso` and `GET .../profiles` (both
    /// anonymous) may send it from this instance; beyond, `sessions/sso` answers as if the device had no
    /// profile and `GET .../profiles` answers `503` (docs/service.md, "Limits"). Default 1,000.
    public var profileLookupsPerSecond = 1000
    /// With a shared store: the profile reads waiting on it at once from this instance. Default 8.
    public var profileLookupConcurrency = 8
    /// With PostgreSQL: how many live profiles the profile directory holds in memory (about 40 bytes
    /// each), so that `sessions/sso` asks no query (`PostgresStateStore.Configuration.profileDirectoryCapacity`).
    /// 0 turns it off. Default 1,000,000.
    public var profileDirectoryCapacity = 1_000_000
    /// How long a SAML request issued by `sessions/sso` can be answered. Default 300 s.
    public var requestLifetime: Duration = .seconds(300)
    /// The oldest IssueInstant accepted (``SAML/SAMLResponseVerifier/Configuration/maximumAge``). Default
    /// 60 s (with ``clockSkew``, Shibboleth SP's 240 s). With ``clockSkew`` it bounds how long the store
    /// keeps an accepted assertion's ID.
    public var maximumAge: Duration = .seconds(60)
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
    /// The files the bearer tokens, the admin tokens and the request-ID keys were read from (nil when they
    /// came from the environment or from code): read again on SIGHUP and `POST /admin/reload`
    /// (``TokenExchangeService/reload()``), with the same checks as at start.
    public var bearerTokensFilePath: String?
    public var adminTokensFilePath: String?
    public var requestKeysFilePath: String?
    /// The media-token keys' PEM text (ES256 private keys, the first signs, all are published at
    /// `GET /api/v2/{serviceProvider}/media-tokens/keys`), and the file it was read from (read again on
    /// reload, as the request-ID keys). None: a key generated at start, per process (a warning: content
    /// servers can only check the tokens of the instance whose keys they fetched).
    public var mediaTokenKeysPEM: String?
    public var mediaTokenKeysFilePath: String?
    /// How long a media token is valid from its issue. Default 300 s.
    public var mediaTokenLifetime: Duration = .seconds(300)
    /// The most resources one `decisions/preauthorize` may ask about (`decisions/authorize`: one).
    /// Default 5, as Adobe Pass's (`403 too_many_resources` above it).
    public var maximumPreauthorizeResources = 5
    /// How long the resource authorizer (``AppleSSO/ResourceAuthorizer``) may take before every resource
    /// of the request is denied (`network_received_error`). Default 2 s.
    public var authorizationTimeout: Duration = .seconds(2)
    /// Says that the API is meant to answer without bearer tokens (a gateway in front authenticates the
    /// apps): then an empty `bearerTokensFile` means none, and the start-up line that the API is open is a
    /// notice, not a warning. Default false: an empty token file is refused, no tokens at all is warned of.
    public var allowUnauthenticatedAPI = false
    /// Keep verifying with a key pinned by a certificate whose `notAfter` has passed (``KeyExpiry``).
    /// Default false: such a key stops verifying when its certificate ends.
    public var allowExpiredCertificates = false
    /// Accept a store URL whose `sslmode` lets connections to a host beyond loopback go without TLS
    /// (`disable`, `prefer`). Default false: refused at start.
    public var allowPlaintextStore = false
    /// Accept secret files (`bearerTokensFile`, `adminTokensFile`, `requestKeysFile`, `storePasswordFile`)
    /// that their group or others may read. Default false: such a file is refused at start, naming its mode
    /// and owner.
    public var allowReadableSecretFiles = false
    /// Bearer tokens of the admin listener's `POST /admin/reload` (``adminPort``): without one the endpoint
    /// is absent. Secrets: `SAML_SERVICE_ADMIN_TOKENS` or `adminTokensFile`.
    public var adminTokens: [String] = []
    /// With a request-signing key: the signatures a second that `sessions/sso` and v1's `profile-requests`
    /// may make together (``SigningBudget``; `503` with `Retry-After` beyond). Default: measured at start,
    /// a quarter of one core's worth of the key's signatures.
    public var signaturesPerSecond: Int?
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
    /// `text` (swift-log's stream format, the default) or `json` (one object per line, ``JSONLogHandler``).
    public var logFormat: LogFormat = .text
    public enum LogFormat: String, Sendable {
        case text, json
    }
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
    /// until the verifier would refuse its response anyway: at most `maximumAge` + `clockSkew`, 240 s by
    /// default, or the request lifetime, 300 s). Full of live entries, logins fail closed (`503`, `replay.cache-full`). Default
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
    /// nothing. The `tracing.*` settings (the file's `tracing` object), or the standard
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
}

func quoted(_ text: String) -> String { "\"" + text + "\"" }
