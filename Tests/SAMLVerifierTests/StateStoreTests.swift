import AppleSSO
import Foundation
import SAML
import SAMLMockIdP
import Testing

/// Requests bound to their issue (``RequestIDAuthority``) and replay detection through a
/// ``SAMLStateStore`` (in memory here; the PostgreSQL store runs the same protocol against a real server
/// in the Server/ package's tests).
@Suite("Requests and the state store")
struct StateStoreTests {
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:00:00Z")!
    static let provider = try! MockIdentityProvider(
        privateKeyPEM: Array(try! Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.key.pem"))),
        certificatePEM: Array(try! Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.cert.pem"))))
    static let authority = try! RequestIDAuthority(keys: [RequestIDKey(id: 7, secret: Array(repeating: 0x42, count: 32))])
    static let binding = RequestBinding(
        serviceProvider: "REF30", mvpd: "MVPD-A", identityProvider: "https://idp.mvpd.example.com", device: "fingerprint device-1",
        api: "v2")

    /// The mock MVPD's verifier configuration over `store`, its clock at `instant` (these suites share it).
    static func configuration(
        _ store: any SAMLStateStore, unsolicited: SAMLResponseVerifier.UnsolicitedResponses = .refuse, at instant: SAMLInstant
    ) throws -> SAMLResponseVerifier.Configuration {
        var configuration = SAMLResponseVerifier.Configuration(
            identityProvider: try IdentityProvider(
                entityID: "https://idp.mvpd.example.com",
                keys: try TrustedKey.all(pem: Array(Data(contentsOf: Vector.root.appendingPathComponent("keys/rsa-2048.cert.pem"))))),
            audience: .equals("https://saml.sp.auth.adobe.com"), destination: .skip, inResponseTo: .skip,
            replay: .store(store, unsolicited: unsolicited))
        configuration.clock = FixedClock(instant)
        return configuration
    }

    static func verifier(
        _ store: any SAMLStateStore, unsolicited: SAMLResponseVerifier.UnsolicitedResponses = .refuse, at offset: Duration = .seconds(1)
    )
        throws -> SAMLResponseVerifier
    {
        try SAMLResponseVerifier(configuration(store, unsolicited: unsolicited, at: now + offset))
    }

    static func response(answering requestID: String?) throws -> [UInt8] {
        var template = MockIdentityProvider.Template()
        template.inResponseTo = requestID
        return try provider.response(template, issuedAt: now, placement: .assertion)
    }

    static func expecting(_ binding: RequestBinding = binding) -> SAMLResponseVerifier.RequestExpectations {
        .init(issuedRequest: .init(authority: authority, binding: binding))
    }

    @Test("a response to an issued request is accepted once; a second response to it, and unknown IDs, are refused")
    func issuedRequestsAnsweredOnce() async throws {
        let store = InMemoryStateStore()
        let verifier = try Self.verifier(store)
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        #expect(store.counts.answeredRequests == 0, "issuing writes nothing")
        let first = try Self.response(answering: issued.id)
        let accepted = try await verifier.verify(first, expecting: Self.expecting())
        #expect(accepted.inResponseTo == issued.id)
        #expect(!accepted.skippedChecks.contains(.inResponseTo))
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(first, expecting: Self.expecting()) }
        // A second, different response to the same request: the request is answered already.
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: issued.id), expecting: Self.expecting())
        }
        // Never issued: another form, and the right form with a MAC that does not verify.
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: "_never-issued"), expecting: Self.expecting())
        }
        let other = try RequestIDAuthority(keys: [RequestIDKey(id: 7, secret: Array(repeating: 0x43, count: 32))])
        let forged = try other.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: forged.id), expecting: Self.expecting())
        }
        // A response whose request the caller does not vouch for.
        let unvouched = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        await #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) {
            _ = try await verifier.verify(try Self.response(answering: unvouched.id))
        }
        #expect(store.counts == (1, 1))
    }

    /// An attaching store over the in-memory one: what it was handed with each accepted consume.
    final class Attaching: SAMLAttachingStateStore {
        let base = InMemoryStateStore()
        let kept = Locked<[String]>([])
        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
            try await base.consume(request: request, assertion: assertion, now: now)
        }
        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, attaching attachment: any Sendable)
            async throws -> StateStoreOutcome
        {
            let outcome = try await base.consume(request: request, assertion: assertion, now: now)
            if outcome == .accepted, let text = attachment as? String { kept.withLock { $0.append(text) } }
            return outcome
        }
    }

    @Test("willRecord: told once every check has passed, just before the store; never for a response refused before it")
    func willRecord() async throws {
        let store = InMemoryStateStore()
        let verifier = try Self.verifier(store)
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        let response = try Self.response(answering: issued.id)
        let told = Locked<[Int]>([])
        var expectations = Self.expecting()
        expectations.willRecord = { told.withLock { $0.append(store.counts.usedAssertions) } }
        _ = try await verifier.verify(response, expecting: expectations)
        #expect(told.withLock { $0 } == [0], "before the assertion was recorded")
        // A replay reaches the store again (the store refuses it); a response for another binding is refused before.
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(response, expecting: expectations) }
        var other = Self.expecting(RequestBinding(serviceProvider: "REF30", mvpd: "MVPD-B", identityProvider: "x", device: "d", api: "v2"))
        other.willRecord = expectations.willRecord
        let fresh = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        await #expect(throws: SAMLError.self) { _ = try await verifier.verify(try Self.response(answering: fresh.id), expecting: other) }
        #expect(told.withLock { $0 } == [0, 1])
    }

    /// A profile-keeping store over the in-memory one: the profiles it was handed with accepted consumes.
    final class Keeping: ProfileKeepingStateStore {
        let base = InMemoryStateStore()
        let kept = Locked<[StoredProfile]>([])
        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
            try await base.consume(request: request, assertion: assertion, now: now)
        }
        func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant, keeping profile: StoredProfile)
            async throws -> StateStoreOutcome
        {
            let outcome = try await base.consume(request: request, assertion: assertion, now: now)
            if outcome == .accepted { kept.withLock { $0.append(profile) } }
            return outcome
        }
    }

    @Test(
        "keepingProfiles: the typed store gets the profile with the accepted assertion only; another attachment is a configuration error, nothing recorded"
    )
    func keepingProfiles() async throws {
        let store = Keeping()
        var configuration = try Self.configuration(store, at: Self.now + .seconds(1))
        configuration.replay = .keepingProfiles(in: store)
        let verifier = try SAMLResponseVerifier(configuration)
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        let response = try Self.response(answering: issued.id)
        var other = Self.expecting()
        other.attachment = { _ in "not a profile" }
        await #expect(throws: SAMLError(.configurationInvalid, "")) { _ = try await verifier.verify(response, expecting: other) }
        #expect(store.base.counts == (0, 0), "nothing recorded: the request is still answerable")
        let profile = StoredProfile(
            serviceProvider: "REF30", device: "fingerprint device-1", mvpd: "MVPD-A", json: Array("{}".utf8),
            notAfter: Self.now + .seconds(60))
        var keeping = Self.expecting()
        keeping.attachment = { _ in profile }
        let accepted = try await verifier.verify(response, expecting: keeping)
        #expect(accepted.attachmentRecorded && store.kept.withLock { $0 } == [profile])
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(response, expecting: keeping) }
        #expect(store.kept.withLock { $0.count } == 1, "a replay keeps nothing")
    }

    @Test(
        "an attachment is made after every check and before the record: its error refuses with nothing recorded; an attaching store keeps it with the accepted assertion only"
    )
    func attachments() async throws {
        let store = Attaching()
        let verifier = try Self.verifier(store)
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        let response = try Self.response(answering: issued.id)
        var failing = Self.expecting()
        failing.attachment = { _ in throw SAMLError(.fieldsMissing, "expected the profile's fields, found one missing") }
        await #expect(throws: SAMLError(.fieldsMissing, "")) { _ = try await verifier.verify(response, expecting: failing) }
        #expect(store.base.counts == (0, 0), "refused before anything was recorded: the request is still answerable")
        var keeping = Self.expecting()
        keeping.attachment = { response in "profile of \(response.assertion.nameID?.value ?? "")" }
        let accepted = try await verifier.verify(response, expecting: keeping)
        #expect(accepted.attachmentRecorded)
        #expect(store.kept.withLock { $0 } == ["profile of \(accepted.assertion.nameID?.value ?? "")"])
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await verifier.verify(response, expecting: keeping) }
        #expect(store.kept.withLock { $0.count } == 1, "a replay keeps nothing")
        // A store that cannot attach: accepted, attachment not recorded (the caller keeps it itself).
        let plain = try Self.verifier(InMemoryStateStore())
        let other = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        let notAttached = try await plain.verify(try Self.response(answering: other.id), expecting: keeping)
        #expect(!notAttached.attachmentRecorded)
    }

    @Test("a request issued for one binding is refused for another, with the field that differs")
    func bindingMismatches() async throws {
        let verifier = try Self.verifier(InMemoryStateStore())
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        let response = try Self.response(answering: issued.id)
        var cases: [(RequestBinding, SAMLError.Code)] = []
        var binding = Self.binding
        binding.serviceProvider = "REF31"
        cases.append((binding, .inResponseToWrongServiceProvider))
        binding = Self.binding
        binding.mvpd = "MVPD-B"
        cases.append((binding, .inResponseToWrongMVPD))
        binding = Self.binding
        binding.identityProvider = "https://idp.other.example.com"
        cases.append((binding, .inResponseToWrongMVPD))
        binding = Self.binding
        binding.device = "fingerprint device-2"
        cases.append((binding, .inResponseToWrongDevice))
        binding = Self.binding
        binding.api = "v1"
        cases.append((binding, .inResponseToWrongAPI))
        for (binding, code) in cases {
            await #expect(throws: SAMLError(code, "")) { _ = try await verifier.verify(response, expecting: Self.expecting(binding)) }
        }
        // None of the refusals consumed the request: its own caller still gets in.
        _ = try await verifier.verify(response, expecting: Self.expecting())
    }

    @Test("a request past its lifetime by the store's clock is refused and records nothing")
    func expiredRequest() async throws {
        let store = InMemoryStateStore()
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(30), now: Self.now)
        let response = try Self.response(answering: issued.id)
        await #expect(throws: SAMLError(.inResponseToExpired, "")) {
            _ = try await Self.verifier(store, at: .seconds(40)).verify(response, expecting: Self.expecting())
        }
        #expect(store.counts == (0, 0))
        _ = try await Self.verifier(store, at: .seconds(20)).verify(response, expecting: Self.expecting())
    }

    @Test("IDs: the documented form, an xs:NCName; rotation keeps old keys verifying; keys are checked")
    func identifiers() throws {
        let issued = try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now)
        #expect(issued.id.count == 95)
        #expect(issued.id.hasPrefix("_R1"))
        #expect(issued.id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
        #expect(issued.expiry == SAMLInstant(millisecondsSinceEpoch: (Self.now + .seconds(301)).millisecondsSinceEpoch))
        #expect(try Self.authority.issue(for: Self.binding, lifetime: .seconds(300), now: Self.now).id != issued.id)
        let rotated = try RequestIDAuthority(keys: [RequestIDKey(id: 8, secret: Array(repeating: 0x44, count: 32))] + Self.authority.keys)
        #expect(try rotated.check(issued.id, for: Self.binding) == issued)
        let retired = try RequestIDAuthority(keys: [RequestIDKey(id: 8, secret: Array(repeating: 0x44, count: 32))])
        #expect(throws: SAMLError(.inResponseToNotOutstanding, "")) { try retired.check(issued.id, for: Self.binding) }
        // Every single-character change is refused (a tag or the MAC no longer verifies, or the form breaks).
        let symbols = Array(issued.id)
        for index in 3..<symbols.count {
            var changed = symbols
            changed[index] = symbols[index] == "A" ? "B" : "A"
            #expect(throws: SAMLError.self) { try Self.authority.check(String(changed), for: Self.binding) }
        }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try RequestIDKey(id: 1, secret: Array(repeating: 1, count: 31)) }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try RequestIDAuthority(keys: []) }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try RequestIDAuthority(keys: [.random(id: 1), .random(id: 1)]) }
    }

    @Test("used assertions are keyed by issuer and ID: another IdP's ID never looks like a replay")
    func assertionsKeyedByIssuer() async throws {
        let store = InMemoryStateStore()
        let expiry = Self.now + .seconds(600)
        #expect(
            try await store.consume(request: nil, assertion: .init(issuer: "https://a.example", id: "_1", expiry: expiry), now: Self.now)
                == .accepted)
        #expect(
            try await store.consume(request: nil, assertion: .init(issuer: "https://b.example", id: "_1", expiry: expiry), now: Self.now)
                == .accepted)
        #expect(
            try await store.consume(request: nil, assertion: .init(issuer: "https://a.example", id: "_1", expiry: expiry), now: Self.now)
                == .replayed)
        let request = IssuedRequestID(id: "_r", expiry: expiry)
        #expect(
            try await store.consume(
                request: request, assertion: .init(issuer: "https://a.example", id: "_2", expiry: expiry), now: Self.now) == .accepted)
        #expect(
            try await store.consume(
                request: request, assertion: .init(issuer: "https://a.example", id: "_3", expiry: expiry), now: Self.now)
                == .requestAnswered)
        // An assertion past its own expiry by the store's clock is not recorded (a verifier whose clock
        // is behind the store's).
        #expect(
            try await store.consume(request: nil, assertion: .init(issuer: "https://a.example", id: "_4", expiry: Self.now), now: Self.now)
                == .assertionExpired)
        #expect(
            try await store.consume(
                request: nil, assertion: .init(issuer: "https://a.example", id: "_4", expiry: expiry), now: Self.now) == .accepted)
        // After both have expired, the entries make room.
        let small = InMemoryStateStore(capacity: 1)
        #expect(
            try await small.consume(request: request, assertion: .init(issuer: "i", id: "x", expiry: expiry), now: Self.now) == .accepted)
        await #expect(throws: SAMLError(.replayCacheFull, "")) {
            _ = try await small.consume(request: nil, assertion: .init(issuer: "i", id: "y", expiry: expiry), now: Self.now)
        }
        #expect(
            try await small.consume(request: nil, assertion: .init(issuer: "i", id: "y", expiry: expiry + .seconds(600)), now: expiry)
                == .accepted)
    }

    @Test("unsolicited responses are refused unless allowed explicitly, and then still checked for replay")
    func unsolicited() async throws {
        let store = InMemoryStateStore()
        let unsolicited = try Self.response(answering: nil)
        await #expect(throws: SAMLError(.inResponseToUnsolicited, "")) { _ = try await Self.verifier(store).verify(unsolicited) }
        let allowing = try Self.verifier(store, unsolicited: .allow)
        let response = try await allowing.verify(unsolicited)
        #expect(response.skippedChecks.contains(.unsolicited))
        await #expect(throws: SAMLError(.replayDetected, "")) { _ = try await allowing.verify(unsolicited) }
    }
}
