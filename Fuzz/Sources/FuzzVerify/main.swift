import FuzzSupport
@_spi(Stages) import SAML

// The full pipeline (parse, structure, signatures with recovery, decryption, validation, extraction)
// with a pinned key and a fixed clock. Forging is impossible without the key: whatever the mutation, the
// signed parts of an accepted input must be, as canonicalised and digested, content the key signed in a
// seed (whether or not that seed as a whole is acceptable: a mutation may repair its unsigned parts);
// when it was accepted through the recovery of the cookbook's damage, its assertion must be a seed's.
let verifier = Fuzz.verifier()

func signedParts(_ input: UnsafeRawBufferPointer) -> [[UInt8]] {
    guard let parsed = try? verifier.parse(input) else { return [] }
    return verifier.canonicalReferenceBytes(parsed, fastCanonicalization: false).compactMap { $0 }
}

let seeds: (assertions: Set<VerifiedAssertion>, signedContent: Set<[UInt8]>) = {
    var assertions = Set<VerifiedAssertion>()
    var content = Set<[UInt8]>()
    for seed in Fuzz.vectors("TestVectors/responses") + Fuzz.vectors("TestVectors/recovery") {
        seed.withUnsafeBytes { input in
            content.formUnion(verifier.contentSignedByPinnedKey(input))
            if let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) { assertions.insert(response.assertion) }
        }
    }
    Fuzz.require(assertions.count > 10 && content.count > assertions.count, "fewer seeds verify than expected")
    return (assertions, content)
}()

Fuzz.run { data, count in
    let input = UnsafeRawBufferPointer(Fuzz.bytes(data, count))
    if let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) {
        if response.repairs.isEmpty {
            for part in signedParts(input) {
                Fuzz.require(seeds.signedContent.contains(part), "accepted signed content the key signed in no seed")
            }
        } else {
            Fuzz.require(seeds.assertions.contains(response.assertion), "recovered an assertion no seed carries: \(response.assertion.id)")
        }
    }
    return 0
}
