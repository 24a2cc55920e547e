import AppleSSO
import Foundation

extension LoadHarness {
    /// What the settle phase saw.
    struct SettlePhase: Sendable {
        /// Accepted responses re-posted (every one must be refused as a replay).
        var checked = 0
        var wrong = 0
        /// Responses whose answer was lost, re-posted once: accepted now, or refused because they had
        /// been committed (or their request had been consumed).
        var lostThenAccepted = 0
        var lostButCommitted = 0
        /// Acceptances in this phase, per assertion (the index of the item that minted it).
        var acceptances: [Int: Int] = [:]
        var descriptions: [String] = []
        /// Run-level failures (an instance not declared killed that cannot be reached).
        var failures: [String] = []

        mutating func wrong(_ description: String) {
            wrong += 1
            if descriptions.count < 10 { descriptions.append(description) }
        }
    }

    /// Checks that every instance is reachable (but those declared killed, which must not be), then
    /// re-posts each response whose answer was lost to a live instance (accepted at most once), then
    /// every accepted response to every live instance (each must answer `replay.detected`). With
    /// ``LoadOptions/tolerateUnavailable`` a response answered `503` counts as lost, and a re-post answered
    /// `503` is sent again (backoff 50 ms doubling to 1 s) while the phase is younger than 10 s: the
    /// database may still be coming back.
    static func settle(_ options: LoadOptions, items: [Item], outcomes: [Outcome?]) async -> SettlePhase {
        var phase = SettlePhase()
        let killed = options.killedTargets
        let retryUntil = ContinuousClock.now + .seconds(10)
        func post(_ request: HTTPRequestParts, on connection: inout HTTPConnection) async throws -> Outcome {
            var attempts = 0
            while true {
                let outcome = classify(try await connection.send(request))
                attempts += 1
                guard options.tolerateUnavailable, outcome.isServiceUnavailable, ContinuousClock.now + backoff(attempts) < retryUntil else {
                    return outcome
                }
                try await Task.sleep(for: backoff(attempts))
            }
        }
        var live: [LoadTarget] = []
        for target in options.loadTargets {
            let reachable = await answersHealth(target, attempts: options.connectAttempts)
            switch (reachable, killed.contains(target)) {
            case (true, _): live.append(target)
            case (false, true): break
            case (false, false):
                phase.failures.append(
                    "settle: expected \(target) to answer, found it unreachable (\(options.connectAttempts) attempts, at most 5 s) (declare an instance stopped on purpose with killed / --killed)"
                )
            }
            if reachable && killed.contains(target) {
                phase.failures.append("settle: expected \(target) killed (declared), found it answering")
            }
        }
        guard let first = live.first else {
            if phase.failures.isEmpty { phase.failures.append("settle: expected a live instance, found none") }
            return phase
        }
        // Assertions and the items that posted them.
        var groups: [Int: [Int]] = [:]
        for index in items.indices { groups[items[index].assertion, default: []].append(index) }
        var accepted: [Int: Int] = [:]  // assertion → the item whose request was accepted
        var lost: [Int] = []
        for (assertion, members) in groups.sorted(by: { $0.key < $1.key }) {
            if let winner = members.first(where: { outcomes[$0]?.isAcceptance == true }) {
                accepted[assertion] = winner
            } else if members.contains(where: { outcomes[$0]?.isLost(tolerating: options.tolerateUnavailable) == true }) {
                lost.append(assertion)
            }
        }
        let lostFailure = await withConnection(first, what: "re-posting lost answers") { connection in
            for assertion in lost {
                let item = items[assertion]
                let outcome = try await post(item.request, on: &connection)
                switch outcome {
                case .accepted:
                    phase.acceptances[assertion, default: 0] += 1
                    if item.kind == .fresh {
                        phase.lostThenAccepted += 1
                        accepted[assertion] = assertion
                    } else {
                        phase.wrong(
                            "settle #\(assertion) \(item.kind.rawValue): re-posted after its answer was lost, expected \(expectation(item.kind)), found \(outcome)"
                        )
                    }
                case .refused(400, _, "replay.detected"), .refused(400, _, "in-response-to.not-outstanding"):
                    // Committed before its answer was lost, or its request was consumed (or expired).
                    phase.lostButCommitted += 1
                case let refusal where item.kind != .fresh && isExpected(item.kind, refusal):
                    break
                default:
                    phase.wrong(
                        "settle #\(assertion) \(item.kind.rawValue): re-posted after its answer was lost, expected 201 once or 400 replay.detected, found \(outcome)"
                    )
                }
            }
        }
        if let lostFailure { phase.failures.append(lostFailure) }
        for target in live {
            let failure = await withConnection(target, what: "re-posting accepted responses") { connection in
                for (assertion, winner) in accepted.sorted(by: { $0.key < $1.key }) {
                    let outcome = try await post(items[winner].request, on: &connection)
                    phase.checked += 1
                    if outcome.isAcceptance { phase.acceptances[assertion, default: 0] += 1 }
                    if outcome != .refused(400, "invalid_parameter_saml_response", "replay.detected") {
                        phase.wrong(
                            "settle #\(winner): an accepted response re-posted to \(target): expected 400 replay.detected, found \(outcome)"
                        )
                    }
                }
            }
            if let failure { phase.failures.append(failure) }
        }
        return phase
    }

    /// `GET /health` answers 200, or 404 (the public listener of an instance with `adminPort`, which
    /// serves the API alone), after at most `attempts` connection attempts and 5 s.
    static func answersHealth(_ target: LoadTarget, attempts: Int) async -> Bool {
        let clock = ContinuousClock()
        let limit = clock.now + .seconds(5)
        for attempt in 1...max(1, attempts) {
            let status = try? await HTTPConnection.with(host: target.host, port: target.port) { connection in
                try await connection.send(method: .GET, path: "/health").status
            }
            if status == 200 || status == 404 { return true }
            if attempt == attempts || clock.now + backoff(attempt) > limit { break }
            try? await Task.sleep(for: backoff(attempt))
        }
        return false
    }

    /// Runs `body` on a connection to `target`; what failed (the instance went away in the middle), to
    /// fail the run with.
    static func withConnection(_ target: LoadTarget, what: String, _ body: (inout HTTPConnection) async throws -> Void) async -> String? {
        do {
            try await HTTPConnection.with(host: target.host, port: target.port, body)
            return nil
        } catch {
            return "settle: \(what) on \(target): expected its answers, found \(error)"
        }
    }
}
