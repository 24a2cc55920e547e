internal import CSAMLShim

/// An HMAC-SHA-256 key made ready by OpenSSL once (`saml_shim_hmac_key_new`), freed with the last copy of
/// its ``RequestIDKey``. Each MAC works on its own copy of the ready state, so one key serves any number of
/// threads. A key OpenSSL could not make ready (it cannot allocate) makes every MAC fail, and every
/// request ID under it is then refused.
///
/// `@unchecked Sendable`: `key` is set once, in `init`, and OpenSSL's ready state behind it is only read
/// (each MAC copies it) until `deinit`.
final class ReadyHMACKey: @unchecked Sendable {
    let key: OpaquePointer?

    init(_ secret: [UInt8]) {
        key = secret.withUnsafeBufferPointer { saml_shim_hmac_key_new($0.baseAddress, $0.count) }
    }

    deinit { saml_shim_hmac_key_free(key) }

    /// HMAC-SHA-256 of `input`, or nil when OpenSSL fails.
    func mac(_ input: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 32)
        let status = input.withUnsafeBufferPointer { data in
            output.withUnsafeMutableBufferPointer { saml_shim_hmac_sha256(key, data.baseAddress, data.count, $0.baseAddress) }
        }
        return status == 0 ? output : nil
    }

    /// Whether `a` and `b` are equal, compared in time that depends on their length only
    /// (`CRYPTO_memcmp`), for MACs.
    static func equalInConstantTime(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in saml_shim_equal_constant_time(x.baseAddress, y.baseAddress, x.count) == 1 }
        }
    }
}
