/// Every way a call of ``AppleSSOClient`` ends, each with the code the cookbooks or the service give it
/// (``code``) and what the app does next (``nextStep``). The article "Apple SSO in your tvOS app" has the
/// table, with the cookbook section of each row.
public enum AppleSSOOutcome: Sendable, Hashable {
    // Signed in.
    /// The Token Exchange created a profile from the provider's SAML answer (v2 `201`, v1 `204`).
    case signedIn(AppleSSOClient.Profile)
    /// The service already holds a profile for the device and MVPD (`actionName` `authorize`): no
    /// authentication was needed.
    case alreadySignedIn(mvpd: String)
    /// ``AppleSSOClient/partnerFrameworkStatus()``: the `AP-Partner-Framework-Status` value the decisions
    /// need for an `appleSSO` profile of `mvpd`.
    case partnerFrameworkStatus(header: String, mvpd: String)
    /// ``AppleSSOClient/checkAuthentication()``: the profiles the service holds for the device (none: the
    /// next step is ``AppleSSOClient/signIn()``).
    case profiles([AppleSSOClient.Profile])

    // Apple's framework (the SDK cookbook's codes).
    /// `N003`: the user chose "Other TV Provider" in Apple's picker.
    case otherProviderChosen
    /// `N004`: the provider the user chose (or is signed in to) is not one the service provider
    /// integrates, or not for single sign-on.
    case providerNotSupported(providerIdentifier: String?)
    /// No code: the provider chosen is in Apple's picker but authenticates through the regular flow, which
    /// starts with it selected: `boardingStatus` `PICKER`, or the framework's `unsupportedProvider` for a
    /// provider the configuration lists.
    case pickerOnlyProvider(mvpd: String)
    /// `N005`: the user cancelled Apple's picker or the provider's sign-in; the SDK then shows the app's
    /// own MVPD picker (the regular flow).
    case cancelled
    /// `VSA403`: the user denied the app access to their TV provider (or it is restricted).
    case accessDenied
    /// `VSA404`: the user has not decided whether the app may access their TV provider.
    case accessNotDetermined
    /// `VSA503`: the framework's metadata request failed while authenticating; `message` says how.
    case metadataRequestFailed(message: String)
    /// `APPL_ERROR`: the framework failed while checking silently; `details` carry its error.
    case frameworkError(details: String)
    /// No code: the user is signed in to no TV provider on the device (or its authentication ended).
    case notSignedInToProvider

    // The service.
    /// The service chose the regular authentication flow (`actionName` `authenticate` or `resume`):
    /// `reason` is its `reasonType` (`degraded`, `pfs_fallback`, `configuration_fallback`, ...), `url` and
    /// `code` what that flow starts from.
    case regularFlow(reason: String, mvpd: String?, url: String?, code: String?)
    /// The service answered `resume` (`reasonType` `missing_parameters_fallback`): the request lacked
    /// these parameters (``AppleSSOClient/Settings/domainName``, ``AppleSSOClient/Settings/redirectURL``).
    case missingParameters([String])
    /// The service refused the request with an Enhanced Error Code (a replayed or invalid response, an
    /// unknown MVPD, a partner framework status it does not accept, ...).
    case refused(AppleSSOClient.ServiceError)
    /// `401`: the access token is missing, invalid or expired.
    case unauthorized(AppleSSOClient.ServiceError?)
    /// `503` or `429`: the service cannot answer now; `retryAfter` in seconds when it says.
    case unavailable(retryAfter: Int?, AppleSSOClient.ServiceError?)
    /// No answer reached the app (connection refused, timed out, ...).
    case networkFailure(message: String)
    /// An answer this client cannot read (not the documented shape).
    case unexpectedAnswer(status: Int, message: String)

    // Logout.
    /// `VSA203`: the service removed a profile made through Apple SSO; the device stays signed in to the
    /// provider until the user signs out in Settings (`partner_logout` / `partner_interactive`).
    /// Every MVPD whose profile was removed is listed, each with its action.
    case providerSignOutRequired([AppleSSOClient.Logout])
    /// The service removed profiles of the regular flow: open the MVPD's logout `url` when there is one.
    case signedOut([AppleSSOClient.Logout])
    /// The service held no profile to remove.
    case noProfile

