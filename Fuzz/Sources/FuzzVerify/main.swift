import FuzzSupport
import SAML

// The full pipeline (parse, structure, signatures with recovery, decryption, validation, extraction)
// with a pinned key and a fixed clock. Forging is impossible without the key: whatever the mutation, an
// accepted input must carry exactly the assertion of a response signed by that key (the seeds).
let verifier = Fuzz.verifier()

let signed: Set<VerifiedAssertion> = {
    var assertions = Set<VerifiedAssertion>()
    for seed in Fuzz.vectors("TestVectors/responses") + Fuzz.vectors("TestVectors/recovery") {
        if let response = try? seed.withUnsafeBytes({ try verifier.verifyWithoutReplayCheck($0, at: Fuzz.now) }) {
            assertions.insert(response.assertion)
        }
    }
    Fuzz.require(assertions.count > 10, "fewer seeds verify than expected (\(assertions.count))")
    return assertions
}()

Fuzz.run { data, count in
    let input = UnsafeRawBufferPointer(Fuzz.bytes(data, count))
    if let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) {
        Fuzz.require(signed.contains(response.assertion), "accepted an assertion no seed carries: \(response.assertion.id)")
    }
    return 0
}
