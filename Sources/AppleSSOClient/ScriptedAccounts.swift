import Foundation

/// A stand-in for Apple's framework that answers as scripted: every case the cookbooks name (a granted,
/// denied or undetermined permission; a provider, none, "Other TV Provider", an unsupported one; a
/// cancelled picker; a failed request; the provider's SAML answer) without a device. For tests, previews
/// and platforms without the framework. It records the requests it was given.
public final class ScriptedAccounts: VideoSubscriberAccounts, @unchecked Sendable {
    public typealias Answer =
        @Sendable (VideoSubscriberAccountRequest) throws(VideoSubscriberAccountError) -> VideoSubscriberAccountMetadata

    private let status: Result<VideoSubscriberAccountStatus, VideoSubscriberAccountError>
    private let answer: Answer
    private let lock = NSLock()
    private var recorded: [VideoSubscriberAccountRequest] = []
    private var prompts: [Bool] = []

    /// `status` answers every access check; `answer` every metadata request.
    public init(status: Result<VideoSubscriberAccountStatus, VideoSubscriberAccountError> = .success(.granted), answer: @escaping Answer) {
        self.status = status
        self.answer = answer
    }

    /// Signed in to `provider` until `expiration`; a request with a verification token is answered with
    /// `response(token, attributeNames)`, the provider's SAML `Response` as the framework hands it over.
    public convenience init(
        provider: String, expiration: Date? = Date(timeIntervalSinceNow: 86_400),
        response: @escaping @Sendable (_ verificationToken: String, _ attributeNames: [String]) -> String
    ) {
        self.init { request in
            VideoSubscriberAccountMetadata(
                providerIdentifier: provider, authenticationExpiration: expiration,
                samlAttributeQueryResponse: request.verificationToken.map { response($0, request.attributeNames) })
        }
    }

    /// Every metadata request so far, in order.
    public var requests: [VideoSubscriberAccountRequest] { lock.withLock { recorded } }
    /// The `prompt` of every access check so far, in order.
    public var accessChecks: [Bool] { lock.withLock { prompts } }

    public func accessStatus(prompt: Bool) async throws(VideoSubscriberAccountError) -> VideoSubscriberAccountStatus {
        lock.withLock { prompts.append(prompt) }
        return try status.get()
    }

    public func metadata(_ request: VideoSubscriberAccountRequest) async throws(VideoSubscriberAccountError)
        -> VideoSubscriberAccountMetadata
    {
        lock.withLock { recorded.append(request) }
        return try answer(request)
    }
}
