import AppleSSO
import Foundation
import SAML
import SAMLMockIdP
import SAMLTestSupport
import Synchronization
import Testing

@testable import SAMLLoad

/// The harness's own audit, without a service: what it counts wrong, and that it keeps its deadline.
@Suite("Load harness audit")
struct LoadHarnessTests {
    typealias Item = LoadHarness.Item

    static let request = TokenExchangeRequest.v1(
        samlAttributeQueryResponse: "<Response/>", requestor: "REF30", deviceID: "device", mvpd: "MVPD-A", deviceType: .tvOS)

    static func item(_ kind: LoadHarness.Kind, assertion: Int) -> Item {
        Item(kind: kind, request: request, mvpd: "MVPD-A", assertion: assertion, profile: ["userID": ["load-0"]])
    }

    /// A fresh response (#0), a replay of it (#1), and a fresh one of its own (#2).
    static let items = [item(.fresh, assertion: 0), item(.replay, assertion: 0), item(.fresh, assertion: 2)]

    static func tally(_ outcomes: [LoadHarness.Outcome?], settle: [Int: Int] = [:]) -> LoadHarness.Tally {
        LoadHarness.tally(items: items, outcomes: outcomes, profileProblems: [nil, nil, nil], settleAcceptances: settle)
    }

    static let replayDetected = LoadHarness.Outcome.refused(400, "invalid_parameter_saml_response", "replay.detected")

    @Test("an original accepted and its replay refused as a replay: nothing wrong")
    func asExpected() {
        let tally = Self.tally([.accepted(201), Self.replayDetected, .accepted(201)])
        #expect(tally.lines.allSatisfy { $0.wrong == 0 } && tally.multiplyAccepted == 0, "\(tally.descriptions)")
        #expect(tally.lines[0].asExpected == 2 && tally.lines[1].asExpected == 1)
    }

    @Test("an original and its replay both accepted: the replay is wrong and the assertion accepted twice")
    func doubleAcceptance() {
        let tally = Self.tally([.accepted(201), .accepted(201), .accepted(201)])
        #expect(tally.lines[1].wrong == 1)
        #expect(tally.multiplyAccepted == 1)
        #expect(tally.descriptions.contains { $0.contains("expected at most one acceptance, found 2") }, "\(tally.descriptions)")
    }

    @Test("a replay accepted while its original's answer was lost, or never came, is wrong")
    func replayOfUnknownOriginal() {
        for original in [LoadHarness.Outcome.unanswered, nil] {
            let tally = Self.tally([original, .accepted(201), .accepted(201)])
            #expect(tally.lines[1].wrong == 1, "\(tally.descriptions)")
            #expect(tally.multiplyAccepted == 0)
            #expect(tally.descriptions.first?.contains("expected 400 invalid_parameter_saml_response replay.detected, found 201") == true)
        }
    }

    @Test("an acceptance in the timed phase and another in the settle phase: accepted twice")
    func settleAcceptance() {
        let tally = Self.tally([.accepted(201), Self.replayDetected, .accepted(201)], settle: [2: 1])
        #expect(tally.multiplyAccepted == 1)
        #expect(tally.lines.allSatisfy { $0.wrong == 0 })
    }

    @Test("each attacker kind must get its own code, with 400 invalid_parameter_saml_response (v1: internal_error)")
    func attackerKinds() {
        let kinds: [(LoadHarness.Kind, String)] = [
            (.wrongMVPDRequest, "in-response-to.wrong-mvpd"), (.wrongDevice, "in-response-to.wrong-device"),
            (.v1Crossover, "in-response-to.wrong-api"), (.wrongMVPD, "issuer.mismatch"), (.tampered, "signature.digest-mismatch"),
        ]
        for (kind, code) in kinds {
            let items = [Self.item(kind, assertion: 0)]
            func wrong(_ outcome: LoadHarness.Outcome) -> Int {
                LoadHarness.tally(items: items, outcomes: [outcome], profileProblems: [nil], settleAcceptances: [:]).lines.reduce(0) {
                    $0 + $1.wrong
                }
            }
            let enhanced = kind == .v1Crossover ? "internal_error" : "invalid_parameter_saml_response"
            #expect(wrong(.refused(400, enhanced, code)) == 0, "\(kind)")
            #expect(wrong(.accepted(201)) == 1 && wrong(.accepted(204)) == 1, "\(kind)")
            #expect(wrong(.refused(400, enhanced, "in-response-to.not-outstanding")) == 1, "\(kind)")
            #expect(wrong(.refused(400, "other_code", code)) == 1, "\(kind)")
        }
    }

