import Foundation

/// What the client asks of Apple's Video Subscriber Account framework: the calls an app makes on
/// `VSAccountManager`, as values. `VSAccountManagerAccounts` is the real one (where the framework
/// exists); ``ScriptedAccounts`` answers as a test or a preview scripts it.
public protocol VideoSubscriberAccounts: Sendable {
    /// `checkAccessStatus(options:)`: whether the user lets the app read their TV-provider account,
    /// asking them first when `prompt` is true and they have not decided.
    func accessStatus(prompt: Bool) async throws(VideoSubscriberAccountError) -> VideoSubscriberAccountStatus

    /// `enqueue(_:completionHandler:)` of a `VSAccountMetadataRequest`: the account's provider, the end of
    /// its authentication and, when the request carries a verification token, the provider's SAML answer.
    func metadata(_ request: VideoSubscriberAccountRequest) async throws(VideoSubscriberAccountError) -> VideoSubscriberAccountMetadata
}

/// `VSAccountAccessStatus`.
public enum VideoSubscriberAccountStatus: String, Sendable, Hashable {
    case notDetermined
    case restricted
    case denied
    case granted
}

/// A `VSAccountMetadataRequest`, as the cookbooks fill it.
public struct VideoSubscriberAccountRequest: Sendable, Hashable {
    /// `channelIdentifier`.
    public var channelIdentifier: String?
    /// `supportedAccountProviderIdentifiers`: the `platformMappingId`s the configuration lists for Apple's
    /// picker.
    public var supportedProviderIdentifiers: [String]
    /// `featuredAccountProviderIdentifiers`: the providers Apple's picker shows first.
    public var featuredProviderIdentifiers: [String]
    /// `verificationToken`: the service's SAML request (Base64), for the provider's SAML answer.
    public var verificationToken: String?
    /// `attributeNames`: the SAML attributes the service asks the provider for.
    public var attributeNames: [String]
    /// `isInterruptionAllowed`: whether the framework may show its picker or the provider's sign-in.
    /// False while checking silently (the cookbook's "check authentication" and "decision" phases), true
    /// while authenticating.
    public var isInterruptionAllowed: Bool
    /// `includeAccountProviderIdentifier` and `includeAuthenticationExpirationDate`: always asked, since
    /// the partner framework status carries both.
    public var includeAccountProviderIdentifier = true
    public var includeAuthenticationExpirationDate = true

    public init(
        channelIdentifier: String? = nil, supportedProviderIdentifiers: [String], featuredProviderIdentifiers: [String] = [],
        verificationToken: String? = nil, attributeNames: [String] = [], isInterruptionAllowed: Bool
    ) {
        self.channelIdentifier = channelIdentifier
        self.supportedProviderIdentifiers = supportedProviderIdentifiers
        self.featuredProviderIdentifiers = featuredProviderIdentifiers
        self.verificationToken = verificationToken
        self.attributeNames = attributeNames
        self.isInterruptionAllowed = isInterruptionAllowed
    }
}

/// A `VSAccountMetadata`.
public struct VideoSubscriberAccountMetadata: Sendable, Hashable {
    /// `accountProviderIdentifier`: the provider's `platformMappingId`; nil when the user is signed in to
    /// no provider.
    public var providerIdentifier: String?
    /// `authenticationExpirationDate`.
    public var authenticationExpiration: Date?
    /// `samlAttributeQueryResponse`: the provider's SAML `Response`, when the request carried a
    /// verification token.
    public var samlAttributeQueryResponse: String?

    public init(providerIdentifier: String?, authenticationExpiration: Date? = nil, samlAttributeQueryResponse: String? = nil) {
        self.providerIdentifier = providerIdentifier
        self.authenticationExpiration = authenticationExpiration
        self.samlAttributeQueryResponse = samlAttributeQueryResponse
    }
}

/// The framework's errors (`VSError.Code`), and any other error its calls return.
public enum VideoSubscriberAccountError: Error, Sendable, Hashable {
    /// `accessNotGranted`.
    case accessNotGranted
    /// `unsupportedProvider`, with `VSErrorInfoKeyUnsupportedProviderIdentifier` when the framework gives
    /// it. The user picked "Other TV Provider" when it does not (this client's reading: Apple documents
    /// the key, not its absence).
    case unsupportedProvider(identifier: String?)
    /// `userCancelled`.
    case userCancelled
    /// `serviceTemporarilyUnavailable`.
    case serviceTemporarilyUnavailable
    /// `providerRejected`.
    case providerRejected
    /// `invalidVerificationToken`.
    case invalidVerificationToken
    /// `rejected`.
    case rejected
    /// `unsupported` (the feature, in the device's region).
    case unsupported
    /// Any other error: its domain, code and description, for the outcome's details.
    case other(domain: String, code: Int, description: String)

    /// The framework's name of the error, for messages (`VSErrorCodeUserCancelled`, ...).
    public var name: String {
        switch self {
        case .accessNotGranted: "VSErrorCodeAccessNotGranted"
        case .unsupportedProvider: "VSErrorCodeUnsupportedProvider"
        case .userCancelled: "VSErrorCodeUserCancelled"
        case .serviceTemporarilyUnavailable: "VSErrorCodeServiceTemporarilyUnavailable"
        case .providerRejected: "VSErrorCodeProviderRejected"
        case .invalidVerificationToken: "VSErrorCodeInvalidVerificationToken"
        case .rejected: "VSErrorCodeRejected"
        case .unsupported: "VSErrorCodeUnsupported"
        case .other(let domain, let code, _): "\(domain) \(code)"
        }
    }
}
