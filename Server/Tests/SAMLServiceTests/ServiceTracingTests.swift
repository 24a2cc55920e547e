import AppleSSO
import Foundation
import Hummingbird
import Logging
import SAML
import SAMLLoad
import SAMLTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import SAMLService

/// Tracing for real: a small OTLP/HTTP receiver on loopback, the service exporting to it, a login and a
/// refusal driven through it; the spans, their links, their attributes, what they must never carry, and
/// the trace IDs in the log lines.
@Suite("Tracing over OTLP/HTTP")
struct ServiceTracingTests {
    /// An OTLP/HTTP receiver: keeps every body posted to `/v1/traces`, answers as a collector does.
    final class Receiver: Sendable {
        let bodies = Mutex<[(contentType: String, bytes: [UInt8])]>([])

        var all: [UInt8] { bodies.withLock { $0.flatMap(\.bytes) } }

        /// Runs the receiver for the duration of `body`, handing it the port.
        func with<T: Sendable>(_ body: (Int) async throws -> T) async throws -> T {
            let router = Router()
            router.post("/v1/traces") { request, _ -> Response in
                let bytes = Array(try await request.body.collect(upTo: 16 << 20).readableBytesView)
                let type = request.headers[.contentType] ?? ""
                self.bodies.withLock { $0.append((type, bytes)) }
                let json = type.hasPrefix("application/json")
                return Response(
                    status: .ok, headers: [.contentType: json ? "application/json" : "application/x-protobuf"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: json ? Array("{}".utf8) : [])))
            }
            return try await Service.withServer(router, body)
        }

