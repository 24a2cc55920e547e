import Logging

/// Keeps the logger's metadata itself and hands it to `base` only with a line to write, merged under the
/// line's own metadata and its metadata provider's (which win on a shared key, as in swift-log's handlers).
///
/// Why: Hummingbird sets `hb.request.id` on a copy of the logger for every request, and swift-log's
/// `StreamLogHandler` renders its whole metadata to text on every such set, whether or not a line is
/// ever written (at the default `info`, the access line renders it again). Deferred, the rendering
/// happens once, for the lines written: about 0.7% of a request on one core (docs/benchmarks-history.md, issue 28).
/// The lines are the same: `StreamLogHandler` writes its merged metadata sorted by key either way.
public struct DeferredMetadataLogHandler: LogHandler {
    public var base: any LogHandler
    public var metadata: Logger.Metadata = [:]

    public init(wrapping base: any LogHandler) {
        self.base = base
    }

    public var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard !metadata.isEmpty else { return base.log(event: event) }
        var event = event
        // The precedence of swift-log's handlers: the logger's metadata, then the provider's, then the line's.
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        event.metadata = merged.merging(event.metadata ?? [:]) { _, line in line }
        base.log(event: event)
    }
}
