import Foundation

/// The harness's result: throughput, latency, the timeline, and the correctness audit.
public struct LoadReport: Sendable {
    public struct Line: Sendable {
        public var kind: String
        public var sent = 0
        public var asExpected = 0
        public var wrong = 0
        /// No answer (connection refused or closed: an instance stopped).
        public var unanswered = 0
        /// Answered `503` with ``LoadOptions/tolerateUnavailable`` (without it a `503` is wrong).
        public var unavailable = 0
        /// Replays not sent because their original's answer was lost (the settle phase re-posts it).
        public var withheld = 0
    }

    /// The timed phase's requests by the answer they got (status, Enhanced Error Code, library code; or
    /// no answer), and how the audit judged them.
    public struct Answer: Sendable {
        public var answer: String
        public var count = 0
        public var asExpected = 0
        public var unavailable = 0
        public var wrong = 0
    }

    /// A step of the latency's percentile distribution.
    public struct Percentile: Sendable, Equatable {
        /// 0...100.
        public var percentile: Double
        public var microseconds: Double
        /// Answers at or below that latency.
        public var count: Int
    }

    /// What was run (the report page shows it).
    public struct Parameters: Sendable {
        public var targets: [String] = []
        public var connections = 0
        /// Requests per second; nil: as fast as the service answers.
        public var rate: Double?
        public var requests = 0
        /// The bound on the timed phase in seconds; nil: none.
        public var duration: Double?
        public var seed: UInt64 = 0
        public var tolerateUnavailable = false
        public var settle = true
        public var killed: [String] = []
    }

    public var generationSeconds: Double
    public var timedSeconds: Double
    /// When the timed phase began, by the wall clock (Unix seconds): `scripts/bench/store-bench` reads the
    /// CPU the processes under load spent over exactly this phase.
    public var timedStartedAt = 0.0
    public var answered: Int
    /// Latencies in microseconds (measured from each request's scheduled instant at a fixed rate), from
    /// an HDR histogram (3 significant digits); `maximum` is exact.
    public var p50, p90, p99, maximum: Double
    public var p999 = 0.0
    /// The latency's percentile distribution (what the report page plots).
    public var latencyDistribution: [Percentile] = []
    public var lines: [Line]
    /// Prepared requests never sent, and whether the duration ended the timed phase.
    public var notSent = 0
    public var deadlineReached = false
    /// The settle phase: accepted responses re-posted (all must be refused), lost answers re-posted.
    public var settleChecked = 0
    public var settleWrong = 0
    public var lostThenAccepted = 0
    public var lostButCommitted = 0
    /// The sessions phase: whole sessions played after the run (decisions, logout), and the wrong answers in them.
    public var sessionsPlayed = 0
    public var sessionsWrong = 0
    /// Assertions accepted more than once over the whole run.
    public var multiplyAccepted = 0
    /// The first wrong answers, described.
    public var wrongAnswers: [String]
    /// What made the run fail besides wrong answers: no instance accepted connections, an instance
    /// unreachable in the settle phase, requests still unanswered after the grace.
    public var failures: [String] = []
    /// The timed phase's requests by the answer they got, most frequent first.
    public var answers: [Answer] = []
    /// The timed phase's completions over time, and the service's availability.
    public var timeline = LoadTimeline()
    public var availability = LoadTimeline.Availability()
    public var parameters = Parameters()

    /// The longest stretch without an acceptance (``LoadTimeline/Availability/outageSeconds``) and its
    /// start in seconds into the timed phase.
    public var outageSeconds: Double { availability.outageSeconds }
    public var outageStart: Double? { availability.outageStart }
    /// The first and the last request unavailable (no answer, or a tolerated `503`).
    public var firstUnavailable: Double? { availability.firstUnavailable }
    public var lastUnavailable: Double? { availability.lastUnavailable }
    /// From the first unavailable request to the first acceptance after the last one.
    public var recoveredAfter: Double? { availability.recoveredAfter }

    /// The assertions acknowledged (accepted in the timed or the settle phase): issuer and ID, as the
    /// store records them. A failover test checks each is on the promoted server.
    public var acknowledged: [(issuer: String, id: String)] = []
    /// Every request of the timed phase that completed, in the order prepared (`saml-server load
    /// --requests-file`: a fault scenario judges each instance's answers on its own).
    public var requests: [Request] = []

