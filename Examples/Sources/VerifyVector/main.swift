// Verifies one bundled response as a Token Exchange backend would: the IdP's certificate pinned, its
// entity ID required, the audience and destination checked, at the instant the vector was made for.
//
//     swift run verify-vector [TestVectors folder]
import Foundation
import SAML

let vectors = CommandLine.arguments.dropFirst().first ?? "../TestVectors"
let certificatePEM = try String(contentsOfFile: "\(vectors)/keys/rsa-2048.cert.pem", encoding: .utf8)
let responseXML = try String(contentsOfFile: "\(vectors)/responses/typical-rsa2048-assertion-signed.xml", encoding: .utf8)

var configuration = SAMLResponseVerifier.Configuration(
    identityProvider: try IdentityProvider(entityID: "https://idp.mvpd.example.com", keys: try TrustedKey.all(pem: certificatePEM)),
    audience: .equals("https://saml.sp.auth.adobe.com"),
    destination: .equals("https://sp.example.com/api/v2/REF30/profiles/sso/Apple"),
    inResponseTo: .equals("_aq-3f9a1b2c"),
    replay: .assertions(InMemoryStateStore())
)
// The vector was signed for this instant (TestVectors/manifest.json, "now").
configuration.clock = try FixedClock(xmlDateTime: "2026-11-21T12:01:00Z")
let verifier = try SAMLResponseVerifier(configuration)

// What a device posts: the cookbook-encoded value in a form body. The decoder takes it as it comes.
let decoded = try SAMLResponseDecoder().decode(responseXML)
do {
    let response = try await verifier.verify(decoded)
    let fields = try response.fields(["NameID", "uid", "zip"])
    print("accepted: signed \(response.signedParts) by key \(response.signingKeyFingerprint.prefix(16))...")
    for (name, values) in fields.values { print("  \(name): \(values.joined(separator: ", "))") }
    print("skipped checks: \(response.skippedChecks)")
    // The same response again is a replay.
    _ = try await verifier.verify(decoded)
    print("error: a replay was accepted")
    exit(1)
} catch let error as SAMLError where error.code == .replayDetected {
    print("the same response again: refused, \(error.code) (HTTP \(error.httpStatus))")
} catch let error as SAMLError {
    print("refused: \(error.code): \(error.message)")
    exit(1)
}
