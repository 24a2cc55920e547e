import AppleSSO
import Foundation
import SAML
import SAMLMockIdP

/// Prepared requests, ready for the timed phase (``LoadHarness/run(_:)-(LoadPlan)``).
public struct LoadPlan: Sendable {
    public let options: LoadOptions
    let items: [LoadHarness.Item]
    public let generationSeconds: Double
    public var count: Int { items.count }
}

extension LoadHarness {
    /// What a prepared request is, and so what it must get.
    enum Kind: String, CaseIterable, Sendable {
        case fresh, replay, tampered
        case wrongMVPD = "wrong-mvpd"
        case wrongMVPDRequest = "wrong-mvpd-request"
        case wrongDevice = "wrong-device"
        case v1Crossover = "v1-crossover"
    }

    struct Item: Sendable {
        var kind: Kind
        /// The HTTP request.
        var request: HTTPRequestParts
        /// The MVPD it is posted as.
        var mvpd: String
        /// The item whose signed response (and so assertion) this one posts: itself, or for a replay
        /// the original.
        var assertion: Int
        /// fresh: the profile attributes the `201` must carry (user-metadata key → values), exactly.
        var profile: [String: [String]] = [:]
        /// The signed assertion's issuer and ID (what the store records when it is accepted).
        var issuer = ""
        var assertionID = ""

        /// A replay's original.
        var original: Int? { kind == .replay ? assertion : nil }
    }

