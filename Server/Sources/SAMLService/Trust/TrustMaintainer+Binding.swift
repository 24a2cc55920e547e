import AppleSSO
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SAML
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Trusting fetched metadata: the swap, the entity binding, the backing copy and the trust file's reload.
extension TrustMaintainer {
    /// Trusts `metadata` for `mvpd` from now on and logs what changed.
    func swap(_ mvpd: String, _ metadata: IdentityProviderMetadata, source: MetadataSource) throws {
        let identityProvider = source.identityProvider(metadata)
        do {
            try DevelopmentKeys.check(identityProvider.keys, "the metadata of \(source)", allowed: allowsDevelopmentKeys)
        } catch let error as SAMLError {
            throw Failure(reason: "development-key", message: error.message)
        }
        try registry.update(identityProvider, for: mvpd)
        KeyExpiry.warn(identityProvider, mvpd: mvpd, pinned: false, allowExpired: true, now: clock.now(), logger: logger)
        let fingerprints = Set(identityProvider.keys.map(\.fingerprint))
        let previous = state.withLock { state in
            defer { state.cached[mvpd, default: Cached()].fingerprints = fingerprints }
            return state.cached[mvpd]?.fingerprints ?? []
        }
        metrics.trustValidity(mvpd: mvpd, validUntil: metadata.validUntil, now: clock.now())
        // A key rollover is rare and decides whose responses are accepted: it is logged at error, so that
        // an operator sees every one (a first document, with nothing before it, at notice).
        let level: Logger.Level = previous.isEmpty || previous == fingerprints ? .notice : .error
        logger.log(
            level: level,
            previous.isEmpty || previous == fingerprints
                ? "trust swapped in from metadata" : "trust swapped in from metadata: the IdP's signing keys changed",
            metadata: [
                "mvpd": "\(mvpd)", "source": "\(source)", "entityID": "\(metadata.entityID)",
                "validUntil": "\(metadata.validUntil.map { "\($0)" } ?? "none")",
                "keys.added": "\(fingerprints.subtracting(previous).sorted().joined(separator: ","))",
                "keys.removed": "\(previous.subtracting(fingerprints).sorted().joined(separator: ","))",
                "keys.count": "\(fingerprints.count)",
            ])
    }

    /// Writes the backing copy (``AtomicFile``).
    func keepBackingCopy(_ document: [UInt8], of mvpd: String, _ source: MetadataSource) {
        guard let path = source.backingFile else { return }
        do {
            try AtomicFile.replace(path, with: document)
        } catch {
            metrics.trustRefreshFailed(mvpd: mvpd, reason: "backing-file")
            logger.warning(
                "could not write the metadata's backing copy (the trust itself was updated)",
                metadata: ["mvpd": "\(mvpd)", "path": "\(path)", "error": "\(error)"])
        }
    }

    // MARK: Entity binding

    /// Refuses a URL document that names another entity than the one the source is bound to, or whose
    /// `validUntil` is earlier than the latest accepted from it (a rollback: an older document, still
    /// signed, replayed by whoever serves the URL). A source with an `entityID` of its own has its entity
    /// checked by the reader (it reads that entity or nothing) and its rollback here, as any other.
    func checkBinding(_ mvpd: String, _ metadata: IdentityProviderMetadata, _ source: MetadataSource) throws {
        guard case .url = source.location else { return }
        guard let binding = state.withLock({ $0.bindings[mvpd] }), binding.source == Self.bindingKey(source) else { return }
        guard source.entityID != nil || metadata.entityID == binding.entityID else {
            throw Failure(
                reason: "entity-changed",
                message:
                    "expected metadata for the entity \(Self.quote(binding.entityID)) the source is bound to, found \(Self.quote(metadata.entityID)) (set entityID in the trust file to change it)"
            )
        }
        if let floor = binding.validUntil, let validUntil = metadata.validUntil, validUntil < floor {
            throw Failure(
                reason: "rollback",
                message:
                    "expected metadata valid until \(floor) or later (the document in force), found an older one valid until \(validUntil)")
        }
    }

    /// Binds a URL source to `metadata`'s entity and `validUntil`.
    func bind(_ mvpd: String, _ metadata: IdentityProviderMetadata, _ source: MetadataSource) {
        guard case .url = source.location else { return }
        state.withLock { state in
            let previous = state.bindings[mvpd].flatMap { $0.source == Self.bindingKey(source) ? $0.validUntil : nil }
            let floor = [previous, metadata.validUntil].compactMap { $0 }.max()
            state.bindings[mvpd] = Binding(source: Self.bindingKey(source), entityID: metadata.entityID, validUntil: floor)
        }
    }

    /// What a binding holds for: the URL and the entity the trust file names (another of either, written
    /// in the trust file, starts a new binding).
    static func bindingKey(_ source: MetadataSource) -> String {
        "\(source.description) \(source.entityID ?? "")"
    }

    /// At start-up, the backing copy of a URL source (the last document accepted before) binds the source
    /// before its URL is read.
    func bindToBackingCopy(_ mvpd: String, _ source: MetadataSource) {
        guard case .url = source.location, source.backingFile != nil else { return }
        guard let document = try? source.storedDocument(), let metadata = try? source.read(document, now: clock.now()) else { return }
        bind(mvpd, metadata, source)
    }

