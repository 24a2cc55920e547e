internal import CSAMLShim

/// Reads the verified assertion into ``VerifiedAssertion``. Called only with the Assertion element that
/// a verified signature covered (its own, or the Response's).
enum AssertionExtraction {
    /// `window` and `issued` are the values the time checks already read.
    static func read(
        _ assertion: xmlNodePtr, conditions: xmlNodePtr?, window: TimeWindowPolicy.Window, issued: SAMLInstant
    ) throws -> VerifiedAssertion {
        let saml = Namespace.samlAssertion
        let subject = assertion.firstChild(saml, "Subject")
        let nameID = subject?.firstChild(saml, "NameID").map { node in
            NameID(
                value: node.textContent,
                format: node.attribute("Format"),
                nameQualifier: node.attribute("NameQualifier"),
                spNameQualifier: node.attribute("SPNameQualifier")
            )
        }
        let authn = assertion.firstChild(saml, "AuthnStatement")
        var attributes: [SAMLAttribute] = []
        for statement in assertion.children(saml, "AttributeStatement") {
            for attribute in statement.children(saml, "Attribute") {
                attributes.append(
                    SAMLAttribute(
                        name: attribute.attribute("Name") ?? "",
                        friendlyName: attribute.attribute("FriendlyName"),
                        nameFormat: attribute.attribute("NameFormat"),
                        values: attribute.children(saml, "AttributeValue").map(\.textContent)
                    )
                )
            }
        }
        return VerifiedAssertion(
            id: assertion.attribute("ID") ?? "",
            issuer: IssuerPolicy.issuer(of: assertion) ?? "",
            issueInstant: issued,
            nameID: nameID,
            sessionIndex: authn?.attribute("SessionIndex"),
            authnInstant: try authn.flatMap { try TimeWindowPolicy.instant($0, "AuthnInstant") },
            notBefore: window.notBefore,
            notOnOrAfter: window.notOnOrAfter,
            audiences: AudiencePolicy.audiences(conditions: conditions).flatMap { $0 },
            attributes: attributes
        )
    }
}
