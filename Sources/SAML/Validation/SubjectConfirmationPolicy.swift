internal import CSAMLShim

/// SAML Profiles 4.1.4.2: a bearer SubjectConfirmation is required. Its SubjectConfirmationData, when
/// present, must have a Recipient equal to the endpoint (when one is configured), a NotOnOrAfter still in
/// the future, no NotBefore in the future, and an InResponseTo equal to the request ID when the service
/// knows it. Attributes the IdP left out are not required (ruby-saml and OpenSAML accept such real
/// responses; the Conditions window still bounds the assertion's life). One satisfying confirmation
/// suffices; otherwise the first one's failure is reported.
enum SubjectConfirmationPolicy {
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"

    /// What the satisfying confirmation data says.
    struct Confirmed {
        var notOnOrAfter: SAMLInstant?
        var inResponseTo: String?
    }

    static func check(
        subject: xmlNodePtr?,
        recipient: ExpectedValue<String>,
        inResponseTo: ExpectedValue<String>,
        context: ValidationContext
    ) throws -> Confirmed {
        let confirmations = (subject?.children(Namespace.samlAssertion, "SubjectConfirmation") ?? [])
            .filter { $0.attribute("Method") == bearer }
        guard !confirmations.isEmpty else {
            throw SAMLError(.subjectConfirmationMissing, "expected a bearer SubjectConfirmation, found none")
        }
        var firstFailure: SAMLError?
        for confirmation in confirmations {
            do {
                return try checkData(confirmation.firstChild(Namespace.samlAssertion, "SubjectConfirmationData"),
                                     recipient: recipient, inResponseTo: inResponseTo, context: context)
            } catch let error as SAMLError {
                if firstFailure == nil { firstFailure = error }
            }
        }
        throw firstFailure!  // Non-nil: the loop ran at least once and every iteration threw.
    }

    private static func checkData(
        _ data: xmlNodePtr?,
        recipient: ExpectedValue<String>,
        inResponseTo: ExpectedValue<String>,
        context: ValidationContext
    ) throws -> Confirmed {
        guard let data else { return Confirmed(notOnOrAfter: nil, inResponseTo: nil) }
        if let endpoint = recipient.expected, let found = data.attribute("Recipient") {
            guard XMLWhitespace.trimmed(found) == endpoint else {
                throw SAMLError(
                    .subjectConfirmationRecipient,
                    "expected Recipient \(SAMLError.quote(endpoint)), found \(SAMLError.quote(found))"
                )
            }
        }
        let notOnOrAfter = try TimeWindowPolicy.instant(data, "NotOnOrAfter")
        if let notOnOrAfter, context.now - context.skew >= notOnOrAfter {
            throw SAMLError(
                .subjectConfirmationExpired,
                "expected now before the confirmation's NotOnOrAfter \(notOnOrAfter), found now = \(context.now)"
            )
        }
        if let notBefore = try TimeWindowPolicy.instant(data, "NotBefore"), context.now + context.skew < notBefore {
            throw SAMLError(.subjectConfirmationExpired, "expected the confirmation's NotBefore \(notBefore) to have passed, found now = \(context.now)")
        }
        let found = data.attribute("InResponseTo")
        if let requestID = inResponseTo.expected {
            guard found == nil || found == requestID else {
                throw SAMLError(
                    .subjectConfirmationInResponseTo,
                    "expected the confirmation's InResponseTo \(SAMLError.quote(requestID)), found \(SAMLError.quote(found ?? ""))"
                )
            }
        }
        return Confirmed(notOnOrAfter: notOnOrAfter, inResponseTo: found)
    }
}
