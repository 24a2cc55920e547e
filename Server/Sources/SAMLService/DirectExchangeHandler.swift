import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes
import Tracing

/// Answers the Token Exchange (`POST /api/v2/{serviceProvider}/profiles/sso/{partner}`) on the
/// connection's event loop, beside Hummingbird on the same listener (a channel handler after
/// ``ConnectionGuard``): the body is read into one buffer and the exchange runs as one task, without
/// Hummingbird's per-request streams, router and response writer, which cost more than half of what a
/// request took outside verification (BENCHMARKS.md, "The service at the speed of the library").
///
/// The answer is the router's: the same ``TokenExchangeController/exchange(serviceProvider:partner:method:headers:route:logger:body:)``
/// (its checks, admission, verdict metric, access-log line), the same span (``RequestSpan/serve(_:method:route:headers:status:_:)``),
/// the same duration metric, the request ID under the same log key, and the `Date` and `Server` headers
/// Hummingbird adds. Everything else goes on to Hummingbird untouched, and so does a Token Exchange
/// whose path is not plainly spelled (a query, an escape, an empty or doubled segment: Hummingbird's
/// router decides those) or that arrives while Hummingbird still answers an earlier request of the
/// connection. While an exchange is answered, later pipelined requests wait (and reading stops), so
/// answers keep the requests' order; so does a malformed request's `400` (Hummingbird's), and a graceful
/// shutdown's quiesce waits for the answer too.
final class DirectExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What every connection's handler shares (a class: copied into each request's task by reference).
    /// The logger, metrics and tracer are the service's, as the router's are.
    final class Route: Sendable {
        let controller: TokenExchangeController
        let serverName: String
        /// The route as Hummingbird names it (`context.endpointPath`), for the metrics, the span and the log.
        let endpoint = RouterPath(TokenExchangeController.exchangeRoute).description

        init(controller: TokenExchangeController, serverName: String) {
            self.controller = controller
            self.serverName = serverName
        }

        /// The exchange's reply, timed and traced as the router's middleware do.
        func answer(_ head: HTTPRequest, _ path: (serviceProvider: String, partner: String), body: [UInt8]?) async
            -> TokenExchangeController.Reply
        {
            let started = ContinuousClock.now
            var logger = controller.service.logger
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            let exchange = { [controller, endpoint] in
                await controller.exchange(
                    serviceProvider: path.serviceProvider, partner: path.partner, method: head.method, headers: head.headerFields,
                    route: endpoint, logger: logger, body: { body })
            }
            let reply: TokenExchangeController.Reply
            if let tracer = controller.service.tracer {
                reply = await RequestSpan.serve(
                    tracer, method: head.method, route: endpoint, headers: head.headerFields, status: { Int($0.status.code) }, exchange)
            } else {
                reply = await exchange()
            }
            controller.service.metrics.duration(endpoint: endpoint, status: reply.status.code, ContinuousClock.now - started)
            return reply
        }
    }

    /// A Token Exchange being read, then answered.
    private struct Exchange {
        let head: HTTPRequest
        let path: (serviceProvider: String, partner: String)
        /// The body so far (its first part as it arrived, the rest appended); nil once it passed the limit
        /// (the rest is read and dropped).
        var body: ByteBuffer? = ByteBuffer()
        /// Its `end` has arrived.
        var complete = false
        var answering = false
    }

    private let route: Route
    private var exchange: Exchange?
    /// Requests handed to Hummingbird whose answer has not ended yet.
    private var handedOn = 0
    /// Parts that arrived while an exchange was answered, in order.
    private var held = CircularBuffer<HTTPRequestPart>()
    private var readHeld = false
    private var quiesceHeld = false
    /// An error that came behind an exchange being answered (and the parts held before it).
    private var failure: (any Error)?
    /// The client closed its side behind an exchange being answered.
    private var inputClosed = false
    /// The rest of a body answered before it arrived (`413` on its `Content-Length`) is read and dropped.
    private var discarding = false
    /// The connection's last answer is written (`Connection: close`): what still arrives is dropped.
    private var finished = false
    private var date = HTTPDate()

    init(route: Route) {
        self.route = route
    }

    private var isAnswering: Bool { exchange?.answering ?? false }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if finished {
            return
        } else if isAnswering || !held.isEmpty {
            held.append(part)
        } else {
            take(context, part)
        }
    }

    private func take(_ context: ChannelHandlerContext, _ part: HTTPRequestPart) {
        switch part {
        case .head(let head):
            if handedOn == 0, head.method == .post, let path = Self.exchangePath(head.path) {
                var current = Exchange(head: head, path: path)
                if route.controller.announcesTooLarge(head.headerFields) {
                    // Answered at once, as the router does (a client may wait for it before sending).
                    current.body = nil
                    current.answering = true
                    answer(context, current)
                }
                exchange = current
                return
            }
            handedOn += 1
        case .body(var chunk):
            if discarding { return }
            guard exchange != nil else { break }
            if let size = exchange?.body?.readableBytes, size + chunk.readableBytes <= route.controller.limit {
                if size == 0 {
                    exchange?.body = chunk
                } else {
                    exchange?.body?.writeBuffer(&chunk)
                }
            } else {
                exchange?.body = nil
            }
            return
        case .end:
            if discarding {
                discarding = false
                return
            }
            guard let current = exchange else { break }
            exchange?.complete = true
            if !current.answering {
                exchange?.answering = true
                answer(context, current)
            }
            return
        }
        context.fireChannelRead(wrapInboundOut(part))
    }

    private func answer(_ context: ChannelHandlerContext, _ exchange: Exchange) {
        let route = route
        let head = exchange.head
        let path = exchange.path
        let body = exchange.body.map { Array($0.readableBytesView) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.makeFutureWithTask {
            await route.answer(head, (path.serviceProvider, path.partner), body: body)
        }.whenSuccess { reply in
            let (handler, context) = bound.value
            handler.write(context, reply, closing: head.headerFields[.connection] == "close")
        }
    }

    private func write(_ context: ChannelHandlerContext, _ reply: TokenExchangeController.Reply, closing: Bool) {
        var head = HTTPResponse(status: reply.status, headerFields: reply.headers)
        head.headerFields[.contentLength] = String(reply.body.count)
        head.headerFields[.date] = date.now()
        head.headerFields[.server] = route.serverName
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: reply.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        discarding = !(exchange?.complete ?? true)
        exchange = nil
        guard context.channel.isActive, !closing else {
            // Requests pipelined behind it are not answered (nor verified): after `Connection: close`, or
            // for a client that has gone. Only the output is closed, as Hummingbird does: closing a socket
            // with unread input resets it, and the client could lose the answer.
            held.removeAll()
            finished = true
            context.close(mode: .output, promise: nil)
            return
        }
        if !held.isEmpty {
            while !isAnswering, let part = held.popFirst() {
                take(context, part)
            }
            // What went on to Hummingbird is delivered at a read's end (NIOAsyncChannel batches until then).
            context.fireChannelReadComplete()
        }
        guard !isAnswering else { return }
        if failure != nil || inputClosed {
            // Nothing more arrives: a request left incomplete never will be.
            exchange = nil
            discarding = false
        }
        if let failure {
            self.failure = nil
            context.fireErrorCaught(failure)
        }
        if inputClosed {
            inputClosed = false
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        if quiesceHeld, exchange == nil {
            quiesceHeld = false
            context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // (Hummingbird's answer to a malformed request may have no head of its own: never below zero.)
        if case .end = unwrapOutboundIn(data) { handedOn = max(0, handedOn - 1) }
        context.write(data, promise: promise)
    }

    /// No more bytes are read while an exchange is answered and its successors wait.
    func read(context: ChannelHandlerContext) {
        if isAnswering || !held.isEmpty {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// A graceful shutdown closes the connection once it is idle: not before this handler's answer. The
    /// client's half-close (Hummingbird then closes its side) waits for the answer and the requests held
    /// behind it; it drops an exchange still being read.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, exchange != nil {
            quiesceHeld = true
        } else if let event = event as? ChannelEvent, event == .inputClosed, isAnswering {
            inputClosed = true
        } else {
            if let event = event as? ChannelEvent, event == .inputClosed {
                exchange = nil
                discarding = false
            }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// A malformed request goes to Hummingbird, which answers `400` and closes the connection: at once
    /// when it breaks the exchange being read (Hummingbird answers in its place), after the answer and
    /// the requests before it when it comes behind an exchange being answered.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if isAnswering {
            failure = error
        } else {
            exchange = nil
            context.fireErrorCaught(error)
        }
    }

    /// `/api/v2/{serviceProvider}/profiles/sso/{partner}` with both values of unreserved characters only
    /// (RFC 3986: letters, digits, `-._~`) and no query; anything else is the router's to decide.
    static func exchangePath(_ path: String?) -> (serviceProvider: String, partner: String)? {
        guard let path else { return nil }
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard segments.count == 7, segments[0].isEmpty, segments[1].elementsEqual("api".utf8), segments[2].elementsEqual("v2".utf8),
            segments[4].elementsEqual("profiles".utf8), segments[5].elementsEqual("sso".utf8),
            isUnreserved(segments[3]), isUnreserved(segments[6])
        else { return nil }
        return (String(Substring(segments[3])), String(Substring(segments[6])))
    }

    private static func isUnreserved(_ segment: Substring.UTF8View) -> Bool {
        !segment.isEmpty
            && segment.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    true
                default: false
                }
            }
    }
}

/// The `Date` header's value (RFC 9110's IMF-fixdate), formatted again only when the second changes.
struct HTTPDate {
    private var second = -1
    private var value = ""

    mutating func now() -> String {
        var seconds = time(nil)
        guard seconds != second else { return value }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        second = seconds
        value = Self.format(parts)
        return value
    }

    static func format(_ parts: tm) -> String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
