import AppleSSO
import Foundation
import Logging
import SAML

/// The environment over the file, and the secrets read from files the configuration names.
extension ServiceConfiguration {
    /// `SAML_SERVICE_HOST`, `SAML_SERVICE_PORT`, `SAML_SERVICE_STORE`, `SAML_SERVICE_LOG_LEVEL`,
    /// `SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS` (`true` or `false`), and the
    /// secrets `SAML_SERVICE_STORE_PASSWORD`, `SAML_SERVICE_BEARER_TOKENS`, `SAML_SERVICE_ADMIN_TOKENS` (comma- or line-separated) and
    /// `SAML_SERVICE_REQUEST_KEYS` (as `requestKeysFile`).
    public mutating func apply(environment: [String: String]) throws {
        if let value = environment["SAML_SERVICE_STORE_PASSWORD"] { storePassword = value }
        if let value = environment["SAML_SERVICE_BEARER_TOKENS"] { bearerTokens = Self.entries(value) }
        if let value = environment["SAML_SERVICE_ADMIN_TOKENS"] { adminTokens = Self.entries(value) }
        if let value = environment["SAML_SERVICE_REQUEST_KEYS"] { requestKeys = try Self.parseRequestKeys(Self.entries(value)) }
        if let value = environment["SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS"] {
            guard value == "true" || value == "false" else {
                throw SAMLError(
                    .configurationInvalid, "expected true or false in SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS, found \(quoted(value))")
            }
            allowDevelopmentKeys = value == "true"
        }
        if let value = environment["SAML_SERVICE_HOST"] { host = value }
        if let value = environment["SAML_SERVICE_PORT"] {
            guard let number = Int(value), (0...65535).contains(number) else {
                throw SAMLError(.configurationInvalid, "expected a port number in SAML_SERVICE_PORT, found \(quoted(value))")
            }
            port = number
        }
        if let value = environment["SAML_SERVICE_STORE"] { store = value }
        if let value = environment["SAML_SERVICE_LOG_LEVEL"] { logLevel = try Self.level(value) }
        if let value = environment["SAML_SERVICE_TRACING_ENDPOINT"] { try trace(to: value) }
        if tracing == nil, environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil || environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil {
            tracing = Tracing()
        }
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none" {
            tracing = nil
        }
    }

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
