import DequeModule
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Bounds what a connection can hold before it has proven anything, on every connection of the public
/// listener (a channel handler after HTTP decoding):
///
/// - at most ``ConnectionGuard/Limits/maximumConnections`` at once: when one more opens, room is made by
///   closing the connection that has proven least: one that has never had a whole request answered before
///   one that has (a proxy's kept-alive upstream, a device between its requests); among equals, the one
///   that has waited longest without a request in progress (idle since its last answer, or its head not
///   complete since it opened), else the one whose body has been arriving longest (a stalled body). So a
///   flood of new connections holding places, however they hold them, closes its own kind first and
///   cannot cut off the clients that are using theirs; only when every connection has a whole request
///   being answered is the new one closed instead;
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

    /// Where a connection is: what decides which one makes room at the cap.
    enum Phase: Sendable {
        /// No request in progress: idle between requests, or its head not complete. Evicted first (among
        /// connections that have had an answer, or among those that have not).
        case waiting
        /// A head arrived, the body is still arriving. Evicted when no connection of its kind is waiting.
        case receiving
        /// A whole request is being answered (its cost bounded by admission and the store's deadline).
        case answering
    }

    /// The connections open now, shared by every connection's guard: the phase of each, whether it has had
    /// a whole request answered, and for the phases that can make room, the order in which connections
    /// entered them: one queue per (phase, proven) pair that can be evicted, met in eviction order.
    ///
    /// Each phase change appends the connection to its queue with a fresh stamp; an entry whose stamp no
    /// longer matches the connection's (it moved on, or closed) is stale and skipped when met at the front.
    /// A queue is compacted when it holds more than twice the open connections, so admission and every
    /// phase change cost amortised O(1), whatever the number of connections.
    final class Registry: Sendable {
        private struct Entry {
            let channel: any Channel
            var phase: Phase
            var proven: Bool
            var stamp: UInt64
        }

        private struct Queued {
            let id: UInt64
            let stamp: UInt64
        }

        /// The queues in eviction order: never answered and waiting, never answered and receiving, then
        /// the same for connections that have had an answer.
        private static func queue(_ phase: Phase, proven: Bool) -> Int? {
            switch phase {
            case .waiting: proven ? 2 : 0
            case .receiving: proven ? 3 : 1
            case .answering: nil
            }
        }

        private struct State {
            var next: UInt64 = 0
            var stamps: UInt64 = 0
            var entries: [UInt64: Entry] = [:]
            var queues = [Deque<Queued>](repeating: [], count: 4)

            /// The connection that has proven least and waited longest, removed from the registry.
            mutating func evict() -> (any Channel)? {
                for index in queues.indices {
                    while let first = queues[index].popFirst() {
                        if let entry = entries[first.id], entry.stamp == first.stamp {
                            entries[first.id] = nil
                            return entry.channel
                        }
                    }
                }
                return nil
            }

            mutating func enter(_ id: UInt64, _ phase: Phase, proven: Bool) {
                stamps += 1
                guard entries[id] != nil else { return }
                entries[id]!.phase = phase
                entries[id]!.proven = entries[id]!.proven || proven
                entries[id]!.stamp = stamps
                guard let index = Registry.queue(phase, proven: entries[id]!.proven) else { return }
                queues[index].append(Queued(id: id, stamp: stamps))
                if queues[index].count > 2 * entries.count + 16 {
                    queues[index] = Deque(queues[index].filter { entries[$0.id]?.stamp == $0.stamp })
                }
            }
        }

        private let state = Mutex(State())
        let capacity: Int

        init(capacity: Int) {
            self.capacity = max(1, capacity)
        }

        /// Registers `channel`; at capacity, unregisters and returns the connection that makes room, for
        /// the caller to close: the one that has proven least (never had a whole request answered) and,
        /// among those, waited longest, else received its body longest. nil when every connection is
        /// answering a whole request (the new one must be refused).
        func admit(_ channel: any Channel) -> (id: UInt64, evicted: (any Channel)?)? {
            state.withLock { state in
                var evicted: (any Channel)?
                if state.entries.count >= capacity {
                    guard let victim = state.evict() else { return nil }
                    evicted = victim
                }
                let id = state.next
                state.next += 1
                state.entries[id] = Entry(channel: channel, phase: .waiting, proven: false, stamp: 0)
                state.enter(id, .waiting, proven: false)
                return (id, evicted)
            }
        }

        /// `id` entered `phase`; `proven`: it has had a whole request answered (kept once set).
        func set(_ id: UInt64, _ phase: Phase, proven: Bool = false) {
            state.withLock { $0.enter(id, phase, proven: proven) }
        }

        func remove(_ id: UInt64) {
            _ = state.withLock { $0.entries.removeValue(forKey: id) }
        }

        var count: Int { state.withLock { $0.entries.count } }
    }

    private let limits: Limits
    private let registry: Registry
    private let metrics: ServiceMetrics
    private var id: UInt64?
    /// When the connection is closed unless it moves on (nil while a whole request is being answered),
    /// and the rejection counted then (none for idle).
    private var deadline: (at: NIODeadline, reason: String)?
    /// The one timer of the connection, and when it fires: at or before the deadline. A later deadline
    /// leaves it as it is (it re-arms itself for the rest when it fires); only an earlier one moves it.
    /// Keep-alive traffic then costs no timer per request (a request used to schedule and cancel two,
    /// 1.7% of its time on one core: issue 28), and a waiting connection wakes once per deadline.
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?
    /// A request's head arrived, its end not yet.
    private var receiving = false
    /// Requests whole and not answered yet (more than one when pipelined).
    private var unanswered = 0
    /// A whole request of this connection has been answered: it makes room after those that never had one.
    private var proven = false
    /// Answers that ended before their request did (a refusal on the head, as a `413` on its
    /// `Content-Length`): that request's end then leaves the connection waiting, not answering.
    private var answeredAhead = 0

    init(limits: Limits, registry: Registry, metrics: ServiceMetrics) {
        self.limits = limits
        self.registry = registry
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let admitted = registry.admit(context.channel) else {
            metrics.rejection("connection-cap")
            context.close(promise: nil)
            return
        }
        id = admitted.id
        if let evicted = admitted.evicted {
            metrics.rejection("connection-evicted")
            evicted.close(promise: nil)
        }
        expire(context, after: limits.headerTimeout, reason: "header-timeout")
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    private func release() {
        timer?.task.cancel()
        timer = nil
        deadline = nil
        if let id {
            registry.remove(id)
            self.id = nil
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            receiving = true
            if let id { registry.set(id, .receiving, proven: proven) }
            expire(context, after: limits.requestTimeout, reason: "request-timeout")
        case .end:
            receiving = false
            if answeredAhead > 0 {
                answeredAhead -= 1
                settle(context)
            } else {
                // The request is whole; the answer is the service's to bound (store and queue deadlines).
                unanswered += 1
                if let id { registry.set(id, .answering, proven: proven) }
                deadline = nil
            }
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            if unanswered > 0 {
                unanswered -= 1
                proven = true
            } else if receiving {
                answeredAhead += 1
            }
            settle(context)
        }
        context.write(data, promise: promise)
    }

    /// After an answer, or a request's end after its answer: a request still arriving keeps its deadline,
    /// requests still being answered have none; otherwise the next request of a kept-alive connection
    /// must start within the idle timeout, and meanwhile the connection may make room for a new one.
    private func settle(_ context: ChannelHandlerContext) {
        guard !receiving, unanswered == 0 else { return }
        if let id { registry.set(id, .waiting, proven: proven) }
        expire(context, after: limits.idleTimeout, reason: "idle")
    }

    /// Sets the deadline `timeout` from now; the timer moves only when it would fire after it.
    private func expire(_ context: ChannelHandlerContext, after timeout: Duration, reason: String) {
        let at = NIODeadline.now() + .nanoseconds(timeout.nanoseconds)
        deadline = (at, reason)
        if let timer {
            guard timer.at > at else { return }
            timer.task.cancel()
        }
        arm(context, at: at)
    }

    private func arm(_ context: ChannelHandlerContext, at: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let task = context.eventLoop.scheduleTask(deadline: at) {
            let (handler, context) = bound.value
            handler.fire(context, armedFor: at)
        }
        timer = (task, at)
    }

    /// The timer: past the deadline the connection is closed; before it, the timer waits for the rest;
    /// with no deadline (a request being answered) it stops until the next one is set. A run of a timer
    /// already replaced (cancelled too late to stop it) does nothing.
    private func fire(_ context: ChannelHandlerContext, armedFor at: NIODeadline) {
        guard let timer, timer.at == at else { return }
        self.timer = nil
        guard let deadline else { return }
        guard NIODeadline.now() >= deadline.at else {
            arm(context, at: deadline.at)
            return
        }
        if deadline.reason != "idle" { metrics.rejection(deadline.reason) }
        self.deadline = nil
        context.close(promise: nil)
    }
}
