/// What the SAML 2.0 assertion schema and SAML Core 2.5.1 say of a verified assertion's Subject and
/// Conditions, judged on what the content reader counted (`ResponseContent.Shape`) before any other policy
/// reads them:
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
    static func check(_ shape: ResponseContent.Shape) throws {
        guard shape.identifiers <= 1 else {
            throw SAMLError(
                .assertionDuplicateElement, "expected at most one NameID, BaseID or EncryptedID in the Subject, found \(shape.identifiers)")
        }
        guard shape.subjects <= 1 else {
            throw SAMLError(.assertionDuplicateElement, "expected at most one saml:Subject in the Assertion, found \(shape.subjects)")
        }
        guard shape.conditions <= 1 else {
            throw SAMLError(.assertionDuplicateElement, "expected at most one saml:Conditions in the Assertion, found \(shape.conditions)")
        }
        for (count, once) in [(shape.oneTimeUse, "OneTimeUse"), (shape.proxyRestrictions, "ProxyRestriction")] where count > 1 {
            throw SAMLError(.assertionDuplicateElement, "expected at most one saml:\(once) in saml:Conditions, found \(count)")
        }
        if let unknown = shape.unknownCondition {
            throw SAMLError(
                .conditionsUnknown,
                "expected only AudienceRestriction, OneTimeUse and ProxyRestriction in saml:Conditions, found \(SAMLError.quote(unknown)) (a condition that cannot be evaluated: Indeterminate, SAML Core 2.5.1)"
            )
        }
    }
}
