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

/// Keeps the trust of every MVPD whose identity provider comes from metadata current, without a restart
/// (docs/service.md, "Trust that follows the IdPs"):
///
/// - each source (``SAML/MetadataSource``: a file, or a URL fetched with `If-None-Match` /
///   `If-Modified-Since`) is read again at its refresh interval (the document's `cacheDuration`, within
///   the source's bounds, ±10% jitter), and after a failure at its minimum interval;
/// - a document is swapped into the ``SAML/TrustRegistry`` for new requests only once it passes the
///   source's rules (signature, `validUntil` required and not too far, the entity); a bad one is refused
///   and the last good one stays until its own `validUntil`, after which the MVPD is refused with
///   `trust.expired`; every good document of a URL is written atomically to the source's backing file,
///   which is read at start-up when the URL does not answer in time (else the MVPD is `trust.unavailable`
///   until a fetch in the background succeeds): start-up waits at most ``startupBudget`` for metadata;
/// - a fetch, head and body, has one deadline (``fetchTimeout``), and a `304` counts only as the answer to
///   a conditional request;
/// - a URL source without an `entityID` in the trust file is bound to the entity of the first document
///   accepted (or of its backing copy at start-up): a document naming another entity is refused, and so is
///   one whose `validUntil` is earlier than the document in force (an older document replayed), both
///   logged at `error`; a change of the IdP's keys is logged at `error` too;
/// - SIGHUP (and ``reload()``) reads the trust file again: a file that does not read leaves the old trust
///   in place and says why in the log; otherwise pinned IdPs are replaced, removed MVPDs dropped, and
///   every source read again at once.
///
/// Each swap is logged with the fingerprints of the keys added and removed; the refreshes, failures and
/// validity are metrics (``ServiceMetrics``).
public final class TrustMaintainer: Service, Sendable {
    /// The largest metadata document fetched (as the metadata parser's own cap).
    static let maximumDocumentBytes = 16 << 20
    /// The whole of one fetch: connecting, the head and the body (30 s by default).
    let fetchTimeout: Duration

    /// How long start-up waits for a metadata URL before the backing copy is used (the fetch goes on in
    /// the background, at the full ``fetchTimeout``).
    let startupBudget: Duration

    let trustPath: String
    let registry: TrustRegistry
    let metrics: ServiceMetrics
    let logger: Logger
    let clock: any SAMLClock
    let listensForHangUp: Bool
    /// Whether metadata may bring a key of the repository's `TestVectors/` (``DevelopmentKeys``).
    let allowsDevelopmentKeys: Bool
    let onReload: @Sendable () -> Void
    /// Made at the first fetch (a maintainer built and never run holds no client to shut down), shut down
    /// when ``run()`` ends.
    private let client = Mutex<HTTPClient?>(nil)
    private let state: Mutex<State>

    private struct State {
        var contents: TrustFile.Contents
        var cached: [String: Cached] = [:]
        /// Incremented by each reload request; the refresh loops restart when it changes.
        var reloads = 0
        /// What each URL source without an `entityID` of its own is bound to.
        var bindings: [String: Binding] = [:]
    }

    /// A URL source's entity, pinned by the first document accepted, and the latest `validUntil` accepted
    /// from it (no document ending earlier is accepted after it).
    private struct Binding {
        var source: String
        var entityID: String
        var validUntil: SAMLInstant?
    }

    /// What the last good answer of a source was.
    private struct Cached {
        var etag: String?
        var lastModified: String?
        var digest: [UInt8]?
        var fingerprints: Set<String> = []
        var interval: Duration?
    }

    /// - Parameters:
    ///   - contents: the trust file as the service read it at start-up.
    ///   - onReload: called after a reload of the trust file was applied (the service reloads its MVPD
    ///     configuration there).
    public init(
        trustPath: String, contents: TrustFile.Contents, registry: TrustRegistry, metrics: ServiceMetrics, logger: Logger,
        clock: any SAMLClock, listensForHangUp: Bool = true, allowsDevelopmentKeys: Bool = false, startupBudget: Duration = .seconds(3),
        fetchTimeout: Duration = .seconds(30),
        onReload: @escaping @Sendable () -> Void = {}
    ) {
        self.startupBudget = startupBudget
        self.allowsDevelopmentKeys = allowsDevelopmentKeys
        self.fetchTimeout = fetchTimeout
        self.trustPath = trustPath
        self.registry = registry
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.listensForHangUp = listensForHangUp
        self.onReload = onReload
        state = Mutex(State(contents: contents))
        for mvpd in contents.sources.keys { registry.markUnavailable(mvpd) }
    }

