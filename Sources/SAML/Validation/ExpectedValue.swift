/// An expected value for a protocol check, or an explicit decision not to check.
///
/// There are no defaults: a verifier configuration names every expectation, so that turning a check off
/// is visible at the call site (`audience: .skip`).
public enum ExpectedValue<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The value must equal this one (compared after trimming XML whitespace from the document's value).
    case equals(Value)
    /// Do not check; reported in ``VerifiedResponse/skippedChecks``.
    case skip

    /// `.equals(value)` when a value is given, `.skip` when it is `nil`: for configurations read from
    /// command lines and files, where leaving a value out is how a check is turned off.
    public init(orSkip value: Value?) {
        self = value.map { .equals($0) } ?? .skip
    }

    var expected: Value? {
        if case .equals(let value) = self { value } else { nil }
    }
}

/// What every check needs besides the document.
struct ValidationContext {
    var now: SAMLInstant
    var skew: Duration
}
