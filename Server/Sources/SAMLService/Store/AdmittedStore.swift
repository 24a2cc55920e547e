import AppleSSO
import SAML

/// The service's store as the verifier and the profile endpoints see it: each write first gives up the
/// request's verification slot (``AdmissionControl/releaseCurrentSlot()``), since what follows is a wait
/// for the store, which bounds it with its own queue and deadline, not CPU work.
///
/// A login's profile goes with its assertion (``SAML/SAMLAttachingStateStore``): in the same transaction
/// when the store can (PostgreSQL), else saved right after an accepted consume, a failure to save then
/// reported to `profileNotKept` (the login stands).
///
/// Each consume is timed into `saml_store_duration_seconds`, by the MVPD of the login's profile (the
/// profile reads, ``ProfileLookups``, by themselves).
struct AdmittedStore: SAMLAttachingStateStore {
    let store: any SAMLStateStore
    /// The profile store's reads bounded for anonymous callers; each profile kept is told to it.
    let profiles: ProfileLookups
    let metrics: ServiceMetrics
    let profileNotKept: @Sendable (StoredProfile) -> Void
    /// A login refused because the in-memory store was full of live entries, with the kind that was full.
    let storeFull: @Sendable (String) -> Void

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        AdmissionControl.releaseCurrentSlot()
        return try await timed("consume", mvpd: "none") {
            try await reportingFull { try await store.consume(request: request, assertion: assertion, now: now) }
        }
    }

    /// Runs `body`, telling ``storeFull`` which kind was full when it fails so (the error goes on: the
    /// login fails closed).
    private func reportingFull<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SAMLError where error.code == .replayCacheFull {
            let requestsFull = (store as? InMemoryStateStore).map { $0.counts.answeredRequests >= $0.capacity } ?? false
            storeFull(requestsFull ? "requests" : "assertions")
            throw error
        }
    }

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, attaching attachment: any Sendable) async throws
        -> StateStoreOutcome
    {
        AdmissionControl.releaseCurrentSlot()
        // The profile's MVPD is the configured one the exchange verified for, never a value of the request.
        return try await timed("consume", mvpd: (attachment as? StoredProfile)?.mvpd ?? "none") {
            try await reportingFull { try await consumeAndKeep(request: request, assertion: assertion, now: now, attaching: attachment) }
        }
    }

    private func timed<T>(_ operation: String, mvpd: String, _ body: () async throws -> T) async rethrows -> T {
        let started = ContinuousClock.now
        defer { metrics.storeDuration(operation: operation, mvpd: mvpd, ContinuousClock.now - started) }
        return try await body()
    }

    private func consumeAndKeep(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, attaching attachment: any Sendable)
        async throws -> StateStoreOutcome
    {
        if let attaching = store as? any SAMLAttachingStateStore {
            let outcome = try await attaching.consume(request: request, assertion: assertion, now: now, attaching: attachment)
            if outcome == .accepted, let profile = attachment as? StoredProfile { await profiles.kept(profile) }
            return outcome
        }
        let outcome = try await store.consume(request: request, assertion: assertion, now: now)
        if outcome == .accepted, let profile = attachment as? StoredProfile {
            do {
                try await save(profile)
            } catch {
                profileNotKept(profile)
            }
        }
        return outcome
    }

    private func save(_ profile: StoredProfile) async throws {
        AdmissionControl.releaseCurrentSlot()
        try await profiles.store.save(profile)
        await profiles.kept(profile)
    }

}