    @Test("the library code is read from details in both forms: the code alone, or code: message")
    func libraryCode() {
        for details in ["in-response-to.wrong-device", "in-response-to.wrong-device: expected device X, found Y"] {
            let body = try! JSONSerialization.data(withJSONObject: ["code": "invalid_parameter_saml_response", "details": details])
            let answer = HTTPConnection.Answer(status: 400, headers: [], body: Array(body))
            #expect(
                LoadHarness.classify(answer) == .refused(400, "invalid_parameter_saml_response", "in-response-to.wrong-device"))
        }
    }

    static func profile(_ attributes: [String: Any], mvpd: String = "MVPD-A", issuer: String = "Apple") -> [UInt8] {
        let object: [String: Any] = [
            "profiles": [
                mvpd: [
                    "notBefore": 1_700_000_000_000, "notAfter": 1_700_000_300_000, "issuer": issuer, "type": "appleSSO",
                    "attributes": attributes,
                ]
            ]
        ]
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    @Test("a profile must carry exactly the attributes signed (after the mapping), values equal")
    func profileAttributes() {
        let expected = ["userID": ["load-1"], "uid": ["load-1"], "householdID": ["hh-9"], "zip": ["10001", "10002"]]
        let good: [String: Any] = [
            "userID": ["value": "load-1", "state": "plain"], "uid": ["value": "load-1", "state": "plain"],
            "householdID": ["value": "hh-9", "state": "plain"], "zip": ["value": ["10001", "10002"], "state": "plain"],
        ]
        func problem(_ body: [UInt8]) -> String? { LoadHarness.profileProblem(mvpd: "MVPD-A", expected: expected, body: body) }
        #expect(problem(Self.profile(good)) == nil)
        var extra = good
        extra["zip2"] = ["value": "1", "state": "plain"]
        #expect(problem(Self.profile(extra))?.contains("expected the attributes") == true)
        var missing = good
        missing["householdID"] = nil
        #expect(problem(Self.profile(missing))?.contains("found [\"uid\", \"userID\", \"zip\"]") == true)
        var unmapped = good
        unmapped["householdID"] = nil
        unmapped["householdId"] = ["value": "hh-9", "state": "plain"]
        #expect(problem(Self.profile(unmapped)) != nil)
        var otherValue = good
        otherValue["householdID"] = ["value": "hh-10", "state": "plain"]
        #expect(problem(Self.profile(otherValue))?.contains("expected householdID = {value: \"hh-9\"") == true)
        var oneOfTwo = good
        oneOfTwo["zip"] = ["value": "10001", "state": "plain"]
        #expect(problem(Self.profile(oneOfTwo)) != nil)
        var encrypted = good
        encrypted["uid"] = ["value": "load-1", "state": "enc"]
        #expect(problem(Self.profile(encrypted)) != nil)
        #expect(problem(Self.profile(good, mvpd: "MVPD-B"))?.contains("expected the profile of MVPD-A alone") == true)
        #expect(problem(Self.profile(good, issuer: "MVPD")) != nil)
        #expect(problem(Array("{}".utf8)) != nil)
    }

    @Test("the expected profile: the required fields under their mapped keys, NameID as userID")
    func expectedProfile() throws {
        let mvpds = try LoadMVPD.bundled(vectors: Service.vectors)
        #expect(mvpds.map(\.profileFields) == [["NameID", "uid", "householdId"], ["NameID", "uid"]])
        var template = MockIdentityProvider.Template()
        template.nameID = "load-3"
        template.attributes = [("uid", ["load-3"]), ("householdId", ["hh-3"]), ("zip", ["10001", "10002"])]
        #expect(LoadHarness.expectedProfile(mvpds[0], template) == ["userID": ["load-3"], "uid": ["load-3"], "householdID": ["hh-3"]])
        #expect(LoadHarness.expectedProfile(mvpds[1], template) == ["userID": ["load-3"], "uid": ["load-3"]])
        var everything = mvpds[1]
        everything.profileFields = []
        #expect(LoadHarness.expectedProfile(everything, template)["zip"] == ["10001", "10002"])
    }

    /// A plan prepared against a live service, then aimed at `refusing`, where nothing answers.
    static func orphanPlan(_ refusing: RefusingPort, _ configure: @Sendable (inout LoadOptions) -> Void) async throws -> LoadPlan {
        let plan = try await Service.with { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 60
            options.connections = 4
            configure(&options)
            return try await LoadHarness.prepare(options)
        }
        var options = plan.options
        options.targets = [("127.0.0.1", refusing.port)]
        return LoadPlan(options: options, items: plan.items, generationSeconds: plan.generationSeconds)
    }

    @Test("with no instance accepting connections, the run ends by its duration and fails, naming what it expected")
    func deadlineWithoutTarget() async throws {
        let refusing = try RefusingPort()
        let plan = try await Self.orphanPlan(refusing) {
            $0.duration = .seconds(2)
            $0.connectAttempts = 1000  // only the duration can end the timed phase
        }
        let clock = ContinuousClock()
        let start = clock.now
        let report = try await LoadHarness.run(plan)
        let elapsed = clock.now - start
        // The timed phase (2 s, a grace of 2 s), the settle phase's reachability check (at most 5 s).
        #expect(elapsed < .seconds(2 + 2 + 5 + 2), "\(elapsed)")
        #expect(!report.passed)
        #expect(report.notSent == 60 && report.deadlineReached, "\(report.table)")
        #expect(
            report.failures.contains { $0.contains("expected an instance of 127.0.0.1:") && $0.contains("before the duration was over") },
            "\(report.table)")
        #expect(report.failures.contains { $0.hasPrefix("settle: expected 127.0.0.1:") && $0.contains("unreachable") }, "\(report.table)")
        withExtendedLifetime(refusing) {}
    }

    @Test("without a duration, connection attempts are bounded: the run ends and fails; preparing fails too")
    func boundedAttempts() async throws {
        let refusing = try RefusingPort()
        let plan = try await Self.orphanPlan(refusing) { _ in }
        let clock = ContinuousClock()
        let start = clock.now
        let report = try await LoadHarness.run(plan)
        #expect(clock.now - start < .seconds(10))
        #expect(!report.passed && report.notSent == 60 && !report.deadlineReached, "\(report.table)")
        #expect(report.failures.contains { $0.contains("found none in 5 attempts in a row") }, "\(report.table)")
        await #expect(throws: LoadError.self) { try await LoadHarness.prepare(plan.options) }
        withExtendedLifetime(refusing) {}
    }

    @Test("an instance declared killed must be unreachable in the settle phase, and is then no failure")
    func declaredKilled() async throws {
        let refusing = try RefusingPort()
        let plan = try await Self.orphanPlan(refusing) { _ in }
        var options = plan.options
        options.killed = options.targets
        let settled = await LoadHarness.settle(options, items: plan.items, outcomes: plan.items.map { _ in nil })
        #expect(settled.failures == ["settle: expected a live instance, found none"])
        let undeclared = await LoadHarness.settle(plan.options, items: plan.items, outcomes: plan.items.map { _ in nil })
        #expect(undeclared.failures.count == 1 && undeclared.failures[0].contains("unreachable"), "\(undeclared.failures)")
        withExtendedLifetime(refusing) {}
    }

    @Test("a 503 to any kind is unavailable when tolerated (a failover run), and wrong otherwise; no answer is never wrong")
    func tolerateUnavailable() {
        let unavailable = LoadHarness.Outcome.refused(503, "service_unavailable", nil)
        let items = [
            Self.item(.fresh, assertion: 0), Self.item(.replay, assertion: 0), Self.item(.fresh, assertion: 2),
            Self.item(.tampered, assertion: 3),
        ]
        let outcomes: [LoadHarness.Outcome?] = [unavailable, .withheld, .unanswered, .refused(503, "", nil)]
        let tolerated = LoadHarness.tally(
            items: items, outcomes: outcomes, profileProblems: [nil, nil, nil, nil], settleAcceptances: [:], tolerateUnavailable: true)
        #expect(tolerated.lines.allSatisfy { $0.wrong == 0 }, "\(tolerated.descriptions)")
        #expect(tolerated.lines[0].sent == 2 && tolerated.lines[0].unavailable == 1 && tolerated.lines[0].unanswered == 1)
        #expect(tolerated.lines[1].withheld == 1 && tolerated.lines[1].sent == 0)
        #expect(tolerated.lines[2].unavailable == 1)
        #expect(tolerated.classes == [.unavailable, nil, .unavailable, .unavailable])
        #expect(tolerated.answers.first { $0.answer == "503 service_unavailable" }?.unavailable == 1)
        let strict = LoadHarness.tally(items: items, outcomes: outcomes, profileProblems: [nil, nil, nil, nil], settleAcceptances: [:])
        #expect(strict.lines[0].wrong == 1 && strict.lines[0].unavailable == 0 && strict.lines[0].unanswered == 1)
        #expect(strict.lines[2].wrong == 1)
        #expect(strict.classes == [.wrong, nil, .unavailable, .wrong])
        #expect(
            strict.descriptions.first == "#0 fresh: expected 201 with the profile, found 503 service_unavailable", "\(strict.descriptions)")
        // The settle phase and a replay's wait treat a tolerated 503 as a lost answer.
        #expect(unavailable.isLost(tolerating: true) && !unavailable.isLost(tolerating: false))
        #expect(LoadHarness.Outcome.unanswered.isLost(tolerating: false) && !Self.replayDetected.isLost(tolerating: true))
    }

    static func events(_ list: [(Double, LoadAnswerClass)]) -> [LoadTimeline.Event] {
        list.map { LoadTimeline.Event(at: $0.0, answerClass: $0.1, latency: $0.1 == .unavailable ? nil : 1000) }
    }

    static func close(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) < 1e-9 } ?? false }

    @Test("the outage: the longest stretch without an acceptance, from the acceptance before the failures to the one after")
    func outage() {
        let run = Self.events([
            (0.0, .accepted), (0.1, .accepted), (0.2, .accepted), (0.3, .unavailable), (0.5, .unavailable), (0.6, .refused),
            (1.0, .unavailable), (1.5, .accepted), (1.6, .accepted), (2.0, .unavailable), (2.1, .accepted), (2.2, .wrong),
        ])
        // Given out of order: the instants order them.
        let figures = LoadTimeline.availability(run.reversed(), end: 3)
        #expect(Self.close(figures.outageStart, 0.2) && Self.close(figures.outageSeconds, 1.3), "\(figures)")
        #expect(figures.outageUnavailable == 3 && figures.outageRecovered)
        #expect(Self.close(figures.firstUnavailable, 0.3) && Self.close(figures.lastUnavailable, 2.0), "\(figures)")
        #expect(Self.close(figures.recoveredAfter, 1.8), "\(figures)")
        #expect(figures.outageWindow.map { Self.close($0.lowerBound, 0.2) && Self.close($0.upperBound, 1.5) } == true)

        // Failures before any acceptance: from the first failure.
        let early = LoadTimeline.availability(Self.events([(0.5, .unavailable), (2.0, .accepted), (2.1, .accepted)]), end: 3)
        #expect(Self.close(early.outageStart, 0.5) && Self.close(early.outageSeconds, 1.5) && Self.close(early.recoveredAfter, 1.5))

        // Never accepted again: to the end of the timed phase, not recovered.
        let never = LoadTimeline.availability(Self.events([(0, .accepted), (0.5, .accepted), (1, .unavailable), (1.2, .refused)]), end: 4)
        #expect(Self.close(never.outageStart, 0.5) && Self.close(never.outageSeconds, 3.5) && !never.outageRecovered, "\(never)")
        #expect(never.recoveredAfter == nil && Self.close(never.firstUnavailable, 1))

        // Nothing unavailable: the longest pause between acceptances, no outage window.
        let healthy = LoadTimeline.availability(
            Self.events([(0, .accepted), (0.1, .accepted), (0.3, .accepted), (0.35, .refused)]), end: 1)
        #expect(Self.close(healthy.outageStart, 0.1) && Self.close(healthy.outageSeconds, 0.2) && healthy.outageUnavailable == 0)
        #expect(healthy.outageWindow == nil && healthy.firstUnavailable == nil && healthy.recoveredAfter == nil)
        #expect(LoadTimeline.availability([], end: 1) == LoadTimeline.Availability())
    }

    @Test("the timeline: at most 300 buckets, 100 ms for a short run; each completion in the bucket of its instant")
    func timeline() {
        #expect(LoadTimeline.bucketSeconds(for: 5) == 0.1 && LoadTimeline.bucketSeconds(for: 30) == 0.1)
        #expect(LoadTimeline.bucketSeconds(for: 31) == 0.2 && LoadTimeline.bucketSeconds(for: 300) == 1)
        #expect(LoadTimeline.bucketSeconds(for: 3600) == 30)
        let events = Self.events([(0.0, .accepted), (0.05, .refused), (0.15, .unavailable), (0.25, .wrong), (0.26, .accepted)])
        let timeline = LoadTimeline(events: events, seconds: 0.25)
        #expect(timeline.bucketSeconds == 0.1 && timeline.buckets.count == 3)
        #expect(timeline.buckets.map(\.completed) == [2, 1, 2] && timeline.buckets.map(\.answered) == [2, 0, 2])
        #expect(timeline.buckets[0].accepted == 1 && timeline.buckets[0].refused == 1 && timeline.buckets[1].unavailable == 1)
        #expect(timeline.buckets[0].p99 == 1000 && timeline.buckets[1].p99 == nil)
        #expect(Self.close(timeline.buckets[2].seconds, 0.05) && Self.close(timeline.buckets[2].requestsPerSecond, 40))
    }

    /// A report made up, with a hostile answer and description (they come from the network).
    static var syntheticReport: LoadReport {
        var report = LoadReport(
            generationSeconds: 1.5, timedSeconds: 3, answered: 6, p50: 900, p90: 2000, p99: 5000, maximum: 7000,
            lines: [LoadReport.Line(kind: "fresh", sent: 7, asExpected: 4, wrong: 1, unanswered: 1, unavailable: 1)],
            wrongAnswers: ["#4 fresh: expected 201 with the profile, found 400 <script>alert(1)</script>"])
        report.p999 = 7000
        report.latencyDistribution = [
            .init(percentile: 0, microseconds: 500, count: 1), .init(percentile: 50, microseconds: 900, count: 3),
            .init(percentile: 90, microseconds: 2000, count: 5), .init(percentile: 100, microseconds: 7000, count: 6),
        ]
        report.answers = [
            .init(answer: "201 (accepted)", count: 4, asExpected: 4), .init(answer: "400 <script>alert(2)</script>", count: 1, wrong: 1),
            .init(answer: "503 service_unavailable", count: 1, unavailable: 1), .init(answer: "no answer", count: 1, unavailable: 1),
        ]
        let events = Self.events([
            (0.1, .accepted), (0.4, .accepted), (1.0, .unavailable), (1.2, .unavailable), (1.4, .wrong), (2.0, .accepted), (2.5, .accepted),
        ])
        report.timeline = LoadTimeline(events: events, seconds: 3)
        report.availability = LoadTimeline.availability(events, end: 3)
        report.parameters = .init(targets: ["127.0.0.1:8080"], connections: 8, rate: 500, requests: 10, duration: 3, seed: 7)
        report.failures = ["connection 1: expected \"an instance\" & found <none>"]
        return report
    }

    @Test("the page's escaping works by Unicode scalar: a quote or a bracket followed by a combining mark is escaped")
    func pageEscaping() {
        #expect(LoadReportPage.escape("\"\u{301} onmouseover=alert(1) x=\"") == "&quot;\u{301} onmouseover=alert(1) x=&quot;")
        #expect(LoadReportPage.escape("<\u{200D}script>'") == "&lt;\u{200D}script&gt;&#39;")
        #expect(LoadReportPage.escape("a\u{1}\u{85}b\tc\n") == "a\u{FFFD}\u{FFFD}b\tc\n")
    }

    @Test("the HTML page: self-contained, with its charts, and every text from the network escaped")
    func reportPage() throws {
        let report = Self.syntheticReport
        let page = report.htmlPage(title: "Failover <b>run</b> & co")
        let file = try TemporaryFiles.file("load-report.html")
        try Data(page.utf8).write(to: file)
        let written = try String(contentsOf: file, encoding: .utf8)
        #expect(written.hasPrefix("<!DOCTYPE html>") && written.hasSuffix("</html>\n"))
        #expect(written.components(separatedBy: "<svg ").count - 1 == 3, "expected three charts")
        #expect(!written.contains("<script") && !written.contains("<b>"), "expected no markup from the report's texts")
        #expect(written.contains("found 400 &lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(written.contains("400 &lt;script&gt;alert(2)&lt;/script&gt;"))
        #expect(written.contains("<title>Failover &lt;b&gt;run&lt;/b&gt; &amp; co</title>"))
        #expect(written.contains("expected &quot;an instance&quot; &amp; found &lt;none&gt;"))
        #expect(
            !written.contains("http://") || written.components(separatedBy: "http://").count - 1 == 3,
            "expected no link but the SVG namespace")
        // The timeline's classes, the outage shaded, the percentile axis.
        for text in ["Audit FAILED", "refused as expected", "outage 1.60 s", "99.99%", "p99.9", "127.0.0.1:8080", "500 requests/s"] {
            #expect(written.contains(text), "expected \(text) in the page")
        }
        #expect(LoadReportPage.escape("a&b<c>\"d'e") == "a&amp;b&lt;c&gt;&quot;d&#39;e")
    }

    @Test("against a service with bearer tokens: the harness sends its token everywhere, and passes; without it, nothing works")
    func bearerToken() async throws {
        var configuration = Service.configuration()
        configuration.bearerTokens = ["harness-token"]
        let (with, without) = try await Service.with(configuration) { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 100
            options.connections = 2
            options.bearerToken = "harness-token"
            let with = try await LoadHarness.run(options)
            options.bearerToken = nil
            options.requests = 10
            options.settle = false
            let without = try? await LoadHarness.run(options)
            return (with, without)
        }
        #expect(with.passed, "\(with.table)")
        #expect(with.answered == 100)
        #expect(without?.passed != true)
    }

    @Test("a real run: the timeline counts every request sent, the HDR percentiles are ordered, the page and JSON are written")
    func reportOfARun() async throws {
        let report = try await Service.with { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 200
            options.connections = 4
            return try await LoadHarness.run(options)
        }
        #expect(report.passed, "\(report.table)")
        let buckets = report.timeline.buckets
        #expect(!buckets.isEmpty && buckets.count <= 300 && report.timeline.bucketSeconds == 0.1, "\(report.table)")
        #expect(buckets.reduce(0) { $0 + $1.completed } == report.lines.reduce(0) { $0 + $1.sent }, "\(report.table)")
        #expect(buckets.reduce(0) { $0 + $1.answered } == report.answered && report.answered == 200, "\(report.table)")
        #expect(buckets.reduce(0) { $0 + $1.accepted } == report.lines[0].asExpected)
        #expect(buckets.reduce(0) { $0 + $1.wrong + $1.unavailable } == 0)
        #expect(report.answers.reduce(0) { $0 + $1.count } == 200 && report.answers.first?.answer == "201 (accepted)")
        #expect(report.p50 > 0 && report.p50 <= report.p90 && report.p90 <= report.p99 && report.p99 <= report.p999)
        #expect(report.p999 <= report.maximum && report.latencyDistribution.last?.count == 200)
        #expect(report.latencyDistribution.last?.microseconds == report.maximum)
        #expect(report.firstUnavailable == nil && report.recoveredAfter == nil && report.availability.outageWindow == nil)
        #expect(report.table.contains("unavailable: none") && report.table.contains("| unavailable | withheld |"))
        let json = try JSONSerialization.jsonObject(with: JSONSerialization.data(withJSONObject: report.jsonObject)) as? [String: Any]
        #expect(json?["p999_us"] as? Double == report.p999.rounded() && json?["outage_seconds"] != nil)
        #expect(((json?["timeline"] as? [String: Any])?["buckets"] as? [Any])?.count == buckets.count)
        #expect(json?["first_unavailable_s"] is NSNull)
        let page = report.htmlPage()
        #expect(page.components(separatedBy: "<svg ").count - 1 == 3 && page.contains("Audit passed"))
    }

    /// An in-memory store whose consumptions fail (the database away) from the `from`th to the
    /// `to`th, then answer again.
    final class OutageStore: SAMLStateStore {
        let store = InMemoryStateStore()
        let calls = Mutex(0)
        let failing: Range<Int>
        init(failing: Range<Int>) { self.failing = failing }

        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            if failing.contains(call) { throw SAMLError(.storeUnavailable, "expected the store to answer, found it away (call \(call))") }
            return try await store.consume(request: request, assertion: assertion, now: now)
        }
    }

    @Test("a failover run: 503s are unavailable, their responses re-posted and accepted once, their replays withheld; the outage measured")
    func failover() async throws {
        let tolerated = try await Service.with(store: OutageStore(failing: 40..<100)) { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 200
            options.connections = 2
            options.replayShare = 0.2
            options.tolerateUnavailable = true
            return try await LoadHarness.run(options)
        }
        let table = tolerated.table
        #expect(tolerated.passed && tolerated.wrong == 0, "\(table)")
        let unavailable = tolerated.lines.reduce(0) { $0 + $1.unavailable }
        #expect(
            unavailable > 0 && tolerated.answers.contains { $0.answer.hasPrefix("503 service_unavailable") && $0.unavailable > 0 },
            "\(table)")
        #expect(tolerated.lostThenAccepted > 0 && tolerated.lostThenAccepted <= tolerated.lines[0].unavailable, "\(table)")
        #expect(tolerated.timeline.buckets.reduce(0) { $0 + $1.unavailable } == unavailable, "\(table)")
        #expect(
            tolerated.firstUnavailable != nil && tolerated.recoveredAfter != nil && tolerated.availability.outageUnavailable > 0, "\(table)"
        )
        #expect(table.contains("recovered after"), "\(table)")

        let strict = try await Service.with(store: OutageStore(failing: 40..<100)) { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 150
            options.connections = 2
            return try await LoadHarness.run(options)
        }
        #expect(!strict.passed && strict.lines.reduce(0) { $0 + $1.unavailable } == 0, "\(strict.table)")
        #expect(strict.wrongAnswers.contains { $0.contains("found 503 service_unavailable") }, "\(strict.table)")
    }
}

