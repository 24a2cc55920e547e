/// The timed phase seen from each instance: what it answered, and when it stopped answering (an instance
/// killed, or cut off from its database, shows as a last answer well before the end of the run).
public struct LoadInstance: Sendable, Equatable {
    /// `host:port`.
    public var target: String
    public var accepted = 0
    public var refused = 0
    /// No answer, or a tolerated `503`.
    public var unavailable = 0
    public var wrong = 0
    /// Seconds into the timed phase of its first and last answer (nil: it never answered), and of the
    /// first request it left unanswered after its last answer (nil: none).
    public var firstAnswer: Double?
    public var lastAnswer: Double?
    public var unavailableAfterLastAnswer: Double?

    public var completed: Int { accepted + refused + unavailable + wrong }

    /// One entry per target of `requests`, in the order of `targets` (targets no request reached included).
    static func tally(_ requests: [LoadReport.Request], targets: [String]) -> [LoadInstance] {
        var byTarget = Dictionary(uniqueKeysWithValues: targets.map { ($0, LoadInstance(target: $0)) })
        for request in requests.sorted(by: { $0.at < $1.at }) {
            guard let target = request.target else { continue }
            var instance = byTarget[target] ?? LoadInstance(target: target)
            switch request.answerClass {
            case .accepted: instance.accepted += 1
            case .refused: instance.refused += 1
            case .unavailable: instance.unavailable += 1
            case .wrong: instance.wrong += 1
            }
            if request.answerClass == .unavailable {
                if instance.unavailableAfterLastAnswer == nil { instance.unavailableAfterLastAnswer = request.at }
            } else {
                if instance.firstAnswer == nil { instance.firstAnswer = request.at }
                instance.lastAnswer = request.at
                instance.unavailableAfterLastAnswer = nil
            }
            byTarget[target] = instance
        }
        let extra = byTarget.keys.filter { !targets.contains($0) }.sorted()
        return (targets + extra).compactMap { byTarget[$0] }
    }
}

extension LoadReport {
    /// Each instance's share of the timed phase (``LoadInstance``).
    public var instances: [LoadInstance] { LoadInstance.tally(requests, targets: parameters.targets) }
}
