import AppleSSO
import Foundation
import Logging
@_spi(Spans) import SAML
import SAMLMediaToken
import Synchronization
import Tracing

/// The state the endpoints of the Token Exchange service share: the MVPD configuration (reloaded as a
/// whole), the trust, the verifier's template through it, the request-ID keys, the bearer tokens.
/// ``ServiceApplication`` puts it behind Hummingbird: one controller per API family holding it
/// (`Controllers/SessionsController.swift`, `ProfilesController.swift`, `LegacyV1Controller.swift`,
/// `MetadataController.swift`), its routes behind the middleware of ``ServiceRoutes`` (the access log and
/// verdict metric, the bearer token, the form body, admission, v1's formats); the checks they share in
/// `RequestChecks.swift`, the answer and header types in `ServiceAnswer.swift`.
///
/// - `POST /api/v2/{serviceProvider}/sessions/sso/{partner}`: for an MVPD with platform SSO, answers
///   `partner_profile` with a fresh SAML `AttributeQuery` and the MVPD's attribute names; otherwise the
///   documented fallback (`authenticate`, `interactive`) with its reason. Nothing is stored: the
///   request's ID is MACed for the service provider, the MVPD, the device and the API
///   (``SAML/RequestIDAuthority``), and only a response that answers it from the same is accepted.
/// - `POST /api/v2/{serviceProvider}/profiles/sso/{partner}`: the Token Exchange (``AppleSSO/TokenExchange``).
/// - `POST /api/v1/tokens/authn`: the legacy exchange (`204` / `400`).
/// - `GET /api/v2/{serviceProvider}/configuration`: the MVPD configuration with Apple's picker lists.
public struct TokenExchangeService: Sendable {
    public let configuration: ServiceConfiguration
    public let trust: TrustRegistry
    /// The trust file as read at start-up (``TrustMaintainer`` keeps it current).
    public let trustContents: TrustFile.Contents
    /// The stores, every role named (``ServiceStores``).
    let stores: ServiceStores
    /// The profile reads of `sessions/sso` and `GET .../profiles`, bounded when the store is shared.
    let profileLookups: ProfileLookups
    /// What the MVPD configuration file says, replaced as a whole by ``reload()``.
    private let current: Current
    /// The SP metadata last written, and when (``spMetadata(serviceProvider:)``).
    let spMetadataCache = SPMetadataCache()
    private final class Current: Sendable {
        let snapshot: Mutex<Snapshot>
        init(_ snapshot: Snapshot) { self.snapshot = Mutex(snapshot) }
    }
    private struct Snapshot {
        var mvpds: MVPDConfiguration
        var exchange: TokenExchange
        /// The values an `mvpd` metric label may take: the MVPD configuration's IDs (every MVPD an answer
        /// names is one of them).
        var metricLabels: Set<String>
        /// The answers built from the configuration alone.
        var answers: ConfigurationAnswers
        var requests: RequestIDAuthority
        var mediaTokens: MediaTokenIssuer
    }
    public var mvpds: MVPDConfiguration { current.snapshot.withLock { $0.mvpds } }
    var exchange: TokenExchange { current.snapshot.withLock { $0.exchange } }
    var configurationAnswers: ConfigurationAnswers { current.snapshot.withLock { $0.answers } }
    let signingKey: SigningKey?
    /// The signatures a second anonymous callers may have (with a request-signing key).
    let signingBudget: SigningBudget?
    /// MACs the IDs of the requests `sessions/sso` issues and checks those the responses answer (the
    /// snapshot's: `requestKeysFile` is read again by ``reload()``).
    var requests: RequestIDAuthority { current.snapshot.withLock { $0.requests } }
    /// Signs the media tokens of `decisions/authorize` (the snapshot's: `mediaTokenKeysFile` is read
    /// again by ``reload()``).
    var mediaTokens: MediaTokenIssuer { current.snapshot.withLock { $0.mediaTokens } }
    /// Decides which resources a profile may watch (``AppleSSO/ConfiguredResourceAuthorizer`` unless the
    /// application is given another).
    let authorizer: any ResourceAuthorizer
    /// The API's and the admin listener's bearer tokens (read again by ``reload()``).
    let credentials: Credentials
    let metrics: ServiceMetrics
    let logger: Logger
    let tracer: (any Tracer)?

