import CookbookEncoding
import SAML

/// The Adobe Pass cookbook's client-side treatment of `samlAttributeQueryResponse`, byte for byte.
///
/// The cookbook (identical in every version) runs three Foundation calls, then Base64, then
/// percent-encoding:
///
/// ```swift
/// s = s.replacingOccurrences(of: "[ \\t]+", with: " ", options: .regularExpression)
/// s = s.components(separatedBy: CharacterSet.newlines).joined(separator: "")
/// s = s.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines)
/// s = s.data(using: .utf8)!.base64EncodedString(options: [])
/// s = s.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "!*'();:@&=+$,/?%#[]").inverted)!
/// ```
///
/// ``normalize(_:)-(String)`` and ``encode(_:)-(String)`` reproduce that output exactly for every Unicode
/// input, in one pass over the UTF-8 bytes, without Foundation or regular expressions:
///
/// 1. each run of U+0020/U+0009 becomes one U+0020;
/// 2. every newline scalar (U+000A to U+000D, U+0085, U+2028, U+2029) is deleted, after step 1, so
///    `"a \n b"` gives `"a  b"`;
/// 3. `whitespacesAndNewlines` is trimmed from both ends, scalar by scalar: the newlines, tab, and the
///    space separators U+0020, U+00A0, U+1680, U+2000 to U+200A, U+202F, U+205F, U+3000, and also U+200B,
///    which Foundation still counts as whitespace (measured against swift-corelibs-foundation, Swift 6.3).
public enum Cookbook {
    /// The cookbook's whitespace normalisation of a String.
    public static func normalize(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            let input = UnsafeRawBufferPointer(utf8)
            return String(unsafeUninitializedCapacity: input.count) { output in
                CookbookText.normalize(wellFormed: input, into: output)
            }
        }
    }

    /// The cookbook's whitespace normalisation of UTF-8 bytes.
    ///
    /// - Throws: `SAMLError.Code.inputNotUTF8` when `utf8` is not well-formed UTF-8 (the cookbook
    ///   starts from a `String`, which always is).
    public static func normalize(utf8: UnsafeRawBufferPointer) throws -> [UInt8] {
        try requireUTF8(utf8)
        return [UInt8](unsafeUninitializedCapacity: utf8.count) { output, initialized in
            initialized = CookbookText.normalize(wellFormed: utf8, into: output)
        }
    }

    /// The cookbook's whitespace normalisation of UTF-8 bytes.
    public static func normalize(utf8: [UInt8]) throws -> [UInt8] {
        try utf8.withUnsafeBytes { try normalize(utf8: $0) }
    }

    /// The cookbook's whitespace normalisation, done in the storage of `utf8` (no second buffer);
    /// `utf8` is left holding the normalised text.
    ///
    /// - Throws: `SAMLError.Code.inputNotUTF8` when `utf8` is not well-formed UTF-8; `utf8` is
    ///   then unchanged.
    public static func normalize(inPlace utf8: inout [UInt8]) throws {
        try utf8.withUnsafeBytes { try requireUTF8($0) }
        let count = utf8.withUnsafeMutableBytes { bytes in
            // Safe in place: the write position never passes the read position (see `normalize`).
            CookbookText.normalize(wellFormed: UnsafeRawBufferPointer(bytes), into: bytes.bindMemory(to: UInt8.self))
        }
        utf8.removeSubrange(count...)
    }

    static func requireUTF8(_ bytes: UnsafeRawBufferPointer) throws {
        if let offset = UTF8Validation.firstInvalidOffset(bytes) {
            throw SAMLError(
                .inputNotUTF8,
                "expected UTF-8 text, found the ill-formed byte 0x\(Hex.string([bytes[offset]])) at offset \(offset)"
            )
        }
    }
}
