/// SAML Core 3.2.2 and Profiles 4.1.4.2-3: `InResponseTo` must name the request the service sent, when
/// the service knows it, and only a signed part counts: the Response's attribute when the Response is
/// signed, or the bearer SubjectConfirmationData of the (always signed) assertion, which
/// ``SubjectConfirmationPolicy`` compares. The attribute of an unsigned Response is never what makes a
/// response acceptable; when it is present and different, the response is refused all the same.
enum InResponseToPolicy {
    /// The Response's attribute, signed or not, must not name another request. Checked first, so that
    /// answering another request is reported as such.
    static func checkResponseAttribute(_ found: String?, expected: ExpectedValue<String>) throws {
        guard let requestID = expected.expected, let found, found != requestID else { return }
        throw SAMLError(.inResponseToMismatch, "expected InResponseTo \(SAMLError.quote(requestID)), found \(SAMLError.quote(found))")
    }

    /// Returns the request ID the signed parts carry, if any.
    @discardableResult
    static func check(
        onResponse: String?, responseSigned: Bool, confirmationInResponseTo: String?, expected: ExpectedValue<String>
    ) throws -> String? {
        let signed = (responseSigned ? onResponse : nil) ?? confirmationInResponseTo
        guard let requestID = expected.expected else { return signed }
        try checkResponseAttribute(onResponse, expected: expected)
        guard let signed else {
            let unsigned = onResponse == nil ? "" : " (only the unsigned Response carries it)"
            throw SAMLError(
                .inResponseToMissing,
                "expected InResponseTo \(SAMLError.quote(requestID)) in a signed part (the signed Response or the signed assertion's bearer confirmation), found none\(unsigned)"
            )
        }
        guard signed == requestID else {
            throw SAMLError(.inResponseToMismatch, "expected InResponseTo \(SAMLError.quote(requestID)), found \(SAMLError.quote(signed))")
        }
        return signed
    }
}
