/// The checks a verification did not run because the configuration said so (`.skip`, `nil` or `false`),
/// reported with every ``VerifiedResponse`` so that a skipped check is never silent.
public struct SkippedChecks: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// ``SAMLResponseVerifier/Configuration/issuer`` is `.skip`.
    public static let issuer = SkippedChecks(rawValue: 1 << 0)
    /// ``SAMLResponseVerifier/Configuration/audience`` is `.skip`.
    public static let audience = SkippedChecks(rawValue: 1 << 1)
    /// ``SAMLResponseVerifier/Configuration/destination`` is `.skip`.
    public static let destination = SkippedChecks(rawValue: 1 << 2)
    /// No value to compare the bearer confirmation's `Recipient` with (``SAMLResponseVerifier/Recipients``).
    public static let recipient = SkippedChecks(rawValue: 1 << 3)
    /// No request named: `InResponseTo` not compared (``SAMLResponseVerifier/Configuration/inResponseTo``).
    public static let inResponseTo = SkippedChecks(rawValue: 1 << 4)
    /// ``SAMLResponseVerifier/ReplayProtection/skip``.
    public static let replay = SkippedChecks(rawValue: 1 << 5)
    /// Unsolicited responses allowed (``SAMLResponseVerifier/UnsolicitedResponses/allow``).
    public static let unsolicited = SkippedChecks(rawValue: 1 << 6)
    /// ``SAMLResponseVerifier/Configuration/maximumAge`` is nil.
    public static let issueInstantAge = SkippedChecks(rawValue: 1 << 7)
    /// ``SAMLResponseVerifier/Configuration/requiresBearerConfirmation`` is false.
    public static let subjectConfirmation = SkippedChecks(rawValue: 1 << 8)

    /// Every check, with the stable name reports use (`saml verify --json`'s `skippedChecks`).
    public static let all: [(check: SkippedChecks, name: String)] = [
        (.issuer, "issuer"), (.audience, "audience"), (.destination, "destination"), (.recipient, "recipient"),
        (.inResponseTo, "in-response-to"), (.replay, "replay"), (.unsolicited, "unsolicited"),
        (.issueInstantAge, "issue-instant-age"), (.subjectConfirmation, "subject-confirmation"),
    ]

    /// The stable names of the checks skipped, in a fixed order (`["destination", "replay"]`).
    public var names: [String] { Self.all.filter { contains($0.check) }.map(\.name) }

    /// The names joined by `,`, or `none`.
    public var description: String { isEmpty ? "none" : names.joined(separator: ",") }
}
