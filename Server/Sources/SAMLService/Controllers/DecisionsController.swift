import AppleSSO
import Foundation
import Hummingbird
import SAML
import SAMLMediaToken
import Synchronization

/// REST API v2's decisions: `POST /api/v2/{serviceProvider}/decisions/preauthorize/{mvpd}` (a `Permit` or
/// `Deny` for each resource of a list, no media token) and `.../decisions/authorize/{mvpd}` (one resource,
/// a media token with a `Permit`), for a device's valid `appleSSO` profile, after the partner framework
/// status. docs/service.md has the table.
struct DecisionsController: Sendable {
    let service: TokenExchangeService

    func addRoutes(to routes: ServiceRoutes) {
        let decisions = routes.family().group().add(middleware: routes.json)
        for kind in [AuthorizationQuery.Kind.preauthorize, .authorize] {
            decisions.post(RouterPath("/api/v2/:serviceProvider/decisions/\(kind.rawValue)/:mvpd")) { _, context in
                await decide(
                    kind, serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: context.parameters.get("mvpd") ?? "",
                    headers: context.headers, body: context.body)
            }
        }
        routes.family(authenticated: false).get("/api/v2/:serviceProvider/media-tokens/keys") { _, context in
            keys(serviceProvider: context.parameters.get("serviceProvider") ?? "")
        }
    }

