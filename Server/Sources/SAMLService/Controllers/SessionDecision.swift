import AppleSSO
import Foundation
import SAML

/// Which answer `sessions/sso` gives, from what the request established and the store said, decided in
/// this order (docs/service.md has the table); no I/O, no clock, no randomness, so that it is tested as a
/// table (``SessionsController`` reads the facts and renders the answer):
/// 1. the `AP-Partner-Framework-Status` header is valid and the device has a valid profile for its MVPD
///    → ``authorize(_:)``: `authorize` / `direct` / `authenticatedSSO`;
/// 2. `domainName` or `redirectUrl` is missing or invalid → ``resume(_:_:)``: `resume` / `direct` /
///    `missing_parameters_fallback` with `missingParameters`;
/// 3. the header is missing, malformed, not `granted`, expired, or names an unknown provider →
///    ``fallback(_:_:_:)`` `pfs_fallback`: `authenticate` / `interactive`;
/// 4. the MVPD has no platform services, is not `SUPPORTED` for Apple SSO, or no identity provider is
///    trusted for it → ``fallback(_:_:_:)`` `configuration_fallback`;
/// 5. otherwise ``partnerProfile(_:_:)``: `partner_profile` / `direct` / `none`, with a new SAML request.
enum SessionDecision {
    case authorize(MVPD)
    case resume([String], MVPD?)
    case fallback(Reason, MVPD?, Parameters)
    case partnerProfile(MVPD, IdentityProvider)

    enum Reason: String, Sendable {
        case partnerFrameworkStatus = "pfs_fallback"
        case configuration = "configuration_fallback"
    }

    init(framework: PartnerFramework, hasProfile: Bool, parameters: Parameters, identityProvider: (String) -> IdentityProvider?) {
        if case .valid(let mvpd) = framework, hasProfile {
            self = .authorize(mvpd)
        } else if !parameters.missing.isEmpty {
            self = .resume(parameters.missing, framework.mvpd)
        } else if case .valid(let mvpd) = framework {
            if mvpd.enablePlatformServices, mvpd.boardingStatus == .supported, let idp = identityProvider(mvpd.id) {
                self = .partnerProfile(mvpd, idp)
            } else {
                self = .fallback(.configuration, mvpd, parameters)
            }
        } else {
            self = .fallback(.partnerFrameworkStatus, framework.mvpd, parameters)
        }
    }

    /// The MVPD the answer names, once known.
    var mvpd: MVPD? {
        switch self {
        case .authorize(let mvpd), .partnerProfile(let mvpd, _): mvpd
        case .resume(_, let mvpd), .fallback(_, let mvpd, _): mvpd
        }
    }

    /// `actionName`, `actionType`, `reasonType`.
    var answer: (action: String, type: String, reason: String) {
        switch self {
        case .authorize: ("authorize", "direct", "authenticatedSSO")
        case .resume: ("resume", "direct", "missing_parameters_fallback")
        case .fallback(let reason, _, _): ("authenticate", "interactive", reason.rawValue)
        case .partnerProfile: ("partner_profile", "direct", "none")
        }
    }

    /// `domainName` (a host name) and `redirectUrl` (an absolute http(s) URL with a host): what the basic
    /// flow can send a browser to; each nil when missing, empty, longer than 2048 bytes or invalid.
    struct Parameters {
        var domainName: String?
        var redirectURL: String?

        init(domainName: String?, redirectURL: String?) {
            self.domainName = domainName
            self.redirectURL = redirectURL
        }

        init(body: [UInt8]) {
            func text(_ name: String) -> String? {
                guard let value = (try? FormBody.text(named: name, in: body)) ?? nil, !value.isEmpty, value.utf8.count <= 2048 else {
                    return nil
                }
                return value
            }
            domainName = text("domainName").flatMap { name in
                name.utf8.count <= 253
                    && name.utf8.allSatisfy({
                        $0 == 0x2D || $0 == 0x2E || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                    })
                    ? name : nil
            }
            redirectURL = text("redirectUrl").flatMap(Self.redirectURL)
        }

        /// `value` when it is an absolute http(s) URL with a host, without control characters or spaces.
        static func redirectURL(_ value: String) -> String? {
            guard !value.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }), let components = URLComponents(string: value),
                let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = components.host,
                !host.isEmpty
            else { return nil }
            return value
        }

        var missing: [String] { (domainName == nil ? ["domainName"] : []) + (redirectURL == nil ? ["redirectUrl"] : []) }
    }
}
