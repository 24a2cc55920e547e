import AppleSSO
import Foundation
import Logging
import SAML

/// The secrets' forms: a file the configuration names, entries separated by lines or commas, request-ID
/// keys as `<id>:<hex>`; and the log level's names.
extension ServiceConfiguration {
    /// The non-empty lines (or comma-separated entries) of a secret file, trimmed.
    static func secret(_ path: String) throws -> [String] {
        entries(try secretText(path))
    }

    /// A secret file's text without its final line break.
    static func secretText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable secret file at \(quoted(path)), found none")
        }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }

    static func entries(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "," || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
    }

    /// Request-ID keys from `<id>:<hex>` entries (as `requestKeysFile` holds them); never quotes a secret in an error.
    public static func parseRequestKeys(_ entries: [String]) throws -> [RequestIDKey] {
        try entries.enumerated().map { index, entry in
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let id = UInt8(parts[0]), parts[1].count % 2 == 0,
                let secret = Optional(Array(parts[1].utf8)).flatMap(hexBytes)
            else {
                throw SAMLError(
                    .configurationInvalid, "expected request-ID key \(index + 1) as <id 0-255>:<hexadecimal secret>, found another form")
            }
            return try RequestIDKey(id: id, secret: secret)
        }
    }

    static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text) else {
            throw SAMLError(
                .configurationInvalid, "expected a log level (trace, debug, info, notice, warning, error, critical), found \(quoted(text))")
        }
        return level
    }
}