    /// One completed request of the timed phase.
    public struct Request: Sendable {
        /// Its place in the prepared order.
        public var index: Int
        public var kind: String
        /// The instance it was sent to (`host:port`); nil when it was abandoned in flight.
        public var target: String?
        /// Seconds into the timed phase at which it completed; its latency in microseconds from when it
        /// was due and from when it was sent (nil: no answer).
        public var at: Double
        public var latency: Double?
        public var answerTime: Double?
        public var answerClass: LoadAnswerClass
        /// What it got: the status, the Enhanced Error Code and the library's code, or "no answer".
        public var answer: String

        /// A tab-separated line: index, kind, target (`-` when none), seconds, latency and answer time in µs
        /// (`-` when none), class, answer.
        public var line: String {
            func us(_ value: Double?) -> String { value.map { String(Int($0.rounded())) } ?? "-" }
            return
                "\(index)\t\(kind)\t\(target ?? "-")\t\(String(format: "%.4f", at))\t\(us(latency))\t\(us(answerTime))\t\(answerClass.rawValue)\t\(answer)"
        }
    }

    public var requestsPerSecond: Double { timedSeconds > 0 ? Double(answered) / timedSeconds : 0 }
    public var wrong: Int { lines.reduce(0) { $0 + $1.wrong } + settleWrong + sessionsWrong + multiplyAccepted }
    /// No wrong answer and no failure.
    public var passed: Bool { wrong == 0 && failures.isEmpty }

    public var table: String {
        func f(_ v: Double) -> String { String(format: "%.0f", v) }
        func s(_ v: Double) -> String { String(format: "%.2f s", v) }
        var out = """
            prepared in \(String(format: "%.1f", generationSeconds)) s (sessions/sso + signing, not timed)
            timed: \(answered) answers in \(String(format: "%.2f", timedSeconds)) s = \(f(requestsPerSecond)) requests/s
            latency µs: p50 \(f(p50))  p90 \(f(p90))  p99 \(f(p99))  p99.9 \(f(p999))  max \(f(maximum))

            """
        let rates = timeline.buckets.filter { $0.seconds > 0 }.map(\.requestsPerSecond)
        out += "timeline: \(timeline.buckets.count) buckets of \(String(format: "%g", timeline.bucketSeconds)) s"
        if let low = rates.min(), let high = rates.max() { out += ", requests/s per bucket \(f(low)) to \(f(high))" }
        out += "\n"
        if let first = firstUnavailable, let last = lastUnavailable {
            out += "unavailable: first at \(s(first)), last at \(s(last)), "
            out += recoveredAfter.map { "recovered after \(s($0))\n" } ?? "not recovered by the end of the timed phase\n"
        } else {
            out += "unavailable: none\n"
        }
        if let start = outageStart {
            out += "longest stretch without an acceptance: \(String(format: "%.3f s", outageSeconds)) from \(s(start))"
            out += " (\(availability.outageUnavailable) unavailable in it\(availability.outageRecovered ? "" : ", not recovered"))\n"
        }
        out += """

            | kind | sent | as expected | wrong | unanswered | unavailable | withheld |
            |---|---:|---:|---:|---:|---:|---:|

            """
        for line in lines {
            out +=
                "| \(line.kind) | \(line.sent) | \(line.asExpected) | \(line.wrong) | \(line.unanswered) | \(line.unavailable) | \(line.withheld) |\n"
        }
        if !answers.isEmpty {
            out += "\n| answer | count | as expected | unavailable | wrong |\n|---|---:|---:|---:|---:|\n"
            for answer in answers {
                out += "| \(answer.answer) | \(answer.count) | \(answer.asExpected) | \(answer.unavailable) | \(answer.wrong) |\n"
            }
        }
        let instances = self.instances
        if instances.count > 1 || instances.contains(where: { $0.unavailable > 0 }) {
            out += "\n| instance | accepted | refused as expected | unavailable | wrong | first answer | last answer | unanswered from |\n"
            out += "|---|---:|---:|---:|---:|---:|---:|---:|\n"
            func at(_ v: Double?) -> String { v.map(s) ?? "-" }
            for instance in instances {
                out += "| \(instance.target) | \(instance.accepted) | \(instance.refused) | \(instance.unavailable) | \(instance.wrong) | "
                out += "\(at(instance.firstAnswer)) | \(at(instance.lastAnswer)) | \(at(instance.unavailableAfterLastAnswer)) |\n"
            }
        }
        out += "\n"
        if notSent > 0 {
            out += "not sent: \(notSent) prepared requests\(deadlineReached ? " (the duration was over)" : "")\n"
        }
        out +=
            "settle: \(settleChecked) re-posts, \(settleWrong) wrong; lost answers: \(lostThenAccepted) accepted later, \(lostButCommitted) had been committed\n"
        if sessionsPlayed > 0 || sessionsWrong > 0 {
            out +=
                "sessions: \(sessionsPlayed) played to the logout (preauthorize, authorize, logout, signed out on another instance), \(sessionsWrong) wrong\n"
        }
        out += "assertions accepted more than once: \(multiplyAccepted)\n"
        out += "audit: \(wrong) wrong answers, \(failures.count) failures: \(passed ? "passed" : "FAILED")\n"
        for description in wrongAnswers { out += "  wrong: \(description)\n" }
        for failure in failures { out += "  failure: \(failure)\n" }
        return out
    }

