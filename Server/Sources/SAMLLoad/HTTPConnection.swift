import AppleSSO
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// HTTP/1.1 keep-alive connections over loopback (or any TCP address), one request at a time: what the
/// load harness and the tests talk to the service with. Bytes go out exactly as given (the
/// SAMLResponse form value is already the cookbook's encoding; nothing here encodes it again).
public struct HTTPConnection: ~Copyable {
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object, if it is one.
        public var jsonObject: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        }

        /// The library's code an Enhanced Error Code answer carries in `details`: the whole value, or the
        /// text before its first `:` (`code: message`).
        public var libraryCode: String? {
            (jsonObject?["details"] as? String)?.split(separator: ":", maxSplits: 1).first.map(String.init)
        }

        /// The ID of the SAML request a `partner_profile` answer of `sessions/sso` hands out.
        public var partnerRequestID: String? {
            guard let object = jsonObject, object["actionName"] as? String == "partner_profile",
                let request = (object["authenticationRequest"] as? [String: Any])?["request"] as? String,
                let xml = Data(base64Encoded: request).map({ String(decoding: $0, as: UTF8.self) }),
                let start = xml.range(of: " ID=\"")
            else { return nil }
            let rest = xml[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<end])
        }
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The connection closed before a whole answer arrived.
        case closed
        /// No connection could be made (refused, or not within the connect timeout): nothing was sent.
        case unreachable(String)

        public var description: String {
            switch self {
            case .closed: "the connection closed before a whole answer arrived"
            case .unreachable(let reason): "no connection to \(reason)"
            }
        }
    }

    private var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    private let authority: String

    /// Connects, runs `body` with the connection, and closes it. A connection that cannot be made throws
    /// ``Failure/unreachable(_:)``.
    public static func with<T>(
        host: String, port: Int, connectTimeout: TimeAmount = .seconds(2), _ body: (inout HTTPConnection) async throws -> T
    ) async throws -> T {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(connectTimeout)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failure.unreachable("\(host):\(port): \(error)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = HTTPConnection(inbound: inbound.makeAsyncIterator(), outbound: outbound, authority: "\(host):\(port)")
            return try await body(&connection)
        }
    }

    /// Sends a request built by ``AppleSSO/TokenExchangeRequest`` and reads its whole answer.
    public mutating func send(_ request: HTTPRequestParts) async throws -> Answer {
        try await send(
            method: HTTPMethod(rawValue: request.method), path: request.path, headers: request.headers.map { ($0.name, $0.value) },
            body: request.body)
    }

    /// Sends one request and reads its whole answer.
    public mutating func send(method: HTTPMethod, path: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws -> Answer
    {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: authority)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if !body.isEmpty || method == .POST { head.headers.add(name: "Content-Length", value: String(body.count)) }
        try await outbound.write(.head(head))
        if !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
        try await outbound.write(.end(nil))
        var answer = Answer(status: 0, headers: [], body: [])
        while let part = try await inbound.next() {
            switch part {
            case .head(let response):
                answer.status = Int(response.status.code)
                answer.headers = response.headers.map { ($0.name, $0.value) }
            case .body(let buffer):
                answer.body += buffer.readableBytesView
            case .end:
                return answer
            }
        }
        throw Failure.closed
    }
}
