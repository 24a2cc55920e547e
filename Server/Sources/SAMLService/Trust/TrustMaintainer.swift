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
    /// Whether a pinned key whose certificate has ended still verifies (``KeyExpiry``).
    let allowsExpiredCertificates: Bool
    let onReload: @Sendable () -> Void
    /// Made at the first fetch (a maintainer built and never run holds no client to shut down), shut down
    /// when ``run()`` ends.
    let client = Mutex<HTTPClient?>(nil)
    let state: Mutex<State>
    /// Held while pinned keys are put in the registry (a reload, an expiry), so that an expiry applied
    /// from the contents before a reload never overwrites what the reload applied.
    let applyingPinned = Mutex(())

    struct State {
        var contents: TrustFile.Contents
        var cached: [String: Cached] = [:]
        /// Incremented by each reload request; the refresh loops restart when it changes.
        var reloads = 0
        /// What each URL source without an `entityID` of its own is bound to.
        var bindings: [String: Binding] = [:]
    }

    /// A URL source's entity, pinned by the first document accepted, and the latest `validUntil` accepted
    /// from it (no document ending earlier is accepted after it).
    struct Binding {
        var source: String
        var entityID: String
        var validUntil: SAMLInstant?
    }

    /// What the last good answer of a source was.
    struct Cached {
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
        clock: any SAMLClock, listensForHangUp: Bool = true, allowsDevelopmentKeys: Bool = false, allowsExpiredCertificates: Bool = false,
        startupBudget: Duration = .seconds(3),
        fetchTimeout: Duration = .seconds(30),
        onReload: @escaping @Sendable () -> Void = {}
    ) {
        self.startupBudget = startupBudget
        self.allowsDevelopmentKeys = allowsDevelopmentKeys
        self.allowsExpiredCertificates = allowsExpiredCertificates
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
                            self.logger.info("SIGHUP: reloading the trust file, the MVPD configuration and the secret files")
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

    func refreshLoops() async {
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

    func loop(_ mvpd: String, _ source: MetadataSource, immediately: Bool) async {
        // An MVPD without trust yet (its URL did not answer within the start-up budget, no backing copy)
        // is fetched again at once, with the whole fetch deadline.
        let now = immediately || registry.identityProvider(for: mvpd) == nil
        var delay = now ? .zero : jittered(state.withLock { $0.cached[mvpd]?.interval } ?? source.minimumRefresh)
        // `immediately` is the round after a reload: its first read answers to the rules as now written.
        var afterReload = immediately
        while !Task.isCancelled {
            do { try await Task.sleep(for: delay) } catch { return }
            delay = await refresh(mvpd, source, initial: false, afterReload: afterReload)
            afterReload = false
        }
    }

    /// Keeps the validity gauges current and logs once when an MVPD's trust expires; ends the pinned keys
    /// whose certificate ends (``enforceKeyExpiry(now:ended:)``).
    func publishValidity() async {
        var expired: Set<String> = []
        var endedKeys: Set<String> = []
        while !Task.isCancelled {
            let now = clock.now()
            enforceKeyExpiry(now: now, ended: &endedKeys)
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
    struct Failure: Error {
        var reason: String
        var message: String
    }

    /// The failures of the transport, not of the document: the previous trust stays through them.
    static let transportFailures: Set<String> = ["unreachable", "timeout", "http-status", "too-large", "backing-file"]

    /// Reads `source` once and swaps what it accepts in; returns when to read it next. The first read
    /// after a reload (`afterReload`) that gets a document the trust file's rules refuse (another
    /// signer, entity or algorithm named there) withdraws the MVPD's trust: it was accepted under rules
    /// the operator has just replaced. One that gets no document keeps it, as any refresh does.
    func refresh(_ mvpd: String, _ source: MetadataSource, initial: Bool, afterReload: Bool = false) async -> Duration {
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
            let withdrawn = afterReload && !Self.transportFailures.contains(failure.reason)
            if withdrawn { registry.withdraw(mvpd) }
            let level: Logger.Level =
                withdrawn || ["entity-changed", "rollback", "development-key"].contains(failure.reason) ? .error : .warning
            logger.log(
                level: level,
                withdrawn
                    ? "metadata refresh failed: the trust file as reloaded refuses the MVPD's metadata, its responses are refused (trust.unavailable) until a document it accepts"
                    : "metadata refresh failed: the previous trust stays (until its own validUntil)",
                metadata: ["mvpd": "\(mvpd)", "source": "\(source)", "reason": "\(failure.reason)", "error": "\(failure.message)"])
            if initial { startFromBackingCopy(mvpd, source) }
            return jittered(source.minimumRefresh)
        }
    }

    static func failure(_ error: any Error) -> Failure {
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

    func jittered(_ interval: Duration) -> Duration {
        interval * Double.random(in: 0.9...1.1)
    }
}