    /// At start-up, when the source did not give a good document: its backing copy, if it reads.
    func startFromBackingCopy(_ mvpd: String, _ source: MetadataSource) {
        guard registry.identityProvider(for: mvpd) == nil else { return }
        guard case .url = source.location else { return }
        do {
            let metadata = try source.read(try source.storedDocument(), now: clock.now())
            try swap(mvpd, metadata, source: source)
            logger.notice("started from the metadata's backing copy", metadata: ["mvpd": "\(mvpd)", "path": "\(source.backingFile ?? "")"])
        } catch {
            logger.error(
                "no metadata accepted for the MVPD: its responses are refused (trust.unavailable) until its source answers",
                metadata: ["mvpd": "\(mvpd)", "error": "\(Self.failure(error).message)"])
        }
    }

    // MARK: Reload

    /// Reads the trust file again and applies it, or keeps the old trust when it does not read.
    func applyTrustFile() {
        let contents: TrustFile.Contents
        do {
            contents = try TrustFile.read(contentsOf: trustPath)
            try DevelopmentKeys.check(contents, allowed: allowsDevelopmentKeys)
        } catch {
            logger.error(
                "the trust file does not read: the previous trust stays in place",
                metadata: ["path": "\(trustPath)", "error": "\(Self.failure(error).message)"])
            // The MVPD configuration and the secret files are reloaded all the same: a rotation of a
            // token must not wait for a trust file fixed.
            onReload()
            return
        }
        let previous = state.withLock { state in
            defer {
                state.contents = contents
                // Every source is read again under the rules as now written (a signer, an entityID or
                // allowLegacyDigests changed): no conditional request, no digest to skip the swap. Only the
                // keys seen are kept, for the rollover's log line.
                state.cached = state.cached.compactMapValues { Cached(fingerprints: $0.fingerprints) }.filter {
                    contents.sources[$0.key] != nil
                }
                state.bindings = state.bindings.filter { contents.sources[$0.key] != nil }
            }
            return state.contents
        }
        for mvpd in previous.mvpds.subtracting(contents.mvpds) {
            try? registry.update(nil, for: mvpd)
            logger.notice("MVPD removed from the trust file: its responses are refused", metadata: ["mvpd": "\(mvpd)"])
        }
        let now = clock.now()
        applyingPinned.withLock { _ in
            for (mvpd, pinned) in contents.pinned {
                KeyExpiry.warn(pinned, mvpd: mvpd, pinned: true, allowExpired: allowsExpiredCertificates, now: now, logger: logger)
                do {
                    try applyPinned(mvpd, pinned, now: now)
                } catch {
                    logger.error("pinned keys not applied", metadata: ["mvpd": "\(mvpd)", "error": "\(Self.failure(error).message)"])
                }
            }
        }
        for mvpd in contents.sources.keys { registry.markUnavailable(mvpd) }
        logger.info("trust file reloaded", metadata: ["path": "\(trustPath)", "mvpds": "\(contents.mvpds.count)"])
        onReload()
    }

    /// Puts `pinned` in the registry without the keys whose certificate has ended at `now` (unless
    /// expired certificates are allowed); none left: the MVPD is refused (`trust.unavailable`), the keys
    /// it trusted until now withdrawn with them.
    func applyPinned(_ mvpd: String, _ pinned: IdentityProvider, now: SAMLInstant) throws {
        if let usable = KeyExpiry.usable(pinned, now: now, allowExpired: allowsExpiredCertificates).identityProvider {
            try registry.update(usable, for: mvpd)
        } else {
            registry.withdraw(mvpd)
        }
    }

    /// Drops from the registry, as time passes, the pinned keys whose certificate has just ended (once
    /// each: logged at `error`), and publishes every trusted key's `notAfter`.
    func enforceKeyExpiry(now: SAMLInstant, ended: inout Set<String>) {
        let pinned = state.withLock { $0.contents.pinned }
        var expiries: [ServiceMetrics.KeyExpiry] = []
        for mvpd in Set(registry.status.map(\.key)).union(pinned.keys).sorted() {
            let isPinned = pinned[mvpd] != nil
            let keys = pinned[mvpd]?.keys ?? registry.identityProvider(for: mvpd)?.keys ?? []
            for key in keys {
                guard let notAfter = KeyExpiry.notAfter(key) else { continue }
                expiries.append(.init(mvpd: mvpd, source: isPinned ? "pinned" : "metadata", key: KeyExpiry.label(key), notAfter: notAfter))
            }
        }
        // Under the reload's lock, from the contents as they are now (a reload may have replaced them).
        applyingPinned.withLock { _ in
            let current = state.withLock { $0.contents.pinned }
            for (mvpd, identityProvider) in current where !allowsExpiredCertificates {
                let expired = KeyExpiry.usable(identityProvider, now: now, allowExpired: false).expired.map { "\(mvpd) \($0.fingerprint)" }
                let new = expired.filter { !ended.contains($0) }
                guard !new.isEmpty else { continue }
                ended.formUnion(new)
                logger.error(
                    "a pinned key's certificate has ended: it no longer verifies (set allowExpiredCertificates to keep it)",
                    metadata: ["mvpd": "\(mvpd)", "keys": "\(new.count)"])
                try? applyPinned(mvpd, identityProvider, now: now)
            }
        }
        metrics.keyExpiries(expiries)
    }

    /// An entity ID for a log line: escaped, and at most 200 characters of it.
    static func quote(_ value: String) -> String {
        String(value.prefix(200)).debugDescription
    }
}
