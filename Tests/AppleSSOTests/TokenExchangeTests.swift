import AppleSSO
import Foundation
import SAML
import SAMLMockIdP
import SAMLTestSupport
import Testing

@Suite("Token Exchange")
struct TokenExchangeTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestVectors")
    static func file(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: vectors.appendingPathComponent(path))) }

    static let configuration = MVPDConfiguration(mvpds: [
        MVPD(
            id: "Optimum", enablePlatformServices: true, boardingStatus: .supported, displayInPlatformPicker: true,
            platformMappingId: "Cablevision", requiredMetadataFields: ["NameID", "uid", "householdId", "zip"]),
        MVPD(
            id: "Dish", enablePlatformServices: true, boardingStatus: .supported, displayInPlatformPicker: true,
            platformMappingId: "DishTV", requiredMetadataFields: ["guid"]),
        MVPD(
            id: "Spectrum", enablePlatformServices: true, boardingStatus: .supported, displayInPlatformPicker: true,
            platformMappingId: "Charter"),
    ])
    static let now = SAMLInstant(xmlDateTime: "2026-11-21T12:01:00Z")!
    static let granted = PartnerFrameworkStatus(
        accessStatus: .granted, providerID: "Cablevision", expirationMilliseconds: 1_900_000_000_000)

    static func exchange(certificate: String = "keys/rsa-2048.cert.pem", recovery: Bool = true) throws -> TokenExchange {
        var template = SAMLResponseVerifier.Configuration.template(
            audience: .equals("https://saml.sp.auth.adobe.com"), destination: .skip, replay: .assertions(InMemoryStateStore()))
        template.recoversNormalizationDamage = recovery
        template.inResponseTo = .equals("_aq-3f9a1b2c")
        template.clock = FixedClock(now)
        let idp = try IdentityProvider(entityID: "https://idp.mvpd.example.com", keys: try TrustedKey.all(pem: try file(certificate)))
        let trust = try TrustRegistry(Dictionary(uniqueKeysWithValues: configuration.mvpds.map { ($0.id, idp) }), template: template)
        return TokenExchange(
            configuration: Self.configuration, trust: trust,
            mapping: UserMetadataMapping(["householdId": "householdID", "uid": "upstreamUserID"]))
    }

    /// What the device does: the cookbook's own Foundation code encodes the response into a form body.
    static func deviceBody(_ xml: [UInt8]) -> [UInt8] {
        Array(("SAMLResponse=" + CookbookOracle.encode(String(decoding: xml, as: UTF8.self))).utf8)
    }

    @Test("a device's form body becomes the appleSSO profile with every required field")
    func producesProfile() async throws {
        let body = Self.deviceBody(try Self.file("responses/typical-rsa2048-assertion-signed.xml"))
        let result = try await Self.exchange().result(body: body, partnerFrameworkStatus: Self.granted.headerValue)
        let profile = try result.get()
        let json = try JSONSerialization.jsonObject(with: Data(profile.json)) as? [String: Any]
        let entry = (json?["profiles"] as? [String: Any])?["Optimum"] as? [String: Any]
        #expect(entry?["issuer"] as? String == "Apple")
        #expect(entry?["type"] as? String == "appleSSO")
        // The exchange's instant (the verifier's clock, 2026-11-21T12:01:00Z) and the MVPD's authentication
        // TTL (30 days by default), not the assertion's NotBefore / NotOnOrAfter (minutes).
        #expect(entry?["notBefore"] as? Int == 1_795_262_460_000)
        #expect(entry?["notAfter"] as? Int == 1_795_262_460_000 + 30 * 86_400_000)
        let attributes = entry?["attributes"] as? [String: [String: Any]]
        #expect(attributes?["userID"]?["value"] as? String == "subscriber-0042")
        #expect(attributes?["upstreamUserID"]?["value"] as? String == "subscriber-0042")
        #expect(attributes?["householdID"]?["value"] as? String == "hh-7731")
        #expect(attributes?["zip"]?["value"] as? [String] == ["10001", "10002"])
        #expect(attributes?["zip"]?["state"] as? String == "plain")
    }

    @Test("an MVPD without requiredMetadataFields gets the NameID and every attribute")
    func carriesEverythingWithoutRequiredFields() async throws {
        let body = Self.deviceBody(try Self.file("responses/typical-rsa2048-assertion-signed.xml"))
        let status = PartnerFrameworkStatus(accessStatus: .granted, providerID: "Charter", expirationMilliseconds: nil)
        let profile = try await Self.exchange().exchange(body: body, partnerFrameworkStatus: status.headerValue)
        #expect(profile.mvpd == "Spectrum")
        #expect(profile.attributes.first?.key == "userID")
        #expect(profile.attributes.count == 1 + 15)
    }

    @Test("a pretty-printed signed response damaged by the cookbook's normalisation is recovered")
    func normalisationDamageIsRecovered() async throws {
        let body = Self.deviceBody(try Self.file("responses/pretty-printed-assertion-signed.xml"))
        let profile = try await Self.exchange().exchange(body: body, partnerFrameworkStatus: Self.granted.headerValue)
        #expect(profile.attributes.first?.key == "userID")
    }

    @Test("with recovery off, the same response is refused as a digest mismatch")
    func normalisationDamageIsReportedWithoutRecovery() async throws {
        let body = Self.deviceBody(try Self.file("responses/pretty-printed-assertion-signed.xml"))
        let result = try await Self.exchange(recovery: false).result(body: body, partnerFrameworkStatus: Self.granted.headerValue)
        guard case .failure(let error) = result else { Issue.record("expected a rejection"); return }
        #expect(error.code == "invalid_parameter_saml_response")
        #expect(error.cause?.code == .signatureDigestMismatch)
        #expect(error.details == "signature.digest-mismatch", "the stable code only, never the message (it names what was found)")
        let json = try JSONSerialization.jsonObject(with: Data(error.json)) as? [String: Any]
        #expect(json?["status"] as? Int == 400)
        #expect(Set(json?.keys.map { $0 } ?? []) == ["action", "status", "code", "message", "details", "helpUrl"])
        #expect(json?["helpUrl"] as? String == EnhancedError.helpURL)
    }

    @Test("a foreign key, missing fields and a denied permission are each refused with their reason")
    func refusals() async throws {
        let body = Self.deviceBody(try Self.file("responses/typical-rsa2048-assertion-signed.xml"))
        let foreign = try await Self.exchange(certificate: "keys/attacker-rsa-2048.cert.pem")
            .result(body: body, partnerFrameworkStatus: Self.granted.headerValue)
        #expect(foreign.failure?.cause?.code == .signatureUntrustedKey)

        let dish = PartnerFrameworkStatus(accessStatus: .granted, providerID: "DishTV", expirationMilliseconds: nil)
        let missing = try await Self.exchange().result(body: body, partnerFrameworkStatus: dish.headerValue)
        #expect(missing.failure?.cause?.code == .fieldsMissing)

        let denied = PartnerFrameworkStatus(accessStatus: .denied, providerID: "Cablevision", expirationMilliseconds: nil)
        let refused = try await Self.exchange().result(body: body, partnerFrameworkStatus: denied.headerValue)
        #expect(refused.failure?.code == "invalid_header_pfs_permission_access_not_granted")

        let mismatch = try await Self.exchange().result(body: body, partnerFrameworkStatus: Self.granted.headerValue, mvpd: "Dish")
        #expect(mismatch.failure?.code == "invalid_header_pfs_provider_id_mismatch")

        let none = try await Self.exchange().result(body: body, partnerFrameworkStatus: nil)
        #expect(none.failure?.code == "invalid_header_pfs_permission_access_not_present")
    }

    @Test("the v1 and v2 requests carry the SAMLResponse encoded exactly once")
    func requestsEncodeOnce() throws {
        let xml = String(decoding: try Self.file("responses/pretty-printed-assertion-signed.xml"), as: UTF8.self)
        let v1 = TokenExchangeRequest.v1(
            samlAttributeQueryResponse: xml, requestor: "REF 30", deviceID: "d/1", mvpd: "Optimum", deviceType: .tvOS)
        #expect(v1.path == "/api/v1/tokens/authn")
        #expect(v1.bodyText.hasPrefix("requestor=REF%2030&deviceId=d%2F1&mvpd=Optimum&deviceType=tvOS&SAMLResponse="))
        let v2 = TokenExchangeRequest.v2(
            samlAttributeQueryResponse: xml, serviceProvider: "REF30", accessToken: "token", deviceIdentifier: "abc",
            deviceInfo: "eyJ9", partnerFrameworkStatus: Self.granted)
        #expect(v2.path == "/api/v2/REF30/profiles/sso/Apple")
        #expect(v2.header("AP-Partner-Framework-Status") == Self.granted.headerValue)
        #expect(v2.header("Authorization") == "Bearer token")
        for request in [v1, v2] {
            let value = request.bodyText.components(separatedBy: "SAMLResponse=")[1]
            // Exactly the cookbook's value: its own code is the oracle.
            #expect(value == CookbookOracle.encode(xml))
            // Decoding the form once gives Base64: nothing is left percent-encoded (no "%25").
            #expect(!value.contains("%25"))
            let once = try #require(value.removingPercentEncoding)
            #expect(Data(base64Encoded: once) == Data(Cookbook.normalize(xml).utf8))
            let decoded = try SAMLResponseDecoder().decode(request.body)
            #expect(decoded.repairs.isEmpty)
        }
    }

    @Test("responses signed by the mock MVPD with fresh IDs go through the exchange")
    func mockMVPDRoundTrip() async throws {
        let provider = try MockIdentityProvider(
            privateKeyPEM: try Self.file("keys/ecdsa-p256.key.pem"), certificatePEM: try Self.file("keys/ecdsa-p256.cert.pem"))
        var template = MockIdentityProvider.Template()
        template.inResponseTo = "_aq-3f9a1b2c"
        let xml = try provider.response(template, issuedAt: Self.now, placement: .both)
        var configuration = SAMLResponseVerifier.Configuration(
            identityProvider: try IdentityProvider(
                entityID: template.issuer, keys: try TrustedKey.all(pem: try Self.file("keys/ecdsa-p256.cert.pem"))),
            audience: .equals(template.audience), destination: .skip, inResponseTo: .equals("_aq-3f9a1b2c"), replay: .skip)
        configuration.clock = FixedClock(Self.now)
        let trust = try TrustRegistry(
            ["Optimum": IdentityProvider(entityID: template.issuer, keys: configuration.trustedKeys)], template: configuration)
        let exchange = TokenExchange(configuration: Self.configuration, trust: trust)
        let profile = try await exchange.exchange(body: Self.deviceBody(xml), partnerFrameworkStatus: Self.granted.headerValue)
        #expect(profile.attributes.map(\.key) == ["userID", "uid", "householdId", "zip"])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

extension TokenExchange {
    /// The exchange's outcome as a value, for tests that compare refusals.
    func result(body: [UInt8], partnerFrameworkStatus: String?, mvpd: String? = nil) async -> Result<AppleSSOProfile, EnhancedError> {
        do {
            return .success(try await exchange(body: body, partnerFrameworkStatus: partnerFrameworkStatus, mvpd: mvpd))
        } catch {
            return .failure(error)
        }
    }
}

@Suite("Profile store in memory")
struct InMemoryProfileStoreTests {
    static func profile(_ device: String, _ mvpd: String, expiresIn seconds: Int64) -> StoredProfile {
        StoredProfile(
            serviceProvider: "REF30", device: device, mvpd: mvpd, json: Array("{}".utf8), notAfter: .now() + .seconds(seconds))
    }

    @Test("one profile per device and MVPD, only valid ones read, bounded: expired ones go at the next save, then the soonest to expire")
    func bounded() async throws {
        let store = InMemoryProfileStore(capacity: 3)
        try await store.save(Self.profile("d1", "A", expiresIn: 60))
        try await store.save(Self.profile("d1", "A", expiresIn: 120))  // replaces
        try await store.save(Self.profile("d1", "B", expiresIn: -1))  // already expired
        #expect(store.count == 2)
        try await store.save(Self.profile("d2", "A", expiresIn: 30))  // the expired one goes at this save
        #expect(store.count == 2)
        #expect(try await store.profiles(serviceProvider: "REF30", device: "d1", now: .now()).map(\.mvpd) == ["A"])
        try await store.save(Self.profile("d3", "A", expiresIn: 90))
        #expect(store.count == 3)
        try await store.save(Self.profile("d4", "A", expiresIn: 90))  // full: d2's (30 s) goes
        #expect(store.count == 3)
        #expect(try await store.profiles(serviceProvider: "REF30", device: "d2", now: .now()).isEmpty)
        #expect(try await store.profiles(serviceProvider: "REF30", device: "d1", now: .now()).count == 1)
        #expect(try await store.profiles(serviceProvider: "OTHER", device: "d1", now: .now()).isEmpty)
    }
}
