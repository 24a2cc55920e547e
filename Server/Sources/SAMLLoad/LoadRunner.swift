import Foundation

extension LoadHarness {
    /// What the timed phase saw.
    struct TimedPhase: Sendable {
        /// Per item: nil when it was never sent (the deadline, or no instance to send it to).
        var outcomes: [Outcome?]
        /// Per item: what is wrong with an accepted fresh item's profile.
        var profileProblems: [String?]
        /// Per item: when it completed and its latency; nil when it was never sent or was withheld.
        var timings: [Timing?]
        var seconds: Double
        /// When the phase began, by the wall clock (for tools that measure the processes under load
        /// over exactly this phase).
        var startedAt: Date
        /// `duration` ended the phase before every request was sent.
        var deadlineReached: Bool
        /// Run-level failures (no instance accepted connections).
        var failures: [String]
    }

    /// When a request completed (its answer came, or its connection closed), in seconds into the timed
    /// phase; its latency in microseconds from when it was due (nil: no answer) and from when it was
    /// sent (the service's own time, without the harness's queue); and the instance it was sent to (an
    /// index into ``LoadOptions/targets``; nil when the watchdog abandoned it).
    struct Timing: Sendable {
        var at: Double
        var latency: Double?
        var answerTime: Double?
        var target: Int?
    }

    /// The state the connections of the timed phase share.
    final class TimedState: Sendable {
        let outcomes: Shared<[Outcome?]>
        let inFlight: Shared<[Bool]>
        let profileProblems: Shared<[String?]>
        let timings: Shared<[Timing?]>
        let failures = Shared([String]())

        init(count: Int) {
            outcomes = Shared([Outcome?](repeating: nil, count: count))
            inFlight = Shared([Bool](repeating: false, count: count))
            profileProblems = Shared([String?](repeating: nil, count: count))
            timings = Shared([Timing?](repeating: nil, count: count))
        }

        func outcome(_ index: Int) -> Outcome? { outcomes.withLock { $0[index] } }
        func record(_ index: Int, _ outcome: Outcome, timing: Timing? = nil) {
            if let timing { timings.withLock { $0[index] = timing } }
            outcomes.withLock { $0[index] = outcome }
            inFlight.withLock { $0[index] = false }
        }
    }

    /// Posts every prepared request with `connections` connections spread over the targets, until all
    /// are sent or `duration` is over; requests still in flight `grace` after it are abandoned.
    static func runTimed(_ plan: LoadPlan) async -> TimedPhase {
        let options = plan.options, items = plan.items
        let clock = ContinuousClock()
        let state = TimedState(count: items.count)
        let start = clock.now
        let startedAt = Date()
        let deadline = options.duration.map { start + $0 }
        enum Finished: Sendable { case worker, watchdog }
        await withTaskGroup(of: Finished.self) { group in
            for worker in 0..<options.connections {
                group.addTask {
                    await work(worker, items: items, options: options, state: state, start: start, deadline: deadline)
                    return .worker
                }
            }
            if let deadline {
                group.addTask {
                    try? await clock.sleep(until: deadline + options.grace)
                    return .watchdog
                }
            }
            var workers = options.connections
            for await finished in group {
                switch finished {
                case .worker:
                    workers -= 1
                    if workers == 0 { group.cancelAll() }  // the watchdog
                case .watchdog:
                    if workers > 0 {
                        state.failures.withLock {
                            $0.append(
                                "timed phase: expected every request answered within the grace of \(options.grace) after the duration, found \(workers) connections still waiting (abandoned; their answers count as lost)"
                            )
                        }
                    }
                    group.cancelAll()
                }
            }
        }
        let timedSeconds = seconds(clock.now - start)
        var outcomes = state.outcomes.withLock { $0 }
        var timings = state.timings.withLock { $0 }
        let inFlight = state.inFlight.withLock { $0 }
        // Requests abandoned by the watchdog were sent: their answers are lost (when the phase ended).
        for index in outcomes.indices where outcomes[index] == nil && inFlight[index] {
            outcomes[index] = .unanswered
            timings[index] = Timing(at: timedSeconds)
        }
        return TimedPhase(
            outcomes: outcomes, profileProblems: state.profileProblems.withLock { $0 }, timings: timings,
            seconds: timedSeconds, startedAt: startedAt,
            deadlineReached: (deadline.map { clock.now >= $0 } ?? false) && outcomes.contains(nil),
            failures: state.failures.withLock { $0 })
    }

