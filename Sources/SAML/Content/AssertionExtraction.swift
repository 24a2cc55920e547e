/// Reads the verified assertion into ``VerifiedAssertion``, from ``ResponseContent`` (which the verifier
/// built from the Assertion element a verified signature covered: its own, or the Response's).
enum AssertionExtraction {
    /// `window` and `issued` are the values the time checks already read.
    static func read(_ assertion: ResponseContent.Assertion, window: TimeWindowPolicy.Window, issued: SAMLInstant) throws
        -> VerifiedAssertion
    {
        VerifiedAssertion(
            id: assertion.id,
            issuer: assertion.issuer?.value ?? "",
            issueInstant: issued,
            nameID: assertion.nameID,
            sessionIndex: assertion.sessionIndex,
            authnInstant: try TimeWindowPolicy.instant(assertion.authnInstant),
            notBefore: window.notBefore,
            notOnOrAfter: window.notOnOrAfter,
            audiences: (assertion.conditions?.audienceRestrictions ?? []).flatMap { $0 },
            attributes: assertion.attributes
        )
    }
}
