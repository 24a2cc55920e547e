/// Hexadecimal digits, the one helper: error messages, key fingerprints, identifiers, percent-encoding.
package enum Hex {
    package static let uppercase = Array("0123456789ABCDEF".utf8)
    package static let lowercase = Array("0123456789abcdef".utf8)

    /// The two digits of `byte`.
    package static func digits(_ byte: UInt8, uppercase: Bool = true) -> [UInt8] {
        let table = uppercase ? Self.uppercase : Self.lowercase
        return [table[Int(byte >> 4)], table[Int(byte & 0x0F)]]
    }

    /// `bytes` as hexadecimal text.
    package static func string(_ bytes: some Sequence<UInt8>, uppercase: Bool = true) -> String {
        String(decoding: bytes.flatMap { digits($0, uppercase: uppercase) }, as: UTF8.self)
    }

    /// The value of one hexadecimal digit (either case); nil for any other byte.
    package static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
