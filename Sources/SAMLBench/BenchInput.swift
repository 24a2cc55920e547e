import Foundation
import SAML

/// One response to measure, as a Token Exchange endpoint receives it (Base64 text), with the verifier
/// configured for it and an instant inside its validity window.
public struct BenchInput: Sendable {
    public let name: String
    /// The Base64 text as posted.
    public let transported: [UInt8]
    public let verifier: SAMLResponseVerifier
    public let now: SAMLInstant
    /// The pinned certificate, for the C baseline.
    public let certificatePEM: [UInt8]
    /// The fields the pipeline extracts (every attribute name, and NameID).
    public let fields: [String]

    /// The valid vectors of a TestVectors/ folder, verified with the checks their manifest gives.
    public static func bundled(directory: URL) throws -> [BenchInput] {
        struct Entry: Decodable {
            struct Config: Decodable { var issuer, audience, destination, inResponseTo: String? }
            var id, file, cert, now, expect: String
            var config: Config
            var spKey: String?
        }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: directory.appendingPathComponent("manifest.json")))
        let wanted = [
            "small-rsa2048-assertion-signed", "typical-rsa2048-assertion-signed", "large-rsa2048-assertion-signed",
            "typical-rsa4096-assertion-signed", "typical-ecdsa-p256-assertion-signed", "typical-rsa2048-response-signed",
            "typical-rsa2048-both-signed", "encrypted-assertion-oaep-aes256gcm",
        ]
        return try wanted.compactMap { id in
            guard let entry = entries.first(where: { $0.id == id && $0.expect == "valid" }) else { return nil }
            let xml = Array(try Data(contentsOf: directory.appendingPathComponent(entry.file)))
            let pem = Array(try Data(contentsOf: directory.appendingPathComponent(entry.cert)))
            return try BenchInput(
                name: entry.id, xml: xml, certificatePEM: pem, now: SAMLInstant(xmlDateTime: entry.now),
                issuer: entry.config.issuer, audience: entry.config.audience,
                destination: entry.config.destination, inResponseTo: entry.config.inResponseTo,
                decryptionKeyPEM: try entry.spKey.map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
            )
        }
    }

    /// A response from a file (XML, Base64, form value or body), verified with the values it carries
    /// itself (its issuer, audience, destination), at `now` or else at ``validInstant(_:)``.
    public static func file(path: String, certificatePEM: [UInt8], decryptionKeyPEM: [UInt8]? = nil, now: SAMLInstant? = nil) throws
        -> BenchInput
    {
        let decoded = try SAMLResponseDecoder().decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let outline = try decoded.bytes.withUnsafeBytes { try DocumentOutline.read($0) }
        let assertion = outline.assertions.first
        return try BenchInput(
            name: URL(fileURLWithPath: path).lastPathComponent, xml: decoded.bytes, certificatePEM: certificatePEM,
            now: try now ?? validInstant(outline), issuer: assertion?.issuer, audience: assertion?.audiences.first,
            destination: outline.destination, inResponseTo: outline.inResponseTo, decryptionKeyPEM: decryptionKeyPEM
        )
    }

    /// An instant inside the response's validity window: one second after the latest IssueInstant and
    /// NotBefore (Response, assertions, conditions, subject confirmations), provided that is before the
    /// earliest NotOnOrAfter; else the middle of the window. Throws `configuration.invalid` when the
    /// window is empty or a time cannot be read (give `--now` then).
    package static func validInstant(_ outline: DocumentOutline) throws -> SAMLInstant {
        func instants(_ texts: [String?]) throws -> [SAMLInstant] {
            try texts.compactMap { $0 }.map { text in
                guard let instant = SAMLInstant(xmlDateTime: text) else {
                    throw SAMLError(.configurationInvalid, "expected xs:dateTime values in the response, found \"\(text)\"; give --now")
                }
                return instant
            }
        }
        let starts = try instants(
            [outline.issueInstant]
                + outline.assertions.flatMap { [$0.issueInstant, $0.notBefore] + $0.confirmationNotBefore.map(Optional.some) })
        let ends = try instants(outline.assertions.flatMap { [$0.notOnOrAfter] + $0.confirmationNotOnOrAfter.map(Optional.some) })
        guard let start = starts.max() else {
            throw SAMLError(.configurationInvalid, "expected an IssueInstant in the response, found none; give --now")
        }
        guard let end = ends.min() else { return start + .seconds(1) }
        guard start < end else {
            throw SAMLError(
                .configurationInvalid,
                "expected a validity window, found the latest start \(start) not before the earliest end \(end); give --now")
        }
        if start + .seconds(1) < end { return start + .seconds(1) }
        return start + .milliseconds((end.millisecondsSinceEpoch - start.millisecondsSinceEpoch) / 2)
    }

    init(
        name: String, xml: [UInt8], certificatePEM: [UInt8], now: SAMLInstant?,
        issuer: String?, audience: String?, destination: String?, inResponseTo: String?, decryptionKeyPEM: [UInt8]?
    ) throws {
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: certificatePEM),
            issuer: ExpectedValue(orSkip: issuer), audience: ExpectedValue(orSkip: audience),
            destination: ExpectedValue(orSkip: destination),
            inResponseTo: ExpectedValue(orSkip: inResponseTo), replay: .skip
        )
        configuration.algorithms = .allowingSHA1
        if let decryptionKeyPEM {
            configuration.decryptionKeys = [try DecryptionKey(pem: decryptionKeyPEM)]
            configuration.encryptionAlgorithms = .allowingLegacy
        }
        let instant = now ?? .now()
        configuration.clock = FixedClock(instant)
        let verifier = try SAMLResponseVerifier(configuration)
        let response = try verifier.verifyWithoutReplayCheck(xml, at: instant)
        self.name = name
        self.transported = Array(Data(xml).base64EncodedString().utf8)
        self.verifier = verifier
        self.now = instant
        self.certificatePEM = certificatePEM
        self.fields = ["NameID"] + response.assertion.attributes.map(\.name)
    }
}
