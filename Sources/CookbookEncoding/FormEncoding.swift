/// `application/x-www-form-urlencoded` for the plain fields: unreserved characters kept, everything else
/// percent-encoded (spaces as `%20`, which every form decoder reads).
package enum FormEncoding {
    package static func encode(_ fields: [(String, String)]) -> String {
        fields.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    package static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.string([byte])
            }
        }
        return out
    }
}
