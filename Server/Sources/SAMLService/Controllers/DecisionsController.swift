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
    /// Authorizer calls running, those past their deadline included (an authorizer that ignores its
    /// cancellation goes on until it returns): at most ``maximumAuthorizations``, a `Deny`
    /// (`network_received_error`) beyond, so that a hung MVPD service cannot pile up tasks.
    let running = Running()
    static let maximumAuthorizations = 256

    final class Running: Sendable {
        let count = Atomic<Int>(0)
        /// The "every resource denied" line: a failing MVPD service under load must not flood the log
        /// (`saml_decisions_total{decision="deny"}` counts every one).
        let denialLog = LogThrottle()
    }

    init(service: TokenExchangeService) {
        self.service = service
    }

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
    /// 4,096 bytes without control characters (`400 invalid_parameter_resources`; more than the limit:
    /// `403 too_many_resources`); the
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
        var permitted = 0
        for decision in decisions {
            let item = await item(decision, kind: kind, mvpd: mvpd.id, device: device, profile: profile, now: now)
            if case .object(let members) = item, members["authorized"] == .bool(true) { permitted += 1 }
            items.append(item)
        }
        service.metrics.decisions(
            kind.rawValue, permitted: permitted, denied: decisions.count - permitted, mvpd: service.metricLabel(mvpd: mvpd.id))
        var answer = ServiceAnswer.json(
            200, ["decisions": .array(items)], code: permitted == decisions.count ? "permit" : "deny", mvpd: mvpd.id)
        answer.cacheControl = "no-store"
        return answer
    }

    /// Every resource denied for the partner framework status, with its code.
    private static func denied(_ resources: [String], _ outcome: PartnerFrameworkOutcome) -> [ResourceDecision] {
        let denial = ResourceDecision.Denial(status: 400, code: outcome.rawValue, message: outcome.message)
        return resources.map { ResourceDecision(resource: $0, denial: denial) }
    }

    /// The authorizer's decisions, one per resource in order; any other answer, an error or one later than
    /// ``ServiceConfiguration/authorizationTimeout`` denies every resource.
    private func authorize(_ query: AuthorizationQuery) async -> [ResourceDecision] {
        var answered: [ResourceDecision]?
        if running.count.add(1, ordering: .relaxed).newValue <= Self.maximumAuthorizations {
            answered = await Self.withDeadline(service.configuration.authorizationTimeout) {
                [authorizer = service.authorizer, running] in
                defer { running.count.subtract(1, ordering: .relaxed) }
                return try? await authorizer.decide(query)
            }
        } else {
            running.count.subtract(1, ordering: .relaxed)
        }
        guard let answered, answered.count == query.resources.count,
            zip(answered, query.resources).allSatisfy({ $0.resource.utf8.elementsEqual($1.utf8) })
        else {
            if running.denialLog.isDue {
                service.logger.warning(
                    "the resource authorizer failed, answered late, is saturated or gave not one decision per resource: every resource denied",
                    metadata: ["mvpd": "\(query.mvpd.id)", "kind": "\(query.kind.rawValue)"])
            }
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
                now: Date(timeIntervalSince1970: Double(now.millisecondsSinceEpoch) / 1000),
                notAfter: Date(timeIntervalSince1970: Double(profile.notAfter.millisecondsSinceEpoch) / 1000))
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

    /// The longest resource id: an MRSS document of a channel and an item fits.
    static let maximumResourceBytes = 4096

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
            // Control characters are refused: no resource id holds one, and JSON would write each as six bytes.
            guard case .string(let resource) = entry, !resource.isEmpty, resource.utf8.count <= maximumResourceBytes,
                !resource.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
            else { return .failure(invalid) }
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
