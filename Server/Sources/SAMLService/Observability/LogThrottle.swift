import Synchronization

/// One log line per `interval` at most for a condition that can hold for every request (a full store, a
/// failing authorizer): the first time it is asked, then again only once `interval` has passed. The
/// metrics count every occurrence; the log only says that it is happening.
final class LogThrottle: Sendable {
    private let interval: Duration
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    init(every interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Whether a line is due now (and, if so, that it is written).
    var isDue: Bool {
        let now = ContinuousClock.now
        return last.withLock { last in
            guard last.map({ now - $0 >= interval }) ?? true else { return false }
            last = now
            return true
        }
    }
}
