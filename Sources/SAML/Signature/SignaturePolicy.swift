/// Where a valid signature is required. Every signature present must verify in any case.
public enum SignaturePolicy: Sendable, Hashable {
    /// At least one signature covering the assertion: on the Response (which contains it) or on the
    /// Assertion itself. The default.
    case responseOrAssertion
    /// The Assertion must carry its own signature.
    case assertion
    /// The Response must be signed.
    case response
    /// Both must be signed.
    case both
}

/// Which elements carried a verified signature.
public struct SignedParts: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let response = SignedParts(rawValue: 1)
    public static let assertion = SignedParts(rawValue: 2)

    /// `response`, `assertion`, `response+assertion` or `none`.
    public var description: String {
        let names = [(Self.response, "response"), (Self.assertion, "assertion")].filter { contains($0.0) }.map(\.1)
        return names.isEmpty ? "none" : names.joined(separator: "+")
    }
}

extension SignaturePolicy {
    func check(_ signed: SignedParts) throws {
        let satisfied =
            switch self {
            case .responseOrAssertion: !signed.isEmpty
            case .assertion: signed.contains(.assertion)
            case .response: signed.contains(.response)
            case .both: signed.contains([.response, .assertion])
            }
        guard satisfied else {
            let found =
                signed.isEmpty ? "no signature" : signed.contains(.response) ? "only a Response signature" : "only an Assertion signature"
            throw SAMLError(.signatureMissing, "expected a signature as policy \(self) requires, found \(found)")
        }
    }
}
