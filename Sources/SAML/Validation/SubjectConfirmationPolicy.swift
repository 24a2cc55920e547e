/// SAML Profiles 4.1.4.2 (Web Browser SSO): the assertion needs a bearer SubjectConfirmation whose
/// SubjectConfirmationData has a `NotOnOrAfter` still in the future, no `NotBefore` in the future, a
/// `Recipient` among the accepted ones when the service configures them (SAML Core 2.4.1.2 allows the
/// endpoint's location or the SP's entity ID), and an `InResponseTo` equal to the request ID when the
/// service knows it. One satisfying confirmation suffices; otherwise the first one's failure is reported.
enum SubjectConfirmationPolicy {
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"

    /// What the satisfying confirmation data says.
    struct Confirmed {
        var notOnOrAfter: SAMLInstant
        var inResponseTo: String?
    }

    /// - Parameter recipients: the accepted `Recipient` values; nil when not checked.
    static func check(
        _ confirmations: [ResponseContent.Confirmation],
        recipients: [String]?,
        inResponseTo: ExpectedValue<String>,
        context: ValidationContext
    ) throws -> Confirmed {
        guard confirmations.contains(where: { $0.method == bearer }) else {
            throw SAMLError(.subjectConfirmationMissing, "expected a bearer SubjectConfirmation, found none")
        }
        var firstFailure: SAMLError?
        for confirmation in confirmations where confirmation.method == bearer {
            do {
                return try checkData(confirmation.data, recipients: recipients, inResponseTo: inResponseTo, context: context)
            } catch let error as SAMLError {
                if firstFailure == nil { firstFailure = error }
            }
        }
        throw firstFailure!  // Non-nil: the loop ran at least once and every iteration threw.
    }

    private static func checkData(
        _ data: ResponseContent.ConfirmationData?,
        recipients: [String]?,
        inResponseTo: ExpectedValue<String>,
        context: ValidationContext
    ) throws -> Confirmed {
        guard let data else {
            throw SAMLError(
                .subjectConfirmationIncomplete, "expected SubjectConfirmationData in the bearer SubjectConfirmation, found none")
        }
        if let recipients {
            guard let found = data.recipient else {
                throw SAMLError(.subjectConfirmationIncomplete, "expected a Recipient on the bearer SubjectConfirmationData, found none")
            }
            guard recipients.contains(XMLWhitespace.trimmed(found)) else {
                let accepted = recipients.prefix(4).map { SAMLError.quote($0) }.joined(separator: " or ")
                throw SAMLError(.subjectConfirmationRecipient, "expected Recipient \(accepted), found \(SAMLError.quote(found))")
            }
        }
        guard let notOnOrAfter = try TimeWindowPolicy.instant(data.notOnOrAfter) else {
            throw SAMLError(.subjectConfirmationIncomplete, "expected a NotOnOrAfter on the bearer SubjectConfirmationData, found none")
        }
        if context.now - context.skew >= notOnOrAfter {
            throw SAMLError(
                .subjectConfirmationExpired,
                "expected now before the confirmation's NotOnOrAfter \(notOnOrAfter), found now = \(context.now)"
            )
        }
        if let notBefore = try TimeWindowPolicy.instant(data.notBefore), context.now + context.skew < notBefore {
            throw SAMLError(
                .subjectConfirmationExpired, "expected the confirmation's NotBefore \(notBefore) to have passed, found now = \(context.now)"
            )
        }
        let found = data.inResponseTo
        if let requestID = inResponseTo.expected, let found, found != requestID {
            throw SAMLError(
                .subjectConfirmationInResponseTo,
                "expected the confirmation's InResponseTo \(SAMLError.quote(requestID)), found \(SAMLError.quote(found))"
            )
        }
        return Confirmed(notOnOrAfter: notOnOrAfter, inResponseTo: found)
    }
}
