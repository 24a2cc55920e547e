import Foundation

/// How the audit judged one request of the timed phase, as the timeline counts it.
public enum LoadAnswerClass: String, CaseIterable, Sendable {
    /// `201` or `204`, and nothing wrong with it.
    case accepted
    /// The refusal its kind must get.
    case refused = "refused as expected"
    /// No answer (the connection closed), or, with ``LoadOptions/tolerateUnavailable``, a `503`.
    case unavailable
    /// Anything else: a wrong answer.
    case wrong
}

/// The timed phase over time: per bucket, the requests completed in it (by the instant their answer
/// came, or their connection closed, relative to the start of the timed phase), by class; and when the
/// service stopped accepting and came back.
public struct LoadTimeline: Sendable {
    /// One request completed in the timed phase.
    public struct Event: Sendable {
        /// Seconds into the timed phase.
        public var at: Double
        public var answerClass: LoadAnswerClass
        /// Microseconds, as the latency histogram records them; nil when no answer came.
        public var latency: Double?

        public init(at: Double, answerClass: LoadAnswerClass, latency: Double? = nil) {
            self.at = at
            self.answerClass = answerClass
            self.latency = latency
        }
    }

    /// The requests completed in `[start, start + seconds)`.
    public struct Bucket: Sendable, Equatable {
        public var start: Double
        /// The bucket's length (the last one ends with the timed phase, so may be shorter).
        public var seconds: Double
        public var accepted = 0
        public var refused = 0
        public var unavailable = 0
        public var wrong = 0
        /// Requests that got an answer (every class but the unanswered ones).
        public var answered = 0
        /// The 99th percentile of the answers' latencies in microseconds; nil without an answer.
        public var p99: Double?

        public init(start: Double, seconds: Double) {
            self.start = start
            self.seconds = seconds
        }

        public func count(_ answerClass: LoadAnswerClass) -> Int {
            switch answerClass {
            case .accepted: accepted
            case .refused: refused
            case .unavailable: unavailable
            case .wrong: wrong
            }
        }

        /// Requests completed (answered or lost).
        public var completed: Int { accepted + refused + unavailable + wrong }
        /// Requests completed per second.
        public var requestsPerSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
    }

    /// When the service was unavailable, and the longest stretch without an acceptance.
    public struct Availability: Sendable, Equatable {
        /// The longest interval without an acceptance: between two consecutive acceptances, or from the
        /// first unavailable request to the next acceptance when none came before, or from the last
        /// acceptance (or the first unavailable request after it) to the end of the timed phase when
        /// requests were unavailable after it and none was accepted again. nil: nothing to measure
        /// (fewer than two acceptances and nothing unavailable).
        public var outageStart: Double?
        public var outageSeconds = 0.0
        /// Unavailable requests completed within that interval: 0 means a pause, not an outage.
        public var outageUnavailable = 0
        /// Whether an acceptance ended that interval (false: the timed phase ended first).
        public var outageRecovered = true
        /// The first and the last unavailable request (seconds into the timed phase).
        public var firstUnavailable: Double?
        public var lastUnavailable: Double?
        /// From the first unavailable request to the first acceptance after the last one; nil when
        /// nothing was unavailable or nothing was accepted after it.
        public var recoveredAfter: Double?

        public init() {}

        /// The outage window when requests were unavailable in it: what a chart shades.
        public var outageWindow: ClosedRange<Double>? {
            guard let outageStart, outageUnavailable > 0 else { return nil }
            return outageStart...(outageStart + outageSeconds)
        }
    }

    /// The buckets' length in seconds.
    public var bucketSeconds: Double
    public var buckets: [Bucket]

    public init(bucketSeconds: Double = 1, buckets: [Bucket] = []) {
        self.bucketSeconds = bucketSeconds
        self.buckets = buckets
    }

    /// The timeline of a timed phase of `seconds`, in buckets of ``bucketSeconds(for:)``. An event at
    /// or past the end counts in the last bucket.
    public init(events: [Event], seconds: Double) {
        let size = Self.bucketSeconds(for: seconds)
        let count = max(1, Int((seconds / size).rounded(.up)))
        bucketSeconds = size
        buckets = (0..<count).map { index in
            let start = Double(index) * size
            return Bucket(start: start, seconds: max(0, min(size, seconds - start)))
        }
        var latencies = [[Double]](repeating: [], count: count)
        for event in events {
            let index = min(count - 1, max(0, Int(event.at / size)))
            switch event.answerClass {
            case .accepted: buckets[index].accepted += 1
            case .refused: buckets[index].refused += 1
            case .unavailable: buckets[index].unavailable += 1
            case .wrong: buckets[index].wrong += 1
            }
            if let latency = event.latency {
                buckets[index].answered += 1
                latencies[index].append(latency)
            }
        }
        for index in buckets.indices where !latencies[index].isEmpty {
            let sorted = latencies[index].sorted()
            buckets[index].p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        }
    }

    /// The bucket for a timed phase of `seconds`: the smallest of 100 ms, 200 ms, 500 ms, 1 s, 2 s, 5 s,
    /// 10 s, 30 s, 1 min, 5 min, 10 min, 1 h that makes at most 300 buckets.
    public static func bucketSeconds(for seconds: Double) -> Double {
        let sizes: [Double] = [0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 300, 600, 3600]
        return sizes.first { seconds / $0 <= 300 } ?? (seconds / 300).rounded(.up)
    }

    /// The availability figures of a timed phase that ended `end` seconds in.
    public static func availability(_ events: [Event], end: Double) -> Availability {
        var result = Availability()
        var previousAcceptance: Double?
        // Unavailable requests since the last acceptance: the first one's instant, and how many.
        var firstSince: Double?
        var unavailableSince = 0
        func consider(from start: Double?, to stop: Double, recovered: Bool) {
            guard let start else { return }
            if result.outageStart == nil || stop - start > result.outageSeconds {
                result.outageStart = start
                result.outageSeconds = stop - start
                result.outageUnavailable = unavailableSince
                result.outageRecovered = recovered
            }
        }
        for event in events.sorted(by: { $0.at < $1.at }) {
            switch event.answerClass {
            case .accepted:
                consider(from: previousAcceptance ?? firstSince, to: event.at, recovered: true)
                // The first acceptance after unavailable requests; the last such one stands.
                if firstSince != nil, let first = result.firstUnavailable { result.recoveredAfter = event.at - first }
                previousAcceptance = event.at
                firstSince = nil
                unavailableSince = 0
            case .unavailable:
                if result.firstUnavailable == nil { result.firstUnavailable = event.at }
                result.lastUnavailable = event.at
                if firstSince == nil { firstSince = event.at }
                unavailableSince += 1
            case .refused, .wrong:
                break
            }
        }
        if firstSince != nil {
            consider(from: previousAcceptance ?? firstSince, to: max(end, result.lastUnavailable ?? end), recovered: false)
            result.recoveredAfter = nil  // unavailable until the end
        }
        return result
    }
}
