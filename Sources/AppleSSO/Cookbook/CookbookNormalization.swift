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
                normalize(wellFormed: input, into: output)
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
            initialized = normalize(wellFormed: utf8, into: output)
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
            normalize(wellFormed: UnsafeRawBufferPointer(bytes), into: bytes.bindMemory(to: UInt8.self))
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

    /// Normalises well-formed UTF-8 into `output` (at least `input.count` bytes); returns the length.
    ///
    /// `output` may be `input` itself: every scalar is either dropped or copied forwards, so the write
    /// offset never exceeds the read offset, and each load happens before the store that could overlap it.
    static func normalize(wellFormed input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let count = input.count
        var i = 0
        var o = 0
        var inBlankRun = false  // the previous input scalar was U+0020 or U+0009 (step 1)
        var started = false  // a scalar outside the trimmed set has been written (step 3, leading)
        var kept = 0  // output length up to the last scalar outside the trimmed set (step 3, trailing)
        while i < count {
            // Fast path: eight bytes of printable ASCII other than space are copied as they are.
            while i + 8 <= count {
                let word = input.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let controlOrSpace = (word &- 0x2121_2121_2121_2121) & ~word
                guard (word | controlOrSpace) & 0x8080_8080_8080_8080 == 0 else { break }
                UnsafeMutableRawPointer(output.baseAddress! + o).storeBytes(of: word, as: UInt64.self)
                i += 8
                o += 8
                kept = o
                started = true
                inBlankRun = false
            }
            guard i < count else { break }
            let byte = input[i]
            if byte < 0x80 {
                switch byte {
                case 0x20, 0x09:
                    if !inBlankRun {
                        inBlankRun = true
                        if started {
                            output[o] = 0x20
                            o += 1
                        }
                    }
                case 0x0A...0x0D:
                    inBlankRun = false
                default:
                    inBlankRun = false
                    output[o] = byte
                    o += 1
                    started = true
                    kept = o
                }
                i += 1
                continue
            }
            inBlankRun = false
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
            switch classify(input, at: i, lead: byte) {
            case .newline:
                break
            case .space:
                if started {
                    for k in 0..<length { output[o + k] = input[i + k] }
                    o += length
                }
            case .other:
                for k in 0..<length { output[o + k] = input[i + k] }
                o += length
                started = true
                kept = o
            }
            i += length
        }
        return kept
    }

    private enum ScalarClass { case newline, space, other }

    /// Classifies the multi-byte scalar at `i`. Only leads C2, E1, E2 and E3 can start a scalar of the
    /// newline or space sets.
    @inline(__always)
    private static func classify(_ input: UnsafeRawBufferPointer, at i: Int, lead: UInt8) -> ScalarClass {
        switch lead {
        case 0xC2:
            switch input[i + 1] {
            case 0x85: return .newline  // U+0085
            case 0xA0: return .space  // U+00A0
            default: return .other
            }
        case 0xE1:
            return input[i + 1] == 0x9A && input[i + 2] == 0x80 ? .space : .other  // U+1680
        case 0xE2:
            let second = input[i + 1], third = input[i + 2]
            if second == 0x80 {
                switch third {
                case 0x80...0x8B, 0xAF: return .space  // U+2000...U+200B, U+202F
                case 0xA8, 0xA9: return .newline  // U+2028, U+2029
                default: return .other
                }
            }
            return second == 0x81 && third == 0x9F ? .space : .other  // U+205F
        case 0xE3:
            return input[i + 1] == 0x80 && input[i + 2] == 0x80 ? .space : .other  // U+3000
        default:
            return .other
        }
    }
}
