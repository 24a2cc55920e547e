@_spi(Stages) public import SAML

/// What the pinned key signed in the seeds, and the check that an accepted input carries nothing else.
/// Forging is impossible without the key: whatever the mutation, the signed parts of an accepted input
/// must be, as canonicalised and digested, content the key signed in a seed (whether or not that seed as
/// a whole is acceptable: a mutation may repair its unsigned parts). Where no signed part can be compared
/// that way (accepted through the recovery of the cookbook's damage, or an assertion signed inside its
/// encryption under an unsigned Response), its assertion must be that of an acceptable seed.
public struct SignedContentOracle {
    let verifier: SAMLResponseVerifier
    let assertions: Set<VerifiedAssertion>
    let signedContent: Set<[UInt8]>

    public init(verifier: SAMLResponseVerifier, seeds: [[UInt8]]) {
        var assertions = Set<VerifiedAssertion>()
        var content = Set<[UInt8]>()
        for seed in seeds {
            seed.withUnsafeBytes { input in
                content.formUnion(verifier.contentSignedByPinnedKey(input))
                if let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) { assertions.insert(response.assertion) }
            }
        }
        Fuzz.require(assertions.count > 10 && content.count > assertions.count, "fewer seeds verify than expected")
        self.verifier = verifier
        self.assertions = assertions
        signedContent = content
    }

    /// Verifies `input`; stops the run when it is accepted with content the key did not sign.
    public func check(_ input: UnsafeRawBufferPointer) {
        guard let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) else { return }
        let parts = response.repairs.isEmpty ? signedParts(input) : []
        if parts.isEmpty {
            Fuzz.require(assertions.contains(response.assertion), "accepted an assertion no seed carries: \(response.assertion.id)")
        }
        for part in parts {
            Fuzz.require(signedContent.contains(part), "accepted signed content the key signed in no seed")
        }
    }

    private func signedParts(_ input: UnsafeRawBufferPointer) -> [[UInt8]] {
        guard let parsed = try? verifier.parse(input) else { return [] }
        return verifier.canonicalReferenceBytes(parsed, fastCanonicalization: false).compactMap { $0 }
    }
}
