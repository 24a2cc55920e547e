import AppleSSO
import SAML

/// The service's store as the verifier and the profile endpoints see it: each operation first gives up
/// the request's verification slot (``AdmissionControl/releaseCurrentSlot()``), since what follows is a
/// wait for the store, which bounds it with its own queue and deadline, not CPU work.
struct AdmittedStore: SAMLStateStore, ProfileStore {
    let store: any SAMLStateStore
    let profiles: any ProfileStore

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        AdmissionControl.releaseCurrentSlot()
        return try await store.consume(request: request, assertion: assertion, now: now)
    }

    func save(_ profile: StoredProfile) async throws {
        AdmissionControl.releaseCurrentSlot()
        try await profiles.save(profile)
    }

    func profiles(serviceProvider: String, device: String, now: SAMLInstant) async throws -> [StoredProfile] {
        try await profiles.profiles(serviceProvider: serviceProvider, device: device, now: now)
    }
}
