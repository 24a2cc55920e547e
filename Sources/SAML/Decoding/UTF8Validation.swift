/// UTF-8 well-formedness (Unicode 15, table 3-7): no overlongs, no surrogates, nothing above U+10FFFF.
package enum UTF8Validation {
    /// The offset of the first byte that starts an ill-formed sequence, or `nil` when all is well-formed.
    package static func firstInvalidOffset(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        var i = 0
        while i < count {
            // ASCII fast path, eight bytes at a time.
            while i + 8 <= count, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
            }
            guard i < count else { break }
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard i + length <= count else { return i }
            let second = bytes[i + 1]
            guard second >= low, second <= high else { return i }
            var k = 2
            while k < length {
                guard bytes[i + k] & 0xC0 == 0x80 else { return i }
                k += 1
            }
            i += length
        }
        return nil
    }
}
