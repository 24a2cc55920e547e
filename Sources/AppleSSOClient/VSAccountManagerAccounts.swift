#if canImport(VideoSubscriberAccount) && (os(iOS) || os(tvOS))
    import Foundation
    import VideoSubscriberAccount

    /// ``VideoSubscriberAccounts`` on Apple's framework: `VSAccountManager`'s `checkAccessStatus` and
    /// `enqueue`, their `VSError`s mapped to ``VideoSubscriberAccountError``.
    ///
    /// The app owns the manager and its `delegate`, which presents and dismisses the framework's view
    /// controllers (the picker, the provider's sign-in) as `VSAccountManagerDelegate` says.
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
                        manager.checkAccessStatus(options: [VSCheckAccessOption.prompt: prompt]) { status, error in
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
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    Task { @MainActor in
                        let metadataRequest = VSAccountMetadataRequest()
                        metadataRequest.channelIdentifier = request.channelIdentifier
                        metadataRequest.supportedAccountProviderIdentifiers = request.supportedProviderIdentifiers
                        #if os(tvOS)
                            metadataRequest.featuredAccountProviderIdentifiers = request.featuredProviderIdentifiers
                        #endif
                        metadataRequest.verificationToken = request.verificationToken
                        metadataRequest.attributeNames = request.attributeNames
                        metadataRequest.isInterruptionAllowed = request.isInterruptionAllowed
                        metadataRequest.includeAccountProviderIdentifier = request.includeAccountProviderIdentifier
                        metadataRequest.includeAuthenticationExpirationDate = request.includeAuthenticationExpirationDate
                        _ = manager.enqueue(metadataRequest) { metadata, error in
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
                    }
                }
            } catch {
                throw Self.map(error)
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