    /// The cookbook's or the service's code; nil where the cookbooks name none.
    public var code: String? {
        switch self {
        case .signedIn, .alreadySignedIn, .profiles, .partnerFrameworkStatus, .pickerOnlyProvider, .notSignedInToProvider, .signedOut,
            .noProfile:
            nil
        case .missingParameters: "missing_parameters_fallback"
        case .otherProviderChosen: "N003"
        case .providerNotSupported: "N004"
        case .cancelled: "N005"
        case .accessDenied: "VSA403"
        case .accessNotDetermined: "VSA404"
        case .metadataRequestFailed: "VSA503"
        case .frameworkError: "APPL_ERROR"
        case .providerSignOutRequired: "VSA203"
        case .regularFlow(let reason, _, _, _): reason
        case .refused(let error): error.code
        case .unauthorized(let error): error?.code ?? "invalid_access_token"
        case .unavailable(_, let error): error?.code ?? "service_unavailable"
        case .networkFailure: "network_connection_failure"
        case .unexpectedAnswer: "unexpected_answer"
        }
    }

    /// What the app does next.
    public var nextStep: AppleSSONextStep {
        switch self {
        case .signedIn, .alreadySignedIn, .partnerFrameworkStatus: .continueToDecisions
        case .profiles(let profiles): profiles.isEmpty ? .signIn : .continueToDecisions
        case .otherProviderChosen, .providerNotSupported, .accessDenied, .accessNotDetermined, .metadataRequestFailed, .frameworkError,
            .notSignedInToProvider, .cancelled:
            .regularAuthentication(mvpd: nil)
        case .pickerOnlyProvider(let mvpd): .regularAuthentication(mvpd: mvpd)
        case .regularFlow(_, let mvpd, _, _): .regularAuthentication(mvpd: mvpd)
        case .signedOut(let logouts): logouts.compactMap(\.url).first.map { .openLogoutURL($0) } ?? .nothing
        case .noProfile: .nothing
        case .providerSignOutRequired: .showProviderSignOutInstruction
        case .unauthorized: .renewAccessToken
        case .unavailable(let retryAfter, _): .retry(afterSeconds: retryAfter)
        case .networkFailure: .retry(afterSeconds: nil)
        case .unexpectedAnswer, .missingParameters: .report
        case .refused(let error):
            switch error.action {
            case "retry", "retry-after": .retry(afterSeconds: nil)
            case "authentication": .regularAuthentication(mvpd: nil)
            default: .report
            }
        }
    }
}

/// What the app does after an ``AppleSSOOutcome``.
public enum AppleSSONextStep: Sendable, Hashable {
    /// Signed in: go on to the decisions (preauthorize, authorize).
    case continueToDecisions
    /// No profile yet but the provider is known: ``AppleSSOClient/signIn()`` (the partner authentication).
    case signIn
    /// Fall back to the regular (second-screen) authentication flow, with `mvpd` selected when known. For
    /// `VSA403`/`VSA404`, the cookbooks add: explain what single sign-on gives, and that Settings ›
    /// TV Provider (iOS) or Settings › Accounts › TV Provider (tvOS) changes the decision.
    case regularAuthentication(mvpd: String?)
    /// Nothing is left to do.
    case nothing
    /// Open the MVPD's logout page (a profile of the regular flow), as the v1 cookbook says for iOS: in a
    /// web view, so that the MVPD's session ends too.
    case openLogoutURL(String)
    /// Try again, after `afterSeconds` when the service said.
    case retry(afterSeconds: Int?)
    /// Get a new access token (Dynamic Client Registration), then try again.
    case renewAccessToken
    /// `VSA203`: tell the user to sign out of the TV provider in Settings › TV Provider (iOS) or
    /// Settings › Accounts › TV Provider (tvOS); no API does it for them.
    case showProviderSignOutInstruction
    /// A fault of the integration (configuration, registration, an answer out of contract): log the
    /// outcome; trying again as it is will not help.
    case report
}
