import AppleSSO
import Foundation
import SAML
import Synchronization

/// The CPU that anonymous callers may spend on the service's private key: at most `rate` signatures a
/// second (a token bucket holding one second of them), beyond which a request that would sign is refused
/// with `503` and `Retry-After` before it signs.
///
/// The admission control bounds how many requests run at once, not how much CPU they take: 24 pipelining
/// connections on `sessions/sso` with an RSA-3072 key got about 500 signatures a second (a core) and made
/// a Token Exchange take 2-3 s (issue 66). A signature is the costliest thing an anonymous caller can ask
/// for, so it gets a budget of its own, sized at start from the key's measured cost
/// (``calibrated(for:share:)``): by default a quarter of one core, whatever the key.
final class SigningBudget: Sendable {
    /// Thrown instead of signing once the budget is spent.
    struct Spent: Error {}

    /// Its answer: the same `503` as a full admission queue.
    static let spent = EnhancedError(
        status: 503, code: "service_unavailable", message: "The service is busy; retry later.", details: nil, action: "retry")

    /// Signatures a second; the bucket holds one second's worth.
    let rate: Int
    private let clock = ContinuousClock()
    private struct State {
        var tokens: Double
        var refilled: ContinuousClock.Instant
    }
    private let state: Mutex<State>

    init(rate: Int) {
        self.rate = max(1, rate)
        state = Mutex(State(tokens: Double(max(1, rate)), refilled: ContinuousClock().now))
    }

    /// Takes one signature from the budget: false when it is spent (the caller refuses, without signing).
    func take() -> Bool {
        let now = clock.now
        return state.withLock { state in
            let elapsed = now - state.refilled
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            state.tokens = min(Double(rate), state.tokens + seconds * Double(rate))
            state.refilled = now
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }

    /// The measured cost of one signature with `key` (the median of several, each over the same small
    /// request an `AttributeQuery` is), and the rate that keeps signing within `share` of one core.
    static func calibrated(for key: SigningKey, share: Double = 0.25) -> (rate: Int, cost: Duration) {
        let clock = ContinuousClock()
        var costs: [Duration] = []
        for index in 0..<7 {
            let started = clock.now
            _ = try? SAMLRequest(
                .attributeQuery(attributes: ["calibration"]), id: "_calibration\(index)", issuer: "urn:calibration",
                destination: nil, signingKey: key)
            costs.append(clock.now - started)
        }
        let cost = costs.sorted()[costs.count / 2]
        let seconds = max(1e-6, Double(cost.components.seconds) + Double(cost.components.attoseconds) / 1e18)
        // A floor: a start on a busy node measures a slow key, and the rate would stay that low.
        return (max(100, Int(share / seconds)), cost)
    }
}
