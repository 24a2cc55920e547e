internal import CSAMLShim

/// SAML Core 2.2.5 / Profiles 4.1.4.2: the Assertion's Issuer is required and must be the IdP; the
/// Response's Issuer is optional, and when present must be the IdP too. Compared after trimming XML
/// whitespace, since the cookbook's normalisation turns `<Issuer>\n x\n</Issuer>` into `<Issuer> x </Issuer>`.
/// Either Issuer's `Format`, when present, must be the entity format (Profiles 4.1.4.2).
enum IssuerPolicy {
    static let entityFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"

    static func issuer(of element: xmlNodePtr) -> String? {
        element.firstChild(Namespace.samlAssertion, "Issuer")?.textContent
    }

    /// Before any signature: each Issuer present (the Response's, and the Assertion's when it is not
    /// encrypted) that names another IdP is refused. Refusal only; presence is checked after verification.
    static func checkNamedIssuers(response: xmlNodePtr, assertion: xmlNodePtr?, expected: ExpectedValue<String>) throws {
        guard let expectedIssuer = expected.expected.map(XMLWhitespace.trimmed) else { return }
        for (name, element) in [("Response", Optional(response)), ("Assertion", assertion)] {
            guard let element, let found = issuer(of: element) else { continue }
            guard found == expectedIssuer else { throw mismatch(name, expectedIssuer, found) }
        }
    }

    private static func mismatch(_ name: String, _ expected: String, _ found: String) -> SAMLError {
        SAMLError(.issuerMismatch, "expected the \(name) Issuer \(SAMLError.quote(expected)), found \(SAMLError.quote(found))")
    }

    static func check(response: xmlNodePtr, assertion: xmlNodePtr, expected: ExpectedValue<String>) throws {
        guard let assertionIssuer = issuer(of: assertion), !assertionIssuer.isEmpty else {
            throw SAMLError(.issuerMissing, "expected an Issuer in the Assertion, found none")
        }
        for (name, element) in [("Response", response), ("Assertion", assertion)] {
            guard let format = element.firstChild(Namespace.samlAssertion, "Issuer")?.attribute("Format") else { continue }
            guard XMLWhitespace.trimmed(format) == entityFormat else {
                throw SAMLError(.issuerFormat, "expected the \(name) Issuer's Format to be omitted or \(entityFormat), found \(SAMLError.quote(format))")
            }
        }
        guard let expectedIssuer = expected.expected.map(XMLWhitespace.trimmed) else { return }
        for (name, found) in [("Response", issuer(of: response)), ("Assertion", assertionIssuer)] {
            guard let found else { continue }
            guard found == expectedIssuer else { throw mismatch(name, expectedIssuer, found) }
        }
    }
}