/// The operator's own MVPDs (`--mvpds`) and the report per instance.
@Suite("Load harness: operator MVPDs and instances")
struct LoadOperatorTests {
    static func request(_ at: Double, _ target: String?, _ answerClass: LoadAnswerClass) -> LoadReport.Request {
        LoadReport.Request(
            index: 0, kind: "fresh", target: target, at: at, latency: answerClass == .unavailable ? nil : 900, answerTime: nil,
            answerClass: answerClass, answer: "")
    }

    @Test("each instance's answers counted, and when the one that died stopped answering")
    func instances() {
        let requests = [
            Self.request(0.1, "a:1", .accepted), Self.request(0.2, "b:2", .accepted), Self.request(0.3, "a:1", .refused),
            Self.request(0.4, "b:2", .unavailable), Self.request(0.5, "b:2", .accepted), Self.request(0.9, "a:1", .wrong),
            Self.request(1.0, "b:2", .unavailable), Self.request(1.4, "b:2", .unavailable), Self.request(1.5, nil, .unavailable),
        ]
        // Given out of order: the instants order them.
        let instances = LoadInstance.tally(requests.reversed(), targets: ["a:1", "b:2", "c:3"])
        #expect(instances.map(\.target) == ["a:1", "b:2", "c:3"])
        let (a, b, c) = (instances[0], instances[1], instances[2])
        #expect(a.accepted == 1 && a.refused == 1 && a.wrong == 1 && a.unavailable == 0 && a.completed == 3)
        #expect(a.firstAnswer == 0.1 && a.lastAnswer == 0.9 && a.unavailableAfterLastAnswer == nil)
        // b answered again after its first failure, so it stopped at 0.5 and has gone unanswered since 1.0.
        #expect(b.accepted == 2 && b.unavailable == 3 && b.firstAnswer == 0.2 && b.lastAnswer == 0.5)
        #expect(b.unavailableAfterLastAnswer == 1.0)
        #expect(c.completed == 0 && c.firstAnswer == nil && c.lastAnswer == nil)

        var report = LoadHarnessTests.syntheticReport
        report.parameters.targets = ["a:1", "b:2"]
        report.requests = requests
        #expect(report.table.contains("| b:2 | 2 | 0 | 3 | 0 |"), "\(report.table)")
        let json = report.jsonObject["instances"] as? [[String: Any]]
        #expect(json?.count == 2 && json?[1]["unanswered_from_s"] as? Double == 1.0)
    }

