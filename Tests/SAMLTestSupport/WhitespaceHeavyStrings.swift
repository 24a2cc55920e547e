/// Strings biased towards what the normalisation treats specially.
public enum WhitespaceHeavyStrings {
    /// Every scalar the normalisation or trimming looks at, plus near misses (U+180E, U+200C, U+FEFF,
    /// U+2027, U+202A, U+205E, U+3001, U+0084, U+0086, U+00A1) and combining marks.
    public static let special: [Unicode.Scalar] = [
        " ", "\t", "\n", "\u{0B}", "\u{0C}", "\r", "\u{85}", "\u{2028}", "\u{2029}",
        "\u{A0}", "\u{1680}", "\u{2000}", "\u{2001}", "\u{2002}", "\u{2003}", "\u{2004}", "\u{2005}",
        "\u{2006}", "\u{2007}", "\u{2008}", "\u{2009}", "\u{200A}", "\u{200B}", "\u{202F}", "\u{205F}",
        "\u{3000}", "\u{180E}", "\u{200C}", "\u{FEFF}", "\u{2027}", "\u{202A}", "\u{205E}", "\u{3001}",
        "\u{84}", "\u{86}", "\u{A1}", "\u{301}", "\u{0}",
    ]
    public static let ordinary: [Unicode.Scalar] = [
        "a", "Z", "<", ">", "=", "\"", "/", ":", "é", "ß", "中", "😀", "👍", "\u{1F3FD}", "\u{10FFFF}", "\u{E000}",
    ]

    public static func make(using generator: inout SeededGenerator) -> String {
        let length = Int.random(in: 0...24, using: &generator)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6: scalars.append(special.randomElement(using: &generator)!)
            case 6..<9: scalars.append(ordinary.randomElement(using: &generator)!)
            default:
                // Any scalar at all, surrogates excluded.
                var value = UInt32.random(in: 0...0x10FFFF, using: &generator)
                if (0xD800...0xDFFF).contains(value) { value = 0x41 }
                scalars.append(Unicode.Scalar(value)!)
            }
        }
        return String(scalars)
    }
}
