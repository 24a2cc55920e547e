import FuzzSupport
import SAML

// Decryption with a fixed SP key (RSA-OAEP and RSA-1_5 key transport, AES-GCM and CBC data): encrypted
// responses reach the decrypter whether or not they are signed. A typed error or the right verdict,
// never a crash; the one accepted outcome is a seed's assertion.
let verifier = Fuzz.verifier(recovery: false)

let signed: Set<VerifiedAssertion> = {
    var assertions = Set<VerifiedAssertion>()
    for seed in Fuzz.vectors("TestVectors/responses") {
        if let response = try? seed.withUnsafeBytes({ try verifier.verifyWithoutReplayCheck($0, at: Fuzz.now) }) {
            assertions.insert(response.assertion)
        }
    }
    return assertions
}()

Fuzz.run { data, count in
    let input = UnsafeRawBufferPointer(Fuzz.bytes(data, count))
    if let response = try? verifier.verifyWithoutReplayCheck(input, at: Fuzz.now) {
        Fuzz.require(signed.contains(response.assertion), "accepted an assertion no seed carries: \(response.assertion.id)")
    }
    return 0
}
