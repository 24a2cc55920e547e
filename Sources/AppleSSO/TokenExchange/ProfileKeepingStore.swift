import SAML

/// A state store that keeps a Token Exchange's profile in the same atomic step as the login's assertion
/// (PostgreSQL's, `Server/`): the profile exists exactly when the login was accepted. The typed form of
/// `SAMLAttachingStateStore` for ``StoredProfile``s: give it to the verifier through
/// ``SAML/SAMLResponseVerifier/ReplayProtection/keepingProfiles(in:unsolicited:)``, and a
/// ``TokenExchange`` with a caller hands it the profile it built from the verified response.
public protocol ProfileKeepingStateStore: SAMLStateStore {
    /// `SAMLStateStore.consume(request:assertion:now:)`, keeping `profile` too when, and only
    /// when, the outcome is `StateStoreOutcome.accepted`.
    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, keeping profile: StoredProfile) async throws
        -> StateStoreOutcome
}

extension SAMLResponseVerifier.ReplayProtection {
    /// `ReplayProtection.store(_:unsolicited:)` over a store that keeps the
    /// Token Exchange's profile with the assertion.
    public static func keepingProfiles(
        in store: some ProfileKeepingStateStore, unsolicited: SAMLResponseVerifier.UnsolicitedResponses = .refuse
    )
        -> Self
    {
        .store(ProfileAttachment(base: store), unsolicited: unsolicited)
    }
}

/// Where the verifier's attachment, of any kind by the SAML library's design, becomes the typed profile:
/// the one attachment ``TokenExchange`` makes is a ``StoredProfile``; another is a configuration error,
/// never a profile silently dropped.
private struct ProfileAttachment<Base: ProfileKeepingStateStore>: SAMLAttachingStateStore {
    let base: Base

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        try await base.consume(request: request, assertion: assertion, now: now)
    }

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, attaching attachment: any Sendable) async throws
        -> StateStoreOutcome
    {
        guard let profile = attachment as? StoredProfile else {
            throw SAMLError(.configurationInvalid, "expected a StoredProfile attached to the login, found another attachment")
        }
        return try await base.consume(request: request, assertion: assertion, now: now, keeping: profile)
    }
}
