import SAML

/// A profile kept after a successful Token Exchange, for `GET /api/v2/{serviceProvider}/profiles` and the
/// `authorize` answer of a later `sessions/sso`: the profile object's JSON, per service provider, device
/// (`AP-Device-Identifier`) and MVPD, until its `notAfter`.
public struct StoredProfile: Sendable, Hashable {
    public var serviceProvider: String
    public var device: String
    public var mvpd: String
    /// The profile object's JSON (``AppleSSOProfile/object``).
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

/// Profiles in memory, indexed by service provider and device (a lookup costs the same however many
/// devices there are), at most ``capacity`` (when full, expired ones go first, then the one that expires
/// soonest).
public final class InMemoryProfileStore: ProfileStore {
    public let capacity: Int
    private struct Device: Hashable {
        var serviceProvider: String
        var device: String
    }
    private struct Entries {
        var byDevice: [Device: [String: StoredProfile]] = [:]
        var count = 0
    }
    private let entries = Locked(Entries())

    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    public func save(_ profile: StoredProfile) async throws {
        let key = Device(serviceProvider: profile.serviceProvider, device: profile.device)
        let now = SAMLInstant.now()
        entries.withLock { entries in
            if entries.byDevice[key]?[profile.mvpd] == nil, entries.count >= capacity {
                Self.makeRoom(&entries, now: now, capacity: capacity)
            }
            if entries.byDevice[key, default: [:]].updateValue(profile, forKey: profile.mvpd) == nil { entries.count += 1 }
        }
    }

    /// Removes the expired profiles, or else the one that expires soonest (only when full: after a
    /// verified login, never on a caller's request alone).
    private static func makeRoom(_ entries: inout Entries, now: SAMLInstant, capacity: Int) {
        for (device, profiles) in entries.byDevice {
            let kept = profiles.filter { $0.value.notAfter > now }
            entries.count -= profiles.count - kept.count
            entries.byDevice[device] = kept.isEmpty ? nil : kept
        }
        guard entries.count >= capacity else { return }
        // Still full: the one that expires soonest goes.
        var soonest: (device: Device, mvpd: String, notAfter: SAMLInstant)?
        do {
            for (device, profiles) in entries.byDevice {
                for (mvpd, profile) in profiles where soonest == nil || profile.notAfter < soonest!.notAfter {
                    soonest = (device, mvpd, profile.notAfter)
                }
            }
        }
        if let soonest {
            entries.byDevice[soonest.device]?[soonest.mvpd] = nil
            if entries.byDevice[soonest.device]?.isEmpty == true { entries.byDevice[soonest.device] = nil }
            entries.count -= 1
        }
    }

    public func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        let profiles = entries.withLock { $0.byDevice[Device(serviceProvider: serviceProvider, device: device)] } ?? [:]
        return profiles.values.filter { $0.notAfter > now }.sorted { $0.mvpd < $1.mvpd }
    }

    /// How many profiles are kept (expired ones included until a save needs their room).
    public var count: Int { entries.withLock { $0.count } }
}
