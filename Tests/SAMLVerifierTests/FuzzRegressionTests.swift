import Foundation
import SAML
import Testing

/// Inputs the fuzz targets reported (docs/fuzzing.md), each with what the verifier must do with it.
@Suite("Fuzz findings")
struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FuzzFindings")

    /// FuzzVerify, 2026-11-23: one byte of the unsigned Response's ID changed in
    /// `keyinfo-id-duplicates-response-id` (refused for the KeyInfo `Id` equal to the Response's ID). The
    /// change removes the duplicate, so the response verifies: its signed Assertion is exactly what the key
    /// signed. The finding was in the target's invariant (it compared with acceptable seeds only), not in
    /// the verifier; the target now compares with everything the key signed in any seed.
    @Test("an unsigned Response's ID changed: the signed assertion verifies, and only it counts as signed")
    func unsignedResponseIDChanged() throws {
        let vector = Vector.named("keyinfo-id-duplicates-response-id")
        let finding = try String(contentsOf: Self.folder.appendingPathComponent("unsigned-response-id-changed.xml"), encoding: .utf8)
        var configuration = try vector.configuration()
        configuration.destination = .skip
        configuration.inResponseTo = .skip
        let verifier = try SAMLResponseVerifier(configuration)
        // As found, the changed byte is a '[', which no ID may hold since issue 33 (id.malformed); the
        // same change to a name character verifies.
        #expect(throws: SAMLError(.idMalformed, "")) {
            try verifier.verifyWithoutReplayCheck(Array(finding.utf8), at: vector.instant)
        }
        let input = Array(finding.replacingOccurrences(of: "_resp-h-k[d", with: "_resp-h-kXd").utf8)
        let response = try verifier.verifyWithoutReplayCheck(input, at: vector.instant)
        #expect(response.signedParts == .assertion)
        #expect(response.assertion.id == "_assert-h-kid")
        #expect(response.responseID == "_resp-h-kXd")
        // The document as bundled is still refused for its duplicate ID.
        #expect(throws: SAMLError(.idDuplicate, "")) { try vector.verify() }
    }
}