    /// Reads every source once, a URL within ``startupBudget`` (one that does not answer in time from its
    /// backing file): run before the server accepts requests.
    public func prepare() async {
        let sources = state.withLock { $0.contents.sources }
        await withDiscardingTaskGroup { group in
            for (mvpd, source) in sources {
                group.addTask {
                    self.bindToBackingCopy(mvpd, source)
                    _ = await self.refresh(mvpd, source, initial: true)
                }
            }
        }
    }

    /// Asks for the trust file to be read again (what SIGHUP does).
    public func reload() {
        state.withLock { $0.reloads += 1 }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                if self.listensForHangUp {
                    group.addTask {
                        for await _ in await UnixSignalsSequence(trapping: .sighup) {
                            self.logger.info("SIGHUP: reloading the trust file and the MVPD configuration")
                            self.reload()
                        }
                    }
                }
                group.addTask { await self.publishValidity() }
                group.addTask { await self.refreshLoops() }
            }
        }
        if let client = client.withLock({ client in
            defer { client = nil }; return client
        }) {
            try? await client.shutdown()
        }
    }

    // MARK: Loops

    private func refreshLoops() async {
        var immediately = false
        while !Task.isCancelled {
            let (sources, generation) = state.withLock { ($0.contents.sources, $0.reloads) }
            let start = immediately
            await withTaskGroup(of: Void.self) { group in
                for (mvpd, source) in sources {
                    group.addTask { await self.loop(mvpd, source, immediately: start) }
                }
                // A reload request ends this round: every loop is cancelled and started again.
                group.addTask {
                    while !Task.isCancelled, self.state.withLock({ $0.reloads }) == generation {
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                }
                await group.next()
                group.cancelAll()
            }
            guard !Task.isCancelled else { return }
            applyTrustFile()
            immediately = true
        }
    }

    private func loop(_ mvpd: String, _ source: MetadataSource, immediately: Bool) async {
        // An MVPD without trust yet (its URL did not answer within the start-up budget, no backing copy)
        // is fetched again at once, with the whole fetch deadline.
        let now = immediately || registry.identityProvider(for: mvpd) == nil
        var delay = now ? .zero : jittered(state.withLock { $0.cached[mvpd]?.interval } ?? source.minimumRefresh)
        while !Task.isCancelled {
            do { try await Task.sleep(for: delay) } catch { return }
            delay = await refresh(mvpd, source, initial: false)
        }
    }

    /// Keeps the validity gauges current and logs once when an MVPD's trust expires.
    private func publishValidity() async {
        var expired: Set<String> = []
        while !Task.isCancelled {
            let now = clock.now()
            for (mvpd, status) in registry.status {
                switch status {
                case .trusted(let validUntil):
                    metrics.trustValidity(mvpd: mvpd, validUntil: validUntil, now: now)
                    expired.remove(mvpd)
                case .expired(let validUntil):
                    metrics.trustValidity(mvpd: mvpd, validUntil: validUntil, now: now)
                    if expired.insert(mvpd).inserted {
                        logger.error(
                            "trusted metadata expired and no newer document was accepted: the MVPD's responses are refused (trust.expired)",
                            metadata: ["mvpd": "\(mvpd)", "validUntil": "\(validUntil)"])
                    }
                case .unavailable:
                    break
                }
            }
            do { try await Task.sleep(for: .seconds(15)) } catch { return }
        }
    }

    // MARK: One refresh

    /// Why a refresh kept the previous trust.
    private struct Failure: Error {
        var reason: String
        var message: String
    }

    /// Reads `source` once and swaps what it accepts in; returns when to read it next.
    private func refresh(_ mvpd: String, _ source: MetadataSource, initial: Bool) async -> Duration {
        do {
            let document: [UInt8]?
            switch source.location {
            case .file:
                do {
                    document = try source.storedDocument()
                } catch let error as SAMLError {
                    throw Failure(reason: "unreachable", message: error.message)
                }
            case .url(let url):
                document = try await fetch(url, mvpd: mvpd, within: initial ? startupBudget : fetchTimeout)
            }
            let now = clock.now()
            var interval = state.withLock { $0.cached[mvpd]?.interval } ?? source.minimumRefresh
            if let document {
                let digest = BearerToken.digest(document)
                if digest != state.withLock({ $0.cached[mvpd]?.digest }) || registry.identityProvider(for: mvpd) == nil {
                    let metadata = try source.read(document, now: now)
                    try checkBinding(mvpd, metadata, source)
                    try swap(mvpd, metadata, source: source)
                    bind(mvpd, metadata, source)
                    if case .url = source.location { keepBackingCopy(document, of: mvpd, source) }
                    interval = source.refreshInterval(for: metadata, now: now)
                    state.withLock {
                        $0.cached[mvpd, default: Cached()].digest = digest
                        $0.cached[mvpd, default: Cached()].interval = interval
                    }
                }
            }
            metrics.trustRefreshed(mvpd: mvpd, at: now)
            return jittered(interval)
        } catch {
            let failure = Self.failure(error)
            metrics.trustRefreshFailed(mvpd: mvpd, reason: failure.reason)
            // A document that passed the signature but names another entity, or goes back to an older one,
            // is what a compromised or misused signer looks like: an operator must see it.
            let level: Logger.Level = ["entity-changed", "rollback", "development-key"].contains(failure.reason) ? .error : .warning
            logger.log(
                level: level, "metadata refresh failed: the previous trust stays (until its own validUntil)",
                metadata: ["mvpd": "\(mvpd)", "source": "\(source)", "reason": "\(failure.reason)", "error": "\(failure.message)"])
            if initial { startFromBackingCopy(mvpd, source) }
            return jittered(source.minimumRefresh)
        }
    }

    private static func failure(_ error: any Error) -> Failure {
        switch error {
        case let failure as Failure: failure
        case let error as SAMLError: Failure(reason: error.code.identifier, message: error.message)
        case let error as HTTPClientError where error == .remoteConnectionClosed || error == .connectTimeout || error == .readTimeout:
            Failure(reason: "unreachable", message: "\(error)")
        case let error as NIOTooManyBytesError: Failure(reason: "too-large", message: "\(error)")
        case let error as AtomicFile.Failure: Failure(reason: "backing-file", message: "\(error)")
        default: Failure(reason: "unreachable", message: "\(error)")
        }
    }

    /// The document at `url`, or nil when it has not changed since the last good answer (`304` to a
    /// conditional request); the whole fetch within `limit`.
    private func fetch(_ url: String, mvpd: String, within limit: Duration) async throws -> [UInt8]? {
        enum Outcome: Sendable {
            case fetched([UInt8]?)
            case timedOut
        }
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask { .fetched(try await self.fetch(url, mvpd: mvpd)) }
            group.addTask {
                try await Task.sleep(for: limit)
                return .timedOut
            }
            defer { group.cancelAll() }
            guard case .fetched(let document) = try await group.next() else {
                throw Failure(reason: "timeout", message: "expected the whole metadata document within \(limit), found it still arriving")
            }
            return document
        }
    }

    private func httpClient() -> HTTPClient {
        client.withLock { client in
            if let client { return client }
            var configuration = HTTPClient.Configuration(
                // No redirect is followed: a metadata URL is configuration, and a redirect could lead the
                // fetch anywhere (another scheme, a Unix socket, an internal address).
                redirectConfiguration: .disallow,
                timeout: HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(30)))
            // ``fetchTimeout`` bounds each fetch as a whole (AsyncHTTPClient's own deadline covers the head only).
            configuration.decompression = .disabled
            let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            client = made
            return made
        }
    }

    private func fetch(_ url: String, mvpd: String) async throws -> [UInt8]? {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8")
        let cached = state.withLock { $0.cached[mvpd] }
        // Conditional only while that answer is what the registry trusts.
        var conditional = false
        if cached?.digest != nil, registry.identityProvider(for: mvpd) != nil {
            if let etag = cached?.etag { request.headers.add(name: "If-None-Match", value: etag) }
            if let lastModified = cached?.lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
            conditional = cached?.etag != nil || cached?.lastModified != nil
        }
        let response = try await httpClient().execute(request, timeout: .nanoseconds(fetchTimeout.nanoseconds))
        switch response.status.code {
        case 304:
            // Not modified since what? Only an answer to If-None-Match / If-Modified-Since says.
            guard conditional else {
                throw Failure(reason: "http-status", message: "expected 200 to an unconditional request, found 304")
            }
            return nil
        case 200:
            break
        default:
            throw Failure(reason: "http-status", message: "expected 200 or 304 from the metadata URL, found \(response.status.code)")
        }
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > Self.maximumDocumentBytes {
            throw Failure(reason: "too-large", message: "expected at most \(Self.maximumDocumentBytes) bytes, found \(length) announced")
        }
        let body = try await response.body.collect(upTo: Self.maximumDocumentBytes)
        let etag = response.headers.first(name: "ETag")
        let lastModified = response.headers.first(name: "Last-Modified")
        state.withLock {
            $0.cached[mvpd, default: Cached()].etag = etag
            $0.cached[mvpd, default: Cached()].lastModified = lastModified
        }
        return Array(body.readableBytesView)
    }

    /// Trusts `metadata` for `mvpd` from now on and logs what changed.
    private func swap(_ mvpd: String, _ metadata: IdentityProviderMetadata, source: MetadataSource) throws {
        let identityProvider = IdentityProvider(metadata: metadata)
        do {
            try DevelopmentKeys.check(identityProvider.keys, "the metadata of \(source)", allowed: allowsDevelopmentKeys)
        } catch let error as SAMLError {
            throw Failure(reason: "development-key", message: error.message)
        }
        try registry.update(identityProvider, for: mvpd)
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
    private func keepBackingCopy(_ document: [UInt8], of mvpd: String, _ source: MetadataSource) {
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
    /// `validUntil` is earlier than the latest accepted from it. A source with an `entityID` of its own is
    /// bound by the reader already (it reads that entity or nothing).
    private func checkBinding(_ mvpd: String, _ metadata: IdentityProviderMetadata, _ source: MetadataSource) throws {
        guard case .url = source.location, source.entityID == nil else { return }
        guard let binding = state.withLock({ $0.bindings[mvpd] }), binding.source == source.description else { return }
        guard metadata.entityID == binding.entityID else {
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

    /// Binds a URL source without an `entityID` of its own to `metadata`'s entity and `validUntil`.
    private func bind(_ mvpd: String, _ metadata: IdentityProviderMetadata, _ source: MetadataSource) {
        guard case .url = source.location, source.entityID == nil else { return }
        state.withLock { state in
            let floor = [state.bindings[mvpd]?.validUntil, metadata.validUntil].compactMap { $0 }.max()
            state.bindings[mvpd] = Binding(source: source.description, entityID: metadata.entityID, validUntil: floor)
        }
    }

    /// At start-up, the backing copy of a URL source (the last document accepted before) binds the source
    /// before its URL is read.
    private func bindToBackingCopy(_ mvpd: String, _ source: MetadataSource) {
        guard case .url = source.location, source.backingFile != nil else { return }
        guard let document = try? source.storedDocument(), let metadata = try? source.read(document, now: clock.now()) else { return }
        bind(mvpd, metadata, source)
    }

    /// At start-up, when the source did not give a good document: its backing copy, if it reads.
    private func startFromBackingCopy(_ mvpd: String, _ source: MetadataSource) {
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
    private func applyTrustFile() {
        let contents: TrustFile.Contents
        do {
            contents = try TrustFile.read(contentsOf: trustPath)
            try DevelopmentKeys.check(contents, allowed: allowsDevelopmentKeys)
        } catch {
            logger.error(
                "the trust file does not read: the previous trust stays in place",
                metadata: ["path": "\(trustPath)", "error": "\(Self.failure(error).message)"])
            return
        }
        let previous = state.withLock { state in
            defer {
                state.contents = contents
                // A source that changed starts from nothing cached (no conditional request, a fresh swap).
                state.cached = state.cached.filter { contents.sources[$0.key] != nil }
                state.bindings = state.bindings.filter { contents.sources[$0.key] != nil }
            }
            return state.contents
        }
        for mvpd in previous.mvpds.subtracting(contents.mvpds) {
            try? registry.update(nil, for: mvpd)
            logger.notice("MVPD removed from the trust file: its responses are refused", metadata: ["mvpd": "\(mvpd)"])
        }
        for (mvpd, identityProvider) in contents.pinned {
            do {
                try registry.update(identityProvider, for: mvpd)
            } catch {
                logger.error("pinned keys not applied", metadata: ["mvpd": "\(mvpd)", "error": "\(Self.failure(error).message)"])
            }
        }
        for mvpd in contents.sources.keys { registry.markUnavailable(mvpd) }
        logger.info("trust file reloaded", metadata: ["path": "\(trustPath)", "mvpds": "\(contents.mvpds.count)"])
        onReload()
    }

    /// An entity ID for a log line: escaped, and at most 200 characters of it.
    private static func quote(_ value: String) -> String {
        String(value.prefix(200)).debugDescription
    }

    private func jittered(_ interval: Duration) -> Duration {
        interval * Double.random(in: 0.9...1.1)
    }
}
