import AppleSSO
import Foundation
import NIOHTTP1
import SAML
import SAMLMockIdP
import Synchronization

/// One MVPD the harness plays: its id in the service's configuration, the provider id Apple reports for
/// it (`platformMappingId`), and its identity provider (issuer and signing key).
public struct LoadMVPD: Sendable {
    public var id: String
    public var providerID: String
    public var issuer: String
    public var identityProvider: MockIdentityProvider

    public init(id: String, providerID: String, issuer: String, identityProvider: MockIdentityProvider) {
        self.id = id
        self.providerID = providerID
        self.issuer = issuer
        self.identityProvider = identityProvider
    }
}

/// What to run.
public struct LoadOptions: Sendable {
    /// The service instances (`host`, `port`); connections are spread over them.
    public var targets: [(host: String, port: Int)]
    public var serviceProvider: String
    public var mvpds: [LoadMVPD]
    /// The audience the service requires (the SP entity ID).
    public var audience = "https://saml.sp.auth.adobe.com"
    /// Requests prepared (and sent, unless ``duration`` ends the run first).
    public var requests = 1000
    /// An upper bound on the timed phase.
    public var duration: Duration?
    public var connections = 8
    /// Requests per second over all connections; nil: as fast as the service answers.
    public var rate: Double?
    /// Shares of the requests that re-post an already posted response (to another instance when there
    /// are several), that carry a response altered after signing, and that post one MVPD's response as
    /// another MVPD's. The rest are fresh responses.
    public var replayShare = 0.1
    public var tamperedShare = 0.05
    public var wrongMVPDShare = 0.05
    /// After the timed phase, re-post every accepted response to every instance (each must be refused
    /// as a replay) and every response whose answer was lost (accepted or refused as a replay, never
    /// twice accepted).
    public var settle = true
    public var seed: UInt64 = 42

    public init(targets: [(host: String, port: Int)], serviceProvider: String, mvpds: [LoadMVPD]) {
        self.targets = targets
        self.serviceProvider = serviceProvider
        self.mvpds = mvpds
    }
}

/// Prepared requests, ready for the timed phase (``LoadHarness/run(_:)-(LoadPlan)``).
public struct LoadPlan: Sendable {
    public let options: LoadOptions
    let items: [LoadHarness.Item]
    public let generationSeconds: Double
    public var count: Int { items.count }
}

/// The harness's result: throughput, latency, and the correctness audit.
public struct LoadReport: Sendable {
    public struct Line: Sendable {
        public var kind: String
        public var sent = 0
        public var asExpected = 0
        public var wrong = 0
        /// No answer (connection refused or closed: an instance stopped).
        public var unanswered = 0
    }

    public var generationSeconds: Double
    public var timedSeconds: Double
    public var answered: Int
    /// Latencies in microseconds (measured from each request's scheduled instant at a fixed rate).
    public var p50, p90, p99, maximum: Double
    public var lines: [Line]
    /// The settle phase: accepted responses re-posted (all must be refused), lost answers re-posted.
    public var settleChecked = 0
    public var settleWrong = 0
    public var lostThenAccepted = 0
    public var lostButCommitted = 0
    /// The first wrong answers, described.
    public var wrongAnswers: [String]

    public var requestsPerSecond: Double { timedSeconds > 0 ? Double(answered) / timedSeconds : 0 }
    public var wrong: Int { lines.reduce(0) { $0 + $1.wrong } + settleWrong }

    public var table: String {
        func f(_ v: Double) -> String { String(format: "%.0f", v) }
        var out = """
            prepared in \(String(format: "%.1f", generationSeconds)) s (sessions/sso + signing, not timed)
            timed: \(answered) answers in \(String(format: "%.2f", timedSeconds)) s = \(f(requestsPerSecond)) requests/s
            latency µs: p50 \(f(p50))  p90 \(f(p90))  p99 \(f(p99))  max \(f(maximum))

            | kind | sent | as expected | wrong | unanswered |
            |---|---:|---:|---:|---:|

            """
        for line in lines { out += "| \(line.kind) | \(line.sent) | \(line.asExpected) | \(line.wrong) | \(line.unanswered) |\n" }
        out +=
            "\nsettle: \(settleChecked) re-posts, \(settleWrong) wrong; lost answers: \(lostThenAccepted) accepted later, \(lostButCommitted) had been committed\n"
        out += "audit: \(wrong) wrong answers\n"
        for description in wrongAnswers { out += "  wrong: \(description)\n" }
        return out
    }
}

