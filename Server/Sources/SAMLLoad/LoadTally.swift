import Foundation

extension LoadHarness {
    /// What an item got.
    enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// `201` (v2) or `204` (v1): accepted.
        case accepted(Int)
        /// Any other answer: status, Enhanced Error Code, the library's code.
        case refused(Int, String, String?)
        /// Sent, and no answer came (the connection closed: an instance stopped, or the grace ran out).
        case unanswered
        /// A replay not sent: its original's answer was lost or never came.
        case withheld

        var isAcceptance: Bool {
            if case .accepted = self { return true }
            return false
        }

        /// A `503` answer: the service refused to decide (its database away, or overloaded).
        var isServiceUnavailable: Bool {
            if case .refused(503, _, _) = self { return true }
            return false
        }

        /// Whether the service's decision is unknown: no answer, not sent, or (`tolerating` unavailability)
        /// a `503`. The settle phase re-posts such a response, and a replay of it is withheld.
        func isLost(tolerating: Bool) -> Bool {
            switch self {
            case .unanswered, .withheld: true
            case .refused(503, _, _): tolerating
            case .accepted, .refused: false
            }
        }

        var description: String {
            switch self {
            case .accepted(let status): "\(status) (accepted)"
            case .refused(let status, let code, let library): "\(status) \(code)\(library.map { " \($0)" } ?? "")"
            case .unanswered: "no answer"
            case .withheld: "not sent (its original's answer was lost)"
            }
        }
    }

    static func classify(_ answer: HTTPConnection.Answer) -> Outcome {
        if answer.status == 201 || answer.status == 204 { return .accepted(answer.status) }
        return .refused(answer.status, answer.jsonObject?["code"] as? String ?? "", answer.libraryCode)
    }

    /// The library code each refused kind must get (with `400 invalid_parameter_saml_response`).
    static func expectedCode(_ kind: Kind) -> String? {
        switch kind {
        case .fresh: nil
        case .replay: "replay.detected"
        case .tampered: "signature.digest-mismatch"
        case .wrongMVPD: "issuer.mismatch"
        case .wrongMVPDRequest: "in-response-to.wrong-mvpd"
        case .wrongDevice: "in-response-to.wrong-device"
        case .v1Crossover: "in-response-to.wrong-api"
        }
    }

    /// The Enhanced Error Code a refused kind gets: REST API v1 lists no SAML code, so a v1 refusal is
    /// `internal_error` (400), its library code in `details`.
    static func enhancedCode(_ kind: Kind) -> String {
        kind == .v1Crossover ? "internal_error" : "invalid_parameter_saml_response"
    }

    static func expectation(_ kind: Kind) -> String {
        expectedCode(kind).map { "400 \(enhancedCode(kind)) \($0)" } ?? "201 with the profile"
    }

    static func isExpected(_ kind: Kind, _ outcome: Outcome) -> Bool {
        guard let code = expectedCode(kind) else { return false }
        return outcome == .refused(400, enhancedCode(kind), code)
    }

    /// What is wrong with a `201` profile body, or nil: it must be `{"profiles": {"<mvpd>": {"notBefore",
    /// "notAfter", "issuer": "Apple", "type": "appleSSO", "attributes": {"<key>": {"value", "state":
    /// "plain"}}}}}` for exactly `mvpd`, with exactly the `expected` attributes (one value as a string,
    /// several as an array), values equal.
    static func profileProblem(mvpd: String, expected: [String: [String]], body: [UInt8]) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let profiles = object["profiles"] as? [String: Any]
        else { return "expected a JSON object with profiles, found \(String(decoding: body.prefix(200), as: UTF8.self))" }
        guard profiles.count == 1, let profile = profiles[mvpd] as? [String: Any] else {
            return "expected the profile of \(mvpd) alone, found profiles \(profiles.keys.sorted())"
        }
        if profile["issuer"] as? String != "Apple" || profile["type"] as? String != "appleSSO" {
            return "expected issuer Apple and type appleSSO, found \(profile["issuer"] ?? "none") and \(profile["type"] ?? "none")"
        }
        guard let notBefore = (profile["notBefore"] as? NSNumber)?.int64Value,
            let notAfter = (profile["notAfter"] as? NSNumber)?.int64Value,
            notBefore <= notAfter
        else {
            return
                "expected notBefore <= notAfter in milliseconds, found \(profile["notBefore"] ?? "none"), \(profile["notAfter"] ?? "none")"
        }
        guard let attributes = profile["attributes"] as? [String: Any] else {
            return "expected an attributes object, found \(profile["attributes"] ?? "none")"
        }
        if Set(attributes.keys) != Set(expected.keys) {
            return "expected the attributes \(expected.keys.sorted()), found \(attributes.keys.sorted())"
        }
        for (key, values) in expected.sorted(by: { $0.key < $1.key }) {
            let attribute = attributes[key] as? [String: Any]
            let found: [String]? =
                values.count == 1 ? (attribute?["value"] as? String).map { [$0] } : attribute?["value"] as? [String]
            guard found == values, attribute?["state"] as? String == "plain" else {
                let shown = values.count == 1 ? "\"\(values[0])\"" : "\(values)"
                return "expected \(key) = {value: \(shown), state: plain}, found \(attributes[key] ?? "none")"
            }
        }
        return nil
    }

    /// The audit of a run.
    struct Tally: Sendable {
        var lines: [LoadReport.Line]
        /// The first wrong answers, described.
        var descriptions: [String]
        /// Assertions accepted more than once over the whole run (timed phase and settle).
        var multiplyAccepted: Int
        /// Prepared requests never sent (the deadline, or no instance).
        var notSent: Int
        /// Per item, how it counts in the timeline; nil when it was not sent.
        var classes: [LoadAnswerClass?]
        /// The requests sent by the answer they got, most frequent first.
        var answers: [LoadReport.Answer]
    }

    /// Judges every item's outcome and counts each assertion's acceptances over the timed phase and
    /// the settle phase: a replay must never be accepted (not even when its original's answer is still
    /// unknown or lost: the service cannot be shown to have refused the original), and no assertion may
    /// be accepted twice. An unanswered request is not wrong (its response is re-posted by the settle
    /// phase); neither is a `503` when `tolerateUnavailable` (a failover run): both count as unavailable.
    static func tally(
        items: [Item], outcomes: [Outcome?], profileProblems: [String?], settleAcceptances: [Int: Int], tolerateUnavailable: Bool = false
    ) -> Tally {
        var lines = Kind.allCases.map { LoadReport.Line(kind: $0.rawValue) }
        var descriptions: [String] = []
        var acceptances = settleAcceptances
        var acceptedBy: [Int: [Int]] = [:]
        var notSent = 0
        var classes = [LoadAnswerClass?](repeating: nil, count: items.count)
        var answers: [String: LoadReport.Answer] = [:]
        for (index, item) in items.enumerated() {
            let line = Kind.allCases.firstIndex(of: item.kind)!
            guard let outcome = outcomes[index] else {
                notSent += 1
                continue
            }
            if outcome.isAcceptance {
                acceptances[item.assertion, default: 0] += 1
                acceptedBy[item.assertion, default: []].append(index)
            }
            if outcome == .withheld {
                lines[line].withheld += 1
                continue
            }
            lines[line].sent += 1
            let key = outcome.description
            answers[key, default: LoadReport.Answer(answer: key)].count += 1
            if outcome == .unanswered || (tolerateUnavailable && outcome.isServiceUnavailable) {
                if outcome == .unanswered { lines[line].unanswered += 1 } else { lines[line].unavailable += 1 }
                answers[key]!.unavailable += 1
                classes[index] = .unavailable
                continue
            }
            var problem: String?
            if item.kind == .fresh && outcome.isAcceptance {
                problem = profileProblems[index].map { "accepted, but \($0)" }
            } else if !isExpected(item.kind, outcome) {
                problem = "expected \(expectation(item.kind)), found \(outcome)"
                if let original = item.original {
                    problem! += "; its original #\(original) got \(outcomes[original].map(\.description) ?? "nothing (not sent)")"
                }
            }
            if let problem {
                lines[line].wrong += 1
                answers[key]!.wrong += 1
                classes[index] = .wrong
                if descriptions.count < 20 { descriptions.append("#\(index) \(item.kind.rawValue): \(problem)") }
            } else {
                lines[line].asExpected += 1
                answers[key]!.asExpected += 1
                classes[index] = outcome.isAcceptance ? .accepted : .refused
            }
        }
        var multiplyAccepted = 0
        for (assertion, count) in acceptances.sorted(by: { $0.key < $1.key }) where count > 1 {
            multiplyAccepted += 1
            if descriptions.count < 30 {
                let timed = acceptedBy[assertion] ?? []
                descriptions.append(
                    "assertion of #\(assertion): expected at most one acceptance, found \(count) (timed phase: items \(timed), settle: \(settleAcceptances[assertion] ?? 0))"
                )
            }
        }
        return Tally(
            lines: lines, descriptions: descriptions, multiplyAccepted: multiplyAccepted, notSent: notSent, classes: classes,
            answers: answers.values.sorted { ($0.count, $1.answer) > ($1.count, $0.answer) })
    }
}
