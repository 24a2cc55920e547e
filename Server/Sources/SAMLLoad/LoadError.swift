public enum LoadError: Error, CustomStringConvertible {
    case unexpectedSession(Int, String)
    /// No instance could be reached.
    case unreachable(String)

    public var description: String {
        switch self {
        case .unexpectedSession(let status, let body): "sessions/sso: expected 200 with a partner_profile, found \(status): \(body)"
        case .unreachable(let description): description
        }
    }
}
