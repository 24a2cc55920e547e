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

/// A shared ``ProfileStore`` that can tell from memory whether a device has a live profile, kept in step
/// with every instance's saves within a bound it documents (PostgreSQL's profile directory, `Server/`):
/// a `sessions/sso` from a caller who has proven nothing then costs the shared database nothing.
public protocol ProfilePresence: Sendable {
    /// Whether `device` has a profile for `mvpd` valid at `now`; nil when the answer from memory cannot
    /// be trusted now (still loading, not in step within its bound, over its capacity): read the store.
    func hasLiveProfile(serviceProvider: String, device: String, mvpd: String, now: SAMLInstant) -> Bool?
}

/// Profiles in memory, indexed by service provider and device (a lookup costs the same however many
/// devices there are), at most ``capacity``. Expired profiles are dropped in expiry order as time passes,
/// and when full of live ones the one that expires soonest makes room (a profile is a convenience for the
/// next `sessions/sso`, not a guard: saving one never fails): each save costs O(log n) amortised, never a
/// scan of every profile.
public final class InMemoryProfileStore: ProfileStore {
    /// Profiles are kept for their authentication's lifetime (hours to days), longer than any burst: the
    /// default bounds the memory (a profile's JSON is a few hundred bytes) rather than covering a rate.
    public static let defaultCapacity = 100_000

    public let capacity: Int
    fileprivate struct Device: Hashable, Sendable {
        var serviceProvider: String
        var device: String
    }
    fileprivate struct Slot: Hashable, Sendable {
        var device: Device
        var mvpd: String
    }
    fileprivate struct Entries {
        var byDevice: [Device: [String: StoredProfile]] = [:]
        var count = 0
        /// Every profile's slot by its `notAfter`; an entry whose profile was replaced since is stale and
        /// skipped (the heap is compacted when stale entries outnumber the live ones).
        var expiries = ExpiryHeap<Slot>()

        func isCurrent(_ entry: ExpiryHeap<Slot>.Entry) -> Bool {
            byDevice[entry.key.device]?[entry.key.mvpd]?.notAfter.millisecondsSinceEpoch == entry.expiry
        }

        mutating func remove(_ slot: Slot) {
            guard byDevice[slot.device]?.removeValue(forKey: slot.mvpd) != nil else { return }
            if byDevice[slot.device]?.isEmpty == true { byDevice[slot.device] = nil }
            count -= 1
        }

        /// Drops the profiles expired at `now`, then, while `count` is at least `limit`, the one that
        /// expires soonest.
        mutating func makeRoom(now: SAMLInstant, below limit: Int) {
            while let first = expiries.first, first.expiry <= now.millisecondsSinceEpoch || count >= limit {
                expiries.popFirst()
                if isCurrent(first) { remove(first.key) }
            }
        }
    }
    fileprivate let entries = Locked(Entries())

    /// - Parameter capacity: the most profiles kept at once (default ``defaultCapacity``).
    public init(capacity: Int = InMemoryProfileStore.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    public func save(_ profile: StoredProfile) async throws {
        let key = Device(serviceProvider: profile.serviceProvider, device: profile.device)
        let now = SAMLInstant.now()
        entries.withLock { entries in
            let replacing = entries.byDevice[key]?[profile.mvpd] != nil
            entries.makeRoom(now: now, below: replacing ? Int.max : capacity)
            if entries.byDevice[key, default: [:]].updateValue(profile, forKey: profile.mvpd) == nil { entries.count += 1 }
            entries.expiries.push(Slot(device: key, mvpd: profile.mvpd), expiry: profile.notAfter)
            if entries.expiries.count > 2 * entries.count + 16 {
                let current = entries
                entries.expiries.retain(where: current.isCurrent)
            }
        }
    }

    public func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        let profiles = entries.withLock { $0.byDevice[Device(serviceProvider: serviceProvider, device: device)] } ?? [:]
        return profiles.values.filter { $0.notAfter > now }.sorted { $0.mvpd < $1.mvpd }
    }

    /// How many profiles are kept (expired ones included until the next save).
    public var count: Int { entries.withLock { $0.count } }
}

/// A ``ProfileStore`` whose profiles can be removed: a device's logout (`GET .../logout/{mvpd}`), an
/// operator signing a device or a subscriber out. A shared store's removal reaches every instance within
/// the bound its presence documents (PostgreSQL's profile directory: 1 s by default).
public protocol ProfileRemoval: Sendable {
    /// Removes the profiles of `device` (only the one for `mvpd` when it is given); returns the MVPDs whose
    /// profile was still valid at `now`, sorted.
    func removeProfiles(serviceProvider: String, device: String, mvpd: String?, now: SAMLInstant) async throws -> [String]
    /// Removes every profile of `mvpd` whose attribute `attribute` (a user-metadata key) holds `value`, as
    /// its only value or one of them; returns how many were removed. A scan of the MVPD's profiles: an
    /// operator's action, never a caller's.
    func removeProfiles(serviceProvider: String, mvpd: String, attribute: String, value: String) async throws -> Int
}

extension InMemoryProfileStore: ProfileRemoval {
    public func removeProfiles(serviceProvider: String, device: String, mvpd: String?, now: SAMLInstant) async throws -> [String] {
        let key = Device(serviceProvider: serviceProvider, device: device)
        return entries.withLock { entries in
            let held = entries.byDevice[key] ?? [:]
            var live: [String] = []
            for (id, profile) in held where mvpd == nil || id == mvpd {
                entries.remove(Slot(device: key, mvpd: id))
                if profile.notAfter > now { live.append(id) }
            }
            return live.sorted()
        }
    }

    public func removeProfiles(serviceProvider: String, mvpd: String, attribute: String, value: String) async throws -> Int {
        // The attributes are read outside the lock: a scan of JSON is the slow part.
        let candidates = entries.withLock { entries in
            entries.byDevice.compactMap { $0.key.serviceProvider == serviceProvider ? $0.value[mvpd] : nil }
        }
        let matching = candidates.filter { $0.attributes[attribute]?.contains(value) == true }
        return entries.withLock { entries in
            var removed = 0
            for profile in matching {
                let slot = Slot(device: Device(serviceProvider: serviceProvider, device: profile.device), mvpd: mvpd)
                // Only the profile read: one saved since (a new login) stays.
                guard entries.byDevice[slot.device]?[mvpd] == profile else { continue }
                entries.remove(slot)
                removed += 1
            }
            return removed
        }
    }
}
