internal import CSAMLShim

/// What the SAML 2.0 assertion schema and SAML Core 2.5.1 say of a verified assertion's Subject and
/// Conditions, checked before anything is read from them:
/// - at most one `saml:Subject` and one `saml:Conditions` (the schema allows one of each; a reader that
///   took the first and a checker that took the second could disagree), at most one identifier
///   (`BaseID`, `NameID`, `EncryptedID`) in the Subject, at most one `OneTimeUse` and one
///   `ProxyRestriction` in the Conditions (Core 2.5.1.5, 2.5.1.6);
/// - inside `saml:Conditions`, only the conditions this verifier evaluates: `AudienceRestriction`,
///   `OneTimeUse` (replay detection accepts an assertion once) and `ProxyRestriction` (the service
///   issues no assertions of its own). A `saml:Condition` of any `xsi:type`, or an element of another
///   namespace, is a condition it cannot evaluate: Core 2.5.1 makes the assertion Indeterminate, which
///   is not Valid.
enum AssertionSchemaPolicy {
    static func check(_ assertion: xmlNodePtr) throws {
        let saml = Namespace.samlAssertion
        var subjects = 0
        var conditions: xmlNodePtr?
        for child in assertion.elementChildren {
            if child.is(saml, "Subject") {
                subjects += 1
                guard subjects == 1 else {
                    throw SAMLError(.assertionDuplicateElement, "expected at most one saml:Subject in the Assertion, found two")
                }
                let identifiers = child.elementChildren.count {
                    $0.is(saml, "NameID") || $0.is(saml, "BaseID") || $0.is(saml, "EncryptedID")
                }
                guard identifiers <= 1 else {
                    throw SAMLError(
                        .assertionDuplicateElement,
                        "expected at most one NameID, BaseID or EncryptedID in the Subject, found \(identifiers)")
                }
            } else if child.is(saml, "Conditions") {
                guard conditions == nil else {
                    throw SAMLError(.assertionDuplicateElement, "expected at most one saml:Conditions in the Assertion, found two")
                }
                conditions = child
            }
        }
        guard let conditions else { return }
        for once: StaticString in ["OneTimeUse", "ProxyRestriction"] where conditions.children(saml, once).count > 1 {
            throw SAMLError(.assertionDuplicateElement, "expected at most one saml:\(once) in saml:Conditions, found more")
        }
        for condition in conditions.elementChildren
        where !(condition.is(saml, "AudienceRestriction") || condition.is(saml, "OneTimeUse") || condition.is(saml, "ProxyRestriction")) {
            throw SAMLError(
                .conditionsUnknown,
                "expected only AudienceRestriction, OneTimeUse and ProxyRestriction in saml:Conditions, found \(SAMLError.quote(condition.qualifiedDescription)) (a condition that cannot be evaluated: Indeterminate, SAML Core 2.5.1)"
            )
        }
    }
}
