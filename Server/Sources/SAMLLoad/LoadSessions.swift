import AppleSSO
import Foundation

extension LoadHarness {
    /// What the sessions phase saw: whole sessions of the REST API v2 cookbook after the run.
    struct SessionsPhase: Sendable {
        var played = 0
        var wrong = 0
        var descriptions: [String] = []
        var failures: [String] = []

        mutating func wrong(_ description: String) {
            wrong += 1
            if descriptions.count < 10 { descriptions.append(description) }
        }
    }

    /// For up to ``LoadOptions/sessions`` devices whose fresh login was accepted, the cookbook's phases
    /// after the login, across the live instances (instance `i` and the next): the configuration, a
    /// preauthorize of the service provider's own resource and one no policy lists, an authorize of the
    /// first (a `Permit` must carry a media token, a `Deny` an error), a logout on the next instance
    /// (`partner_logout` / `partner_interactive` for the MVPD), then on the first instance the device has
    /// no profile for the MVPD (`GET profiles/{mvpd}` empty, authorize `403 authenticated_profile_missing`)
    /// within 1.5 s. The resources' own verdicts depend on the MVPD's policy, which the harness does not
    /// know: only their shape is checked.
    static func playSessions(_ options: LoadOptions, items: [Item], outcomes: [Outcome?]) async -> SessionsPhase {
        var phase = SessionsPhase()
        let live = options.loadTargets.filter { !options.killedTargets.contains($0) }
        guard options.sessions > 0, !live.isEmpty else { return phase }
        let logins = items.indices.filter { items[$0].kind == .fresh && outcomes[$0]?.isAcceptance == true }.prefix(options.sessions)
        for (number, index) in logins.enumerated() {
            let first = live[number % live.count], second = live[(number + 1) % live.count]
            let item = items[index]
            let headers = item.request.headers.filter {
                ["ap-device-identifier", "ap-partner-framework-status", "authorization", "x-device-info"].contains($0.name.lowercased())
            }.map { ($0.name, $0.value) }
            let failure = await withConnection(first, what: "playing a session") { a in
                try await withConnectionThrowing(second) { b in
                    try await playSession(options, item: item, headers: headers, first: &a, second: &b, phase: &phase, number: index)
                }
            }
            if let failure {
                phase.failures.append(failure)
                break
            }
            phase.played += 1
        }
        return phase
    }

    private static func withConnectionThrowing(_ target: LoadTarget, _ body: (inout HTTPConnection) async throws -> Void) async throws {
        try await HTTPConnection.with(host: target.host, port: target.port, body)
    }

    private static func playSession(
        _ options: LoadOptions, item: Item, headers: [(String, String)], first a: inout HTTPConnection, second b: inout HTTPConnection,
        phase: inout SessionsPhase, number: Int
    ) async throws {
        let sp = options.serviceProvider
        let prefix = "session #\(number) \(item.mvpd)"
        let json = headers + [("Content-Type", "application/json")]
        func decisions(_ answer: HTTPConnection.Answer) -> [[String: Any]]? { answer.jsonObject?["decisions"] as? [[String: Any]] }

        let configuration = try await a.send(method: .GET, path: "/api/v2/\(sp)/configuration", headers: headers)
        if configuration.status != 200 { phase.wrong("\(prefix): configuration expected 200, found \(configuration.status)") }

        let resources = [sp, "\(sp)-unlisted-\(number)"]
        let body = Array(try JSONSerialization.data(withJSONObject: ["resources": resources]))
        let preauthorized = try await a.send(
            method: .POST, path: "/api/v2/\(sp)/decisions/preauthorize/\(item.mvpd)", headers: json, body: body)
        if preauthorized.status != 200 || decisions(preauthorized)?.map({ $0["resource"] as? String }) != resources.map(Optional.some)
            || decisions(preauthorized)?.contains(where: {
                $0["token"] != nil || ($0["authorized"] as? Bool == false) != ($0["error"] != nil)
            })
                != false
        {
            phase.wrong(
                "\(prefix): preauthorize expected 200 with a decision per resource, found \(preauthorized.status) \(preauthorized.text.prefix(200))"
            )
        }

        let one = Array(try JSONSerialization.data(withJSONObject: ["resources": [sp]]))
        let authorized = try await a.send(method: .POST, path: "/api/v2/\(sp)/decisions/authorize/\(item.mvpd)", headers: json, body: one)
        if authorized.status != 200 || decisions(authorized)?.count != 1
            || decisions(authorized).map({
                ($0[0]["authorized"] as? Bool == true) == (($0[0]["token"] as? [String: Any])?["serializedToken"] is String)
            })
                != true
        {
            phase.wrong(
                "\(prefix): authorize expected 200 with one decision, a Permit with its media token, found \(authorized.status) \(authorized.text.prefix(200))"
            )
        }

        let logout = try await b.send(
            method: .GET, path: "/api/v2/\(sp)/logout/\(item.mvpd)?redirectUrl=https%3A%2F%2Fapp.example", headers: headers)
        let action = (logout.jsonObject?["logouts"] as? [String: Any])?[item.mvpd] as? [String: Any]
        if logout.status != 200 || action?["actionName"] as? String != "partner_logout"
            || action?["actionType"] as? String != "partner_interactive"
        {
            phase.wrong(
                "\(prefix): logout expected partner_logout / partner_interactive, found \(logout.status) \(logout.text.prefix(200))")
        }

        let deadline = ContinuousClock.now + .milliseconds(1500)
        while true {
            let profiles = try await a.send(method: .GET, path: "/api/v2/\(sp)/profiles/\(item.mvpd)", headers: headers)
            let refused = try await a.send(method: .POST, path: "/api/v2/\(sp)/decisions/authorize/\(item.mvpd)", headers: json, body: one)
            let signedOut =
                profiles.status == 200 && (profiles.jsonObject?["profiles"] as? [String: Any])?.isEmpty == true
                && refused.status == 403 && refused.jsonObject?["code"] as? String == "authenticated_profile_missing"
            if signedOut { break }
            if ContinuousClock.now > deadline {
                phase.wrong(
                    "\(prefix): after the logout, expected no profile on the other instance within 1.5 s, found \(profiles.status) \(profiles.text.prefix(120)) and \(refused.status)"
                )
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
