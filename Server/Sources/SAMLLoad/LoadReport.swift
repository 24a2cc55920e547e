import Foundation

/// The harness's result: throughput, latency, and the correctness audit.
public struct LoadReport: Sendable {
    public struct Line: Sendable {
        public var kind: String
        public var sent = 0
        public var asExpected = 0
        public var wrong = 0
        /// No answer (connection refused or closed: an instance stopped).
        public var unanswered = 0
        /// Replays not sent because their original's answer was lost (the settle phase re-posts it).
        public var withheld = 0
    }

    public var generationSeconds: Double
    public var timedSeconds: Double
    public var answered: Int
    /// Latencies in microseconds (measured from each request's scheduled instant at a fixed rate).
    public var p50, p90, p99, maximum: Double
    public var lines: [Line]
    /// Prepared requests never sent, and whether the duration ended the timed phase.
    public var notSent = 0
    public var deadlineReached = false
    /// The settle phase: accepted responses re-posted (all must be refused), lost answers re-posted.
    public var settleChecked = 0
    public var settleWrong = 0
    public var lostThenAccepted = 0
    public var lostButCommitted = 0
    /// Assertions accepted more than once over the whole run.
    public var multiplyAccepted = 0
    /// The first wrong answers, described.
    public var wrongAnswers: [String]
    /// What made the run fail besides wrong answers: no instance accepted connections, an instance
    /// unreachable in the settle phase, requests still unanswered after the grace.
    public var failures: [String] = []

    public var requestsPerSecond: Double { timedSeconds > 0 ? Double(answered) / timedSeconds : 0 }
    public var wrong: Int { lines.reduce(0) { $0 + $1.wrong } + settleWrong + multiplyAccepted }
    /// No wrong answer and no failure.
    public var passed: Bool { wrong == 0 && failures.isEmpty }

    public var table: String {
        func f(_ v: Double) -> String { String(format: "%.0f", v) }
        var out = """
            prepared in \(String(format: "%.1f", generationSeconds)) s (sessions/sso + signing, not timed)
            timed: \(answered) answers in \(String(format: "%.2f", timedSeconds)) s = \(f(requestsPerSecond)) requests/s
            latency µs: p50 \(f(p50))  p90 \(f(p90))  p99 \(f(p99))  max \(f(maximum))

            | kind | sent | as expected | wrong | unanswered | withheld |
            |---|---:|---:|---:|---:|---:|

            """
        for line in lines {
            out += "| \(line.kind) | \(line.sent) | \(line.asExpected) | \(line.wrong) | \(line.unanswered) | \(line.withheld) |\n"
        }
        out += "\n"
        if notSent > 0 {
            out += "not sent: \(notSent) prepared requests\(deadlineReached ? " (the duration was over)" : "")\n"
        }
        out +=
            "settle: \(settleChecked) re-posts, \(settleWrong) wrong; lost answers: \(lostThenAccepted) accepted later, \(lostButCommitted) had been committed\n"
        out += "assertions accepted more than once: \(multiplyAccepted)\n"
        out += "audit: \(wrong) wrong answers, \(failures.count) failures: \(passed ? "passed" : "FAILED")\n"
        for description in wrongAnswers { out += "  wrong: \(description)\n" }
        for failure in failures { out += "  failure: \(failure)\n" }
        return out
    }

    /// The report as a JSON object (`saml-server load --json`).
    public var jsonObject: [String: Any] {
        [
            "requests_per_second": requestsPerSecond.rounded(), "answered": answered, "p50_us": p50.rounded(), "p90_us": p90.rounded(),
            "p99_us": p99.rounded(), "max_us": maximum.rounded(), "wrong": wrong, "passed": passed, "settle_checked": settleChecked,
            "settle_wrong": settleWrong, "multiply_accepted": multiplyAccepted, "not_sent": notSent, "deadline_reached": deadlineReached,
            "kinds": lines.map {
                [
                    "kind": $0.kind, "sent": $0.sent, "as_expected": $0.asExpected, "wrong": $0.wrong, "unanswered": $0.unanswered,
                    "withheld": $0.withheld,
                ] as [String: Any]
            },
            "wrong_answers": wrongAnswers, "failures": failures,
        ]
    }
}
