import AppleSSO
import Foundation
import Synchronization

/// The SAML-aware load harness: it plays the devices and the MVPDs at once. Ahead of the timed phase
/// it asks `sessions/sso` for a SAML request per response (each from a device of its own), mints the
/// MVPD's signed answer to it with a new assertion ID (``SAMLMockIdP/MockIdentityProvider``) and
/// encodes it exactly as the cookbook does
/// (``AppleSSO/TokenExchangeRequest/v2(samlAttributeQueryResponse:serviceProvider:partner:accessToken:deviceIdentifier:deviceInfo:partnerFrameworkStatus:)``);
/// then it posts them to `profiles/sso` with N connections, at a fixed rate or as fast as possible,
/// mixed with replays, tampered responses and the attacker's mismatches (another MVPD, another device,
/// the other API), checks every answer, re-posts what was accepted or lost, and counts every
/// acceptance of every assertion.
///
/// One job per file: the options (`LoadOptions.swift`), the preparation (`LoadPlan.swift`), the timed
/// phase (`LoadRunner.swift`), the settle phase (`LoadSettle.swift`), the whole sessions after it
/// (`LoadSessions.swift`), the audit (`LoadTally.swift`),
/// the latency histogram (`LoadLatency.swift`), the timeline and the outage (`LoadTimeline.swift`), the
/// report (`LoadReport.swift`) and its HTML page (`LoadReportPage.swift`).
public enum LoadHarness {
    /// Prepares the requests, then runs them.
    public static func run(_ options: LoadOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> LoadReport {
        try await run(try await prepare(options, progress: progress), progress: progress)
    }

    /// The timed phase, then the settle phase, then the audit.
    public static func run(_ plan: LoadPlan, progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> LoadReport {
        let options = plan.options, items = plan.items
        progress("timed phase: \(items.count) requests")
        let timed = await runTimed(plan)
        let settled = options.settle ? await settle(options, items: items, outcomes: timed.outcomes) : SettlePhase()
        let sessions = await playSessions(options, items: items, outcomes: timed.outcomes)
        let audit = tally(
            items: items, outcomes: timed.outcomes, profileProblems: timed.profileProblems, settleAcceptances: settled.acceptances,
            tolerateUnavailable: options.tolerateUnavailable)
        let latency = LoadLatency(timed.timings.lazy.compactMap { $0?.latency })
        var events: [LoadTimeline.Event] = []
        var answered: [LoadReport.Request] = []
        let targets = options.loadTargets.map(\.description)
        for index in items.indices {
            if let timing = timed.timings[index], let answerClass = audit.classes[index], let outcome = timed.outcomes[index] {
                events.append(LoadTimeline.Event(at: timing.at, answerClass: answerClass, latency: timing.latency))
                answered.append(
                    LoadReport.Request(
                        index: index, kind: items[index].kind.rawValue, target: timing.target.map { targets[$0] }, at: timing.at,
                        latency: timing.latency, answerTime: timing.answerTime, answerClass: answerClass, answer: outcome.description))
            }
        }
        var report = LoadReport(
            generationSeconds: plan.generationSeconds, timedSeconds: timed.seconds, answered: latency.count, p50: latency.at(50),
            p90: latency.at(90), p99: latency.at(99), maximum: latency.maximum, lines: audit.lines,
            wrongAnswers: audit.descriptions + settled.descriptions + sessions.descriptions)
        report.timedStartedAt = timed.startedAt.timeIntervalSince1970
        report.p999 = latency.at(99.9)
        report.latencyDistribution = latency.distribution
        report.answers = audit.answers
        report.timeline = LoadTimeline(events: events, seconds: timed.seconds)
        report.requests = answered
        report.availability = LoadTimeline.availability(events, end: timed.seconds)
        report.parameters = LoadReport.Parameters(
            targets: options.loadTargets.map(\.description), connections: options.connections, rate: options.rate,
            requests: options.requests,
            duration: options.duration.map(seconds), seed: options.seed, tolerateUnavailable: options.tolerateUnavailable,
            settle: options.settle, killed: options.killedTargets.map(\.description).sorted())
        report.notSent = audit.notSent
        report.deadlineReached = timed.deadlineReached
        report.settleChecked = settled.checked
        report.settleWrong = settled.wrong
        report.lostThenAccepted = settled.lostThenAccepted
        report.lostButCommitted = settled.lostButCommitted
        report.multiplyAccepted = audit.multiplyAccepted
        report.sessionsPlayed = sessions.played
        report.sessionsWrong = sessions.wrong
        report.failures = timed.failures + settled.failures + sessions.failures
        // Every assertion acknowledged (a 2xx in the timed phase or the settle phase), as the store keys it.
        var acknowledged = Set(settled.acceptances.keys)
        for (index, outcome) in timed.outcomes.enumerated() where outcome?.isAcceptance == true {
            acknowledged.insert(items[index].assertion)
        }
        report.acknowledged = acknowledged.sorted().map { (items[$0].issuer, items[$0].assertionID) }
        return report
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The wait before connection attempt `attempts + 1`: 50 ms, doubling, at most 1 s.
    static func backoff(_ attempts: Int) -> Duration {
        .milliseconds(min(1000, 50 << min(max(attempts - 1, 0), 5)))
    }
}
