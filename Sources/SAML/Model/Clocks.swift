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

    /// The instant of an `xs:dateTime` (`2026-11-21T12:00:00Z`, as the test vectors' manifest gives it).
    ///
    /// - Throws: ``SAMLError/Code/configurationInvalid`` for a text that is not one.
    public init(xmlDateTime text: String) throws {
        guard let instant = SAMLInstant(xmlDateTime: text) else {
            throw SAMLError(.configurationInvalid, "expected an xs:dateTime such as 2026-11-21T12:00:00Z, found \(SAMLError.quote(text))")
        }
        self.instant = instant
    }

    public func now() -> SAMLInstant { instant }
}
