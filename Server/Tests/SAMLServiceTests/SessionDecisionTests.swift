import AppleSSO
import Foundation
import SAML
import Testing

@testable import SAMLService

/// `sessions/sso`'s five outcomes as a table, without HTTP (``SessionDecision``).
@Suite("sessions/sso decisions")
struct SessionDecisionTests {
    static let mvpds = try! MVPDConfiguration.decode(
        Array(Data(contentsOf: URL(fileURLWithPath: "\(Service.vectors)/exchange/mvpd-configuration.json"))))
    static let service = try! TokenExchangeService(
        configuration: Service.configuration(), store: InMemoryStateStore(), metrics: ServiceMetrics(), logger: Service.quiet)
    static let complete = SessionDecision.Parameters(domainName: "app.example", redirectURL: "https://app.example/back")

    static func framework(_ provider: String?, access: PartnerFrameworkStatus.AccessStatus? = .granted, expiresIn: Int64 = 86_400_000)
        -> PartnerFramework
    {
        let status = Service.pfs(provider, access: access, expiresIn: expiresIn)
        return PartnerFramework(status.headerValue, mvpds: mvpds, requested: nil, now: .now())
    }

    static func decide(_ framework: PartnerFramework, profile: Bool = false, parameters: SessionDecision.Parameters = complete)
        -> (String, String, String, String?)
    {
        let decision = SessionDecision(
            framework: framework, hasProfile: profile, parameters: parameters, identityProvider: { service.trust.identityProvider(for: $0) }
        )
        return (decision.answer.action, decision.answer.type, decision.answer.reason, decision.mvpd?.id)
    }

    @Test("the header read once: absent, malformed, denied, expired, unknown provider, valid")
    func framework() {
        #expect(PartnerFramework(nil, mvpds: Self.mvpds, requested: nil, now: .now()).mvpd == nil)
        if case .invalid(nil, .accessNotPresent) = PartnerFramework("not base64!", mvpds: Self.mvpds, requested: nil, now: .now()) {
        } else {
            Issue.record("a malformed header is invalid, with no MVPD")
        }
        if case .invalid(let mvpd, .accessNotGranted) = Self.framework("ProviderA", access: .denied) {
            #expect(mvpd?.id == "MVPD-A")
        } else {
            Issue.record("a denied permission is invalid, with its provider's MVPD")
        }
        if case .invalid(let mvpd, .providerExpired) = Self.framework("ProviderA", expiresIn: -1000) {
            #expect(mvpd?.id == "MVPD-A")
        } else {
            Issue.record("an expired status is invalid")
        }
        if case .invalid(nil, .providerNotDetermined) = Self.framework("ProviderZ") {
        } else {
            Issue.record("an unknown provider is invalid, with no MVPD")
        }
        if case .valid(let mvpd) = Self.framework("ProviderB") { #expect(mvpd.id == "MVPD-B") } else { Issue.record("valid") }
        let wrongField = PartnerFramework(
            Service.pfs("ProviderB").headerValue, mvpds: Self.mvpds, requested: "MVPD-A", now: .now())
        if case .invalid = wrongField {} else { Issue.record("the mvpd field naming another MVPD is invalid") }
    }

    @Test("the five outcomes, in their order")
    func outcomes() {
        let missing = SessionDecision.Parameters(domainName: nil, redirectURL: "https://app.example")
        let table: [((String, String, String, String?), (String, String, String, String?))] = [
            // 1. A valid header and a profile: authorize, whatever the parameters.
            (
                Self.decide(Self.framework("ProviderA"), profile: true, parameters: missing),
                ("authorize", "direct", "authenticatedSSO", "MVPD-A")
            ),
            // A profile without a valid header is not enough.
            (
                Self.decide(Self.framework("ProviderA", access: .denied), profile: true),
                ("authenticate", "interactive", "pfs_fallback", "MVPD-A")
            ),
            // 2. Missing parameters, before the header's checks.
            (Self.decide(.absent, parameters: missing), ("resume", "direct", "missing_parameters_fallback", nil)),
            (Self.decide(Self.framework("ProviderB"), parameters: missing), ("resume", "direct", "missing_parameters_fallback", "MVPD-B")),
            // 3. The header.
            (Self.decide(.absent), ("authenticate", "interactive", "pfs_fallback", nil)),
            (Self.decide(Self.framework("ProviderZ")), ("authenticate", "interactive", "pfs_fallback", nil)),
            // 4. No identity provider trusted for the MVPD.
            (Self.decide(Self.framework("ProviderC")), ("authenticate", "interactive", "configuration_fallback", "MVPD-C")),
            // 5. The partner authentication request.
            (Self.decide(Self.framework("ProviderA")), ("partner_profile", "direct", "none", "MVPD-A")),
        ]
        for (index, (found, expected)) in table.enumerated() {
            #expect(found == expected, "row \(index)")
        }
    }

    @Test(
        "domainName a host name, redirectUrl an absolute http(s) URL with a host; else missing",
        arguments: [
            ("domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example", []),
            ("domainName=app.example", ["redirectUrl"]), ("", ["domainName", "redirectUrl"]),
            ("domainName=app%20example&redirectUrl=https%3A%2F%2Fapp.example", ["domainName"]),
            ("domainName=app.example&redirectUrl=javascript%3Aalert(1)", ["redirectUrl"]),
            ("domainName=app.example&redirectUrl=https%3A%2F%2F", ["redirectUrl"]),
            ("domainName=app.example&redirectUrl=https%3A%2F%2Fa.example%2F%0Ax", ["redirectUrl"]),
        ])
    func parameters(body: String, missing: [String]) {
        #expect(SessionDecision.Parameters(body: Array(body.utf8)).missing == missing)
    }
}
