/// The Adobe Pass cookbook's client-side treatment of `samlAttributeQueryResponse` on well-formed UTF-8:
/// the one implementation behind `AppleSSO`'s public `Cookbook` (which documents the rules and adds the
/// checks of bytes that may not be UTF-8) and the app's client (`AppleSSOClient`), which must not link
/// the verifier's libraries. No Foundation, no dependency.
package enum CookbookText {
    /// The cookbook's whole encoding of a String: normalised, padded standard Base64 of the UTF-8 bytes,
    /// then `+`, `/` and `=` percent-encoded.
    package static func encode(_ text: String) -> String {
        var text = text
        return text.withUTF8 { String(decoding: encode(wellFormed: UnsafeRawBufferPointer($0)), as: UTF8.self) }
    }

    /// The whole encoding of well-formed UTF-8 bytes.
    package static func encode(wellFormed input: UnsafeRawBufferPointer) -> [UInt8] {
        let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Swift.max(input.count, 1))
        defer { scratch.deallocate() }
        let normalizedCount = normalize(wellFormed: input, into: scratch)
        return base64PercentEncoded(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<normalizedCount]))
    }

    /// Padded standard Base64 of `normalized`, `+`, `/` and `=` percent-encoded.
    package static func base64PercentEncoded(_ normalized: UnsafeRawBufferPointer) -> [UInt8] {
        // Every Base64 symbol may become three bytes; only the part written is ever touched.
        [UInt8](unsafeUninitializedCapacity: Base64.encodedLength(normalized.count) * 3) { output, initialized in
            initialized = Base64.encode(normalized, into: output, alphabet: .cookbookPercentEncoded)
        }
    }

    /// Normalises well-formed UTF-8 into `output` (at least `input.count` bytes); returns the length.
    ///
    /// `output` may be `input` itself: every scalar is either dropped or copied forwards, so the write
    /// offset never exceeds the read offset, and each load happens before the store that could overlap it.
    package static func normalize(wellFormed input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
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