    /// One connection's share of the requests (every `connections`-th), to its instance; when that one
    /// goes away, to the next. Gives up after `connectAttempts` failed connections per target in a row.
    static func work(
        _ worker: Int, items: [Item], options: LoadOptions, state: TimedState, start: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant?
    ) async {
        let clock = ContinuousClock()
        var target = worker % options.targets.count
        var mine = Array(stride(from: worker, to: items.count, by: options.connections))
        // Failed connection attempts in a row (a connection that served requests, then failed, is one).
        var attempts = 0
        var lastError: (any Error)?
        func over() -> Bool { Task.isCancelled || deadline.map { clock.now >= $0 } ?? false }
        while !mine.isEmpty && !over() {
            var served = 0
            do {
                try await HTTPConnection.with(host: options.targets[target].host, port: options.targets[target].port) { connection in
                    while let index = mine.first, !over() {
                        var due = clock.now
                        if let rate = options.rate {
                            due = start + .microseconds(Int64(Double(index) / rate * 1_000_000))
                            if let deadline, due >= deadline { return }
                            if due > clock.now { try await clock.sleep(until: due) }
                        }
                        let item = items[index]
                        if let original = item.original,
                            !(await originalAnswered(original, state: state, deadline: deadline, tolerating: options.tolerateUnavailable))
                        {
                            // Its original's answer was lost or never came: whether it was committed is
                            // unknown, so no answer to the replay could be judged. The settle phase
                            // re-posts the original instead.
                            state.record(index, .withheld)
                            mine.removeFirst()
                            continue
                        }
                        state.inFlight.withLock { $0[index] = true }
                        let sent = clock.now
                        let answer: HTTPConnection.Answer
                        do {
                            answer = try await connection.send(item.request)
                        } catch {
                            state.record(index, .unanswered, timing: Timing(at: seconds(clock.now - start), target: target))
                            mine.removeFirst()
                            throw error
                        }
                        let now = clock.now
                        served += 1
                        let timing = Timing(
                            at: seconds(now - start), latency: seconds(now - due) * 1_000_000, answerTime: seconds(now - sent) * 1_000_000,
                            target: target)
                        let outcome = classify(answer)
                        if outcome.isAcceptance && item.kind == .fresh {
                            let problem = profileProblem(mvpd: item.mvpd, expected: item.profile, body: answer.body)
                            state.profileProblems.withLock { $0[index] = problem }
                        }
                        state.record(index, outcome, timing: timing)
                        mine.removeFirst()
                    }
                }
                attempts = 0
            } catch {
                if Task.isCancelled { break }
                attempts = served > 0 ? 1 : attempts + 1
                lastError = error
                if attempts >= options.connectAttempts * options.targets.count { break }
                // The instance went away: the rest of this connection's requests go to the next one.
                target = (target + 1) % options.targets.count
                let wake = clock.now + backoff(attempts)
                try? await clock.sleep(until: deadline.map { min($0, wake) } ?? wake)
            }
        }
        if attempts > 0 && !mine.isEmpty, let lastError {
            let targets = options.loadTargets.map(\.description).joined(separator: ", ")
            state.failures.withLock {
                $0.append(
                    "connection \(worker): expected an instance of \(targets) to accept it, found none in \(attempts) attempts in a row\(over() ? " before the duration was over" : "") (last: \(lastError)); \(mine.count) requests not sent"
                )
            }
        }
    }

    /// Waits (at most 10 s, and not past the deadline) for a replay's original to be answered. False
    /// when it was not (lost, withheld, never sent, still in flight when the wait ended, or `tolerating`
    /// unavailability a `503`): a replay sent while its original is in flight would race it, and the
    /// store rightly accepts whichever of the same bytes reaches it first, which the audit could not
    /// judge. The settle phase re-posts it then.
    static func originalAnswered(_ original: Int, state: TimedState, deadline: ContinuousClock.Instant?, tolerating: Bool) async -> Bool {
        let clock = ContinuousClock()
        let limit = min(clock.now + .seconds(10), deadline ?? clock.now + .seconds(10))
        while state.outcome(original) == nil && clock.now < limit && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(1))
        }
        guard let outcome = state.outcome(original) else { return false }
        return !outcome.isLost(tolerating: tolerating)
    }
}
