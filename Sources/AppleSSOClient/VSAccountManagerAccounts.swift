#if canImport(VideoSubscriberAccount) && (os(iOS) || os(tvOS) || os(visionOS))
    import Foundation
    import VideoSubscriberAccount

    /// ``VideoSubscriberAccounts`` on Apple's framework: `VSAccountManager`'s `checkAccessStatus` and
    /// `enqueue`, their `VSError`s mapped to ``VideoSubscriberAccountError``. A cancelled task cancels its
    /// metadata request (`VSAccountManagerResult.cancel()`).
    ///
    /// The app owns the manager and its `delegate`, which presents and dismisses the framework's view
    /// controllers (Apple's picker, the provider's sign-in) as `VSAccountManagerDelegate` says: it takes
    /// the place of the SDK's `presentTVProviderDialog` and `dismissTVProviderDialog` callbacks.
    public final class VSAccountManagerAccounts: VideoSubscriberAccounts, @unchecked Sendable {
        // The manager is only touched on the main actor.
        private let manager: VSAccountManager

        public init(manager: VSAccountManager) {
            self.manager = manager
        }

        public func accessStatus(prompt: Bool) async throws(VideoSubscriberAccountError) -> VideoSubscriberAccountStatus {
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    Task { @MainActor in
                        manager.checkAccessStatus(options: [VSCheckAccessOption.prompt: prompt]) { @Sendable status, error in
                            if let error {
                                continuation.resume(throwing: error)
                                return
                            }
                            switch status {
                            case .granted: continuation.resume(returning: .granted)
                            case .denied: continuation.resume(returning: .denied)
                            case .restricted: continuation.resume(returning: .restricted)
                            case .notDetermined: continuation.resume(returning: .notDetermined)
                            @unknown default: continuation.resume(returning: .notDetermined)
                            }
                        }
                    }
                }
            } catch {
                throw Self.map(error)
            }
        }

        public func metadata(_ request: VideoSubscriberAccountRequest) async throws(VideoSubscriberAccountError)
            -> VideoSubscriberAccountMetadata
        {
            let pending = Pending()
            do {
                return try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        Task { @MainActor in
                            let metadataRequest = VSAccountMetadataRequest()
                            metadataRequest.channelIdentifier = request.channelIdentifier
                            metadataRequest.supportedAccountProviderIdentifiers = request.supportedProviderIdentifiers
                            metadataRequest.featuredAccountProviderIdentifiers = request.featuredProviderIdentifiers
                            metadataRequest.verificationToken = request.verificationToken
                            metadataRequest.attributeNames = request.attributeNames
                            metadataRequest.isInterruptionAllowed = request.isInterruptionAllowed
                            metadataRequest.includeAccountProviderIdentifier = request.includeAccountProviderIdentifier
                            metadataRequest.includeAuthenticationExpirationDate = request.includeAuthenticationExpirationDate
                            // The framework may call back on any queue: the handler is not main-actor code.
                            let result = manager.enqueue(metadataRequest) { @Sendable metadata, error in
                                guard let metadata else {
                                    continuation.resume(throwing: error ?? VSError(.rejected))
                                    return
                                }
                                continuation.resume(
                                    returning: VideoSubscriberAccountMetadata(
                                        providerIdentifier: metadata.accountProviderIdentifier,
                                        authenticationExpiration: metadata.authenticationExpirationDate,
                                        samlAttributeQueryResponse: metadata.samlAttributeQueryResponse))
                            }
                            if pending.enqueued(result) { result.cancel() }
                        }
                    }
                } onCancel: {
                    pending.cancelled()?.cancel()
                }
            } catch {
                throw Self.map(error)
            }
        }

        /// The request in flight, and whether its task was cancelled before it was enqueued.
        private final class Pending: @unchecked Sendable {
            private let lock = NSLock()
            private var result: VSAccountManagerResult?
            private var isCancelled = false

            /// Records the enqueued request; true when the task was cancelled already (cancel it now).
            func enqueued(_ result: VSAccountManagerResult) -> Bool {
                lock.withLock {
                    self.result = result
                    return isCancelled
                }
            }

            /// Marks the task cancelled; the request to cancel, when it was enqueued.
            func cancelled() -> VSAccountManagerResult? {
                lock.withLock {
                    isCancelled = true
                    return result
                }
            }
        }

        /// `VSErrorDomain`'s codes by name; anything else as it is.
        static func map(_ error: any Error) -> VideoSubscriberAccountError {
            let error = error as NSError
            guard error.domain == VSErrorDomain, let code = VSError.Code(rawValue: error.code) else {
                return .other(domain: error.domain, code: error.code, description: error.localizedDescription)
            }
            switch code {
            case .accessNotGranted: return .accessNotGranted
            case .unsupportedProvider:
                return .unsupportedProvider(identifier: error.userInfo[VSErrorInfoKeyUnsupportedProviderIdentifier] as? String)
            case .userCancelled: return .userCancelled
            case .serviceTemporarilyUnavailable: return .serviceTemporarilyUnavailable
            case .providerRejected: return .providerRejected
            case .invalidVerificationToken: return .invalidVerificationToken
            case .rejected: return .rejected
            case .unsupported: return .unsupported
            @unknown default: return .other(domain: error.domain, code: error.code, description: error.localizedDescription)
            }
        }
    }
#endif
