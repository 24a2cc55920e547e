import FuzzSupport
@_spi(Stages) import SAML

// The full pipeline (parse, structure, signatures with recovery, decryption, validation, extraction)
// with a pinned key and a fixed clock. Forging is impossible without the key: whatever the mutation, an
// accepted input must carry exactly the assertion of a response signed by that key (the seeds), and,
// unless it was recovered from the cookbook's damage, its signed parts must be byte for byte (as
// canonicalised and digested) those of a seed.
let verifier = Fuzz.verifier()

func signedParts(_ input: UnsafeRawBufferPointer) -> [[UInt8]] {
    guard let parsed = try? verifier.parse(input) else { return [] }
    return verifier.canonicalReferenceBytes(parsed, fastCanonicalization: false).compactMap { $0 }
}

let seeds: (assertions: Set<VerifiedAssertion>, signedParts: Set<[UInt8]>) = {
    var assertions = Set<VerifiedAssertion>()
    var parts = Set<[UInt8]>()
    for seed in Fuzz.vectors("TestVectors/responses") + Fuzz.vectors("TestVectors/recovery") {
        seed.withUnsafeBytes { input in
            guard let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) else { return }
            assertions.insert(response.assertion)
            parts.formUnion(signedParts(input))
        }
    }
    Fuzz.require(assertions.count > 10, "fewer seeds verify than expected (\(assertions.count))")
    return (assertions, parts)
}()

Fuzz.run { data, count in
    let input = UnsafeRawBufferPointer(Fuzz.bytes(data, count))
    if let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) {
        Fuzz.require(seeds.assertions.contains(response.assertion), "accepted an assertion no seed carries: \(response.assertion.id)")
        if response.repairs.isEmpty {
            for part in signedParts(input) {
                Fuzz.require(seeds.signedParts.contains(part), "accepted signed content no seed carries")
            }
        }
    }
    return 0
}
