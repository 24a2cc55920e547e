import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Bounds what a connection can hold before it has proven anything, on every connection of the public
/// listener (a channel handler after HTTP decoding):
///
/// - at most ``ConnectionGuard/Limits/maximumConnections`` at once: one more is closed as soon as it opens;
/// - a request head must be complete within ``ConnectionGuard/Limits/headerTimeout`` of the connection's
///   start (later requests of a kept-alive connection: within the idle timeout of the previous answer),
///   so headers trickled a byte at a time cannot hold a connection;
/// - a whole request, body included, must be complete within ``ConnectionGuard/Limits/requestTimeout``
///   of its head, however its bytes are spread: a body trickled one byte every few seconds (which resets
///   an idle timer each time) is cut off at that deadline.
///
/// A connection past a deadline is closed; `saml_overload_rejections_total` counts each.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Limits: Sendable {
        var maximumConnections: Int
        var headerTimeout: Duration
        var requestTimeout: Duration
        var idleTimeout: Duration
    }

    /// The connections open now, shared by every connection's guard.
    final class Counter: Sendable {
        let open = Atomic<Int>(0)
    }

    private let limits: Limits
    private let counter: Counter
    private let metrics: ServiceMetrics
    private var counted = false
    private var deadline: Scheduled<Void>?

    init(limits: Limits, counter: Counter, metrics: ServiceMetrics) {
        self.limits = limits
        self.counter = counter
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let open = counter.open.wrappingAdd(1, ordering: .relaxed).newValue
        counted = true
        guard open <= limits.maximumConnections else {
            metrics.rejection("connection-cap")
            context.close(promise: nil)
            return
        }
        arm(context, after: limits.headerTimeout, reason: "header-timeout")
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            counter.open.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            counter.open.wrappingSubtract(1, ordering: .relaxed)
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            arm(context, after: limits.requestTimeout, reason: "request-timeout")
        case .end:
            // The request is whole; the answer is the service's to bound (store and queue deadlines).
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // The next request of a kept-alive connection must start within the idle timeout.
            arm(context, after: limits.idleTimeout, reason: "idle")
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, after timeout: Duration, reason: String) {
        deadline?.cancel()
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let metrics = metrics
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
            if reason != "idle" { metrics.rejection(reason) }
            loopBound.value.close(promise: nil)
        }
    }
}
