/// Where the verifier takes the current time from. Inject a fixed clock in tests.
public protocol SAMLClock: Sendable {
    func now() -> SAMLInstant
}

/// The system's real-time clock.
public struct SystemClock: SAMLClock {
    public init() {}
    public func now() -> SAMLInstant { .now() }
}

/// A clock that always answers the same instant.
public struct FixedClock: SAMLClock {
    public var instant: SAMLInstant
    public init(_ instant: SAMLInstant) { self.instant = instant }
    public func now() -> SAMLInstant { instant }
}
