extension SAMLError.Code {
    /// A metadata source requires `validUntil` (every URL source, by default) and the document has none.
    public static let metadataValidUntilRequired = Self("metadata.valid-until-required", httpStatus: 500)
    /// The document's `validUntil` is further away than the source's ``MetadataSource/maximumValidity``.
    public static let metadataValidUntilTooFar = Self("metadata.valid-until-too-far", httpStatus: 500)
}

/// Where an MVPD's IdP metadata comes from and the rules a document from there must pass, as
/// Shibboleth SP's XML metadata provider applies them: a required signer, a required `validUntil` no
/// further away than an operator's maximum, and a refresh interval taken from the document's
/// `cacheDuration` within a minimum and a maximum.
///
/// The library reads and judges documents (``read(_:now:)``, ``refreshInterval(for:now:)``); fetching
/// them (HTTP with `ETag`, a backing copy, a schedule) is the server's (`Server/`, docs/service.md).
public struct MetadataSource: Sendable {
    public enum Location: Sendable, Hashable {
        /// A file, read again at each refresh.
        case file(String)
        /// An `https://` URL, or `http://` when the document must be signed (the signature, not the
        /// transport, is what protects it).
        case url(String)
    }

    public var location: Location
    /// The entity to read from an aggregate (nil: the document's only IdP).
    public var entityID: String?
    /// Keys the document's root must be signed by; when empty, a signature is not looked at.
    public var signers: [TrustedKey]
    /// The algorithm allow-list of the metadata signature.
    public var algorithms: AlgorithmPolicy
    /// The algorithm allow-list of the responses of the IdP this source describes, when it differs from
    /// the verifier's (``AlgorithmPolicy/allowingSHA1`` for an IdP that still signs with a legacy digest).
    /// nil: the verifier's. Applied by ``identityProvider(_:)``.
    public var responseAlgorithms: AlgorithmPolicy?
    /// Whether a document without `validUntil` is refused (``SAMLError/Code/metadataValidUntilRequired``).
    public var requiresValidUntil: Bool
    /// The furthest `validUntil` accepted, from the time of reading (nil: any).
    public var maximumValidity: Duration?
    /// Where the last good document of a URL source is kept, and read at start-up when the URL does not
    /// answer (nil: no copy).
    public var backingFile: String?
    /// The refresh interval's bounds: a document's `cacheDuration` (or, without one, three quarters of
    /// the time left to its `validUntil`) is clamped to them.
    public var minimumRefresh: Duration
    public var maximumRefresh: Duration

    /// Defaults: a URL must be signed (``signers`` non-empty, checked by `validate()`) and carry a
    /// `validUntil` (as far away as the operator allows with `maximumValidity`: none by default, since
    /// IdPs publish anything from hours to years); a file is read as before (its `validUntil` enforced when
    /// present).
    /// Refreshes between 5 seconds (what a document's `cacheDuration` may ask for, at one conditional request each) and 4 hours.
    public init(
        location: Location, entityID: String? = nil, signers: [TrustedKey] = [], algorithms: AlgorithmPolicy = .strict,
        requiresValidUntil: Bool? = nil, maximumValidity: Duration? = nil, backingFile: String? = nil,
        minimumRefresh: Duration = .seconds(5), maximumRefresh: Duration = .seconds(4 * 3600)
    ) {
        self.location = location
        self.entityID = entityID
        self.signers = signers
        self.algorithms = algorithms
        let remote = if case .url = location { true } else { false }
        self.requiresValidUntil = requiresValidUntil ?? remote
        self.maximumValidity = maximumValidity
        self.backingFile = backingFile
        self.minimumRefresh = minimumRefresh
        self.maximumRefresh = maximumRefresh
        responseAlgorithms = nil
    }

    /// The identity provider `metadata` (read from this source) describes, with this source's
    /// ``responseAlgorithms``.
    public func identityProvider(_ metadata: IdentityProviderMetadata) -> IdentityProvider {
        var identityProvider = IdentityProvider(metadata: metadata)
        identityProvider.algorithms = responseAlgorithms
        return identityProvider
    }

    /// Checks the source itself: a URL is `https://`, or `http://` with a signer; unsigned URL metadata is
    /// allowed only over `https://` and only when `allowingUnsigned` says so; the refresh bounds are ordered.
    ///
    /// - Throws: ``SAMLError/Code/configurationInvalid`` naming what is wrong.
    public func validate(allowingUnsigned: Bool = false) throws {
        if case .url(let url) = location {
            let lower = url.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
                throw SAMLError(.configurationInvalid, "expected an https:// metadata URL, found \(SAMLError.quote(url))")
            }
            if signers.isEmpty {
                guard allowingUnsigned else {
                    throw SAMLError(
                        .configurationInvalid,
                        "expected a signer for the metadata at \(SAMLError.quote(url)) (a URL's metadata must be signed unless allowUnsignedMetadata is true)"
                    )
                }
                guard lower.hasPrefix("https://") else {
                    throw SAMLError(.configurationInvalid, "expected https:// for unsigned metadata, found \(SAMLError.quote(url))")
                }
            }
        }
        guard minimumRefresh > .zero, minimumRefresh <= maximumRefresh else {
            throw SAMLError(
                .configurationInvalid, "expected 0 < minimumRefresh <= maximumRefresh, found \(minimumRefresh) and \(maximumRefresh)")
        }
    }

    /// Reads a document from this source under its rules: the signature, `validUntil` (required, not past,
    /// not too far), the entity.
    ///
    /// - Throws: as `IdentityProviderMetadata.read(_:entityID:options:)`, and
    ///   ``SAMLError/Code/metadataValidUntilRequired`` / ``SAMLError/Code/metadataValidUntilTooFar``.
    public func read(_ xml: [UInt8], now: SAMLInstant) throws -> IdentityProviderMetadata {
        let metadata = try IdentityProviderMetadata.read(
            xml, entityID: entityID, options: IdentityProviderMetadata.Options(signers: signers, algorithms: algorithms, now: now))
        guard let validUntil = metadata.validUntil else {
            if requiresValidUntil {
                throw SAMLError(.metadataValidUntilRequired, "expected validUntil on metadata from \(self), found none")
            }
            return metadata
        }
        if let maximumValidity, validUntil > now + maximumValidity {
            throw SAMLError(
                .metadataValidUntilTooFar,
                "expected metadata from \(self) valid until at most \(now + maximumValidity), found validUntil \(validUntil)")
        }
        return metadata
    }

    /// How long to keep `metadata` before fetching it again: its `cacheDuration`, or three quarters of the
    /// time left to its `validUntil`, or the maximum; within the bounds. The caller adds its own jitter.
    public func refreshInterval(for metadata: IdentityProviderMetadata, now: SAMLInstant) -> Duration {
        var interval = metadata.cacheDuration ?? maximumRefresh
        if let validUntil = metadata.validUntil {
            interval = min(interval, .milliseconds((validUntil.millisecondsSinceEpoch - now.millisecondsSinceEpoch) * 3 / 4))
        }
        return max(minimumRefresh, min(maximumRefresh, interval))
    }
}

extension MetadataSource: CustomStringConvertible {
    /// The file or URL, for logs and messages (configuration, never input).
    public var description: String {
        switch location {
        case .file(let path): path
        case .url(let url): url
        }
    }
}
