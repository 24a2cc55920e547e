import NIOCore
import NIOHTTP1
import NIOPosix

// http-floor PORT: a bare SwiftNIO HTTP/1.1 server on one event loop that reads each request whole and
// answers `201` with a fixed 300-byte JSON body, nothing else: what HTTP/1.1 over loopback costs
// without the service (no Hummingbird, no Swift concurrency, no verification). The yardstick of
// `scripts/service-bench --floor` (BENCHMARKS.md, issue 28). Loopback only; not a server to deploy.

/// Drops each request's body as it arrives and answers its end.
final class FixedAnswer: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let body = ByteBuffer(string: "{\"profiles\":{\"floor\":\"" + String(repeating: "x", count: 275) + "\"}}")

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var head = HTTPResponseHead(version: .http1_1, status: .created)
        head.headers.add(name: "content-type", value: "application/json;charset=utf-8")
        head.headers.add(name: "content-length", value: String(Self.body.readableBytes))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(Self.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

guard CommandLine.arguments.count == 2, let port = Int(CommandLine.arguments[1]) else {
    print("usage: http-floor PORT (listens on 127.0.0.1)")
    exit(2)
}
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(FixedAnswer())
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
try channel.closeFuture.wait()