/// The SAML-aware load harness: it plays the device and the MVPD at once. Ahead of the timed phase it
/// asks `sessions/sso` for a SAML request per response, mints the MVPD's signed answer to it with a new
/// assertion ID (``SAMLMockIdP/MockIdentityProvider``) and encodes it exactly as the cookbook does
/// (``AppleSSO/TokenExchangeRequest/v2(samlAttributeQueryResponse:serviceProvider:partner:accessToken:deviceIdentifier:deviceInfo:partnerFrameworkStatus:)``);
/// then it posts them to `profiles/sso` with N connections, at a fixed rate or as fast as possible,
/// mixed with replays, tampered and wrong-MVPD responses, and checks every answer.
public enum LoadHarness {
    enum Kind: String, CaseIterable {
        case fresh, replay, tampered, wrongMVPD = "wrong-mvpd"
    }

    struct Item: Sendable {
        var kind: Kind
        /// The HTTP request.
        var request: HTTPRequestParts
        /// fresh: the MVPD and NameID the profile must carry; replay: the item re-posted.
        var mvpd: String
        var nameID: String
        var original: Int?
    }

    enum Outcome: Sendable, Equatable {
        case accepted, refused(String), unanswered, other(Int)
    }

    /// Prepares the requests, then runs them.
    public static func run(_ options: LoadOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> LoadReport {
        try await run(try await prepare(options, progress: progress))
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

    /// The timed phase, then the settle phase.
    public static func run(_ plan: LoadPlan) async throws -> LoadReport {
        let options = plan.options, items = plan.items, generationSeconds = plan.generationSeconds
        let clock = ContinuousClock()
        let outcomes = Shared([Outcome?](repeating: nil, count: items.count))
        // Each answered item's verdict, judged once with its whole answer (the profile of a fresh one).
        let wrong = Shared([Bool](repeating: false, count: items.count))
        let latencies = Shared([Double]())
        let wrongAnswers = Shared([String]())
        let start = clock.now
        let deadline = options.duration.map { start + $0 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<options.connections {
                group.addTask {
                    var target = worker % options.targets.count
                    var mine = Array(stride(from: worker, to: items.count, by: options.connections))
                    while !mine.isEmpty {
                        do {
                            try await HTTPConnection.with(host: options.targets[target].host, port: options.targets[target].port) {
                                connection in
                                while let index = mine.first {
                                    if let deadline, clock.now >= deadline { mine.removeAll(); return }
                                    var due = clock.now
                                    if let rate = options.rate {
                                        due = start + .microseconds(Int64(Double(index) / rate * 1_000_000))
                                        if due > clock.now { try await clock.sleep(until: due) }
                                    }
                                    let item = items[index]
                                    if let original = item.original {
                                        // A replay follows its original's answer (at most 10 s).
                                        let limit = min(clock.now + .seconds(10), deadline ?? clock.now + .seconds(10))
                                        while outcomes.withLock({ $0[original] == nil }) && clock.now < limit {
                                            try await Task.sleep(for: .milliseconds(1))
                                        }
                                    }
                                    let answer: HTTPConnection.Answer
                                    do {
                                        answer = try await connection.send(item.request)
                                    } catch {
                                        outcomes.withLock { $0[index] = .unanswered }
                                        mine.removeFirst()
                                        throw error
                                    }
                                    let latency = seconds(clock.now - due) * 1_000_000
                                    latencies.withLock { $0.append(latency) }
                                    let outcome = classify(answer)
                                    outcomes.withLock { $0[index] = outcome }
                                    let originalOutcome = item.original.flatMap { original in outcomes.withLock { $0[original] } }
                                    if let problem = check(item, outcome, answer, original: originalOutcome) {
                                        wrong.withLock { $0[index] = true }
                                        wrongAnswers.withLock {
                                            if $0.count < 20 { $0.append("#\(index) \(item.kind.rawValue): \(problem)") }
                                        }
                                    }
                                    mine.removeFirst()
                                }
                            }
                        } catch {
                            // The instance went away: the rest of this connection's requests go to the next one.
                            target = (target + 1) % options.targets.count
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let timedSeconds = seconds(clock.now - start)
        let results = outcomes.withLock { $0 }
        let judged = wrong.withLock { $0 }
        var lines = Kind.allCases.map { LoadReport.Line(kind: $0.rawValue) }
        for (index, item) in items.enumerated() {
            guard let outcome = results[index] else { continue }
            let line = Kind.allCases.firstIndex(of: item.kind)!
            lines[line].sent += 1
            if outcome == .unanswered {
                lines[line].unanswered += 1
            } else if judged[index] {
                lines[line].wrong += 1
            } else {
                lines[line].asExpected += 1
            }
        }
        let sorted = latencies.withLock { $0 }.sorted()
        func percentile(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        var report = LoadReport(
            generationSeconds: generationSeconds, timedSeconds: timedSeconds, answered: sorted.count, p50: percentile(0.5),
            p90: percentile(0.9),
            p99: percentile(0.99), maximum: sorted.last ?? 0, lines: lines, wrongAnswers: wrongAnswers.withLock { $0 })
        if options.settle { try await settle(options, items: items, outcomes: results, report: &report) }
        return report
    }

    /// sessions/sso for each response, then the MVPD's signed answer, encoded as the cookbook does.
    static func makeItems(_ options: LoadOptions, progress: @escaping @Sendable (String) -> Void) async throws -> [Item] {
        var random = SplitMix(seed: options.seed)
        // Plan kinds first (deterministic for a seed), then fetch requests and sign in parallel.
        var kinds: [Kind] = []
        for index in 0..<options.requests {
            let draw = random.nextDouble()
            var kind: Kind =
                draw < options.replayShare
                ? .replay
                : draw < options.replayShare + options.tamperedShare
                    ? .tampered : draw < options.replayShare + options.tamperedShare + options.wrongMVPDShare ? .wrongMVPD : .fresh
            if kind == .wrongMVPD && options.mvpds.count < 2 { kind = .fresh }
            // A replay re-posts a fresh response sent well before it (by another connection, to another instance when there are several).
            if kind == .replay && replayCandidates(index, kinds, options).isEmpty { kind = .fresh }
            kinds.append(kind)
        }
        let planned = kinds
        let choices = kinds.indices.map { _ in (Int(random.next() % UInt64(options.mvpds.count)), Int(random.next() % 1_000_000)) }
        let built = Shared([Item?](repeating: nil, count: kinds.count))
        let workers = max(1, min(options.connections, 8))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let target = options.targets[worker % options.targets.count]
                    try await HTTPConnection.with(host: target.host, port: target.port) { connection in
                        for index in stride(from: worker, to: planned.count, by: workers) where planned[index] != .replay {
                            let item = try await makeItem(
                                index: index, kind: planned[index], choice: choices[index], options: options, connection: &connection)
                            built.withLock { $0[index] = item }
                            if index % 1000 == 0 { progress("prepared \(index)/\(planned.count)") }
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
            copy.original = original
            items[index] = copy
        }
        return items.map { $0! }
    }

    /// The fresh responses item `index` may replay: sent well before it (by another connection) and,
    /// with several instances, by a connection to another instance.
    static func replayCandidates(_ index: Int, _ kinds: [Kind], _ options: LoadOptions) -> [Int] {
        func target(_ item: Int) -> Int { (item % options.connections) % options.targets.count }
        return (0..<max(0, index - options.connections * 2)).filter {
            kinds[$0] == .fresh && (options.targets.count == 1 || options.connections == 1 || target($0) != target(index))
        }
    }

    static func makeItem(index: Int, kind: Kind, choice: (Int, Int), options: LoadOptions, connection: inout HTTPConnection) async throws
        -> Item
    {
        let signer = options.mvpds[choice.0]
        // wrong-mvpd: signed by one MVPD, presented (request and header) as the next one.
        let postedAs = kind == .wrongMVPD ? options.mvpds[(choice.0 + 1) % options.mvpds.count] : signer
        let status = PartnerFrameworkStatus(
            accessStatus: .granted, providerID: postedAs.providerID,
            expirationMilliseconds: SAMLInstant.now().millisecondsSinceEpoch + 86_400_000)
        let session = try await connection.send(
            method: .POST, path: "/api/v2/\(options.serviceProvider)/sessions/sso/Apple",
            headers: [
                ("AP-Partner-Framework-Status", status.headerValue), ("AP-Device-Identifier", "fingerprint load-harness"),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body: Array("domainName=load.example&redirectUrl=https%3A%2F%2Fload.example%2Fdone".utf8))
        guard session.status == 200, let requestID = session.partnerRequestID else {
            throw LoadError.unexpectedSession(session.status, session.text.prefix(300).description)
        }
        var template = MockIdentityProvider.Template()
        template.issuer = signer.issuer
        template.audience = options.audience
        template.inResponseTo = requestID
        template.nameID = "load-\(index)-\(choice.1)"
        template.attributes = [("uid", [template.nameID]), ("householdId", ["hh-\(choice.1)"]), ("zip", ["10001"])]
        var response = String(
            decoding: try signer.identityProvider.response(template, issuedAt: .now(), placement: .assertion), as: UTF8.self)
        if kind == .tampered {
            // Another subscriber's household, after signing: the assertion's digest no longer matches.
            response = response.replacingOccurrences(of: "hh-\(choice.1)<", with: "hh-\(choice.1 + 1)<")
        }
        let exchange = TokenExchangeRequest.v2(
            samlAttributeQueryResponse: response, serviceProvider: options.serviceProvider, accessToken: "load-harness",
            deviceIdentifier: "load-harness", deviceInfo: Data(#"{"model":"load"}"#.utf8).base64EncodedString(),
            partnerFrameworkStatus: status)
        return Item(kind: kind, request: exchange, mvpd: postedAs.id, nameID: template.nameID, original: nil)
    }

    static func classify(_ answer: HTTPConnection.Answer) -> Outcome {
        if answer.status == 201 { return .accepted }
        guard answer.status == 400, let object = answer.jsonObject else { return .other(answer.status) }
        return .refused(answer.libraryCode ?? object["code"] as? String ?? "")
    }

    /// nil when the outcome is what the item must get; otherwise what is wrong. A fresh acceptance's
    /// profile is checked too.
    static func check(_ item: Item, _ outcome: Outcome, _ answer: HTTPConnection.Answer, original: Outcome?) -> String? {
        switch (item.kind, outcome) {
        case (_, .unanswered):
            return nil
        case (.replay, .accepted) where original == .unanswered || original == nil:
            // The original's answer was lost (its instance stopped) or it was never sent: it may never
            // have been committed, and this is then its first acceptance (the settle phase checks that
            // it is the only one).
            return nil
        case (.fresh, .accepted):
            guard let object = answer.jsonObject,
                let profile = (object["profiles"] as? [String: Any])?[item.mvpd] as? [String: Any],
                let userID = ((profile["attributes"] as? [String: Any])?["userID"] as? [String: Any])?["value"] as? String,
                userID == item.nameID
            else { return "accepted, but the profile does not carry \(item.mvpd) and NameID \(item.nameID)" }
            return nil
        case (.replay, .refused("replay.detected")), (.tampered, .refused("signature.digest-mismatch")),
            (.wrongMVPD, .refused("issuer.mismatch")):
            return nil
        default:
            return "expected \(expectation(item.kind)), found \(outcome)"
        }
    }

    static func expectation(_ kind: Kind) -> String {
        switch kind {
        case .fresh: "201 with the profile"
        case .replay: "400 replay.detected"
        case .tampered: "400 signature.digest-mismatch"
        case .wrongMVPD: "400 issuer.mismatch"
        }
    }

    /// Re-posts what was accepted (must be refused everywhere) and what lost its answer.
    static func settle(_ options: LoadOptions, items: [Item], outcomes: [Outcome?], report: inout LoadReport) async throws {
        var checked = 0, wrong = 0, lostAccepted = 0, lostCommitted = 0
        var descriptions: [String] = []
        let freshIndices = items.indices.filter { items[$0].kind == .fresh }
        // Accepted anywhere (as fresh, or through a replay of a lost original).
        var accepted = Set(freshIndices.filter { outcomes[$0] == .accepted })
        for index in items.indices where items[index].kind == .replay && outcomes[index] == .accepted {
            if let original = items[index].original { accepted.insert(original) }
        }
        let lost = freshIndices.filter { outcomes[$0] == .unanswered && !accepted.contains($0) }
        for target in options.targets {
            do {
                try await HTTPConnection.with(host: target.host, port: target.port) { connection in
                    for index in accepted.sorted() {
                        let answer = try await connection.send(items[index].request)
                        checked += 1
                        if classify(answer) != .refused("replay.detected") {
                            wrong += 1
                            if descriptions.count < 10 {
                                descriptions.append(
                                    "settle #\(index): an accepted response re-posted to \(target.port) got \(classify(answer))")
                            }
                        }
                    }
                }
            } catch {
                continue  // a stopped instance: the others are checked
            }
        }
        if !lost.isEmpty, let live = options.targets.last {
            try? await HTTPConnection.with(host: live.host, port: live.port) { connection in
                for index in lost {
                    let answer = try await connection.send(items[index].request)
                    switch classify(answer) {
                    case .accepted: lostAccepted += 1
                    case .refused("replay.detected"): lostCommitted += 1
                    // Its request may have expired, or been consumed by a commit whose answer was lost.
                    case .refused("in-response-to.not-outstanding"): lostCommitted += 1
                    case let other:
                        wrong += 1
                        if descriptions.count < 10 { descriptions.append("settle #\(index): a lost answer re-posted got \(other)") }
                    }
                }
            }
        }
        report.settleChecked = checked
        report.settleWrong = wrong
        report.lostThenAccepted = lostAccepted
        report.lostButCommitted = lostCommitted
        report.wrongAnswers += descriptions
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

public enum LoadError: Error, CustomStringConvertible {
    case unexpectedSession(Int, String)

    public var description: String {
        switch self {
        case .unexpectedSession(let status, let body): "sessions/sso answered \(status) without a partner_profile: \(body)"
        }
    }
}

/// A value shared by the tasks of a run.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T { try mutex.withLock { try body(&$0) } }
}

/// A small seeded generator (SplitMix64), so that a run's mix is reproducible.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextDouble() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

extension LoadMVPD {
    /// The two MVPDs of the bundled `TestVectors/exchange/` (MVPD-A: RSA-2048, its IdP from signed
    /// metadata; MVPD-B: ECDSA P-256, a pinned certificate), with the test keys of `TestVectors/keys/`.
    public static func bundled(vectors: String) throws -> [LoadMVPD] {
        func read(_ file: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: "\(vectors)/keys/\(file)") else {
                throw SAMLError(.configurationInvalid, "expected the test key \(vectors)/keys/\(file), found none")
            }
            return Array(data)
        }
        return [
            LoadMVPD(
                id: "MVPD-A", providerID: "ProviderA", issuer: "https://idp.mvpd.example.com",
                identityProvider: try MockIdentityProvider(
                    privateKeyPEM: try read("rsa-2048.key.pem"), certificatePEM: try read("rsa-2048.cert.pem"))),
            LoadMVPD(
                id: "MVPD-B", providerID: "ProviderB", issuer: "https://idp.mvpd-b.example.com",
                identityProvider: try MockIdentityProvider(
                    privateKeyPEM: try read("ecdsa-p256.key.pem"), certificatePEM: try read("ecdsa-p256.cert.pem"))),
        ]
    }
}
