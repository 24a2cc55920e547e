import AppleSSO
import Foundation
import SAML
import SAMLMockIdP

/// One MVPD the harness plays: its id in the service's configuration, the provider id Apple reports for
/// it (`platformMappingId`), its identity provider (issuer and signing key), and what the service's
/// profile must carry for it.
public struct LoadMVPD: Sendable {
    public var id: String
    public var providerID: String
    public var issuer: String
    public var identityProvider: MockIdentityProvider
    /// The SAML names the profile carries (the MVPD's `requiredMetadataFields`; empty: the NameID and
    /// every signed attribute).
    public var profileFields: [String]
    /// SAML name → user-metadata key, as the service maps them (its `userMetadataMapping`).
    public var mapping: UserMetadataMapping

    public init(
        id: String, providerID: String, issuer: String, identityProvider: MockIdentityProvider, profileFields: [String] = [],
        mapping: UserMetadataMapping = UserMetadataMapping()
    ) {
        self.id = id
        self.providerID = providerID
        self.issuer = issuer
        self.identityProvider = identityProvider
        self.profileFields = profileFields
        self.mapping = mapping
    }
}

/// A service instance: where to connect.
struct LoadTarget: Sendable, Hashable, CustomStringConvertible {
    var host: String
    var port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    var description: String { "\(host):\(port)" }
}

/// What to run.
public struct LoadOptions: Sendable {
    /// The service instances (`host`, `port`); connections are spread over them.
    public var targets: [(host: String, port: Int)]
    public var serviceProvider: String
    public var mvpds: [LoadMVPD]
    /// The bearer token a production-shaped service asks of every API call (`bearerTokensFile`): sent as
    /// `Authorization: Bearer` on `sessions/sso` and the exchanges (v1's too). Nil: none.
    public var bearerToken: String?
    /// The audience the service requires (the SP entity ID).
    public var audience = "https://saml.sp.auth.adobe.com"
    /// Requests prepared (and sent, unless ``duration`` ends the run first).
    public var requests = 1000
    /// An upper bound on the timed phase: no request is sent after it, and requests still in flight
    /// are abandoned ``grace`` later (their answers count as lost).
    public var duration: Duration?
    public var grace: Duration = .seconds(2)
    /// How long each signed assertion is valid (its NotOnOrAfter after its IssueInstant): a long lifetime
    /// keeps the service's replay entries as long as its maximum age allows (docs/service.md, The in-memory
    /// store).
    public var assertionLifetime: Duration = .seconds(300)
    public var connections = 8
    /// Requests per second over all connections; nil: as fast as the service answers.
    public var rate: Double?
    /// Shares of the requests of each kind (the rest are fresh responses):
    /// - replay: re-posts a response accepted earlier (to another instance when there are several);
    /// - tampered: a response altered after signing;
    /// - wrong-MVPD: the request asked for MVPD B, answered by MVPD A's IdP, posted as B (`issuer.mismatch`);
    /// - wrong-MVPD request: the request asked for MVPD A, answered by B's IdP, posted as B (the
    ///   attacker's way: `in-response-to.wrong-mvpd`);
    /// - wrong device: the request asked by one device, the answer posted from another
    ///   (`in-response-to.wrong-device`);
    /// - v1 crossover: the request asked on REST API v2, the answer posted to v1 (`in-response-to.wrong-api`).
    public var replayShare = 0.1
    public var tamperedShare = 0.05
    public var wrongMVPDShare = 0.05
    public var wrongMVPDRequestShare = 0.05
    public var wrongDeviceShare = 0.05
    public var v1CrossoverShare = 0.05
    /// After the timed phase, re-post every accepted response to every instance (each must be refused
    /// as a replay) and every response whose answer was lost (accepted at most once in all).
    public var settle = true
    /// After the settle phase, this many devices whose login was accepted play the cookbook's session to
    /// its end: configuration, preauthorize, authorize, logout, then no profile on another instance
    /// (``LoadHarness``, `LoadSessions.swift`). 0: none.
    public var sessions = 0
    /// Instances the caller stops during the run: the settle phase expects them unreachable. Any other
    /// instance it cannot reach fails the run.
    public var killed: [(host: String, port: Int)] = []
    /// Connection attempts per target before a connection (of the timed or settle phase) gives up; the
    /// waits between them double from 50 ms up to 1 s.
    public var connectAttempts = 5
    /// A failover run: the service fails closed while its database is away. A `503` answer (to any kind
    /// of request) then counts as unavailable, not wrong, as an unanswered request does; its response
    /// is re-posted by the settle phase like one whose answer was lost, and a replay of it is withheld.
    /// Without it a `503` is a wrong answer.
    public var tolerateUnavailable = false
    public var seed: UInt64 = 42

    public init(targets: [(host: String, port: Int)], serviceProvider: String, mvpds: [LoadMVPD]) {
        self.targets = targets
        self.serviceProvider = serviceProvider
        self.mvpds = mvpds
    }

    var loadTargets: [LoadTarget] { targets.map { LoadTarget(host: $0.host, port: $0.port) } }
    var killedTargets: Set<LoadTarget> { Set(killed.map { LoadTarget(host: $0.host, port: $0.port) }) }
}
