/// Standard Base64 (RFC 4648 section 4), written for throughput: no Foundation, one allocation.
package enum Base64 {
    /// How each of the 64 symbols and the padding are written.
    package struct Alphabet: Sendable {
        /// Up to three bytes per symbol, packed little-endian, and their count.
        fileprivate let symbols: [(UInt32, Int)]
        fileprivate let padding: (UInt32, Int)
        /// The most bytes one symbol can take.
        package let maximumSymbolLength: Int

        /// The standard alphabet after the Adobe Pass cookbook's percent-encoding, which changes exactly
        /// `+` to `%2B`, `/` to `%2F` and `=` to `%3D`.
        package static let cookbookPercentEncoded = Alphabet(escaping: Array("+/=".utf8))
        /// The standard alphabet, padded.
        package static let standard = Alphabet(escaping: [])

        private init(escaping escaped: [UInt8]) {
            func write(_ symbol: UInt8) -> (UInt32, Int) {
                guard escaped.contains(symbol) else { return (UInt32(symbol), 1) }
                let bytes = [UInt8(ascii: "%")] + Hex.digits(symbol)
                return (UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16, 3)
            }
            symbols = Base64.symbols.map(write)
            padding = write(UInt8(ascii: "="))
            maximumSymbolLength = escaped.isEmpty ? 1 : 3
        }
    }

    private static let symbols: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The standard, padded encoding of `bytes`.
    package static func encode(_ bytes: [UInt8], alphabet: Alphabet = .standard) -> String {
        let capacity = encodedLength(bytes.count) * alphabet.maximumSymbolLength + 4 * alphabet.maximumSymbolLength + 4
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = bytes.withUnsafeBytes { encode($0, into: buffer, alphabet: alphabet) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The length of the padded standard encoding of `count` bytes.
    package static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Encodes into `output`, which must hold ``encodedLength(_:)`` times
    /// ``Alphabet/maximumSymbolLength`` bytes; returns the count written.
    package static func encode(
        _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutableBufferPointer<UInt8>,
        alphabet: Alphabet
    ) -> Int {
        precondition(output.count >= encodedLength(input.count) * alphabet.maximumSymbolLength)
        guard let out = UnsafeMutableRawPointer(output.baseAddress) else { return 0 }
        return alphabet.symbols.withUnsafeBufferPointer { table in
            var o = 0
            // Stores four spare bytes at most past the symbol's end; they are overwritten by the next
            // symbol or lie beyond the returned count. The last symbols go through `put` instead.
            func put(_ symbol: (UInt32, Int)) {
                var value = symbol.0
                for k in 0..<symbol.1 {
                    out.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: o + k, as: UInt8.self)
                    value >>= 8
                }
                o += symbol.1
            }
            var i = 0
            let whole = input.count - input.count % 3
            // While at least four bytes of room remain past the worst case, store whole words.
            let safeEnd = output.count - 4 * alphabet.maximumSymbolLength - 4
            while i < whole {
                let b0 = Int(input[i]), b1 = Int(input[i + 1]), b2 = Int(input[i + 2])
                let s0 = table[b0 >> 2]
                let s1 = table[(b0 & 0x03) << 4 | b1 >> 4]
                let s2 = table[(b1 & 0x0F) << 2 | b2 >> 6]
                let s3 = table[b2 & 0x3F]
                if o <= safeEnd {
                    out.storeBytes(of: s0.0, toByteOffset: o, as: UInt32.self)
                    o += s0.1
                    out.storeBytes(of: s1.0, toByteOffset: o, as: UInt32.self)
                    o += s1.1
                    out.storeBytes(of: s2.0, toByteOffset: o, as: UInt32.self)
                    o += s2.1
                    out.storeBytes(of: s3.0, toByteOffset: o, as: UInt32.self)
                    o += s3.1
                } else {
                    put(s0)
                    put(s1)
                    put(s2)
                    put(s3)
                }
                i += 3
            }
            let rest = input.count - whole
            if rest > 0 {
                let b0 = Int(input[i])
                let b1 = rest == 2 ? Int(input[i + 1]) : 0
                put(table[b0 >> 2])
                put(table[(b0 & 0x03) << 4 | b1 >> 4])
                put(rest == 2 ? table[(b1 & 0x0F) << 2] : alphabet.padding)
                put(alphabet.padding)
            }
            return o
        }
    }

    /// The value of each byte in the alphabet, or `invalid`.
    package static let invalid: UInt8 = 0xFF
    package static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, symbol) in symbols.enumerated() {
            table[Int(symbol)] = UInt8(index)
        }
        return table
    }()

    /// For decoding four symbols at once: four tables of 256 entries, the k-th holding each symbol's
    /// value already shifted to its place in a 24-bit group (`value << (18 - 6k)`), or ``invalidGroup``
    /// for a byte outside the alphabet. OR-ing the four lookups gives the group, or a value with
    /// ``invalidGroup`` set.
    package static let invalidGroup: UInt32 = 0x8000_0000
    package static let shiftedValues: [UInt32] = {
        var table = [UInt32](repeating: invalidGroup, count: 4 * 256)
        for (index, symbol) in symbols.enumerated() {
            for place in 0..<4 {
                table[place * 256 + Int(symbol)] = UInt32(index) << (18 - 6 * place)
            }
        }
        return table
    }()
}
