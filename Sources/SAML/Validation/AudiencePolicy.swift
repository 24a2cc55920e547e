/// SAML Core 2.5.1.4: every AudienceRestriction must name the service's audience (for Adobe Pass,
/// `https://saml.sp.auth.adobe.com`), and when an audience is expected at least one restriction must exist.
enum AudiencePolicy {
    static func check(_ conditions: ResponseContent.Conditions?, expected: ExpectedValue<String>) throws {
        guard let audience = expected.expected else { return }
        let restrictions = conditions?.audienceRestrictions ?? []
        guard !restrictions.isEmpty else {
            throw SAMLError(.audienceMismatch, "expected an AudienceRestriction naming \(SAMLError.quote(audience)), found none")
        }
        for restriction in restrictions where !restriction.contains(audience) {
            let found = restriction.prefix(4).map { SAMLError.quote($0) }.joined(separator: ", ")
            throw SAMLError(
                .audienceMismatch, "expected the audience \(SAMLError.quote(audience)), found \(found.isEmpty ? "none" : found)")
        }
    }
}
