import Logging
import SAMLService
import Synchronization
import Testing

@Suite("Deferred logger metadata")
struct DeferredMetadataLogHandlerTests {
    /// What reached the wrapped handler: its own metadata when each line arrived, and the line's.
    final class Sink: Sendable {
        let lines = Mutex<[(own: Logger.Metadata, line: Logger.Metadata?)]>([])
    }

    struct Recording: LogHandler {
        let sink: Sink
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            sink.lines.withLock { $0.append((metadata, event.metadata)) }
        }
    }

    @Test("metadata set on the logger reaches the handler only with a line, under the provider's and the line's own")
    func deferredAndMerged() throws {
        let sink = Sink()
        var base = Recording(sink: sink)
        base.metadataProvider = Logger.MetadataProvider { ["provided": "p", "shared": "provider"] }
        var logger = Logger(label: "test") { _ in DeferredMetadataLogHandler(wrapping: base) }
        logger[metadataKey: "hb.request.id"] = "42"
        logger[metadataKey: "shared"] = "logger"
        #expect(logger[metadataKey: "hb.request.id"] == "42")
        logger.debug("below the level: nothing written")
        logger.info("line", metadata: ["code": "ok"])
        logger.info("line", metadata: ["shared": "line"])
        let lines = sink.lines.withLock { $0 }
        try #require(lines.count == 2)
        // The wrapped handler's own metadata is never set: nothing is rendered per set.
        #expect(lines.allSatisfy { $0.own.isEmpty })
        #expect(lines[0].line == ["hb.request.id": "42", "shared": "provider", "provided": "p", "code": "ok"])
        #expect(lines[1].line == ["hb.request.id": "42", "shared": "line", "provided": "p"])
    }

    @Test("without metadata of its own the line is passed on as it is")
    func passThrough() throws {
        let sink = Sink()
        let logger = Logger(label: "test") { _ in DeferredMetadataLogHandler(wrapping: Recording(sink: sink)) }
        logger.info("plain")
        logger.info("with", metadata: ["code": "ok"])
        let lines = sink.lines.withLock { $0 }
        try #require(lines.count == 2)
        #expect(lines[0].line == nil || lines[0].line == [:])
        #expect(lines[1].line == ["code": "ok"])
    }
}
