import AppleSSO
import Foundation
import HTTPTypes
import SAML

// The checks the endpoints share: the path, the device headers, the `mvpd` field (the bearer token is
// ``BearerMiddleware``'s).

extension TokenExchangeService {
    /// An answer that ends a request early.
    struct Refusal: Error {
        let answer: ServiceAnswer
    }

    /// The optional `mvpd` form field.
    func requestedMVPD(_ body: [UInt8]) throws(Refusal) -> String? {
        do {
            return try FormBody.text(named: "mvpd", in: body)
        } catch {
            throw Refusal(answer: .error(.malformedParameter("mvpd", error)))
        }
    }

    func checkPath(serviceProvider: String, partner: String?) -> ServiceAnswer? {
        guard serviceProvider == configuration.serviceProvider else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_service_provider",
                    message: "The service provider parameter value is missing or invalid.",
                    details: nil))
        }
        if let partner, partner.lowercased() != "apple" {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_parameter_partner", message: "The partner parameter value is missing or invalid.",
                    details: nil))
        }
        return nil
    }

    func checkDevice(_ headers: RequestHeaders) -> ServiceAnswer? {
        guard let identifier = headers.deviceIdentifier, identifier.utf8.starts(with: "fingerprint ".utf8), identifier.utf8.count > 12,
            identifier.utf8.count <= 512
        else {
            return .error(
                EnhancedError(
                    status: 400, code: "invalid_header_device_identifier",
                    message: "The AP-Device-Identifier header must be \"fingerprint <value>\".", details: nil))
        }
        if let info = headers.deviceInfo {
            let decoded = Data(base64Encoded: info)
            guard let decoded, case .object? = try? JSONValue(parsing: decoded, maxDepth: 16) else {
                return .error(
                    EnhancedError(
                        status: 400, code: "invalid_header_device_info",
                        message: "The X-Device-Info header must be Base64 of a JSON object.",
                        details: nil))
            }
        }
        return nil
    }
}

/// The device a request names: the `AP-Device-Identifier` header's exact bytes. Swift compares and hashes
/// strings by canonical equivalence (NFC and NFD of one text are equal) and decodes invalid UTF-8 to
/// U+FFFD, either of which would make two devices one (issue 66); so the key is the bytes, written with
/// every byte outside printable ASCII, and `%` itself, as `%XX`: one key per byte sequence, and a key in
/// which no two strings of different bytes compare equal. Not valid UTF-8, or the header more than once:
/// no key (`invalid_header_device_identifier`).
///
/// Over HTTP/1.1 the bytes arrive already decoded by SwiftNIO, which replaces invalid UTF-8 with U+FFFD,
/// and by swift-http-types, which replaces control characters with spaces: two identifiers that differ
/// only there would meet again. So the value after `fingerprint ` (Base64 or hexadecimal, in Adobe's
/// format) may hold neither U+FFFD nor a space or tab: such an identifier is refused, never merged.
enum DeviceIdentifier {
    static func key(_ fields: [HTTPField]) -> String? {
        guard fields.count == 1 else { return nil }
        return fields[0].withUnsafeBytesOfValue { key(bytes: $0) }
    }

    static func key(bytes: some Collection<UInt8>) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let value = text.utf8.starts(with: prefix) ? Array(text.utf8.dropFirst(prefix.count)) : Array(text.utf8)
        guard !value.contains(0x20), !value.contains(0x09), !text.unicodeScalars.contains("\u{FFFD}") else { return nil }
        guard bytes.contains(where: needsEscape) else { return String(decoding: bytes, as: UTF8.self) }
        let hex = Array("0123456789ABCDEF".utf8)
        var key: [UInt8] = []
        key.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            if needsEscape(byte) {
                key += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                key.append(byte)
            }
        }
        return String(decoding: key, as: UTF8.self)
    }

    private static let prefix = Array("fingerprint ".utf8)

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "%")
    }
}

/// The `AP-Partner-Framework-Status` header, read once and validated against the configuration
/// (permission, provider, expiry, the `mvpd` field): `sessions/sso` decides on it, `GET .../profiles`
/// filters by it (the Token Exchange's own reading is the library's, ``AppleSSO/TokenExchange``).
enum PartnerFramework {
    case absent
    /// Malformed, not granted, expired or not the requested MVPD; with the MVPD its provider maps to, and
    /// the Enhanced Error Code that says why.
    case invalid(MVPD?, PartnerFrameworkOutcome)
    case valid(MVPD)

    init(_ header: String?, mvpds: MVPDConfiguration, requested: String?, now: SAMLInstant) {
        guard let header else {
            self = .absent
            return
        }
        guard let status = try? PartnerFrameworkStatus(headerValue: header) else {
            self = .invalid(nil, .accessNotPresent)
            return
        }
        do {
            self = .valid(try status.validate(configuration: mvpds, requestedMVPD: requested, now: now))
        } catch {
            self = .invalid(status.providerID.flatMap { mvpds.mvpd(platformMappingId: $0) }, error)
        }
    }

    var mvpd: MVPD? {
        switch self {
        case .absent: nil
        case .invalid(let mvpd, _): mvpd
        case .valid(let mvpd): mvpd
        }
    }
}
