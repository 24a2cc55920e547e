import Hummingbird

/// REST API v1's routes answer JSON, or XML when the client asks, every answer alike (refusals of the
/// bearer token, the media type and the size included): a `format=xml|json` parameter first, then a
/// `.xml` or `.json` suffix of the path, then `Accept` (``negotiate(_:)``).
struct V1FormatMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.representation = .v1(
            Self.format(query: request.uri.queryParameters.get("format"), path: request.uri.path, accept: context.headers.accept))
        return try await next(request, context)
    }

    static func format(query: String?, path: String, accept: String?) -> ServiceRequestContext.V1Format {
        switch query?.lowercased() {
        case "xml": return .xml
        case "json": return .json
        default: break
        }
        // The last segment, as the router matched it (trailing slashes are not one). Bytes: stripping a
        // String's slashes one `hasSuffix` and `dropLast` at a time was quadratic (16,000 slashes, 0.65 s).
        let bytes = Array(path.utf8)
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        func endsWith(_ suffix: String) -> Bool {
            let suffix = Array(suffix.utf8)
            guard end >= suffix.count else { return false }
            return zip(bytes[(end - suffix.count)..<end], suffix).allSatisfy { byte, expected in
                (byte | (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? 0x20 : 0)) == expected
            }
        }
        if endsWith(".xml") { return .xml }
        if endsWith(".json") { return .json }
        return negotiate(accept)
    }

    /// The last path segment without a `.xml` or `.json` suffix (a requestor, an MVPD).
    static func stripped(_ segment: String?) -> String {
        guard let segment else { return "" }
        let lowered = segment.lowercased()
        if lowered.hasSuffix(".json") { return String(segment.dropLast(5)) }
        if lowered.hasSuffix(".xml") { return String(segment.dropLast(4)) }
        return segment
    }

    /// `Accept` by RFC 9110 12.5.1: each media range with its `q` (1 when absent, `q=0` "not acceptable"),
    /// the most specific range that matches a type giving its weight (`application/xml` over
    /// `application/*` over `*/*`). XML when its weight is above JSON's, or equal with `application/xml`
    /// named (as before `q` was read: a client that names XML asks for it); JSON otherwise (no header,
    /// only wildcards, neither acceptable).
    static func negotiate(_ accept: String?) -> ServiceRequestContext.V1Format {
        guard let accept, accept.utf8.count <= 4096 else { return .json }
        var xml: (specificity: Int, q: Double) = (-1, 0)
        var json: (specificity: Int, q: Double) = (-1, 0)
        for range in accept.split(separator: ",").prefix(64) {
            let parts = range.split(separator: ";")
            guard let type = parts.first?.trimmingSpaces.lowercased() else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == "q" else { continue }
                q = Self.qvalue(pair[1].trimmingSpaces) ?? 0
            }
            func weigh(_ current: inout (specificity: Int, q: Double), _ exact: String) {
                let specificity = type == exact ? 2 : type == "application/*" ? 1 : type == "*/*" ? 0 : -1
                if specificity > current.specificity { current = (specificity, q) }
            }
            weigh(&xml, "application/xml")
            weigh(&json, "application/json")
        }
        // No range names JSON: a client that lists only XML ranges has not accepted JSON.
        if json.specificity < 0 { json.q = 0 }
        if xml.specificity < 0 { xml.q = 0 }
        if xml.q > json.q || (xml.q == json.q && xml.q > 0 && xml.specificity == 2) { return .xml }
        return .json
    }
}

extension V1FormatMiddleware {
    /// RFC 9110 12.4.2's `qvalue`: `0` to `1` with at most three decimals (`0.5`, `1.000`); nil for
    /// anything else (`nan`, `inf`, `0x1`, `2`, `.5`), whose range then counts as not acceptable.
    static func qvalue(_ text: Substring) -> Double? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1"), bytes.count <= 5 else { return nil }
        guard bytes.count > 1 else { return Double(first - 0x30) }
        let decimals = bytes[2...]
        guard bytes[1] == UInt8(ascii: "."), decimals.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        if first == UInt8(ascii: "1") { return decimals.allSatisfy { $0 == UInt8(ascii: "0") } ? 1 : nil }
        var value = 0.0
        var scale = 0.1
        for digit in decimals {
            value += Double(digit - 0x30) * scale
            scale /= 10
        }
        return value
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
