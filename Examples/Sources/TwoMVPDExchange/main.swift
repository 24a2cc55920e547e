// A Token Exchange for two MVPDs, each trusting its own identity provider, with the mock MVPDs of
// SAMLMockIdP signing fresh responses: MVPD-A's and MVPD-B's logins are accepted, and a response from
// MVPD-A's IdP posted as MVPD-B is refused (issuer.mismatch), as is the same response twice.
//
//     swift run two-mvpd-exchange [TestVectors folder]
import AppleSSO
import Foundation
import SAML
import SAMLMockIdP

let vectors = CommandLine.arguments.dropFirst().first ?? "../TestVectors"
func text(_ path: String) throws -> String { try String(contentsOfFile: "\(vectors)/\(path)", encoding: .utf8) }

// The service's side: the MVPD configuration, the trust file (MVPD-A from signed metadata, MVPD-B from a
// pinned certificate), one verifier template for both.
let template = SAMLResponseVerifier.Configuration.template(
    audience: .equals("https://saml.sp.auth.adobe.com"), destination: .skip, replay: .assertions(InMemoryStateStore()))
let trust = try TrustRegistry(try TrustFile.load(contentsOf: "\(vectors)/exchange/trust.json"), template: template)
let exchange = TokenExchange(
    configuration: try MVPDConfiguration.decode(try text("exchange/mvpd-configuration.json")), trust: trust,
    mapping: UserMetadataMapping(["householdId": "householdID"]))

// The MVPDs' side: their identity providers sign fresh responses.
let idpA = try MockIdentityProvider(
    privateKeyPEM: Array(try text("keys/rsa-2048.key.pem").utf8),
    certificatePEM: Array(try text("keys/rsa-2048.cert.pem").utf8))
let idpB = try MockIdentityProvider(
    privateKeyPEM: Array(try text("keys/ecdsa-p256.key.pem").utf8),
    certificatePEM: Array(try text("keys/ecdsa-p256.cert.pem").utf8))
func response(by idp: MockIdentityProvider, issuer: String, subscriber: String) throws -> String {
    var template = MockIdentityProvider.Template()
    template.issuer = issuer
    template.nameID = subscriber
    template.attributes = [("uid", [subscriber]), ("householdId", ["hh-\(subscriber)"])]
    return String(decoding: try idp.response(template, issuedAt: .now(), placement: .assertion), as: UTF8.self)
}

/// What the device posts, and the `AP-Partner-Framework-Status` header naming its provider.
func post(_ xml: String, provider: String) async -> String {
    let status = PartnerFrameworkStatus(
        accessStatus: .granted, providerID: provider, expirationMilliseconds: SAMLInstant.now().millisecondsSinceEpoch + 86_400_000)
    let body = "SAMLResponse=" + Cookbook.encode(xml)
    do {
        let profile = try await exchange.exchange(body: body, partnerFrameworkStatus: status.headerValue)
        return "201 \(profile.mvpd): \(profile.jsonText.prefix(120))..."
    } catch {
        return "\(error.status) \(error.code) (\(error.cause.map { "\($0.code)" } ?? "no library code"))"
    }
}

let fromA = try response(by: idpA, issuer: "https://idp.mvpd.example.com", subscriber: "alice")
let fromB = try response(by: idpB, issuer: "https://idp.mvpd-b.example.com", subscriber: "bob")
let results = [
    ("MVPD-A's response, posted for ProviderA", await post(fromA, provider: "ProviderA")),
    ("MVPD-B's response, posted for ProviderB", await post(fromB, provider: "ProviderB")),
    ("MVPD-A's response again", await post(fromA, provider: "ProviderA")),
    (
        "a response from MVPD-A's IdP posted for ProviderB",
        await post(try response(by: idpA, issuer: "https://idp.mvpd.example.com", subscriber: "mallory"), provider: "ProviderB")
    ),
]
for (what, outcome) in results { print("\(what):\n  \(outcome)") }
let expected = [
    "201", "201", "400 invalid_parameter_saml_response (replay.detected)", "400 invalid_parameter_saml_response (issuer.mismatch)",
]
guard zip(results.map(\.1), expected).allSatisfy({ $0.hasPrefix($1) }) else {
    print("error: an outcome differs from the expected one")
    exit(1)
}
