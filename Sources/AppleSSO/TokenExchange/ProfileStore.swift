import SAML
import Synchronization

/// A profile kept after a successful Token Exchange, for `GET /api/v2/{serviceProvider}/profiles` and the
/// `authorize` answer of a later `sessions/sso`: the profile object's JSON, per service provider, device
/// (`AP-Device-Identifier`) and MVPD, until its `notAfter`.
public struct StoredProfile: Sendable, Hashable {
    public var serviceProvider: String
    public var device: String
    public var mvpd: String
    /// The profile object's JSON (``Profile/object``).
    public var json: [UInt8]
    public var notAfter: SAMLInstant

    public init(serviceProvider: String, device: String, mvpd: String, json: [UInt8], notAfter: SAMLInstant) {
        self.serviceProvider = serviceProvider
        self.device = device
        self.mvpd = mvpd
        self.json = json
        self.notAfter = notAfter
    }
}

/// Where profiles are kept: ``InMemoryProfileStore`` for one process, PostgreSQL (`Server/`) for several.
/// Only profiles of verified responses are stored: nothing an anonymous caller sends makes state here.
public protocol ProfileStore: Sendable {
    /// Keeps `profile`, replacing the one of the same service provider, device and MVPD.
    func save(_ profile: StoredProfile) async throws
    /// The profiles of a device still valid at `now`.
    func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile]
}

/// Profiles in memory, at most ``capacity`` (when full, expired ones go first, then the one that expires
/// soonest).
public final class InMemoryProfileStore: ProfileStore {
    public let capacity: Int
    private struct Key: Hashable {
        var serviceProvider: String
        var device: String
        var mvpd: String
    }
    private let entries = Mutex<[Key: StoredProfile]>([:])

    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    public func save(_ profile: StoredProfile) async throws {
        let key = Key(serviceProvider: profile.serviceProvider, device: profile.device, mvpd: profile.mvpd)
        let now = SAMLInstant.now()
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity {
                entries = entries.filter { $0.value.notAfter > now }
                if entries.count >= capacity, let soonest = entries.min(by: { $0.value.notAfter < $1.value.notAfter })?.key {
                    entries[soonest] = nil
                }
            }
            entries[key] = profile
        }
    }

    public func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        entries.withLock { entries in
            entries.values.filter { $0.serviceProvider == serviceProvider && $0.device == device && $0.notAfter > now }
        }.sorted { $0.mvpd < $1.mvpd }
    }

    /// How many profiles are kept (expired ones included until a save makes room).
    public var count: Int { entries.withLock { $0.count } }
}