    /// The untimed phase: a SAML request from `sessions/sso` for each response, the MVPD's signed
    /// answer, the cookbook's encoding.
    public static func prepare(_ options: LoadOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> LoadPlan {
        precondition(!options.targets.isEmpty && !options.mvpds.isEmpty && options.connections > 0)
        let clock = ContinuousClock()
        let generationStart = clock.now
        let items = try await makeItems(options, progress: progress)
        let generationSeconds = seconds(clock.now - generationStart)
        progress("prepared \(items.count) requests in \(String(format: "%.1f", generationSeconds)) s")
        return LoadPlan(options: options, items: items, generationSeconds: generationSeconds)
    }

    /// The kinds of a run, drawn from the shares (deterministic for a seed).
    static func planKinds(_ options: LoadOptions, random: inout SplitMix) -> [Kind] {
        let shares: [(Kind, Double)] = [
            (.replay, options.replayShare), (.tampered, options.tamperedShare), (.wrongMVPD, options.wrongMVPDShare),
            (.wrongMVPDRequest, options.wrongMVPDRequestShare), (.wrongDevice, options.wrongDeviceShare),
            (.v1Crossover, options.v1CrossoverShare),
        ]
        var kinds: [Kind] = []
        for index in 0..<options.requests {
            let draw = random.nextDouble()
            var kind = Kind.fresh
            var bound = 0.0
            for (candidate, share) in shares {
                bound += share
                if draw < bound {
                    kind = candidate
                    break
                }
            }
            if (kind == .wrongMVPD || kind == .wrongMVPDRequest) && options.mvpds.count < 2 { kind = .fresh }
            // A replay re-posts a fresh response sent well before it (by another connection, to another instance when there are several).
            if kind == .replay && replayCandidates(index, kinds, options).isEmpty { kind = .fresh }
            kinds.append(kind)
        }
        return kinds
    }

    /// What one item is made of, drawn ahead of the parallel preparation.
    struct Choice: Sendable {
        /// The MVPD the request is asked for (index in ``LoadOptions/mvpds``).
        var mvpd: Int
        /// Makes the subscriber's NameID and household unique.
        var salt: Int
        /// The device that asks for the request, and the one a wrong-device item posts from.
        var device: String
        var otherDevice: String
    }

    /// sessions/sso for each response, then the MVPD's signed answer, encoded as the cookbook does.
    static func makeItems(_ options: LoadOptions, progress: @escaping @Sendable (String) -> Void) async throws -> [Item] {
        var random = SplitMix(seed: options.seed)
        // Plan kinds first (deterministic for a seed), then fetch requests and sign in parallel.
        let kinds = planKinds(options, random: &random)
        // Devices of this run only: a shared store keeps each device's profile, and a device that has one
        // is told to authorize (no SAML request) by sessions/sso, so a second run with the same seed would
        // find the first run's devices signed in. The seed still fixes the mix.
        let run = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let choices = kinds.indices.map { index in
            let device = random.next(), other = random.next()
            return Choice(
                mvpd: Int(random.next() % UInt64(options.mvpds.count)), salt: Int(random.next() % 1_000_000),
                device: deviceIdentifier("load-\(run)-\(index)-\(String(device, radix: 16))"),
                otherDevice: deviceIdentifier("load-\(run)-\(index)-other-\(String(other, radix: 16))"))
        }
        let built = Shared([Item?](repeating: nil, count: kinds.count))
        let workers = max(1, min(options.connections, 8))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var pending = Array(stride(from: worker, to: kinds.count, by: workers).filter { kinds[$0] != .replay })
                    var target = worker % options.targets.count
                    var attempts = 0
                    while !pending.isEmpty {
                        // A connection refused or closed: the next instance, a bounded number of times.
                        let made = pending.count
                        do {
                            let host = options.targets[target].host, port = options.targets[target].port
                            try await HTTPConnection.with(host: host, port: port) { connection in
                                while let index = pending.first {
                                    let item = try await makeItem(
                                        index: index, kind: kinds[index], choice: choices[index], options: options, connection: &connection)
                                    built.withLock { $0[index] = item }
                                    pending.removeFirst()
                                    if index % 1000 == 0 { progress("prepared \(index)/\(kinds.count)") }
                                }
                            }
                        } catch let error as LoadError {
                            throw error
                        } catch {
                            attempts = pending.count < made ? 1 : attempts + 1
                            if attempts >= options.connectAttempts * options.targets.count {
                                throw LoadError.unreachable(
                                    "preparing: expected an instance to answer sessions/sso, found none after \(attempts) attempts (\(error))"
                                )
                            }
                            target = (target + 1) % options.targets.count
                            try await Task.sleep(for: backoff(attempts))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        var items = built.withLock { $0 }
        for index in kinds.indices where kinds[index] == .replay {
            let candidates = replayCandidates(index, kinds, options)
            let original = candidates[Int(random.next() % UInt64(candidates.count))]
            var copy = items[original]!
            copy.kind = .replay
            copy.assertion = original
            copy.profile = [:]
            items[index] = copy
        }
        return items.map { $0! }
    }

    /// An `AP-Device-Identifier` value (after `fingerprint `): Base64, as a device's fingerprint is.
    static func deviceIdentifier(_ seed: String) -> String {
        Data(seed.utf8).base64EncodedString()
    }

    /// The fresh responses item `index` may replay: sent well before it (by another connection) and,
    /// with several instances, by a connection to another instance.
    static func replayCandidates(_ index: Int, _ kinds: [Kind], _ options: LoadOptions) -> [Int] {
        func target(_ item: Int) -> Int { (item % options.connections) % options.targets.count }
        return (0..<max(0, index - options.connections * 2)).filter {
            kinds[$0] == .fresh && (options.targets.count == 1 || options.connections == 1 || target($0) != target(index))
        }
    }

    static func makeItem(index: Int, kind: Kind, choice: Choice, options: LoadOptions, connection: inout HTTPConnection) async throws
        -> Item
    {
        let first = options.mvpds[choice.mvpd], second = options.mvpds[(choice.mvpd + 1) % options.mvpds.count]
        // Who asks for the request, whose IdP answers it, whom the answer is posted as.
        let (askedFor, signer, postedAs) =
            switch kind {
            // Asked for and posted as B, answered by A's IdP: not the issuer B trusts.
            case .wrongMVPD: (second, first, second)
            // Asked for A, answered by B's IdP (validly), posted as B: the request was not B's.
            case .wrongMVPDRequest: (first, second, second)
            default: (first, first, first)
            }
        let expiry = SAMLInstant.now().millisecondsSinceEpoch + 86_400_000
        let asked = PartnerFrameworkStatus(accessStatus: .granted, providerID: askedFor.providerID, expirationMilliseconds: expiry)
        let session = try await connection.send(
            method: .POST, path: "/api/v2/\(options.serviceProvider)/sessions/sso/Apple",
            headers: [
                ("AP-Partner-Framework-Status", asked.headerValue), ("AP-Device-Identifier", "fingerprint \(choice.device)"),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ] + (options.bearerToken.map { [("Authorization", "Bearer \($0)")] } ?? []),
            body: Array("domainName=load.example&redirectUrl=https%3A%2F%2Fload.example%2Fdone".utf8))
        guard session.status == 200, let requestID = session.partnerRequestID else {
            throw LoadError.unexpectedSession(session.status, session.text.prefix(300).description)
        }
        var template = MockIdentityProvider.Template()
        template.issuer = signer.issuer
        template.audience = options.audience
        template.inResponseTo = requestID
        template.lifetime = options.assertionLifetime
        template.nameID = "load-\(index)-\(choice.salt)"
        template.attributes = [("uid", [template.nameID]), ("householdId", ["hh-\(choice.salt)"]), ("zip", ["10001", "10002"])]
        // Every field the profile requires is signed (a value of its own), so that the profile is complete.
        for name in postedAs.profileFields where name != "NameID" && !template.attributes.contains(where: { $0.name == name }) {
            template.attributes.append((name, ["\(name)-\(choice.salt)"]))
        }
        var response = String(
            decoding: try signer.identityProvider.response(template, issuedAt: .now(), placement: .assertion), as: UTF8.self)
        if kind == .tampered {
            // Another subscriber's household, after signing: the assertion's digest no longer matches.
            response = response.replacingOccurrences(of: "hh-\(choice.salt)<", with: "hh-\(choice.salt + 1)<")
        }
        var request: HTTPRequestParts
        if kind == .v1Crossover {
            request = TokenExchangeRequest.v1(
                samlAttributeQueryResponse: response, requestor: options.serviceProvider, deviceID: choice.device, mvpd: askedFor.id,
                deviceType: .tvOS)
        } else {
            let posted = PartnerFrameworkStatus(accessStatus: .granted, providerID: postedAs.providerID, expirationMilliseconds: expiry)
            request = TokenExchangeRequest.v2(
                samlAttributeQueryResponse: response, serviceProvider: options.serviceProvider,
                accessToken: options.bearerToken ?? "load-harness",
                deviceIdentifier: kind == .wrongDevice ? choice.otherDevice : choice.device,
                deviceInfo: Data(#"{"model":"load"}"#.utf8).base64EncodedString(), partnerFrameworkStatus: posted)
        }
        if let token = options.bearerToken, request.header("Authorization") == nil {
            request.headers.append(HTTPHeader("Authorization", "Bearer \(token)"))
        }
        var item = Item(kind: kind, request: request, mvpd: postedAs.id, assertion: index, profile: expectedProfile(postedAs, template))
        item.issuer = signer.issuer
        if let start = response.range(of: "<saml:Assertion ID=\"")?.upperBound, let end = response[start...].firstIndex(of: "\"") {
            item.assertionID = String(response[start..<end])
        }
        return item
    }

    /// The attributes the profile of `mvpd` carries for a response signed from `template`: its
    /// `requiredMetadataFields` (or the NameID and every attribute), under their mapped keys.
    static func expectedProfile(_ mvpd: LoadMVPD, _ template: MockIdentityProvider.Template) -> [String: [String]] {
        let names = mvpd.profileFields.isEmpty ? ["NameID"] + template.attributes.map(\.name) : mvpd.profileFields
        var profile: [String: [String]] = [:]
        for name in names {
            let values = name == "NameID" ? [template.nameID] : template.attributes.first { $0.name == name }?.values ?? []
            profile[mvpd.mapping.key(for: name)] = values
        }
        return profile
    }
}
