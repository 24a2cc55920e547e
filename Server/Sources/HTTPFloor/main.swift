import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SAMLBench

// http-floor PORT [CERTIFICATE RESPONSE]: a bare SwiftNIO HTTP/1.1 server on one event loop that reads
// each request whole and answers `201` with a fixed 300-byte JSON body, nothing else: what HTTP/1.1 over
// loopback costs without the service (no Hummingbird, no Swift concurrency, no store, logs or metrics).
// With CERTIFICATE and RESPONSE it also runs the library's whole path on each body before answering
// (`Pipeline.run`: decode, parse, verify with xmlsec, validate against RESPONSE's own issuer, audience
// and instant, extract), on the event loop, as `saml bench` does on RESPONSE; a body the library refuses
// is answered `400`. What any SwiftNIO service could reach at best: the yardsticks of
// `scripts/bench/service-bench --floor` (docs/benchmarks-history.md, issue 28). Loopback only; not a server to deploy.

/// Answers each request's end; keeps its body when it is to be verified.
final class FloorAnswer: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let body = ByteBuffer(string: "{\"profiles\":{\"floor\":\"" + String(repeating: "x", count: 275) + "\"}}")
    /// Bodies past this are refused (`400`) without being kept: the service's default limit.
    private static let maximumBody = 256 * 1024
    private let verifying: BenchInput?
    private var received: [UInt8] = []
    private var tooLarge = false

    init(verifying: BenchInput?) {
        self.verifying = verifying
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            received.removeAll(keepingCapacity: true)
            tooLarge = false
        case .body(let part):
            guard verifying != nil, !tooLarge else { return }
            if received.count + part.readableBytes > Self.maximumBody {
                tooLarge = true
            } else {
                received += part.readableBytesView
            }
        case .end:
            answer(context: context, status: verdict())
        }
    }

    /// `.created` when there is nothing to verify or the library accepts the body.
    private func verdict() -> HTTPResponseStatus {
        guard let verifying else { return .created }
        guard !tooLarge, (try? Pipeline.run(verifying, transported: received)) != nil else { return .badRequest }
        return .created
    }

    private func answer(context: ChannelHandlerContext, status: HTTPResponseStatus) {
        let body = status == .created ? Self.body : ByteBuffer()
        var head = HTTPResponseHead(version: .http1_1, status: status)
        head.headers.add(name: "content-type", value: "application/json;charset=utf-8")
        head.headers.add(name: "content-length", value: String(body.readableBytes))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 4, let port = Int(arguments[1]) else {
    print("usage: http-floor PORT [CERTIFICATE RESPONSE] (listens on 127.0.0.1)")
    exit(2)
}
let verifying: BenchInput?
do {
    verifying =
        try arguments.count == 4
        ? BenchInput.file(path: arguments[3], certificatePEM: Array(try Data(contentsOf: URL(fileURLWithPath: arguments[2]))))
        : nil
    if let verifying { try Pipeline.run(verifying) }
} catch {
    print("http-floor: expected a certificate and a response the library accepts: \(error)")
    exit(2)
}
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(FloorAnswer(verifying: verifying))
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
try channel.closeFuture.wait()
