import AppleSSO
import SAML

/// The service's store as the verifier and the profile endpoints see it.
///
/// A login's profile goes with its assertion (``AppleSSO/ProfileKeepingStateStore``, typed): in the same
/// transaction when the store keeps profiles (PostgreSQL), else saved right after an accepted consume, a
/// failure to save then reported to `profileNotKept` (the login stands).
///
/// Each consume is timed into `saml_store_duration_seconds`, by the MVPD of the login's profile (the
/// profile reads, ``ProfileLookups``, by themselves).
struct AdmittedStore: ProfileKeepingStateStore {
    let stores: ServiceStores
    /// The profile store's reads bounded for anonymous callers; each profile kept is told to it.
    let profiles: ProfileLookups
    let metrics: ServiceMetrics
    let profileNotKept: @Sendable (StoredProfile) -> Void
    /// A login refused because the in-memory store was full of live entries, with the kind that was full.
    let storeFull: @Sendable (String) -> Void

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        try await timed("consume", mvpd: "none") {
            try await reportingFull { try await stores.logins.consume(request: request, assertion: assertion, now: now) }
        }
    }

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, keeping profile: StoredProfile) async throws
        -> StateStoreOutcome
    {
        // The profile's MVPD is the configured one the exchange verified for, never a value of the request.
        return try await timed("consume", mvpd: profile.mvpd) {
            try await reportingFull {
                if let keeping = stores.keepingProfiles {
                    let outcome = try await keeping.consume(request: request, assertion: assertion, now: now, keeping: profile)
                    if outcome == .accepted { await profiles.kept(profile) }
                    return outcome
                }
                let outcome = try await stores.logins.consume(request: request, assertion: assertion, now: now)
                if outcome == .accepted {
                    do {
                        try await profiles.store.save(profile)
                        await profiles.kept(profile)
                    } catch {
                        profileNotKept(profile)
                    }
                }
                return outcome
            }
        }
    }

    /// Runs `body`, telling ``storeFull`` which kind was full when it fails so (the error goes on: the
    /// login fails closed).
    private func reportingFull<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SAMLError where error.code == .replayCacheFull {
            let requestsFull = stores.memoryLogins.map { $0.counts.answeredRequests >= $0.capacity } ?? false
            storeFull(requestsFull ? "requests" : "assertions")
            throw error
        }
    }

    private func timed<T>(_ operation: String, mvpd: String, _ body: () async throws -> T) async rethrows -> T {
        let started = ContinuousClock.now
        defer { metrics.storeDuration(operation: operation, mvpd: mvpd, ContinuousClock.now - started) }
        return try await body()
    }
}
