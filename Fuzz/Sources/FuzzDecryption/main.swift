import FuzzSupport

// Decryption with a fixed SP key (RSA-OAEP and RSA-1_5 key transport, AES-GCM and CBC data): encrypted
// responses reach the decrypter whether or not they are signed. A typed error or the right verdict,
// never a crash, and nothing the key did not sign accepted (SignedContentOracle).
let oracle = SignedContentOracle(verifier: Fuzz.verifier(recovery: false), seeds: Fuzz.vectors("TestVectors/responses"))

Fuzz.run { data, count in
    oracle.check(UnsafeRawBufferPointer(Fuzz.bytes(data, count)))
    return 0
}
