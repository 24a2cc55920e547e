import AppleSSO
import Foundation
import Logging

/// One JSON object per line on standard error (`logFormat: "json"`), for log pipelines that parse rather
/// than grep: `{"time": "2026-12-03T16:10:25.123Z", "level": "info", "label": "saml-service", "message":
/// "...", ...metadata}`, the metadata's keys at the top level (`mvpd`, `code`, `status`, `latency_us`,
/// `hb.request.id`, `trace_id`, ...; a key named like one of the four fixed ones is written with a `_`
/// before it). Values are strings, arrays or objects as the metadata holds them; the text is escaped as
/// JSON requires, so a line is always one line. What a line may hold is what the text format holds
/// (docs/service.md, "Logs": never a SAMLResponse, a header value or an attribute value at `info`).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let descriptor: Int32

    /// - Parameter descriptor: where the lines go (standard error by default).
    public init(
        label: String, descriptor: Int32 = STDERR_FILENO, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) {
        self.label = label
        self.descriptor = descriptor
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, provided in provided } }
        if let line = event.metadata { merged.merge(line) { _, line in line } }
        var object: [String: JSONValue] = [
            "time": .string(Self.timestamp()), "level": .string(event.level.rawValue), "label": .string(label),
            "message": .string(event.message.description),
        ]
        for (key, value) in merged {
            object[object[key] == nil ? key : "_" + key] = Self.json(value)
        }
        var bytes = JSONValue.object(object).bytes
        bytes.append(0x0A)
        // One write a line: lines of concurrent tasks do not interleave.
        bytes.withUnsafeBytes { _ = write(descriptor, $0.baseAddress, $0.count) }
    }

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    private static func timestamp() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var broken = tm()
        var seconds = time.tv_sec
        gmtime_r(&seconds, &broken)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", broken.tm_year + 1900, broken.tm_mon + 1, broken.tm_mday, broken.tm_hour,
            broken.tm_min, broken.tm_sec, time.tv_nsec / 1_000_000)
    }
}
