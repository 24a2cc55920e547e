import AppleSSO
import SAML
import Synchronization

/// The reads of a shared profile store (PostgreSQL) that callers who have proven nothing cause.
///
/// `sessions/sso` and `GET .../profiles` are anonymous: a device with a well-formed header asks whether
/// it has a profile, and without bounds every such call is a query on the one primary all instances
/// share. So a shared store's reads go through:
/// 1. For `sessions/sso`, **the store's directory** when it has one (``AppleSSO/ProfilePresence``:
///    PostgreSQL's keeps every live profile's key in memory, in step with what the database holds,
///    deletions and expiry changes included, within a bound it documents): "yes" or "no" without the
///    database. When it cannot answer (loading, not in step, off), **profiles this instance knows**
///    (``known``, at most ``knownCapacity``, the one that expires soonest making room): the profiles it
///    kept after a login here and those its reads found; only a "yes" is answered so, and a flood of
///    unknown devices leaves nothing in memory. Only then does the question go on to the store, through
///    2 and 3.
/// 2. **A rate**: at most ``Limits/perSecond`` reads a second reach the store (a bucket of one second's
///    reads).
/// 3. **A concurrency**: at most ``Limits/concurrency`` reads wait on the store at once.
/// A read beyond 2 or 3 is *shed* at once (``Shed``): nothing waits and nothing is kept; `sessions/sso`
/// answers as if the device had no profile (the app then logs in, which the verification admission
/// bounds) and `GET .../profiles` answers `503` with `Retry-After`. Each read is counted in
/// `saml_profile_lookups_total` by where its answer came from (`memory`, `store`, `shed`, `error`).
///
/// With the in-memory profile store there is nothing to protect (a read is a hash-table lookup): no
/// limits, every read goes to it.
final class ProfileLookups: Sendable {
    struct Limits: Sendable {
        var perSecond: Int
        var concurrency: Int
        var knownCapacity = ProfileLookups.knownCapacity
    }

    /// Profiles known here at most: a few hundred bytes each.
    static let knownCapacity = 20_000

    /// A read refused by the rate or the concurrency: answer without the store.
    struct Shed: Error {}

    let store: any ProfileStore
    /// The store's directory, when it has one.
    private let presence: (any ProfilePresence)?
    private let limits: Limits?
    /// The profiles this instance kept or read (nil without limits).
    private let known: InMemoryProfileStore?
    private let metrics: ServiceMetrics
    private let admission: Mutex<Admission>

    private struct Admission {
        var tokens: Double
        var refilled: ContinuousClock.Instant
        var inFlight = 0
    }

    init(store: any ProfileStore, presence: (any ProfilePresence)?, limits: Limits?, metrics: ServiceMetrics) {
        self.store = store
        self.presence = presence
        self.limits = limits
        self.metrics = metrics
        known = limits.map { InMemoryProfileStore(capacity: $0.knownCapacity) }
        admission = Mutex(Admission(tokens: Double(limits?.perSecond ?? 0), refilled: .now))
    }

    /// Whether `device` has a profile for `mvpd` valid at `now` (`sessions/sso`); throws ``Shed`` when
    /// it is not known here and the read may not reach the store, and the store's error when it fails.
    func hasProfile(serviceProvider: String, device: String, mvpd: String, now: SAMLInstant) async throws -> Bool {
        // The store's directory first: it follows what the database holds now (deletions and expiry
        // changes included, whoever made them), where this instance's memory would still answer "yes" for a
        // profile deleted or ended elsewhere.
        if let presence,
            let answer = presence.hasLiveProfile(serviceProvider: serviceProvider, device: device, mvpd: mvpd, now: now)
        {
            metrics.profileLookup("directory")
            return answer
        }
        if let known,
            try await known.profiles(serviceProvider: serviceProvider, device: device, now: now).contains(where: { $0.mvpd == mvpd })
        {
            metrics.profileLookup("memory")
            return true
        }
        return try await profiles(serviceProvider: serviceProvider, device: device, now: now).contains { $0.mvpd == mvpd }
    }

    /// The profiles of `device` valid at `now`, read from the store (`GET .../profiles`); throws ``Shed``
    /// when the read may not reach it, and the store's error when it fails.
    func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        let read = { @Sendable () async throws -> [StoredProfile] in
            let started = ContinuousClock.now
            defer { self.metrics.storeDuration(operation: "profiles", mvpd: "none", ContinuousClock.now - started) }
            return try await self.store.profiles(serviceProvider: serviceProvider, device: device, now: now)
        }
        guard let known else { return try await read() }
        let profiles: [StoredProfile]
        do {
            profiles = try await bounded(read)
        } catch is Shed {
            throw Shed()
        } catch {
            metrics.profileLookup("error")
            throw error
        }
        metrics.profileLookup("store")
        for profile in profiles { try? await known.save(profile) }
        return profiles
    }

    /// `operation` on the shared store within the rate and the concurrency of the anonymous reads (at once
    /// without limits); ``Shed`` (counted) beyond them: nothing waits.
    func bounded<T>(_ operation: () async throws -> T) async throws -> T {
        guard let limits else { return try await operation() }
        let admitted = admission.withLock { admission in
            // Read under the lock, so that the instants refilled from only move forward.
            let now = ContinuousClock.now
            let rate = Double(limits.perSecond)
            admission.tokens = min(rate, admission.tokens + rate * ((now - admission.refilled) / .seconds(1)))
            admission.refilled = now
            guard admission.inFlight < limits.concurrency, admission.tokens >= 1 else { return false }
            admission.tokens -= 1
            admission.inFlight += 1
            return true
        }
        guard admitted else {
            metrics.profileLookup("shed")
            throw Shed()
        }
        defer { admission.withLock { $0.inFlight -= 1 } }
        return try await operation()
    }

    /// A profile this instance kept (the store holds it): its device's next `sessions/sso` here is
    /// answered from memory.
    func kept(_ profile: StoredProfile) async {
        try? await known?.save(profile)
    }

    /// Profiles removed (a logout here): no longer answered from this instance's memory.
    func forget(serviceProvider: String, device: String, mvpd: String?) async {
        _ = try? await known?.removeProfiles(serviceProvider: serviceProvider, device: device, mvpd: mvpd, now: .now())
    }

    /// A subscriber's profiles removed (an operator's sign-out).
    func forget(serviceProvider: String, mvpd: String, attribute: String, value: String) async {
        _ = try? await known?.removeProfiles(serviceProvider: serviceProvider, mvpd: mvpd, attribute: attribute, value: value)
    }

    /// Profiles known here (the memory's occupancy).
    var knownProfiles: Int { known?.count ?? 0 }
}