    /// The report as a JSON object (`saml-server load --json`). Instants and durations in seconds
    /// (`_s`, to the millisecond; null when there is none), latencies in microseconds (`_us`).
    public var jsonObject: [String: Any] {
        func ms(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }
        func optional(_ v: Double?) -> Any { v.map(ms) ?? NSNull() }
        return [
            "requests_per_second": requestsPerSecond.rounded(), "answered": answered, "timed_seconds": ms(timedSeconds),
            "timed_started_unix_s": ms(timedStartedAt),
            "p50_us": p50.rounded(), "p90_us": p90.rounded(), "p99_us": p99.rounded(), "p999_us": p999.rounded(),
            "max_us": maximum.rounded(), "wrong": wrong, "passed": passed, "settle_checked": settleChecked,
            "settle_wrong": settleWrong, "lost_then_accepted": lostThenAccepted, "lost_but_committed": lostButCommitted,
            "multiply_accepted": multiplyAccepted, "sessions_played": sessionsPlayed, "sessions_wrong": sessionsWrong, "not_sent": notSent,
            "deadline_reached": deadlineReached,
            "kinds": lines.map {
                [
                    "kind": $0.kind, "sent": $0.sent, "as_expected": $0.asExpected, "wrong": $0.wrong, "unanswered": $0.unanswered,
                    "unavailable": $0.unavailable, "withheld": $0.withheld,
                ] as [String: Any]
            },
            "answers": answers.map {
                ["answer": $0.answer, "count": $0.count, "as_expected": $0.asExpected, "unavailable": $0.unavailable, "wrong": $0.wrong]
                    as [String: Any]
            },
            "instances": instances.map {
                [
                    "target": $0.target, "accepted": $0.accepted, "refused_as_expected": $0.refused, "unavailable": $0.unavailable,
                    "wrong": $0.wrong, "first_answer_s": optional($0.firstAnswer), "last_answer_s": optional($0.lastAnswer),
                    "unanswered_from_s": optional($0.unavailableAfterLastAnswer),
                ] as [String: Any]
            },
            "outage_seconds": ms(outageSeconds), "outage_start_s": optional(outageStart),
            "outage_unavailable": availability.outageUnavailable, "outage_recovered": availability.outageRecovered,
            "first_unavailable_s": optional(firstUnavailable), "last_unavailable_s": optional(lastUnavailable),
            "recovered_after_s": optional(recoveredAfter),
            "timeline": [
                "bucket_s": timeline.bucketSeconds,
                "buckets": timeline.buckets.map {
                    [
                        "start_s": ms($0.start), "seconds": ms($0.seconds), "accepted": $0.accepted, "refused_as_expected": $0.refused,
                        "unavailable": $0.unavailable, "wrong": $0.wrong, "answered": $0.answered,
                        "requests_per_second": $0.requestsPerSecond.rounded(), "p99_us": $0.p99.map { $0.rounded() } ?? NSNull(),
                    ] as [String: Any]
                },
            ] as [String: Any],
            "latency_percentiles": latencyDistribution.map {
                ["percentile": $0.percentile, "us": $0.microseconds.rounded(), "count": $0.count] as [String: Any]
            },
            "parameters": [
                "targets": parameters.targets, "connections": parameters.connections, "rate": parameters.rate ?? NSNull(),
                "requests": parameters.requests, "duration_s": parameters.duration ?? NSNull(), "seed": NSNumber(value: parameters.seed),
                "tolerate_unavailable": parameters.tolerateUnavailable, "settle": parameters.settle, "killed": parameters.killed,
            ] as [String: Any],
            "wrong_answers": wrongAnswers, "failures": failures,
        ]
    }
}
