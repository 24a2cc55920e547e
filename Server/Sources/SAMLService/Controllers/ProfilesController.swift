import AppleSSO
import Foundation
import Hummingbird
import Logging
@_spi(Spans) import SAML

/// `profiles/sso` (the Token Exchange, verified: its routes count verdicts and go through the admission
/// control) and the profiles kept for a device.
struct ProfilesController: Sendable {
    let service: TokenExchangeService

    func addRoutes(to routes: ServiceRoutes) {
        routes.family(verdict: "profiles/sso").group().add(middleware: routes.form).add(middleware: routes.admission)
            .post("/api/v2/:serviceProvider/profiles/sso/:partner") { _, context in
                await profile(
                    serviceProvider: context.parameters.get("serviceProvider") ?? "", partner: context.parameters.get("partner") ?? "",
                    headers: context.headers, body: context.body, admission: context.admission)
            }
        let reads = routes.family()
        reads.get("/api/v2/:serviceProvider/profiles") { _, context in
            await profiles(serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: nil, headers: context.headers)
        }
        reads.get("/api/v2/:serviceProvider/profiles/:mvpd") { _, context in
            await profiles(
                serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: context.parameters.get("mvpd") ?? "",
                headers: context.headers)
        }
    }

    /// `POST /api/v2/{serviceProvider}/profiles/sso/{partner}`: `201` with the profile, or the Enhanced
    /// Error Code object with its status. An optional `mvpd` form field must name the MVPD the header's
    /// provider maps to (`invalid_header_pfs_provider_id_mismatch` otherwise). `AP-Device-Identifier` is required (`fingerprint <value>`),
    /// `X-Device-Info`, when present, must be Base64 of a JSON object. The response must answer a request
    /// `sessions/sso` issued to this service provider and device for the MVPD it is posted as.
    func profile(serviceProvider: String, partner: String, headers: RequestHeaders, body: [UInt8], admission: AdmissionControl.Slot?)
        async -> ServiceAnswer
    {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: partner) ?? service.checkDevice(headers) {
            return refusal
        }
        let requested: String?
        do {
            requested = try service.requestedMVPD(body)
        } catch {
            return error.answer
        }
        let caller = TokenExchange.Caller(
            serviceProvider: service.configuration.serviceProvider, device: headers.deviceIdentifier ?? "", api: "v2")
        do {
            // The verification's CPU is spent once the response reaches the store: the slot is given up there.
            let profile = try await service.exchange.exchange(
                body: body, partnerFrameworkStatus: headers.partnerFrameworkStatus, mvpd: requested, caller: caller,
                expecting: AdmissionControl.Slot.givenUpAtTheStore(admission))
            service.metrics.accepted(profile.response, mvpd: profile.mvpd, api: "v2")
            // Kept with the login by the store the verifier consumed through (AdmittedStore): in the same
            // transaction (PostgreSQL), or right after it, a failure then logged and counted.
            return ServiceAnswer(status: 201, body: profile.json, code: "ok", mvpd: profile.mvpd)
        } catch {
            return service.refusal(error)
        }
    }

    /// `GET /api/v2/{serviceProvider}/profiles` and `.../profiles/{mvpd}`: `200` with `{"profiles": {...}}`,
    /// the device's profiles still valid (an empty map when there is none), after authorization, the path,
    /// `AP-Device-Identifier` and, for one MVPD, a known MVPD (`400 invalid_parameter_mvpd`).
    func profiles(serviceProvider: String, mvpd: String?, headers: RequestHeaders) async -> ServiceAnswer {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: nil) ?? service.checkDevice(headers) {
            return refusal
        }
        if let mvpd, service.mvpds.mvpd(id: mvpd) == nil {
            return .error(.invalidMVPD)
        }
        let stored: [StoredProfile]
        do {
            stored = try await service.profileLookups.profiles(
                serviceProvider: service.configuration.serviceProvider, device: headers.deviceIdentifier ?? "",
                now: service.configuration.clock.now())
        } catch {
            if !(error is ProfileLookups.Shed) { service.metrics.storeError(operation: "profiles") }
            return .error(TokenExchangeService.profilesUnavailable)
        }
        // Every kept profile is an appleSSO one. With an AP-Partner-Framework-Status header (the cookbook:
        // the app sends it "such that the retrieved response may include an 'appleSSO' type profile"), only
        // the profile of the MVPD a valid header names: the user may have signed out of the provider on the
        // device since. Without the header, the device's profiles as kept.
        let framework = PartnerFramework(
            headers.partnerFrameworkStatus, mvpds: service.mvpds, requested: nil, now: service.configuration.clock.now())
        var map: [String: JSONValue] = [:]
        for profile in stored where mvpd == nil || profile.mvpd == mvpd {
            switch framework {
            case .absent: break
            case .valid(let signedIn) where signedIn.id == profile.mvpd: break
            case .valid, .invalid: continue
            }
            map[profile.mvpd] = .raw(profile.json)
        }
        return .json(200, ["profiles": .object(map)], code: "ok", mvpd: mvpd)
    }
}

extension TokenExchangeService {
    /// An exchange's refusal; a store failure is counted (the exchange failed closed).
    func refusal(_ error: EnhancedError) -> ServiceAnswer {
        if error.cause?.code == .storeUnavailable || error.cause?.code == .replayCacheFull { metrics.storeError(operation: "consume") }
        return .error(error)
    }
}
