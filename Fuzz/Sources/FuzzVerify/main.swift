import FuzzSupport

// The full pipeline (parse, structure, signatures with recovery, decryption, validation, extraction)
// with a pinned key and a fixed clock: nothing the key did not sign is ever accepted
// (SignedContentOracle).
let oracle = SignedContentOracle(
    verifier: Fuzz.verifier(), seeds: Fuzz.vectors("TestVectors/responses") + Fuzz.vectors("TestVectors/recovery"))

Fuzz.run { data, count in
    oracle.check(UnsafeRawBufferPointer(Fuzz.bytes(data, count)))
    return 0
}