    /// Reads the MVPD configuration, the trust file (pinned keys and metadata files; metadata URLs are
    /// ``TrustMaintainer``'s, and refused with `trust.unavailable` until it has read them) and the signing
    /// key the configuration names.
    ///
    /// With `tracer`, the verifier's phases and the issue of each SAML request are spans of it
    /// (``ServiceConfiguration/tracing``).
    public init(
        configuration: ServiceConfiguration, store: any SAMLStateStore, metrics: ServiceMetrics, logger: Logger,
        tracer: (any Tracer)? = nil, authorizer: any ResourceAuthorizer = ConfiguredResourceAuthorizer()
    ) throws {
        try self.init(
            configuration: configuration, stores: .custom(store, configuration: configuration), metrics: metrics, logger: logger,
            tracer: tracer, authorizer: authorizer)
    }

    init(
        configuration: ServiceConfiguration, stores: ServiceStores, metrics: ServiceMetrics, logger: Logger, tracer: (any Tracer)?,
        authorizer: any ResourceAuthorizer = ConfiguredResourceAuthorizer()
    ) throws {
        self.configuration = configuration
        self.authorizer = authorizer
        self.tracer = tracer
        self.stores = stores
        self.metrics = metrics
        self.logger = logger
        let fullStoreLog = LogThrottle()
        // A shared store's reads are bounded for anonymous callers; the in-memory one needs no bound.
        let lookups = ProfileLookups(
            store: stores.profiles, presence: stores.presence,
            limits: stores.shared
                ? ProfileLookups.Limits(
                    perSecond: configuration.profileLookupsPerSecond, concurrency: configuration.profileLookupConcurrency) : nil,
            metrics: metrics)
        profileLookups = lookups
        let admitted = AdmittedStore(
            stores: stores, profiles: lookups, metrics: metrics,
            profileNotKept: { profile in
                metrics.storeError(operation: "profile")
                logger.warning("profile not kept (the exchange succeeded)", metadata: ["mvpd": "\(profile.mvpd)"])
            },
            storeFull: { kind in
                metrics.storeFull(kind: kind)
                // One line every 10 s at most: a full store refuses every login until entries expire.
                if fullStoreLog.isDue {
                    logger.error(
                        "the in-memory store is full of live entries: logins are refused (503, replay.cache-full) until some expire; raise memoryStoreCapacity (about 100 bytes an entry) or use PostgreSQL",
                        metadata: ["kind": "\(kind)"])
                }
            })
        let mvpds = try Self.readMVPDConfiguration(configuration.mvpdConfigurationPath)
        var template = SAMLResponseVerifier.Configuration.template(
            audience: .equals(configuration.spEntityID), destination: ExpectedValue(orSkip: configuration.destination),
            replay: .keepingProfiles(in: admitted, unsolicited: configuration.allowUnsolicited ? .allow : .refuse))
        template.logger = logger
        template.clock = configuration.clock
        template.maximumAge = configuration.maximumAge
        template.clockSkew = configuration.clockSkew
        template.tracer = tracer
        trustContents = try TrustFile.read(contentsOf: configuration.trustPath)
        try DevelopmentKeys.check(trustContents, allowed: configuration.allowDevelopmentKeys)
        // Allowed, they are shouted at every start: anyone can sign what these MVPDs' logins accept.
        for mvpd in DevelopmentKeys.trusting(trustContents) {
            logger.warning(
                "development keys trusted (--allow-development-keys): their private keys are public, anyone can sign this MVPD's logins; never in production",
                metadata: ["mvpd": "\(mvpd)"])
        }
        var identityProviders: [String: IdentityProvider] = [:]
        let started = configuration.clock.now()
        for (mvpd, pinned) in trustContents.pinned {
            KeyExpiry.warn(
                pinned, mvpd: mvpd, pinned: true, allowExpired: configuration.allowExpiredCertificates, now: started, logger: logger)
            identityProviders[mvpd] =
                KeyExpiry.usable(pinned, now: started, allowExpired: configuration.allowExpiredCertificates).identityProvider
        }
        for (mvpd, source) in trustContents.sources {
            guard case .file = source.location else { continue }
            do {
                identityProviders[mvpd] = source.identityProvider(
                    try source.read(try source.storedDocument(), now: configuration.clock.now()))
            } catch let error as SAMLError {
                throw SAMLError(error.code, "MVPD \"\(mvpd)\" in the trust file: \(error.message)")
            }
            try DevelopmentKeys.check(
                identityProviders[mvpd]?.keys ?? [], "the metadata of the trust file's MVPD \"\(mvpd)\"",
                allowed: configuration.allowDevelopmentKeys)
            if let metadata = identityProviders[mvpd] {
                KeyExpiry.warn(metadata, mvpd: mvpd, pinned: false, allowExpired: true, now: started, logger: logger)
            }
        }
        trust = try TrustRegistry(identityProviders, template: template)
        // A pinned MVPD whose every key has ended is configured, not unknown: trust.unavailable (503), as
        // when its last key ends while running.
        for mvpd in trustContents.pinned.keys where identityProviders[mvpd] == nil { trust.markUnavailable(mvpd) }
        // An opt-in that weakens a check is shouted at every start, with what ends it.
        let legacy =
            trustContents.pinned.filter { $0.value.algorithms == .allowingSHA1 }.map(\.key)
            + trustContents.sources.filter { $0.value.responseAlgorithms == .allowingSHA1 }.map(\.key)
        for mvpd in legacy.sorted() {
            metrics.legacyDigestsAllowed(mvpd: mvpd)
            logger.warning(
                "MVPD accepts responses signed with legacy digests (SHA-1, SHA-224): weaker against collisions; remove allowLegacyDigests from its trust file entry once its IdP signs with SHA-256",
                metadata: ["mvpd": "\(mvpd)"])
        }
        let requests: RequestIDAuthority
        if configuration.requestKeys.isEmpty {
            guard configuration.store == "memory" else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected request-ID keys (requestKeys, SAML_SERVICE_REQUEST_KEYS) shared by every instance of a shared store, found none"
                )
            }
            requests = try RequestIDAuthority(keys: [.random()])
        } else {
            requests = try RequestIDAuthority(keys: configuration.requestKeys)
        }
        credentials = Credentials(bearer: configuration.bearerTokens, admin: configuration.adminTokens)
        let mediaTokens: MediaTokenIssuer
        if let pem = configuration.mediaTokenKeysPEM {
            mediaTokens = try Self.mediaTokenIssuer(pem, lifetime: configuration.mediaTokenLifetime)
        } else {
            mediaTokens = try! MediaTokenIssuer(keys: [.generated()], lifetime: configuration.mediaTokenLifetime)
            logger.warning(
                "media tokens are signed with a key made at start (no mediaTokenKeysFile): content servers can check only the tokens of the instance whose media-tokens/keys they read, until a restart"
            )
        }
        current = Current(
            Self.snapshot(mvpds, configuration: configuration, trust: trust, requests: requests, mediaTokens: mediaTokens))
        if let keyPath = configuration.requestSigningKeyPath {
            // A private key others may read is shouted (not refused: the repository's development keys
            // are checked out world-readable).
            if let mode = (try? FileManager.default.attributesOfItem(atPath: keyPath))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
                logger.warning(
                    "the request-signing key is readable by other accounts: chmod 0600 it",
                    metadata: ["path": "\(keyPath)", "mode": "0\(String(mode, radix: 8))"])
            }
            signingKey = try SigningKey(
                privateKeyPEM: try Self.read(keyPath), certificatePEM: try configuration.requestSigningCertificatePath.map(Self.read))
        } else {
            signingKey = nil
        }
        if let signingKey {
            let measured = SigningBudget.calibrated(for: signingKey)
            let rate = configuration.signaturesPerSecond ?? measured.rate
            signingBudget = SigningBudget(rate: rate)
            logger.info(
                "request signing budget",
                metadata: ["signatures_per_second": "\(rate)", "measured_us": "\(measured.cost.nanoseconds / 1000)"])
        } else {
            signingBudget = nil
        }
        if credentials.bearer.isEmpty {
            let open: Logger.Message =
                "the API answers without bearer tokens: any caller that reaches it is served; set bearerTokensFile, or allowUnauthenticatedAPI when a gateway in front authenticates the apps"
            if configuration.allowUnauthenticatedAPI { logger.notice(open) } else { logger.warning(open) }
        }
        for mvpd in mvpds.mvpds
        where mvpd.boardingStatus == .supported && trust.identityProvider(for: mvpd.id) == nil && trustContents.sources[mvpd.id] == nil {
            logger.warning(
                "MVPD has platform SSO but no identity provider in the trust file: its responses are refused",
                metadata: ["mvpd": "\(mvpd.id)"])
        }
    }

    private static func readMVPDConfiguration(_ path: String) throws -> MVPDConfiguration {
        guard let document = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable MVPD configuration at \"\(path)\"")
        }
        return try MVPDConfiguration.decode(Array(document))
    }

    /// The media-token keys of a PEM text (``ServiceConfiguration/mediaTokenKeysPEM``).
    static func mediaTokenIssuer(_ pem: String, lifetime: Duration) throws -> MediaTokenIssuer {
        do {
            return try MediaTokenIssuer(keys: try MediaTokenKey.privateKeys(pemFile: pem), lifetime: lifetime)
        } catch {
            throw SAMLError(
                .configurationInvalid, "mediaTokenKeysFile: \(error.message)")
        }
    }

    private static func snapshot(
        _ mvpds: MVPDConfiguration, configuration: ServiceConfiguration, trust: TrustRegistry, requests: RequestIDAuthority,
        mediaTokens: MediaTokenIssuer
    ) -> Snapshot {
        var exchange = TokenExchange(
            configuration: mvpds, trust: trust, mapping: UserMetadataMapping(configuration.userMetadataMapping), requests: requests)
        exchange.defaultAuthenticationTTL = configuration.authenticationTTL
        exchange.authenticationTTLs = configuration.mvpdAuthenticationTTLs
        let answers = ConfigurationAnswers(
            mvpds,
            requestor: MVPDConfiguration.Requestor(
                id: configuration.serviceProvider, name: configuration.requestorName, domains: configuration.domains),
            featured: configuration.featuredMVPDs)
        return Snapshot(
            mvpds: mvpds, exchange: exchange, metricLabels: Set(mvpds.mvpds.map(\.id)), answers: answers, requests: requests,
            mediaTokens: mediaTokens)
    }

    /// What SIGHUP and `POST /admin/reload` read again besides the trust file: the MVPD configuration and
    /// the secret files (`bearerTokensFile`, `adminTokensFile`, `requestKeysFile`, `mediaTokenKeysFile`), each with the checks
    /// of the start (an empty or readable file is refused). Each part that does not read leaves the
    /// current one in place and says why in the log; secrets given in the environment stay as they are.
    public func reload() {
        var mvpds = self.mvpds
        do {
            mvpds = try Self.readMVPDConfiguration(configuration.mvpdConfigurationPath)
            logger.info("MVPD configuration reloaded", metadata: ["mvpds": "\(mvpds.mvpds.count)"])
        } catch {
            logger.error(
                "the MVPD configuration does not read: the previous one stays in place",
                metadata: ["path": "\(configuration.mvpdConfigurationPath)", "error": "\((error as? SAMLError)?.message ?? "\(error)")"])
        }
        var requests = self.requests
        let readable = configuration.allowReadableSecretFiles
        func secret(_ setting: String, _ path: String?, allowEmpty: Bool = false) -> [String]? {
            guard let path else { return nil }
            do {
                let entries = try ServiceConfiguration.secret(path, setting: setting, allowingReadable: readable, allowingEmpty: allowEmpty)
                logger.info("secret file reloaded", metadata: ["setting": "\(setting)", "entries": "\(entries.count)"])
                return entries
            } catch {
                logger.error(
                    "a secret file does not read: the previous entries stay in place",
                    metadata: ["setting": "\(setting)", "error": "\((error as? SAMLError)?.message ?? "\(error)")"])
                return nil
            }
        }
        if let entries = secret("requestKeysFile", configuration.requestKeysFilePath) {
            do {
                requests = try RequestIDAuthority(keys: try ServiceConfiguration.parseRequestKeys(entries))
            } catch {
                logger.error(
                    "the request-ID keys do not read: the previous ones stay in place",
                    metadata: ["error": "\((error as? SAMLError)?.message ?? "\(error)")"])
            }
        }
        var mediaTokens = self.mediaTokens
        if let path = configuration.mediaTokenKeysFilePath {
            do {
                let pem = try ServiceConfiguration.secretText(path, setting: "mediaTokenKeysFile", allowingReadable: readable)
                mediaTokens = try Self.mediaTokenIssuer(pem, lifetime: configuration.mediaTokenLifetime)
                logger.info("secret file reloaded", metadata: ["setting": "mediaTokenKeysFile", "entries": "\(mediaTokens.keys.count)"])
            } catch {
                logger.error(
                    "the media-token keys do not read: the previous ones stay in place",
                    metadata: ["error": "\((error as? SAMLError)?.message ?? "\(error)")"])
            }
        }
        credentials.replace(
            bearer: secret("bearerTokensFile", configuration.bearerTokensFilePath, allowEmpty: configuration.allowUnauthenticatedAPI),
            admin: secret("adminTokensFile", configuration.adminTokensFilePath))
        let snapshot = Self.snapshot(
            mvpds, configuration: configuration, trust: trust, requests: requests, mediaTokens: mediaTokens)
        current.snapshot.withLock { $0 = snapshot }
    }

    /// The value of an `mvpd` metric label: a configured MVPD's id, else `none`. Never a value of the
    /// request's own: the label's values are bounded by the configuration.
    func metricLabel(mvpd: String?) -> String {
        guard let mvpd, current.snapshot.withLock({ $0.metricLabels.contains(mvpd) }) else { return "none" }
        return mvpd
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable file at \"\(path)\", found none")
        }
        return Array(data)
    }
}