    /// The answer, in this order: the path and `AP-Device-Identifier`; a configured MVPD (`400
    /// invalid_parameter_mvpd`); a body `{"resources": [...]}` of 1 to the limit non-empty ids of at most
    /// 1,024 bytes (`400 invalid_parameter_resources`; more than the limit: `403 too_many_resources`); the
    /// device's valid profile for the MVPD (`403 authenticated_profile_missing`, action `authentication`;
    /// a store that cannot answer: `503`); then `200` with one decision per resource: every one a `Deny`
    /// with the header's code when the partner framework status is absent, not granted, expired or names
    /// another provider; else the authorizer's, a `Deny` for each when it fails or is late.
    func decide(_ kind: AuthorizationQuery.Kind, serviceProvider: String, mvpd id: String, headers: RequestHeaders, body: [UInt8])
        async -> ServiceAnswer
    {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: nil) ?? service.checkDevice(headers) {
            return refusal
        }
        let mvpds = service.mvpds
        guard let mvpd = mvpds.mvpd(id: id) else { return .error(.invalidMVPD) }
        let limit = kind == .authorize ? 1 : service.configuration.maximumPreauthorizeResources
        let resources: [String]
        switch Self.resources(body, limit: limit) {
        case .success(let list): resources = list
        case .failure(let error): return .error(error, mvpd: mvpd.id)
        }
        let device = headers.deviceIdentifier ?? ""
        let now = service.configuration.clock.now()
        let profile: StoredProfile
        switch await service.liveProfile(device: device, mvpd: mvpd.id, now: now) {
        case .found(let found): profile = found
        case .missing:
            return .error(
                EnhancedError(
                    status: 403, code: "authenticated_profile_missing",
                    message: "The authenticated profile is missing, expired or cannot be used: authenticate again.", details: nil,
                    action: "authentication"), mvpd: mvpd.id)
        case .unavailable(let answer): return answer
        }
        // The cookbook: an appleSSO profile is used only with a valid partner framework status naming its
        // provider; the user may have signed out of it, or withdrawn the permission, on the device since.
        let decisions: [ResourceDecision]
        switch PartnerFramework(headers.partnerFrameworkStatus, mvpds: mvpds, requested: mvpd.id, now: now) {
        case .valid:
            decisions = await authorize(
                AuthorizationQuery(
                    kind: kind, serviceProvider: serviceProvider, mvpd: mvpd, device: device, resources: resources,
                    attributes: profile.attributes))
        case .absent:
            decisions = Self.denied(resources, .accessNotPresent)
        case .invalid(_, let outcome):
            decisions = Self.denied(resources, outcome)
        }
        var items: [JSONValue] = []
        for decision in decisions {
            items.append(await item(decision, kind: kind, mvpd: mvpd.id, device: device, profile: profile, now: now))
        }
        let permitted = decisions.filter(\.isPermit).count
        service.metrics.decisions(
            kind.rawValue, permitted: permitted, denied: decisions.count - permitted, mvpd: service.metricLabel(mvpd: mvpd.id))
        return .json(200, ["decisions": .array(items)], code: permitted == decisions.count ? "permit" : "deny", mvpd: mvpd.id)
    }

    /// Every resource denied for the partner framework status, with its code.
    private static func denied(_ resources: [String], _ outcome: PartnerFrameworkOutcome) -> [ResourceDecision] {
        let denial = ResourceDecision.Denial(status: 400, code: outcome.rawValue, message: outcome.message)
        return resources.map { ResourceDecision(resource: $0, denial: denial) }
    }

    /// The authorizer's decisions, one per resource in order; any other answer, an error or one later than
    /// ``ServiceConfiguration/authorizationTimeout`` denies every resource.
    private func authorize(_ query: AuthorizationQuery) async -> [ResourceDecision] {
        let answered = await Self.withDeadline(service.configuration.authorizationTimeout) { [authorizer = service.authorizer] in
            try? await authorizer.decide(query)
        }
        guard let answered, answered.map(\.resource) == query.resources else {
            service.logger.warning(
                "the resource authorizer failed, answered late or not one decision per resource: every resource denied",
                metadata: ["mvpd": "\(query.mvpd.id)", "kind": "\(query.kind.rawValue)"])
            return query.resources.map { ResourceDecision(resource: $0, denial: .authorizerFailed) }
        }
        return answered
    }

    /// `operation`'s answer, or nil once `deadline` has passed: the request goes on then, whether or not
    /// the operation heeds its cancellation (a task group would wait for an authorizer that does not).
    static func withDeadline<T: Sendable>(_ deadline: Duration, _ operation: @escaping @Sendable () async -> T?) async -> T? {
        let answer = Mutex<CheckedContinuation<T?, Never>?>(nil)
        let resume = { @Sendable (value: T?) in answer.withLock { $0.take() }?.resume(returning: value) }
        var tasks: [Task<Void, Never>] = []
        let value = await withCheckedContinuation { continuation in
            answer.withLock { $0 = continuation }
            tasks = [
                Task { resume(await operation()) },
                Task {
                    try? await Task.sleep(for: deadline)
                    resume(nil)
                },
            ]
        }
        for task in tasks { task.cancel() }
        return value
    }

    /// One decision's JSON: `resource`, `serviceProvider`, `mvpd`, `source` (`mvpd`), `authorized`; a
    /// `Deny`'s `error`; an authorization `Permit`'s media `token` and the decision's `notBefore` /
    /// `notAfter` (until the profile's end, at most a day).
    private func item(
        _ decision: ResourceDecision, kind: AuthorizationQuery.Kind, mvpd: String, device: String, profile: StoredProfile,
        now: SAMLInstant
    ) async -> JSONValue {
        var object: [String: JSONValue] = [
            "resource": .string(decision.resource), "serviceProvider": .string(service.configuration.serviceProvider),
            "mvpd": .string(mvpd), "source": .string("mvpd"), "authorized": .bool(decision.isPermit),
        ]
        if let denial = decision.denial {
            object["error"] = denial.object(trace: RandomIdentifier.uuid())
            return .object(object)
        }
        guard kind == .authorize else { return .object(object) }
        let notAfter = min(profile.notAfter.millisecondsSinceEpoch, now.millisecondsSinceEpoch + 86_400_000)
        object["notBefore"] = .integer(now.millisecondsSinceEpoch)
        object["notAfter"] = .integer(notAfter)
        do {
            let issued = try await service.mediaTokens.issue(
                serviceProvider: service.configuration.serviceProvider, resource: decision.resource, mvpd: mvpd, device: device,
                now: Date(timeIntervalSince1970: Double(now.millisecondsSinceEpoch) / 1000))
            object["token"] = .object([
                "notBefore": .integer(Int64(issued.claims.notBefore.timeIntervalSince1970 * 1000)),
                "notAfter": .integer(Int64(issued.claims.notAfter.timeIntervalSince1970 * 1000)),
                "issuedAt": .integer(Int64(issued.claims.issuedAt.timeIntervalSince1970 * 1000)),
                "serializedToken": .string(issued.token),
            ])
        } catch {
            // Without its token a Permit cannot play: denied, as any failure here.
            service.logger.error("media token not signed: the resource is denied", metadata: ["mvpd": "\(mvpd)"])
            return item(ResourceDecision(resource: decision.resource, denial: .authorizerFailed), mvpd: mvpd)
        }
        return .object(object)
    }

    private func item(_ decision: ResourceDecision, mvpd: String) -> JSONValue {
        .object([
            "resource": .string(decision.resource), "serviceProvider": .string(service.configuration.serviceProvider),
            "mvpd": .string(mvpd), "source": .string("mvpd"), "authorized": .bool(false),
            "error": decision.denial?.object(trace: RandomIdentifier.uuid()) ?? .null,
        ])
    }

    /// The `resources` of a body `{"resources": ["id", ...]}`.
    static func resources(_ body: [UInt8], limit: Int) -> Result<[String], EnhancedError> {
        let invalid = EnhancedError(
            status: 400, code: "invalid_parameter_resources", message: "The resources parameter value is missing or invalid.", details: nil)
        guard case .object(let object)? = try? JSONValue(parsing: body, maxDepth: 4), case .array(let list)? = object["resources"],
            !list.isEmpty
        else { return .failure(invalid) }
        guard list.count <= limit else {
            return .failure(
                EnhancedError(
                    status: 403, code: "too_many_resources", message: "The request asks about more resources than are allowed at once.",
                    details: nil, action: "configuration"))
        }
        var resources: [String] = []
        for entry in list {
            guard case .string(let resource) = entry, !resource.isEmpty, resource.utf8.count <= 1024 else { return .failure(invalid) }
            resources.append(resource)
        }
        return .success(resources)
    }

    /// `GET /api/v2/{serviceProvider}/media-tokens/keys`: the JWK Set of the media-token keys (the signing
    /// key and those published beside it), public like the SP metadata, for content servers'
    /// `MediaTokenVerifier`. `Cache-Control: max-age=300`.
    func keys(serviceProvider: String) -> ServiceAnswer {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        var answer = ServiceAnswer(
            status: 200, body: MediaTokenKey.jwks(service.mediaTokens.keys), code: "ok", mvpd: nil, contentType: "application/jwk-set+json")
        answer.cacheControl = "max-age=300"
        return answer
    }
}

extension EnhancedError {
    /// `400 invalid_parameter_mvpd`: the path names no configured MVPD.
    static let invalidMVPD = EnhancedError(
        status: 400, code: "invalid_parameter_mvpd", message: "The MVPD parameter value is missing or invalid.", details: nil)
}
