import AppleSSO
import Foundation
import Hummingbird
import Logging
@_spi(Spans) import SAML

// `sessions/sso`: which answer a device gets, and the SAML request it carries.

extension TokenExchangeService {
    /// `POST /api/v2/{serviceProvider}/sessions/sso/{partner}` ("Retrieve partner authentication request").
    ///
    /// After authorization, the path and `AP-Device-Identifier`, every answer is `200` with `actionName`,
    /// `actionType`, `reasonType`, a fresh `sessionId`, `serviceProvider` and, once known, `mvpd`, decided
    /// in this order (docs/service.md has the table):
    /// 1. the `AP-Partner-Framework-Status` header is valid and the device has a valid profile for its MVPD
    ///    → `authorize` / `direct` / `authenticatedSSO` (`url`: the MVPD's authorization decision path);
    /// 2. `domainName` or `redirectUrl` is missing or invalid → `resume` / `direct` /
    ///    `missing_parameters_fallback` with `missingParameters`, `code` and the session's `url`;
    /// 3. the header is missing, malformed, not `granted`, expired, or names an unknown provider →
    ///    `authenticate` / `interactive` / `pfs_fallback`;
    /// 4. the MVPD has no platform services, is not `SUPPORTED` for Apple SSO, or no identity provider is
    ///    trusted for it → `authenticate` / `interactive` / `configuration_fallback`;
    /// 5. otherwise `partner_profile` / `direct` / `none` with `authenticationRequest` (a new
    ///    `AttributeQuery` whose ID is MACed for this service provider, the MVPD, the device and `v2`, nothing
    ///    stored) and `url` (the profile endpoint).
    ///
    /// Fallbacks carry a `code` (7 characters, valid 30 minutes: `notBefore` / `notAfter`, strings) and the
    /// `url` of the basic authentication flow (``ServiceConfiguration/authenticationURL``, with the code,
    /// `domainName` and `redirectUrl`): a flow this service does not host itself.
    public func session(serviceProvider: String, partner: String, headers: RequestHeaders, body: [UInt8]) async -> ServiceAnswer {
        if let refusal = checkAuthorization(headers) ?? checkPath(serviceProvider: serviceProvider, partner: partner)
            ?? checkDevice(headers)
        {
            return refusal
        }
        let mvpds = self.mvpds
        let now = configuration.clock.now()
        let device = headers.deviceIdentifier ?? ""
        let sessionID = RandomIdentifier.uuid()
        let code = codeOf(sessionID)
        let requested: String?
        do {
            requested = try requestedMVPD(body)
        } catch {
            return error.answer
        }
        func text(_ name: String) -> String? {
            guard let value = (try? FormBody.text(named: name, in: body)) ?? nil, !value.isEmpty, value.utf8.count <= 2048 else {
                return nil
            }
            return value
        }
        // A host name, and an absolute http(s) URL with a host: what the basic flow can send a browser to.
        let domainName = text("domainName").flatMap { name in
            name.utf8.count <= 253
                && name.utf8.allSatisfy({
                    $0 == 0x2D || $0 == 0x2E || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                })
                ? name : nil
        }
        let redirectURL = text("redirectUrl").flatMap { value -> String? in
            guard !value.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }), let components = URLComponents(string: value),
                let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = components.host,
                !host.isEmpty
            else { return nil }
            return value
        }
        // The header: decoded, then validated against the configuration (permission, provider, expiry).
        var mvpd: MVPD?
        var frameworkValid = false
        if let header = headers.partnerFrameworkStatus, let status = try? PartnerFrameworkStatus(headerValue: header) {
            if let validated = try? status.validate(configuration: mvpds, requestedMVPD: requested, now: now) {
                mvpd = validated
                frameworkValid = true
            } else {
                mvpd = status.providerID.flatMap { mvpds.mvpd(platformMappingId: $0) }
            }
        }
        func answer(_ action: String, _ type: String, _ reason: String, _ extra: [String: JSONValue] = [:]) -> ServiceAnswer {
            metrics.session(action: action, reason: reason)
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
        func fallback(_ reason: String) -> ServiceAnswer {
            answer(
                "authenticate", "interactive", reason,
                codeFields(url: authenticationURL(code: code, mvpd: mvpd, domainName: domainName, redirectURL: redirectURL)))
        }
        // 1. A valid profile for this device and MVPD: proceed with decisions.
        if frameworkValid, let mvpd {
            do {
                if try await profileLookups.hasProfile(
                    serviceProvider: configuration.serviceProvider, device: device, mvpd: mvpd.id, now: now)
                {
                    return answer(
                        "authorize", "direct", "authenticatedSSO",
                        ["url": .string("/api/v2/\(configuration.serviceProvider)/decisions/authorize/\(mvpd.id)")])
                }
            } catch is ProfileLookups.Shed {
                // Beyond the profile reads' rate or concurrency (counted there): as if there were none.
            } catch {
                metrics.storeError(operation: "profiles")
                logger.warning("profiles not read: answering as if there were none", metadata: ["mvpd": "\(mvpd.id)"])
            }
        }
        // 2. Missing parameters: the app resumes the session with them.
        let missing = (domainName == nil ? ["domainName"] : []) + (redirectURL == nil ? ["redirectUrl"] : [])
        if !missing.isEmpty {
            var extra = codeFields(url: "/api/v2/\(configuration.serviceProvider)/sessions/\(code)")
            extra["missingParameters"] = .strings(missing)
            return answer("resume", "direct", "missing_parameters_fallback", extra)
        }
        // 3. The partner framework status.
        guard frameworkValid, let mvpd else { return fallback("pfs_fallback") }
        // 4. The MVPD's partner SSO configuration.
        guard mvpd.enablePlatformServices, mvpd.boardingStatus == .supported, let idp = trust.identityProvider(for: mvpd.id) else {
            return fallback("configuration_fallback")
        }
        // 5. The partner authentication request.
        let request: SAMLRequest
        do {
            request = try issueRequest(
                TokenExchange.Caller(serviceProvider: configuration.serviceProvider, device: device, api: "v2"), mvpd: mvpd,
                identityProvider: idp, now: now)
        } catch is SigningBudget.Spent {
            return .error(ServiceResponder.signingBudgetSpent)
        } catch {
            logger.error("cannot build a SAML request", metadata: ["mvpd": "\(mvpd.id)", "error": "\(error)"])
            return .error(EnhancedError.internalError)
        }
        return answer(
            "partner_profile", "direct", "none",
            [
                "url": .string("/api/v2/\(configuration.serviceProvider)/profiles/sso/\(partner)"),
                "authenticationRequest": [
                    "type": "saml", "request": .string(request.base64), "attributesNames": .strings(mvpd.requiredMetadataFields),
                ],
            ])
    }

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

    /// The authentication code of a session: 7 characters of its identifier's digest, `A`-`Z` and `2`-`7`.
    func codeOf(_ sessionID: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        return String(BearerToken.digest(Array(sessionID.utf8)).prefix(7).map { alphabet[Int($0 & 31)] })
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
}

/// The family's routes, each answered through the shared ``ServiceResponder``.
struct SessionsController: Sendable {
    let responder: ServiceResponder

    /// `POST /api/v2/{serviceProvider}/sessions/sso/{partner}`.
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        let service = responder.service
        let responder = responder
        // With a request-signing key, each sessions/sso signs (an RSA or ECDSA private-key operation, several
        // times an unsigned call's CPU): anonymous callers then go through the admission control as a
        // verification does.
        let signs = service.signingKey != nil
        routes.post("/api/v2/:serviceProvider/sessions/sso/:partner") { request, context in
            try await responder.answer(request, context, admitted: signs) { headers, body in
                await service.session(
                    serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                    headers: headers, body: body)
            }
        }
        return routes
    }
}
