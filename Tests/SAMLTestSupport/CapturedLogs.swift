import Logging
import Synchronization

/// A swift-log backend that keeps every record (level, message, metadata as text), for tests that check
/// what is logged and what never is.
public final class CapturedLogs: Sendable {
    public struct Record: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    public let records = Mutex<[Record]>([])

    public init() {}

    /// A logger whose every line, at every level, lands in ``records``.
    public var logger: Logger {
        Logger(label: "captured", factory: { _ in Handler(sink: self) })
    }

    /// The records so far.
    public var all: [Record] { records.withLock { $0 } }

    struct Handler: LogHandler {
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata.mapValues { "\($0)" }
            for (key, value) in event.metadata ?? [:] { merged[key] = "\(value)" }
            sink.records.withLock { $0.append(Record(level: event.level, message: "\(event.message)", metadata: merged)) }
        }
    }
}
