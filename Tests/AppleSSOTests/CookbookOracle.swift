import Foundation

/// The Adobe Pass cookbook's own client code, verbatim but for the optional chaining, kept here as the
/// oracle the library's implementation is compared with (source: the Apple SSO cookbooks,
/// `../shared/seeds/README.md`).
public enum CookbookOracle {
    public static func normalize(_ input: String) -> String {
        var samlResponse: String? = input
        // Remove new lines, new tabs and spaces.
        samlResponse = samlResponse?.replacingOccurrences(
            of: "[ \\t]+", with: " ", options: String.CompareOptions.regularExpression)
        samlResponse = samlResponse?.components(separatedBy: CharacterSet.newlines).joined(separator: "")
        samlResponse = samlResponse?.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines)
        return samlResponse!
    }

    public static func encode(_ input: String) -> String {
        var samlResponse: String? = normalize(input)
        // Base64 encode.
        samlResponse = samlResponse?.data(using: .utf8)?.base64EncodedString(options: [])
        // URL encode. Please be aware not to double URL encode it further.
        samlResponse = samlResponse?.addingPercentEncoding(
            withAllowedCharacters: CharacterSet.init(charactersIn: "!*'();:@&=+$,/?%#[]").inverted)
        return samlResponse!
    }
}

/// A small, seeded generator (SplitMix64) so that failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Strings biased towards what the normalisation treats specially.
enum WhitespaceHeavyStrings {
    /// Every scalar the normalisation or trimming looks at, plus near misses (U+180E, U+200C, U+FEFF,
    /// U+2027, U+202A, U+205E, U+3001, U+0084, U+0086, U+00A1) and combining marks.
    static let special: [Unicode.Scalar] = [
        " ", "\t", "\n", "\u{0B}", "\u{0C}", "\r", "\u{85}", "\u{2028}", "\u{2029}",
        "\u{A0}", "\u{1680}", "\u{2000}", "\u{2001}", "\u{2002}", "\u{2003}", "\u{2004}", "\u{2005}",
        "\u{2006}", "\u{2007}", "\u{2008}", "\u{2009}", "\u{200A}", "\u{200B}", "\u{202F}", "\u{205F}",
        "\u{3000}", "\u{180E}", "\u{200C}", "\u{FEFF}", "\u{2027}", "\u{202A}", "\u{205E}", "\u{3001}",
        "\u{84}", "\u{86}", "\u{A1}", "\u{301}", "\u{0}",
    ]
    static let ordinary: [Unicode.Scalar] = [
        "a", "Z", "<", ">", "=", "\"", "/", ":", "é", "ß", "中", "😀", "👍", "\u{1F3FD}", "\u{10FFFF}", "\u{E000}",
    ]

    static func make(using generator: inout SeededGenerator) -> String {
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
