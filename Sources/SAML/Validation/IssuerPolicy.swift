/// SAML Core 2.2.5 and Profiles 4.1.4.2: the Assertion carries an Issuer, every Issuer present names the
/// expected IdP, and its Format, when present, is the entity format.
enum IssuerPolicy {
    static let entityFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"

    /// Before any signature is verified: an Issuer that names another IdP is reported as such (the
    /// signature, made with that IdP's key, would otherwise be reported as invalid).
    static func checkNamedIssuers(response: String?, assertion: String?, expected: ExpectedValue<String>) throws {
        guard let expectedIssuer = expected.expected.map(XMLWhitespace.trimmed) else { return }
        for (name, found) in [("Response", response), ("Assertion", assertion)] {
            guard let found else { continue }
            guard found == expectedIssuer else { throw mismatch(name, expectedIssuer, found) }
        }
    }

    private static func mismatch(_ name: String, _ expected: String, _ found: String) -> SAMLError {
        SAMLError(.issuerMismatch, "expected the \(name) Issuer \(SAMLError.quote(expected)), found \(SAMLError.quote(found))")
    }

    static func check(response: ResponseContent.Issuer?, assertion: ResponseContent.Issuer?, expected: ExpectedValue<String>) throws {
        guard let assertion, !assertion.value.isEmpty else {
            throw SAMLError(.issuerMissing, "expected an Issuer in the Assertion, found none")
        }
        for (name, issuer) in [("Response", response), ("Assertion", assertion)] {
            guard let format = issuer?.format else { continue }
            guard XMLWhitespace.trimmed(format) == entityFormat else {
                throw SAMLError(
                    .issuerFormat, "expected the \(name) Issuer's Format to be omitted or \(entityFormat), found \(SAMLError.quote(format))"
                )
            }
        }
        try checkNamedIssuers(response: response?.value, assertion: assertion.value, expected: expected)
    }
}
