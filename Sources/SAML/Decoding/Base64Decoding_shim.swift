internal import CSAMLShim
import CookbookEncoding

/// Lenient-where-safe Base64 decoding for values that travelled through HTTP forms.
enum Base64Decoding {
    /// What a space in the Base64 is.
    enum Spaces {
        /// The `+` a form decoder turned into a space (recorded as ``SAMLResponseDecoder/Repair/spaceAsPlus``).
        case plus
        /// Whitespace an encoder wrapped the text with, skipped like line breaks and tabs.
        case whitespace
    }

    /// Decodes `input`, skipping CR, LF and tab, reading a space as `spaces` says, accepting missing
    /// padding. Throws on any other byte, data after padding, wrong padding, a length no encoding has, or
    /// more than `maximumBytes` of output.
    static func decode(
        _ input: [UInt8], maximumBytes: Int, spaces: Spaces = .plus, repairs: inout [SAMLResponseDecoder.Repair]
    ) throws -> [UInt8] {
        try input.withUnsafeBytes { try decode($0, maximumBytes: maximumBytes, spaces: spaces, repairs: &repairs) }
    }

    /// Whether `input` holds a space (the one byte ``Spaces`` decides about).
    static func containsSpace(_ input: UnsafeRawBufferPointer) -> Bool {
        input.contains(UInt8(ascii: " "))
    }

    static func decode(
        _ input: UnsafeRawBufferPointer, maximumBytes: Int, spaces: Spaces = .plus, repairs: inout [SAMLResponseDecoder.Repair]
    ) throws -> [UInt8] {
        let capacity = min(input.count / 4 * 3 + 3, maximumBytes + 3)
        var sawSpace = false
        let output = try [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            initialized = 0
            try Base64.shiftedValues.withUnsafeBufferPointer { shifted in
                var quad: UInt32 = 0
                var pending = 0
                var padding = 0
                var o = 0
                var i = 0
                let count = input.count
                // Plain pointers throughout: the bounds are the loops' own conditions (capacity above).
                guard count > 0, let bytes = input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    let table = shifted.baseAddress, let out = output.baseAddress
                else { return }
                while i < count {
                    // Fast path: groups of four symbols of the alphabet, nothing pending; any other byte
                    // (a line break, a space, padding) goes through the symbol-by-symbol path below.
                    if pending == 0, padding == 0 {
                        // Blocks of 16 symbols with SSSE3 (base64.c), up to the first block holding anything else.
                        let blocks = saml_shim_base64_decode_blocks(bytes + i, count - i, out + o, capacity - o, max(0, maximumBytes - o))
                        i += blocks
                        o += blocks / 4 * 3
                        // Two groups at a time, their six bytes written as one 8-byte word (the last two
                        // bytes are scratch within the capacity, overwritten or never counted).
                        while i + 8 <= count, o + 8 <= capacity, o + 6 <= maximumBytes {
                            let first =
                                table[Int(bytes[i])] | table[256 + Int(bytes[i + 1])]
                                | table[512 + Int(bytes[i + 2])] | table[768 + Int(bytes[i + 3])]
                            let second =
                                table[Int(bytes[i + 4])] | table[256 + Int(bytes[i + 5])]
                                | table[512 + Int(bytes[i + 6])] | table[768 + Int(bytes[i + 7])]
                            if (first | second) & Base64.invalidGroup != 0 { break }
                            let word = UInt64(first) << 40 | UInt64(second) << 16
                            UnsafeMutableRawPointer(out + o).storeBytes(of: word.bigEndian, as: UInt64.self)
                            o += 6
                            i += 8
                        }
                        while i + 4 <= count, o + 3 <= maximumBytes {
                            let group =
                                table[Int(bytes[i])] | table[256 + Int(bytes[i + 1])]
                                | table[512 + Int(bytes[i + 2])] | table[768 + Int(bytes[i + 3])]
                            if group & Base64.invalidGroup != 0 { break }
                            out[o] = UInt8(truncatingIfNeeded: group >> 16)
                            out[o + 1] = UInt8(truncatingIfNeeded: group >> 8)
                            out[o + 2] = UInt8(truncatingIfNeeded: group)
                            o += 3
                            i += 4
                        }
                        if i == count { break }
                    }
                    let byte = bytes[i]
                    i += 1
                    var symbol = byte
                    switch byte {
                    case UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "\t"):
                        continue
                    case UInt8(ascii: " "):
                        guard spaces == .plus else { continue }
                        symbol = UInt8(ascii: "+")
                        sawSpace = true
                    case UInt8(ascii: "="):
                        padding += 1
                        continue
                    default:
                        break
                    }
                    // The last table holds each symbol's value unshifted.
                    let value = table[768 + Int(symbol)]
                    guard value & Base64.invalidGroup == 0 else {
                        throw SAMLError(
                            .decodeInvalidBase64,
                            "expected a Base64 symbol at offset \(i - 1), found byte 0x\(Hex.string([byte]))"
                        )
                    }
                    guard padding == 0 else {
                        throw SAMLError(.decodeInvalidBase64, "expected nothing after '=' padding, found data at offset \(i - 1)")
                    }
                    quad = quad << 6 | value
                    pending += 1
                    if pending == 4 {
                        guard o + 3 <= maximumBytes else { throw tooLarge(maximumBytes) }
                        out[o] = UInt8(truncatingIfNeeded: quad >> 16)
                        out[o + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                        out[o + 2] = UInt8(truncatingIfNeeded: quad)
                        o += 3
                        quad = 0
                        pending = 0
                    }
                }
                if padding > 0, pending < 2 || pending + padding != 4 {
                    let expected = pending < 2 ? "no" : String(4 - pending)
                    throw SAMLError(.decodeInvalidBase64, "expected \(expected) '=' of padding, found \(padding)")
                }
                if pending == 1 {
                    throw SAMLError(
                        .decodeTruncatedBase64,
                        "expected a whole number of Base64 groups, found one stray symbol at the end (input cut off?)"
                    )
                }
                if pending > 1 {
                    guard o + pending - 1 <= maximumBytes else { throw tooLarge(maximumBytes) }
                    quad <<= UInt32(6 * (4 - pending))
                    out[o] = UInt8(truncatingIfNeeded: quad >> 16)
                    o += 1
                    if pending == 3 {
                        out[o] = UInt8(truncatingIfNeeded: quad >> 8)
                        o += 1
                    }
                }
                initialized = o
            }
        }
        if sawSpace { repairs.append(.spaceAsPlus) }
        return output
    }

    private static func tooLarge(_ maximumBytes: Int) -> SAMLError {
        SAMLError(.decodeTooLarge, "expected at most \(maximumBytes) decoded bytes, found more")
    }
}
