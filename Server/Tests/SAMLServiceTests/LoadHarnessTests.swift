import AppleSSO
import Foundation
import SAMLMockIdP
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

    /// A plan prepared against a live service, which is then stopped: nothing listens on its port any more.
    static func orphanPlan(_ configure: @Sendable (inout LoadOptions) -> Void) async throws -> LoadPlan {
        try await Service.with { port in
            var options = LoadOptions(targets: [("127.0.0.1", port)], serviceProvider: "REF30", mvpds: Service.mvpds)
            options.requests = 60
            options.connections = 4
            configure(&options)
            return try await LoadHarness.prepare(options)
        }
    }

    @Test("with no instance accepting connections, the run ends by its duration and fails, naming what it expected")
    func deadlineWithoutTarget() async throws {
        let plan = try await Self.orphanPlan {
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
    }

    @Test("without a duration, connection attempts are bounded: the run ends and fails; preparing fails too")
    func boundedAttempts() async throws {
        let plan = try await Self.orphanPlan { _ in }
        let clock = ContinuousClock()
        let start = clock.now
        let report = try await LoadHarness.run(plan)
        #expect(clock.now - start < .seconds(10))
        #expect(!report.passed && report.notSent == 60 && !report.deadlineReached, "\(report.table)")
        #expect(report.failures.contains { $0.contains("found none in 5 attempts in a row") }, "\(report.table)")
        await #expect(throws: LoadError.self) { try await LoadHarness.prepare(plan.options) }
    }

    @Test("an instance declared killed must be unreachable in the settle phase, and is then no failure")
    func declaredKilled() async throws {
        let plan = try await Self.orphanPlan { _ in }
        var options = plan.options
        options.killed = options.targets
        let settled = await LoadHarness.settle(options, items: plan.items, outcomes: plan.items.map { _ in nil })
        #expect(settled.failures == ["settle: expected a live instance, found none"])
        let undeclared = await LoadHarness.settle(plan.options, items: plan.items, outcomes: plan.items.map { _ in nil })
        #expect(undeclared.failures.count == 1 && undeclared.failures[0].contains("unreachable"), "\(undeclared.failures)")
    }
}
