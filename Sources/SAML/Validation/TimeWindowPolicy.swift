/// SAML Core 2.5.1.2: `NotBefore <= now < NotOnOrAfter`, each widened by the clock skew; and the
/// IssueInstant of Response and Assertion neither in the future beyond the skew nor older than the
/// maximum age.
enum TimeWindowPolicy {
    static func instant(_ attribute: ResponseContent.Instant?) throws -> SAMLInstant? {
        guard let attribute else { return nil }
        guard let instant = attribute.value else {
            let malformed = attribute.malformed
            throw SAMLError(
                .timeMalformed,
                "expected an xs:dateTime in \(malformed?.location ?? "?"), found \(SAMLError.quote(malformed?.text ?? ""))")
        }
        return instant
    }

    /// The Conditions window, as checked (each end nil when absent).
    struct Window {
        var notBefore: SAMLInstant?
        var notOnOrAfter: SAMLInstant?
    }

    @discardableResult
    static func checkConditions(_ conditions: ResponseContent.Conditions?, context: ValidationContext) throws -> Window {
        guard let conditions else { return Window() }
        let window = Window(notBefore: try instant(conditions.notBefore), notOnOrAfter: try instant(conditions.notOnOrAfter))
        if let notBefore = window.notBefore, context.now + context.skew < notBefore {
            throw SAMLError(
                .timeNotYetValid, "expected NotBefore \(notBefore) to have passed, found now = \(context.now) (skew \(context.skew))")
        }
        if let notOnOrAfter = window.notOnOrAfter, context.now - context.skew >= notOnOrAfter {
            throw SAMLError(
                .timeExpired, "expected now before NotOnOrAfter \(notOnOrAfter), found now = \(context.now) (skew \(context.skew))")
        }
        return window
    }

    /// Returns the IssueInstant, as checked.
    @discardableResult
    static func checkIssueInstant(
        _ issueInstant: ResponseContent.Instant?, of element: String, maximumAge: Duration?, context: ValidationContext
    ) throws -> SAMLInstant {
        guard let issued = try instant(issueInstant) else {
            throw SAMLError(.structureMissingElement, "expected \(element)/@IssueInstant, found none")
        }
        if context.now + context.skew < issued {
            throw SAMLError(.timeIssueInstant, "expected IssueInstant \(issued) not in the future, found now = \(context.now)")
        }
        if let maximumAge, context.now - context.skew - maximumAge > issued {
            throw SAMLError(
                .timeIssueInstant, "expected IssueInstant \(issued) within \(maximumAge) of now = \(context.now), found it older")
        }
        return issued
    }
}
