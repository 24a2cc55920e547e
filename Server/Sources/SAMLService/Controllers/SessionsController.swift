import AppleSSO
import Foundation
import Hummingbird
import Logging
@_spi(Spans) import SAML

/// `POST /api/v2/{serviceProvider}/sessions/sso/{partner}` ("Retrieve partner authentication request"):
/// which answer a device gets (``SessionDecision``), and the SAML request it carries.
struct SessionsController: Sendable {
    let service: TokenExchangeService

    static let path: RouterPath = "/api/v2/:serviceProvider/sessions/sso/:partner"

    func addRoutes(to routes: ServiceRoutes) {
        let route = routes.family().group().add(middleware: routes.form)
        // With a request-signing key, each sessions/sso signs (an RSA or ECDSA private-key operation, several
        // times an unsigned call's CPU): anonymous callers then go through the admission control as a
        // verification does.
        if service.signingKey != nil { route.add(middleware: routes.admission) }
        route.post(Self.path) { _, context in
            await session(
                serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                headers: context.headers, body: context.body)
        }
    }

    /// After the path and `AP-Device-Identifier`, every answer is `200` with `actionName`, `actionType`,
    /// `reasonType`, a fresh `sessionId`, `serviceProvider` and, once known, `mvpd`, as ``SessionDecision``
    /// decides (docs/service.md has the table).
    ///
    /// Fallbacks carry a `code` (7 characters, valid 30 minutes: `notBefore` / `notAfter`, strings) and the
    /// `url` of the basic authentication flow (``ServiceConfiguration/authenticationURL``, with the code,
    /// `domainName` and `redirectUrl`): a flow this service does not host itself.
    func session(serviceProvider: String, partner: String, headers: RequestHeaders, body: [UInt8]) async -> ServiceAnswer {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: partner) ?? service.checkDevice(headers) {
            return refusal
        }
        let configuration = service.configuration
        let requested: String?
        do {
            requested = try service.requestedMVPD(body)
        } catch {
            return error.answer
        }
        let now = configuration.clock.now()
        let device = headers.deviceIdentifier ?? ""
        let parameters = SessionDecision.Parameters(body: body)
        let framework = PartnerFramework(headers.partnerFrameworkStatus, mvpds: service.mvpds, requested: requested, now: now)
        var hasProfile = false
        if case .valid(let mvpd) = framework {
            do {
                hasProfile = try await service.profileLookups.hasProfile(
                    serviceProvider: configuration.serviceProvider, device: device, mvpd: mvpd.id, now: now)
            } catch is ProfileLookups.Shed {
                // Beyond the profile reads' rate or concurrency (counted there): as if there were none.
            } catch {
                service.metrics.storeError(operation: "profiles")
                service.logger.warning("profiles not read: answering as if there were none", metadata: ["mvpd": "\(mvpd.id)"])
            }
        }
        let decision = SessionDecision(
            framework: framework, hasProfile: hasProfile, parameters: parameters,
            identityProvider: { service.trust.identityProvider(for: $0) })
        return render(decision, partner: partner, device: device, now: now)
    }

    /// The decision as the answer's JSON; for ``SessionDecision/partnerProfile(_:_:)``, a new SAML request.
    private func render(_ decision: SessionDecision, partner: String, device: String, now: SAMLInstant) -> ServiceAnswer {
        let configuration = service.configuration
        let sessionID = RandomIdentifier.uuid()
        let code = Self.codeOf(sessionID)
        let mvpd = decision.mvpd
        func answer(_ extra: [String: JSONValue] = [:]) -> ServiceAnswer {
            let (action, type, reason) = decision.answer
            service.metrics.session(action: action, reason: reason)
            var object: [String: JSONValue] = [
                "actionName": .string(action), "actionType": .string(type), "reasonType": .string(reason), "sessionId": .string(sessionID),
                "serviceProvider": .string(configuration.serviceProvider),
            ]
            if let mvpd { object["mvpd"] = .string(mvpd.id) }
            object.merge(extra) { _, new in new }
            return .json(200, .object(object), code: action == "partner_profile" ? action : reason, mvpd: mvpd?.id)
        }
        func codeFields(url: String) -> [String: JSONValue] {
            [
                "url": .string(url), "code": .string(code), "notBefore": .string(String(now.millisecondsSinceEpoch)),
                "notAfter": .string(String((now + .seconds(1800)).millisecondsSinceEpoch)),
            ]
        }
        switch decision {
        case .authorize(let mvpd):
            return answer(["url": .string("/api/v2/\(configuration.serviceProvider)/decisions/authorize/\(mvpd.id)")])
        case .resume(let missing, _):
            var extra = codeFields(url: "/api/v2/\(configuration.serviceProvider)/sessions/\(code)")
            extra["missingParameters"] = .strings(missing)
            return answer(extra)
        case .fallback(_, _, let parameters):
            return answer(
                codeFields(
                    url: service.authenticationURL(
                        code: code, mvpd: mvpd, domainName: parameters.domainName, redirectURL: parameters.redirectURL)))
        case .partnerProfile(let mvpd, let idp):
            let request: SAMLRequest
            do {
                request = try service.issueRequest(
                    TokenExchange.Caller(serviceProvider: configuration.serviceProvider, device: device, api: "v2"), mvpd: mvpd,
                    identityProvider: idp, now: now)
            } catch is SigningBudget.Spent {
                return .error(SigningBudget.spent)
            } catch {
                service.logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
                return .error(EnhancedError.internalError)
            }
            return answer([
                "url": .string("/api/v2/\(configuration.serviceProvider)/profiles/sso/\(partner)"),
                "authenticationRequest": [
                    "type": "saml", "request": .string(request.base64), "attributesNames": .strings(mvpd.requiredMetadataFields),
                ],
            ])
        }
    }

    /// The authentication code of a session: 7 characters of its identifier's digest, `A`-`Z` and `2`-`7`.
    static func codeOf(_ sessionID: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        return String(BearerToken.digest(Array(sessionID.utf8)).prefix(7).map { alphabet[Int($0 & 31)] })
    }
}

