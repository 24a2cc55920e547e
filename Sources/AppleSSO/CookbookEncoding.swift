import SAML

extension Cookbook {
    /// The cookbook's full client-side encoding of a String: ``normalize(_:)-(String)``, then padded
    /// standard Base64 of the UTF-8 bytes, then percent-encoding.
    ///
    /// The cookbook's percent-encoding set is the inverse of `!*'();:@&=+$,/?%#[]`; of the Base64
    /// alphabet it changes exactly `+` (`%2B`), `/` (`%2F`) and `=` (`%3D`). The result is ready to be
    /// sent as the `SAMLResponse` form value and must not be URL-encoded again.
    public static func encode(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            let bytes = encode(wellFormed: UnsafeRawBufferPointer(utf8))
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The cookbook's full client-side encoding of UTF-8 bytes (see ``encode(_:)-(String)``).
    ///
    /// - Throws: ``SAML/SAMLError/Code/inputNotUTF8`` when `utf8` is not well-formed UTF-8.
    public static func encode(utf8: UnsafeRawBufferPointer) throws -> [UInt8] {
        try requireUTF8(utf8)
        return encode(wellFormed: utf8)
    }

    /// The cookbook's full client-side encoding of UTF-8 bytes (see ``encode(_:)-(String)``).
    public static func encode(utf8: [UInt8]) throws -> [UInt8] {
        try utf8.withUnsafeBytes { try encode(utf8: $0) }
    }

    static func encode(wellFormed input: UnsafeRawBufferPointer) -> [UInt8] {
        let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Swift.max(input.count, 1))
        defer { scratch.deallocate() }
        let normalizedCount = normalize(wellFormed: input, into: scratch)
        let normalized = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<normalizedCount])
        let base64Count = Base64.encodedLength(normalizedCount)
        // Every Base64 symbol may become three bytes; only the touched part of the buffer is used.
        return [UInt8](unsafeUninitializedCapacity: base64Count * 3) { output, initialized in
            let written = Base64.encode(normalized, into: output)
            initialized = percentEncodeInPlace(output, count: written)
        }
    }

    /// Replaces `+`, `/` and `=` of the Base64 text in `buffer[0..<count]` by `%2B`, `%2F`, `%3D`,
    /// working backwards so that the expansion never overwrites unread input. Returns the new length.
    private static func percentEncodeInPlace(_ buffer: UnsafeMutableBufferPointer<UInt8>, count: Int) -> Int {
        var expanded = 0
        for index in 0..<count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=") { expanded += 2 }
        }
        var read = count
        var write = count + expanded
        let total = write
        while read > 0 {
            read -= 1
            let byte = buffer[read]
            let escape: (UInt8, UInt8)? =
                switch byte {
                case UInt8(ascii: "+"): (UInt8(ascii: "2"), UInt8(ascii: "B"))
                case UInt8(ascii: "/"): (UInt8(ascii: "2"), UInt8(ascii: "F"))
                case UInt8(ascii: "="): (UInt8(ascii: "3"), UInt8(ascii: "D"))
                default: nil
                }
            if let (high, low) = escape {
                write -= 3
                buffer[write] = UInt8(ascii: "%")
                buffer[write + 1] = high
                buffer[write + 2] = low
            } else {
                write -= 1
                buffer[write] = byte
            }
        }
        return total
    }
}
