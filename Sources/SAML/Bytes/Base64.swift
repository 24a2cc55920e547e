/// Standard Base64 (RFC 4648 section 4), written for throughput: no Foundation, one allocation.
package enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The length of the padded encoding of `count` bytes.
    package static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Padded standard Base64 without line breaks, as `Data.base64EncodedString(options: [])` writes it.
    package static func encode(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        let length = encodedLength(input.count)
        return [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
            initialized = encode(input, into: output)
        }
    }

    /// Encodes into `output`, which must hold ``encodedLength(_:)`` bytes; returns the count written.
    package static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(output.count >= encodedLength(input.count))
        return alphabet.withUnsafeBufferPointer { table in
            var i = 0
            var o = 0
            let whole = input.count - input.count % 3
            while i < whole {
                let b0 = Int(input[i]), b1 = Int(input[i + 1]), b2 = Int(input[i + 2])
                output[o] = table[b0 >> 2]
                output[o + 1] = table[(b0 & 0x03) << 4 | b1 >> 4]
                output[o + 2] = table[(b1 & 0x0F) << 2 | b2 >> 6]
                output[o + 3] = table[b2 & 0x3F]
                i += 3
                o += 4
            }
            let rest = input.count - whole
            if rest > 0 {
                let b0 = Int(input[i])
                let b1 = rest == 2 ? Int(input[i + 1]) : 0
                output[o] = table[b0 >> 2]
                output[o + 1] = table[(b0 & 0x03) << 4 | b1 >> 4]
                output[o + 2] = rest == 2 ? table[(b1 & 0x0F) << 2] : UInt8(ascii: "=")
                output[o + 3] = UInt8(ascii: "=")
                o += 4
            }
            return o
        }
    }

    /// The value of each byte in the alphabet, or `invalid`.
    package static let invalid: UInt8 = 0xFF
    package static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, symbol) in alphabet.enumerated() {
            table[Int(symbol)] = UInt8(index)
        }
        return table
    }()
}
