import AppleSSO
import SAML
import Testing

/// The MVPD configuration's `authorization` policy, the configured authorizer, a stored profile's
/// attributes, and the in-memory store's removals (logout).
@Suite("Resource decisions")
struct ResourceDecisionTests {
    static func configuration(_ authorization: String) throws -> MVPDConfiguration {
        try MVPDConfiguration.decode(#"{"mvpds": [{"id": "M", "authorization": \#(authorization)}]}"#)
    }

    static func query(_ mvpd: MVPD, _ resources: [String], attributes: [String: [String]] = [:]) -> AuthorizationQuery {
        AuthorizationQuery(
            kind: .preauthorize, serviceProvider: "SP", mvpd: mvpd, device: "fingerprint d", resources: resources, attributes: attributes)
    }

    @Test("allow all, a list, an attribute's values (split at the separator), and their union")
    func policies() throws {
        let all = try #require(try Self.configuration(#"{"allow": "all"}"#).mvpds.first?.authorization)
        #expect(all.permits("anything", attributes: [:]))
        let list = try #require(try Self.configuration(#"{"allow": ["REF30", "news"]}"#).mvpds.first?.authorization)
        #expect(list.permits("news", attributes: [:]) && !list.permits("News", attributes: [:]) && !list.permits("sports", attributes: [:]))
        let split = try #require(
            try Self.configuration(#"{"allow": ["trailers"], "attribute": "channels", "separator": ","}"#).mvpds.first?.authorization)
        let channels = ["channels": ["news, sports", "movies"]]
        #expect(split.permits("sports", attributes: channels) && split.permits("movies", attributes: channels))
        #expect(split.permits("trailers", attributes: [:]) && !split.permits("cartoons", attributes: channels))
        #expect(!split.permits("sports", attributes: ["other": ["sports"]]))
        // Byte for byte: another Unicode normalisation form is another resource id.
        let accented = ResourcePolicy(resources: ["caf\u{E9}"], attribute: "channels", separator: ",")
        #expect(accented.permits("caf\u{E9}", attributes: [:]) && !accented.permits("cafe\u{301}", attributes: [:]))
        #expect(!accented.permits("cafe\u{301}", attributes: ["channels": ["caf\u{E9},x"]]))
        let whole = try #require(try Self.configuration(#"{"attribute": "channels"}"#).mvpds.first?.authorization)
        #expect(whole.permits("movies", attributes: channels) && !whole.permits("news", attributes: channels))
    }

    @Test(
        "a policy that does not read is refused, never read loosely",
        arguments: [
            #"{"allow": "everything"}"#, #"{"allow": [1]}"#, #"{"allow": [""]}"#, #"{"alow": "all"}"#, #"{"separator": ","}"#,
            #"{"attribute": ""}"#, #""all""#, #"{"attribute": "a", "separator": ""}"#,
        ])
    func refusedPolicies(authorization: String) {
        #expect(throws: SAMLError.self) { try Self.configuration(authorization) }
    }

    @Test("the configured authorizer: an MVPD without a policy permits nothing; denials carry the kind's code")
    func configuredAuthorizer() async throws {
        let none = MVPD(id: "M")
        let denied = try await ConfiguredResourceAuthorizer().decide(Self.query(none, ["a", "b"]))
        #expect(denied.map(\.resource) == ["a", "b"] && denied.allSatisfy { $0.denial?.code == "preauthorization_denied_by_mvpd" })
        var mvpd = MVPD(id: "M")
        mvpd.authorization = ResourcePolicy(resources: ["b"])
        var query = Self.query(mvpd, ["a", "b"])
        query.kind = .authorize
        let decisions = try await ConfiguredResourceAuthorizer().decide(query)
        #expect(decisions[0].denial?.code == "authorization_denied_by_mvpd" && decisions[0].denial?.status == 403)
        #expect(decisions[1].isPermit)
    }

    @Test("a stored profile's attributes: one value, several, none read from JSON that is not a profile")
    func storedAttributes() {
        let json =
            #"{"attributes":{"channels":{"state":"plain","value":["a","b"]},"userID":{"state":"plain","value":"u1"}},"type":"appleSSO"}"#
        let profile = StoredProfile(serviceProvider: "SP", device: "d", mvpd: "M", json: Array(json.utf8), notAfter: .now() + .seconds(60))
        #expect(profile.attributes == ["channels": ["a", "b"], "userID": ["u1"]])
        let broken = StoredProfile(serviceProvider: "SP", device: "d", mvpd: "M", json: Array("{".utf8), notAfter: .now())
        #expect(broken.attributes.isEmpty)
    }

    @Test("the in-memory store removes a device's profiles (one MVPD or all) and a subscriber's on every device")
    func memoryRemovals() async throws {
        let store = InMemoryProfileStore()
        let now = SAMLInstant.now()
        func profile(_ device: String, _ mvpd: String, user: String, expires: Duration = .seconds(600)) -> StoredProfile {
            let json = #"{"attributes":{"userID":{"state":"plain","value":"\#(user)"}},"type":"appleSSO"}"#
            return StoredProfile(serviceProvider: "SP", device: device, mvpd: mvpd, json: Array(json.utf8), notAfter: now + expires)
        }
        for (device, mvpd, user) in [("d1", "A", "u1"), ("d1", "B", "u1"), ("d2", "A", "u1"), ("d3", "A", "u2")] {
            try await store.save(profile(device, mvpd, user: user))
        }
        try await store.save(profile("d4", "A", user: "u3", expires: .seconds(-1)))
        #expect(try await store.removeProfiles(serviceProvider: "SP", device: "d1", mvpd: "B", now: now) == ["B"])
        #expect(try await store.profiles(serviceProvider: "SP", device: "d1", now: now).map(\.mvpd) == ["A"])
        #expect(try await store.removeProfiles(serviceProvider: "SP", device: "d1", mvpd: "B", now: now).isEmpty)
        // An expired profile is removed, but not reported as a valid one signed out.
        #expect(try await store.removeProfiles(serviceProvider: "SP", device: "d4", mvpd: nil, now: now).isEmpty)
        #expect(try await store.removeProfiles(serviceProvider: "SP", mvpd: "A", attribute: "userID", value: "u1") == 2)
        #expect(try await store.profiles(serviceProvider: "SP", device: "d2", now: now).isEmpty)
        #expect(try await store.profiles(serviceProvider: "SP", device: "d3", now: now).count == 1)
        #expect(try await store.removeProfiles(serviceProvider: "OTHER", device: "d3", mvpd: nil, now: now).isEmpty)
        #expect(store.count == 1)
    }
}
