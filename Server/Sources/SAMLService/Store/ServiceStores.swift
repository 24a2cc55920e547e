import AppleSSO
import Logging
import SAML
import SAMLPostgres

/// The stores of one instance, built once at start-up with every role named: what records logins (the
/// assertion and the request it answers), whether it keeps the profile in the login's own step, where
/// profiles are kept and read, the directory that answers "has a profile" from memory, the readiness
/// probe, and the in-memory parts whose occupancy the gauges read. The endpoints take their store from
/// here, never by asking a store what else it is.
public struct ServiceStores: Sendable {
    /// Records each login.
    let logins: any SAMLStateStore
    /// The same store, when it keeps the profile in the login's transaction (PostgreSQL).
    let keepingProfiles: (any ProfileKeepingStateStore)?
    /// Where profiles are kept and read: the store when it keeps them, else this process's memory.
    let profiles: any ProfileStore
    /// Removes profiles (logout, an operator's sign-out); nil for a store of the caller's own that cannot.
    let removal: (any ProfileRemoval)?
    /// A directory of the live profiles in memory, in step with a shared store.
    let presence: (any ProfilePresence)?
    /// Whether other instances share the profiles: then anonymous reads are bounded (``ProfileLookups``).
    let shared: Bool
    /// `/health/ready`'s probe.
    let checkHealth: @Sendable () async throws -> Void
    /// The in-memory login store (its occupancy is a gauge, its fullness a readiness state).
    let memoryLogins: InMemoryStateStore?
    /// The in-memory profile store.
    let memoryProfiles: InMemoryProfileStore?
    /// PostgreSQL, run as a service of the application (schema, pool, profile directory).
    let database: PostgresStateStore?

    /// The `memory` store: logins and profiles in this process.
    static func memory(_ configuration: ServiceConfiguration) -> ServiceStores {
        let logins = InMemoryStateStore(capacity: configuration.memoryStoreCapacity)
        let profiles = InMemoryProfileStore(capacity: configuration.memoryProfileCapacity)
        return ServiceStores(
            logins: logins, keepingProfiles: nil, profiles: profiles, removal: profiles, presence: nil, shared: false, checkHealth: {},
            memoryLogins: logins, memoryProfiles: profiles, database: nil)
    }

    /// PostgreSQL: logins and profiles in one transaction, shared by every instance.
    static func postgres(_ database: PostgresStateStore) -> ServiceStores {
        ServiceStores(
            logins: database, keepingProfiles: database, profiles: database, removal: database, presence: database, shared: true,
            checkHealth: { try await database.checkHealth() }, memoryLogins: nil, memoryProfiles: nil, database: database)
    }

    /// A store of the caller's own (``ServiceApplication/buildApplication(configuration:store:metrics:logger:onRunning:)``):
    /// the one place its roles are found by what it conforms to (``AppleSSO/ProfileKeepingStateStore``,
    /// ``AppleSSO/ProfileStore``, ``AppleSSO/ProfileRemoval``, ``AppleSSO/ProfilePresence``, ``StoreHealthCheck``); profiles in this
    /// process's memory unless it keeps them.
    static func custom(_ store: any SAMLStateStore, configuration: ServiceConfiguration) -> ServiceStores {
        let keeping = store as? any ProfileStore
        let memoryProfiles = keeping == nil ? InMemoryProfileStore(capacity: configuration.memoryProfileCapacity) : nil
        let probe = store as? any StoreHealthCheck
        return ServiceStores(
            logins: store, keepingProfiles: store as? any ProfileKeepingStateStore, profiles: keeping ?? memoryProfiles!,
            removal: keeping != nil ? store as? any ProfileRemoval : memoryProfiles, presence: store as? any ProfilePresence,
            shared: keeping != nil, checkHealth: { try await probe?.checkHealth() },
            memoryLogins: store as? InMemoryStateStore, memoryProfiles: memoryProfiles, database: nil)
    }

    /// The store ``ServiceConfiguration/store`` names: `memory`, or a PostgreSQL URL (TLS required beyond
    /// loopback unless ``ServiceConfiguration/allowPlaintextStore``).
    static func configured(_ configuration: ServiceConfiguration, metrics: ServiceMetrics, logger: Logger) throws -> ServiceStores {
        guard configuration.store != "memory" else { return memory(configuration) }
        var storeConfiguration = try PostgresStateStore.Configuration(url: configuration.store)
        let exposed = storeConfiguration.hostsWithoutRequiredTLS
        if !exposed.isEmpty {
            let message =
                "the store URL lets connections to \(exposed.count) host(s) beyond loopback go without TLS (sslmode=\(storeConfiguration.sslMode.rawValue)): the password and every login's row could cross the network in plaintext"
            guard configuration.allowPlaintextStore else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected sslmode require, verify-ca or verify-full in the store URL for a host beyond loopback, found \(storeConfiguration.sslMode.rawValue) (set allowPlaintextStore to accept it)"
                )
            }
            logger.warning("\(message); allowed by allowPlaintextStore")
        }
        metrics.storeConnectionsExpected()
        storeConfiguration.connectionObserver = { tls in metrics.storeConnection(tls: tls) }
        if let password = configuration.storePassword { storeConfiguration.password = password }
        storeConfiguration.timeout = configuration.storeTimeout
        storeConfiguration.maximumConnections = configuration.storeConnections
        storeConfiguration.batchWindow = configuration.storeBatchWindow
        storeConfiguration.profileDirectoryCapacity = configuration.profileDirectoryCapacity
        return postgres(PostgresStateStore(storeConfiguration, logger: logger))
    }
}