    /// A folder with the harness's MVPD list beside the bundled service configuration's keys.
    static func mvpds(_ entries: String) throws -> (file: String, facts: LoadServiceFacts) {
        let folder = try TemporaryFiles.folder("load-mvpds")
        let file = folder.appendingPathComponent("mvpds.json").path
        try Data(entries.replacingOccurrences(of: "KEYS", with: "\(Service.vectors)/keys").utf8).write(to: URL(fileURLWithPath: file))
        return (file, try LoadServiceFacts(serviceConfiguration: "\(Service.vectors)/exchange/service.json"))
    }

    @Test("an operator's MVPD: its provider id, fields and mapping from the service's configuration, its key from the list")
    func configured() throws {
        let (file, facts) = try Self.mvpds(
            #"{"mvpds": [{"id": "MVPD-B", "issuer": "https://idp.operator.example", "signingKey": "KEYS/ecdsa-p256.key.pem", "signingCertificate": "KEYS/ecdsa-p256.cert.pem"}]}"#
        )
        #expect(facts.serviceProvider == "REF30")
        let mvpds = try LoadMVPD.configured(file: file, facts: facts)
        #expect(mvpds.map(\.id) == ["MVPD-B"] && mvpds[0].providerID == "ProviderB" && mvpds[0].issuer == "https://idp.operator.example")
        #expect(mvpds[0].profileFields == ["NameID", "uid"])
        // The harness signs with the key pair it was given: its certificate is the signature's KeyInfo.
        let response = String(
            decoding: try mvpds[0].identityProvider.response(.init(), issuedAt: .now(), placement: .assertion), as: UTF8.self)
        let certificate = try String(contentsOfFile: "\(Service.vectors)/keys/ecdsa-p256.cert.pem", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(response.contains(certificate))
    }

    @Test(
        "a list the service could not play is refused, naming what it expected",
        arguments: [
            #"{"mvpds": []}"#, #"[]"#, "not json",
            #"{"mvpds": [{"id": "MVPD-Z", "issuer": "x", "signingKey": "KEYS/rsa-2048.key.pem", "signingCertificate": "KEYS/rsa-2048.cert.pem"}]}"#,
            #"{"mvpds": [{"id": "MVPD-A", "signingKey": "KEYS/rsa-2048.key.pem", "signingCertificate": "KEYS/rsa-2048.cert.pem"}]}"#,
            #"{"mvpds": [{"id": "MVPD-A", "issuer": "x", "signingKey": "KEYS/absent.key.pem", "signingCertificate": "KEYS/rsa-2048.cert.pem"}]}"#,
        ])
    func refused(_ entries: String) throws {
        let (file, facts) = try Self.mvpds(entries)
        let error = #expect(throws: SAMLError.self) { _ = try LoadMVPD.configured(file: file, facts: facts) }
        #expect(error?.code == .configurationInvalid && error?.message.hasPrefix("expected") == true, "\(String(describing: error))")
    }
}
