/// Lenient-where-safe Base64 decoding for values that travelled through HTTP forms.
enum Base64Decoding {
    /// Decodes `input`, skipping CR, LF and tab, reading a space as `+` (a form decoder's doing),
    /// accepting missing padding. Throws on any other byte, data after padding, wrong padding, a length
    /// no encoding has, or more than `maximumBytes` of output.
    static func decode(_ input: [UInt8], maximumBytes: Int, repairs: inout [SAMLResponseDecoder.Repair]) throws -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(min(input.count / 4 * 3 + 3, maximumBytes + 3))
        var sawSpace = false
        var quad: UInt32 = 0
        var pending = 0
        var padding = 0
        try Base64.values.withUnsafeBufferPointer { values in
            for (offset, byte) in input.enumerated() {
                var symbol = byte
                switch byte {
                case UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "\t"):
                    continue
                case UInt8(ascii: " "):
                    symbol = UInt8(ascii: "+")
                    sawSpace = true
                case UInt8(ascii: "="):
                    padding += 1
                    continue
                default:
                    break
                }
                let value = values[Int(symbol)]
                guard value != Base64.invalid else {
                    throw SAMLError(
                        .decodeInvalidBase64,
                        "expected a Base64 symbol at offset \(offset), found byte 0x\(SAMLError.hex(byte))"
                    )
                }
                guard padding == 0 else {
                    throw SAMLError(.decodeInvalidBase64, "expected nothing after '=' padding, found data at offset \(offset)")
                }
                quad = quad << 6 | UInt32(value)
                pending += 1
                if pending == 4 {
                    guard output.count + 3 <= maximumBytes else {
                        throw SAMLError(.decodeTooLarge, "expected at most \(maximumBytes) decoded bytes, found more")
                    }
                    output.append(UInt8(truncatingIfNeeded: quad >> 16))
                    output.append(UInt8(truncatingIfNeeded: quad >> 8))
                    output.append(UInt8(truncatingIfNeeded: quad))
                    quad = 0
                    pending = 0
                }
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
            guard output.count + pending - 1 <= maximumBytes else {
                throw SAMLError(.decodeTooLarge, "expected at most \(maximumBytes) decoded bytes, found more")
            }
            quad <<= UInt32(6 * (4 - pending))
            output.append(UInt8(truncatingIfNeeded: quad >> 16))
            if pending == 3 { output.append(UInt8(truncatingIfNeeded: quad >> 8)) }
        }
        if sawSpace { repairs.append(.spaceAsPlus) }
        return output
    }
}