extension TokenExchangeService {
    /// A SAML `AttributeQuery` for `mvpd`'s required fields, its ID MACed for `caller` (nothing stored);
    /// counted in `saml_requests_issued_total`, and a `saml.request.issue` span with tracing on. With a
    /// request-signing key, throws ``SigningBudget/Spent`` without signing once the second's signatures
    /// are spent.
    func issueRequest(_ caller: TokenExchange.Caller, mvpd: MVPD, identityProvider idp: IdentityProvider, now: SAMLInstant) throws
        -> SAMLRequest
    {
        if signingKey != nil, let signingBudget, !signingBudget.take() {
            metrics.rejection("signing-budget-spent")
            throw SigningBudget.Spent()
        }
        func issue() throws -> SAMLRequest {
            let issued = try requests.issue(
                for: caller.binding(mvpd: mvpd.id, identityProvider: idp.entityID), lifetime: configuration.requestLifetime, now: now)
            return try SAMLRequest(
                .attributeQuery(attributes: mvpd.requiredMetadataFields), id: issued.id, issuer: configuration.spEntityID,
                destination: Self.destination(of: idp), signingKey: signingKey)
        }
        let request = try VerificationSpans(tracer).phase("saml.request.issue", issue)
        metrics.requestIssued(mvpd: mvpd.id, api: caller.api)
        return request
    }

    /// The basic authentication flow's URL for a fallback: ``ServiceConfiguration/authenticationURL`` with
    /// `{serviceProvider}`, `{code}` and `{mvpd}` filled in, and `domainName` and `redirectUrl` as query
    /// parameters when the request gave them.
    func authenticationURL(code: String, mvpd: MVPD?, domainName: String?, redirectURL: String?) -> String {
        var url = configuration.authenticationURL.replacingOccurrences(of: "{serviceProvider}", with: configuration.serviceProvider)
            .replacingOccurrences(of: "{code}", with: code).replacingOccurrences(of: "{mvpd}", with: mvpd?.id ?? "")
        var query: [String] = []
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        if let domainName { query.append("domainName=" + (domainName.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")) }
        if let redirectURL { query.append("redirectUrl=" + (redirectURL.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")) }
        if !query.isEmpty { url += (url.contains("?") ? "&" : "?") + query.joined(separator: "&") }
        return url
    }

    /// Where the request is addressed: the IdP's single sign-on endpoint from its metadata (HTTP-POST,
    /// then HTTP-Redirect, then the first), or none (Destination is optional; the entity ID is not an
    /// endpoint, and an IdP refuses a request destined for an address it does not answer on).
    static func destination(of idp: IdentityProvider) -> String? {
        let endpoints = idp.singleSignOnServices.filter { !$0.location.isEmpty }
        let preferred = ["urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"]
        return preferred.lazy.compactMap { binding in endpoints.first { $0.binding == binding } }.first?.location
            ?? endpoints.first?.location
    }
}
