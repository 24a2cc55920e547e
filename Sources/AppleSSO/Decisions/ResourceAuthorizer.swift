import SAML

/// What an authorization decision is asked about: one device's valid `appleSSO` profile for an MVPD, and
/// the resources it wants (`decisions/preauthorize` or `decisions/authorize`, REST API v2).
public struct AuthorizationQuery: Sendable {
    /// `preauthorize` (a list, nothing to play) or `authorize` (one resource, to play now).
    public enum Kind: String, Sendable, Hashable {
        case preauthorize, authorize
    }

    public var kind: Kind
    public var serviceProvider: String
    public var mvpd: MVPD
    /// `AP-Device-Identifier`, as the service keys it.
    public var device: String
    /// The resource ids asked about, in the request's order (at most the service's limit).
    public var resources: [String]
    /// The profile's attributes (user-metadata key: values), all from the MVPD's signed response.
    public var attributes: [String: [String]]

    public init(
        kind: Kind, serviceProvider: String, mvpd: MVPD, device: String, resources: [String], attributes: [String: [String]]
    ) {
        self.kind = kind
        self.serviceProvider = serviceProvider
        self.mvpd = mvpd
        self.device = device
        self.resources = resources
        self.attributes = attributes
    }
}

/// One resource's answer: `Permit`, or `Deny` with the Enhanced Error Code that says why.
public struct ResourceDecision: Sendable, Hashable {
    public var resource: String
    /// nil: `Permit`.
    public var denial: Denial?

    /// A `Deny`'s Enhanced Error Code (status, code, action, message; `details` a short reason of the
    /// authorizer's own, never a value of the request).
    public struct Denial: Sendable, Hashable {
        public var status: Int
        public var code: String
        public var action: String
        public var message: String
        public var details: String?

        public init(status: Int = 403, code: String, action: String = "none", message: String, details: String? = nil) {
            self.status = status
            self.code = code
            self.action = action
            self.message = message
            self.details = details
        }

        /// `403 authorization_denied_by_mvpd` (or `preauthorization_denied_by_mvpd`), as the Enhanced Error
        /// Codes page words them.
        public static func deniedByMVPD(_ kind: AuthorizationQuery.Kind) -> Denial {
            switch kind {
            case .authorize:
                Denial(
                    code: "authorization_denied_by_mvpd",
                    message: "The MVPD has returned a \"Deny\" decision when requesting authorization for the specified resource.")
            case .preauthorize:
                Denial(
                    code: "preauthorization_denied_by_mvpd",
                    message: "The MVPD has returned a \"Deny\" decision when requesting pre-authorization for the specified resource.")
            }
        }

        /// `403 network_received_error` (action `retry`): the authorizer failed or did not answer in time;
        /// every resource is denied (fail closed).
        public static let authorizerFailed = Denial(
            code: "network_received_error", action: "retry",
            message: "The authorization decision could not be obtained from the MVPD; retry later.")

        /// The Enhanced Error object (`trace` added by the service).
        public func object(trace: String?) -> JSONValue {
            EnhancedError.object(action: action, status: status, code: code, message: message, details: details, trace: trace)
        }
    }

    public init(resource: String, denial: Denial?) {
        self.resource = resource
        self.denial = denial
    }

    public static func permit(_ resource: String) -> ResourceDecision { ResourceDecision(resource: resource, denial: nil) }
    public var isPermit: Bool { denial == nil }
}

/// Decides which resources a profile may watch. ``ConfiguredResourceAuthorizer`` reads the MVPD
/// configuration's ``ResourcePolicy``; a deployment that asks the MVPD's own authorization service
/// implements this instead. It answers one decision per resource, in the query's order; a decision
/// missing, for another resource, or a thrown error denies (the service fails closed, with
/// ``ResourceDecision/Denial/authorizerFailed``), and so does an answer later than the service's deadline.
public protocol ResourceAuthorizer: Sendable {
    func decide(_ query: AuthorizationQuery) async throws -> [ResourceDecision]
}

/// The MVPD configuration's policy (``MVPD/authorization``): an MVPD without one permits nothing.
public struct ConfiguredResourceAuthorizer: ResourceAuthorizer {
    public init() {}

    public func decide(_ query: AuthorizationQuery) async throws -> [ResourceDecision] {
        query.resources.map { resource in
            query.mvpd.authorization?.permits(resource, attributes: query.attributes) == true
                ? .permit(resource) : ResourceDecision(resource: resource, denial: .deniedByMVPD(query.kind))
        }
    }
}

extension StoredProfile {
    /// The profile's attributes (user-metadata key: its values) as kept: the MVPD's signed values.
    /// Empty when the JSON does not read (a profile is only ever written by ``AppleSSOProfile``).
    public var attributes: [String: [String]] {
        guard case .object(let object)? = try? JSONValue(parsing: json, maxDepth: 8),
            case .object(let members)? = object["attributes"]
        else { return [:] }
        var attributes: [String: [String]] = [:]
        for (key, member) in members {
            guard case .object(let attribute) = member else { continue }
            switch attribute["value"] {
            case .string(let value)?: attributes[key] = [value]
            case .array(let values)?:
                attributes[key] = values.compactMap { if case .string(let value) = $0 { value } else { nil } }
            default: continue
            }
        }
        return attributes
    }
}
