import AppleSSO
import SAML

/// What the decisions and the logouts do with a device's profiles: read one, remove them.
extension TokenExchangeService {
    /// A device's valid profile for an MVPD, as the decisions need it.
    enum LiveProfile {
        case found(StoredProfile)
        case missing
        /// The store cannot answer now (or the read was shed): the answer to give.
        case unavailable(ServiceAnswer)
    }

    /// The device's valid profile for `mvpd`: "none" from the store's directory when it can say so (no
    /// query for a device without a profile); read from the store at once for a device the directory
    /// knows has one (it has proven a login: its reads do not spend the anonymous callers' budget, nor
    /// theirs its); otherwise through the bounded profile reads.
    func liveProfile(device: String, mvpd: String, now: SAMLInstant) async -> LiveProfile {
        let serviceProvider = configuration.serviceProvider
        if stores.presence?.hasLiveProfile(serviceProvider: serviceProvider, device: device, mvpd: mvpd, now: now) == false {
            metrics.profileLookup("directory")
            return .missing
        }
        do {
            let profiles =
                proven(device: device, mvpds: [mvpd], now: now)
                ? try await stores.profiles.profiles(serviceProvider: serviceProvider, device: device, now: now)
                : try await profileLookups.profiles(serviceProvider: serviceProvider, device: device, now: now)
            return profiles.first { $0.mvpd == mvpd && $0.notAfter > now }.map { .found($0) } ?? .missing
        } catch {
            if !(error is ProfileLookups.Shed) { metrics.storeError(operation: "profiles") }
            return .unavailable(.error(Self.profilesUnavailable, mvpd: mvpd))
        }
    }

    /// Whether the shared store's directory knows that `device` has a live profile for one of `mvpds`.
    /// With the in-memory store (no directory, nothing to protect: its reads are unbounded anyway), false.
    private func proven(device: String, mvpds: [String], now: SAMLInstant) -> Bool {
        guard let presence = stores.presence else { return false }
        return mvpds.contains {
            presence.hasLiveProfile(serviceProvider: configuration.serviceProvider, device: device, mvpd: $0, now: now) == true
        }
    }

    /// The store's removal role; `store.unavailable` for a store of the caller's own that has none.
    private func profileRemoval() throws -> any ProfileRemoval {
        guard let removal = stores.removal else {
            throw SAMLError(.storeUnavailable, "expected a profile store that removes profiles, found one that cannot")
        }
        return removal
    }

    static let profilesUnavailable = EnhancedError(
        status: 503, code: "service_unavailable", message: "The profiles cannot be read now; retry later.", details: nil, action: "retry")

    /// Removes the device's profiles (only `mvpd`'s when given) from the store and from this instance's
    /// memory; returns the MVPDs whose profile was valid. Throws the store's error (nothing is answered as
    /// signed out that the store did not remove), ``ProfileLookups/Shed`` beyond the bounds of a device
    /// the directory knows nothing of, and `store.unavailable` for a store that cannot remove.
    func removeProfiles(device: String, mvpd: String?, by: String) async throws -> [String] {
        let removal = try profileRemoval()
        let serviceProvider = configuration.serviceProvider
        let now = configuration.clock.now()
        let remove = { try await removal.removeProfiles(serviceProvider: serviceProvider, device: device, mvpd: mvpd, now: now) }
        // Only a device the shared store's directory knows has a live profile is removed at once; any other
        // (none known, or a directory that cannot answer now: loading, behind, off) may still have one saved
        // elsewhere in the last second, so the delete goes on, but within the anonymous reads' bounds: a
        // caller who has proven nothing costs the primary no more than a profile read would.
        let ids = mvpd.map { [$0] } ?? mvpds.mvpds.map(\.id)
        let removed = proven(device: device, mvpds: ids, now: now) ? try await remove() : try await profileLookups.bounded(remove)
        await profileLookups.forget(serviceProvider: serviceProvider, device: device, mvpd: mvpd)
        metrics.profilesRemoved(by, count: removed.count)
        return removed
    }

    /// Removes every profile of `mvpd` whose attribute `attribute` holds `value` (an operator signing a
    /// subscriber out); returns how many.
    func removeSubscriber(mvpd: String, attribute: String, value: String) async throws -> Int {
        let removal = try profileRemoval()
        let removed = try await removal.removeProfiles(
            serviceProvider: configuration.serviceProvider, mvpd: mvpd, attribute: attribute, value: value)
        await profileLookups.forget(serviceProvider: configuration.serviceProvider, mvpd: mvpd, attribute: attribute, value: value)
        metrics.profilesRemoved("admin", count: removed)
        return removed
    }
}