        /// Waits (at most 10 s) until `done` holds for what was received.
        func wait(until done: (Receiver) -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !done(self), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        }
    }

    /// A span as OTLP/JSON has it (IDs as swift-otel writes them: Base64 of the bytes, or hex).
    struct ExportedSpan {
        var traceID: String
        var spanID: String
        var parentSpanID: String
        var name: String
        var attributes: [String: String]
        var statusCode: Int

        static func all(_ receiver: Receiver) -> [ExportedSpan] {
            receiver.bodies.withLock { $0 }.flatMap { body -> [ExportedSpan] in
                guard let object = try? JSONSerialization.jsonObject(with: Data(body.bytes)) as? [String: Any] else { return [] }
                let resources = object["resourceSpans"] as? [[String: Any]] ?? []
                return resources.flatMap { ($0["scopeSpans"] as? [[String: Any]] ?? []) }.flatMap {
                    ($0["spans"] as? [[String: Any]] ?? [])
                }
                .map { span in
                    var attributes: [String: String] = [:]
                    for attribute in span["attributes"] as? [[String: Any]] ?? [] {
                        let value = attribute["value"] as? [String: Any] ?? [:]
                        attributes[attribute["key"] as? String ?? ""] = (value["stringValue"] ?? value["intValue"]).map { "\($0)" }
                    }
                    return ExportedSpan(
                        traceID: hex(span["traceId"]), spanID: hex(span["spanId"]), parentSpanID: hex(span["parentSpanId"]),
                        name: span["name"] as? String ?? "", attributes: attributes,
                        statusCode: (span["status"] as? [String: Any])?["code"] as? Int ?? 0)
                }
            }
        }

        private static func hex(_ value: Any?) -> String {
            guard let text = value as? String, !text.isEmpty else { return "" }
            if text.count == 32 || text.count == 16, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
            return Data(base64Encoded: text).map { $0.map { String(format: "%02x", $0) }.joined() } ?? text
        }
    }

    static func configuration(_ port: Int, encoding: ServiceConfiguration.Tracing.Encoding) -> ServiceConfiguration {
        var configuration = Service.configuration()
        var tracing = ServiceConfiguration.Tracing(endpoint: "http://127.0.0.1:\(port)/v1/traces")
        tracing.encoding = encoding
        tracing.exportInterval = .milliseconds(100)
        configuration.tracing = tracing
        return configuration
    }

    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let callerSpanID = "00f067aa0ba902b7"

    @Test("a login and a refusal: a span per request under the caller's traceparent, the phases as its children, IDs in the logs")
    func spansOfALoginAndARefusal() async throws {
        let receiver = Receiver()
        let logs = CapturedLogs()
        let nameID = "secret-subscriber-\(UInt32.random(in: 0...UInt32.max))"
        var exchange: HTTPRequestParts?
        try await receiver.with { port in
            try await Service.with(Self.configuration(port, encoding: .json), logger: logs.logger) { service in
                var request = try await Service.freshExchange(service, Service.mvpdA, nameID: nameID)
                request.headers.append(HTTPHeader("traceparent", "00-\(Self.traceID)-\(Self.callerSpanID)-01"))
                request.headers.append(HTTPHeader("tracestate", "vendor=caller-chosen-state"))
                exchange = request
                #expect(try await Service.send(service, request).status == 201)
                #expect(try await Service.send(service, request).status == 400)
            }
            try await receiver.wait { ExportedSpan.all($0).filter { $0.name.contains("profiles/sso") }.count >= 2 }
        }
        let spans = ExportedSpan.all(receiver)
        let requests = spans.filter { $0.name.hasPrefix("POST ") && $0.name.contains("profiles/sso") }
        try #require(requests.count == 2, "\(spans.map(\.name))")
        let accepted = try #require(requests.first { $0.attributes["saml.verdict"] == "ok" })
        let refused = try #require(requests.first { $0.attributes["saml.verdict"] == "replay.detected" })
        #expect(accepted.traceID == Self.traceID && accepted.parentSpanID == Self.callerSpanID, "the caller's traceparent is the parent")
        #expect(refused.traceID == Self.traceID)
        #expect(accepted.attributes["saml.mvpd"] == "MVPD-A" && accepted.attributes["http.response.status_code"] == "201")
        #expect(refused.attributes["http.response.status_code"] == "400" && refused.attributes["saml.mvpd"] == "MVPD-A")
        #expect(
            accepted.attributes["http.route"]?.contains("{partner}") == true
                || accepted.attributes["http.route"]?.contains(":partner") == true)
        func children(_ parent: ExportedSpan) -> [String: ExportedSpan] {
            Dictionary(spans.filter { $0.parentSpanID == parent.spanID && $0.traceID == parent.traceID }.map { ($0.name, $0) }) { a, _ in a
            }
        }
        let phases = children(accepted)
        #expect(Set(phases.keys) == ["saml.decode", "saml.parse", "saml.signature", "saml.validate", "saml.store.consume"])
        #expect(phases["saml.store.consume"]?.attributes["saml.store.outcome"] == "accepted")
        #expect(children(refused)["saml.store.consume"]?.attributes["saml.store.outcome"] == "replayed")
        // The session that issued the request: its own trace, with the issue as a child.
        let session = try #require(spans.first { $0.name.contains("sessions/sso") })
        #expect(session.traceID != Self.traceID && session.parentSpanID.isEmpty)
        #expect(children(session)["saml.request.issue"] != nil)

        // Never the SAMLResponse, a NameID or an attribute value in any exported byte.
        let exported = String(decoding: receiver.all, as: UTF8.self)
        let body = try #require(exchange).bodyText
        let samlResponse = String(body.split(separator: "&").first { $0.hasPrefix("SAMLResponse=") }?.dropFirst(13) ?? "")
        #expect(samlResponse.count > 100)
        for secret in [
            nameID, "hh-7731", String(samlResponse.prefix(40)), "PHNhbWxw", "dGVzdC1kZXZpY2U", "fingerprint", "caller-chosen-state",
        ] {
            #expect(!exported.contains(secret), "\(secret) exported")
        }

        // Every log line of the two requests names the trace and the request's span.
        let lines = logs.records.withLock { $0 }.filter { $0.message.contains("profiles/sso") }
        #expect(lines.count == 2)
        #expect(Set(lines.compactMap { $0.metadata["trace_id"] }) == [Self.traceID])
        #expect(Set(lines.compactMap { $0.metadata["span_id"] }) == Set([accepted.spanID, refused.spanID]))
        let verifierLines = logs.records.withLock { $0 }.filter { $0.message.hasPrefix("SAML response") }
        #expect(!verifierLines.isEmpty && verifierLines.allSatisfy { $0.metadata["trace_id"] == Self.traceID })
    }

    @Test("traceparent: version 00 in its exact shape only")
    func traceparentShape() {
        let valid = "00-\(Self.traceID)-\(Self.callerSpanID)-01"
        #expect(TraceParent.validated(valid) == valid)
        for value in [
            nil, "", "garbage", valid.uppercased(), "01" + valid.dropFirst(2), "ff" + valid.dropFirst(2), valid + "-00", " " + valid,
            "00-\(String(repeating: "0", count: 32))-\(Self.callerSpanID)-01", "00-\(Self.traceID)-\(String(repeating: "0", count: 16))-01",
            "00_\(Self.traceID)-\(Self.callerSpanID)-01", "00-\(Self.traceID)-\(Self.callerSpanID)-0g",
        ] {
            #expect(TraceParent.validated(value) == nil, "\(value ?? "nil")")
        }
    }

    @Test("a malformed or hostile traceparent starts a trace of the service's own, changes no answer and logs no header")
    func hostileTraceparent() async throws {
        let logs = CapturedLogs()
        let receiver = Receiver()
        let hostile = [
            "garbage", "00-\(String(repeating: "0", count: 32))-\(Self.callerSpanID)-01",
            "00-\(Self.traceID)-\(String(repeating: "0", count: 16))-01",
            "ff-\(Self.traceID)-\(Self.callerSpanID)-01", String(repeating: "00-", count: 3000), "00-zz-yy-01", "",
        ]
        try await receiver.with { port in
            try await Service.with(Self.configuration(port, encoding: .json), logger: logs.logger) { service in
                for value in hostile {
                    let answer = try await Service.send(
                        service, "/api/v2/REF30/sessions/sso/Apple",
                        headers: [
                            ("AP-Device-Identifier", "fingerprint \(Service.deviceValue)"),
                            ("Content-Type", "application/x-www-form-urlencoded"),
                            ("traceparent", value), ("tracestate", "vendor=" + String(repeating: "x", count: 200)),
                        ], body: Array("domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example".utf8))
                    #expect(answer.status == 200, "\(value.prefix(40))")
                }
            }
            try await receiver.wait { ExportedSpan.all($0).filter { $0.name.contains("sessions/sso") }.count >= hostile.count }
        }
        // swift-otel logs the carrier it cannot read: only a validated traceparent ever reaches it.
        for record in logs.records.withLock({ $0 }) {
            let line = record.message + " " + record.metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            #expect(!line.contains(Service.deviceValue) && !line.contains("vendor="), "\(line.prefix(200))")
        }
        let sessions = ExportedSpan.all(receiver).filter { $0.name.contains("sessions/sso") }
        #expect(sessions.count == hostile.count)
        for span in sessions {
            #expect(span.traceID.count == 32 && span.traceID != String(repeating: "0", count: 32))
            #expect(span.traceID != Self.traceID, "an invalid traceparent is not adopted")
        }
    }

    @Test("OTLP's default encoding, protobuf: spans arrive, and none of the response's content")
    func protobufExport() async throws {
        let receiver = Receiver()
        let nameID = "secret-subscriber-\(UInt32.random(in: 0...UInt32.max))"
        try await receiver.with { port in
            try await Service.with(Self.configuration(port, encoding: .protobuf)) { service in
                let request = try await Service.freshExchange(service, Service.mvpdB, nameID: nameID)
                #expect(try await Service.send(service, request).status == 201)
            }
            try await receiver.wait { String(decoding: $0.all, as: UTF8.self).contains("saml.store.consume") }
        }
        let types = Set(receiver.bodies.withLock { $0.map(\.contentType) })
        #expect(types == ["application/x-protobuf"])
        let exported = String(decoding: receiver.all, as: UTF8.self)
        for name in ["saml.decode", "saml.parse", "saml.signature", "saml.validate", "saml.store.consume", "saml.request.issue", "MVPD-B"] {
            #expect(exported.contains(name), "\(name) missing")
        }
        #expect(!exported.contains(nameID) && !exported.contains("hh-7731"))
    }

    @Test("tracing is off unless configured; the file's tracing object and the OTEL_ environment")
    func configuration() async throws {
        #expect(Service.configuration().tracing == nil)
        let directory = try TemporaryFiles.folder("tracing")
        func load(_ tracing: String, environment: [String: String] = [:]) async throws -> ServiceConfiguration {
            let path = directory.appendingPathComponent("service.json").path
            let text =
                #"{"serviceProvider": "REF30", "mvpdConfiguration": "m.json", "trust": "t.json""# + (tracing.isEmpty ? "" : ", " + tracing)
                + "}"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return try await ServiceConfiguration.load(contentsOf: path, environment: environment)
        }
        #expect(try await load("").tracing == nil)
        let full = try #require(
            try await load(
                #""tracing": {"endpoint": "http://collector:4318", "protocol": "http/json", "sampleRatio": 0.25, "exportIntervalSeconds": 2}"#
            )
            .tracing)
        #expect(full.endpoint == "http://collector:4318/v1/traces" && full.encoding == .json && full.sampleRatio == 0.25)
        #expect(full.exportInterval == .seconds(2))
        #expect(
            try await load(#""tracing": {"endpoint": "https://c.example/otlp/v1/traces"}"#).tracing?.endpoint
                == "https://c.example/otlp/v1/traces")
        #expect(try await load("", environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]).tracing == .init())
        #expect(
            try await load("", environment: ["SAML_SERVICE_TRACING_ENDPOINT": "http://c:4318/"]).tracing?.endpoint
                == "http://c:4318/v1/traces")
        #expect(try await load(#""tracing": {}"#, environment: ["OTEL_SDK_DISABLED": "true"]).tracing == nil)
        #expect(try await load(#""tracing": {}"#, environment: ["OTEL_TRACES_EXPORTER": "none"]).tracing == nil)
        for bad in [
            #""tracing": {"endpoint": "collector:4318"}"#, #""tracing": {"protocol": "grpc"}"#, #""tracing": {"sampleRatio": 2}"#,
            #""tracing": {"exportIntervalSeconds": 0}"#, #""tracing": {"endpiont": "http://c"}"#,
        ] {
            await #expect(throws: SAMLError(.configurationInvalid, "")) { _ = try await load(bad) }
        }
    }
}
