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
