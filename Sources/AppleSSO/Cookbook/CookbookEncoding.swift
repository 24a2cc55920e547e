import CookbookEncoding
import SAML

extension Cookbook {
    /// The cookbook's full client-side encoding of a String: ``normalize(_:)-(String)``, then padded
    /// standard Base64 of the UTF-8 bytes, then percent-encoding.
    ///
    /// The cookbook's percent-encoding set is the inverse of `!*'();:@&=+$,/?%#[]`; of the Base64
    /// alphabet it changes exactly `+` (`%2B`), `/` (`%2F`) and `=` (`%3D`). The result is ready to be
    /// sent as the `SAMLResponse` form value and must not be URL-encoded again.
    public static func encode(_ text: String) -> String {
        CookbookText.encode(text)
    }

    /// The cookbook's full client-side encoding of UTF-8 bytes (see ``encode(_:)-(String)``).
    ///
    /// - Throws: `SAMLError.Code.inputNotUTF8` when `utf8` is not well-formed UTF-8.
    public static func encode(utf8: UnsafeRawBufferPointer) throws -> [UInt8] {
        try requireUTF8(utf8)
        return CookbookText.encode(wellFormed: utf8)
    }

    /// The cookbook's full client-side encoding of UTF-8 bytes (see ``encode(_:)-(String)``).
    public static func encode(utf8: [UInt8]) throws -> [UInt8] {
        try utf8.withUnsafeBytes { try encode(utf8: $0) }
    }

    /// The cookbook's full client-side encoding, reusing the storage of `utf8` for the normalisation
    /// step (no second buffer): `utf8` is left holding the normalised text.
    ///
    /// - Throws: `SAMLError.Code.inputNotUTF8` when `utf8` is not well-formed UTF-8.
    public static func encode(normalizingInPlace utf8: inout [UInt8]) throws -> [UInt8] {
        try normalize(inPlace: &utf8)
        return utf8.withUnsafeBytes { CookbookText.base64PercentEncoded($0) }
    }

    /// The cookbook's full client-side encoding, streamed: the normalisation happens in the storage of
    /// `utf8` (left holding the normalised text), and the encoded value is handed to `sink` in pieces of
    /// at most 192 KiB, so that an input of any size needs no second full-size buffer.
    ///
    /// - Throws: `SAMLError.Code.inputNotUTF8` when `utf8` is not well-formed UTF-8, or what
    ///   `sink` throws.
    public static func encode(
        normalizingInPlace utf8: inout [UInt8],
        into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try normalize(inPlace: &utf8)
        // A multiple of three, so that only the last piece can carry padding.
        let piece = 3 << 14
        let output = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Base64.encodedLength(piece) * 3)
        defer { output.deallocate() }
        try utf8.withUnsafeBytes { normalized in
            var start = 0
            while start < normalized.count {
                let end = Swift.min(start + piece, normalized.count)
                let count = Base64.encode(
                    UnsafeRawBufferPointer(rebasing: normalized[start..<end]), into: output,
                    alphabet: .cookbookPercentEncoded)
                try sink(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(output)[0..<count]))
                start = end
            }
        }
    }
}
