import AppleSSO
import Foundation
import SAML
import Testing

/// The repository's TestVectors/ and their manifest.
struct Vector: Decodable, Sendable, CustomTestStringConvertible {
    struct Config: Decodable, Sendable {
        var issuer: String?
        var audience: String?
        var destination: String?
        var inResponseTo: String?
        var recipients: [String]?
    }

    var id: String
    var file: String
    var description: String
    var cert: String
    var now: String
    var expect: String
    var code: String?
    var config: Config
    var nameID: String?
    var fields: [String: [String]]?
    var spKey: String?
    var legacyEncryption: Bool?
    /// Fields present in the response whose values are all empty: `fields(_:)` must report them missing.
    var missingFields: [String]?
    /// Vectors of one oracle group must fail with the same code and the same message.
    var oracle: String?
    /// Whether the cookbook's normalisation changes the canonical form of a signed element.
    var cookbookDamaged: Bool
    /// The verdict of what a device sends: the cookbook's encoding of the file.
    var device: Verdict.Expected

    /// The verdict of the file as the device encodes it, decoded as a backend does; recovery as given.
    func deviceVerdict(recovery: Bool) -> (Verdict, VerifiedResponse?) {
        var response: VerifiedResponse?
        let verdict = Verdict {
            let decoded = try SAMLResponseDecoder().decode(try Cookbook.encode(utf8: bytes))
            var configuration = try configuration()
            configuration.recoversNormalizationDamage = recovery
            let verifier = try SAMLResponseVerifier(configuration)
            response = try verifier.verifyWithoutReplayCheck(decoded.bytes, at: instant)
        }
        return (verdict, response)
    }

    var testDescription: String { id }

    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TestVectors")

    /// The bundled vectors and the responses of real IdP implementations (interop/).
    static let all: [Vector] = ["manifest.json", "interop/manifest.json"].flatMap { manifest in
        let data = try! Data(contentsOf: root.appendingPathComponent(manifest))  // The manifests are committed.
        return try! JSONDecoder().decode([Vector].self, from: data)
    }

    static func named(_ id: String) -> Vector { all.first { $0.id == id }! }

    var bytes: [UInt8] { Array(try! Data(contentsOf: Self.root.appendingPathComponent(file))) }

    var instant: SAMLInstant { SAMLInstant(xmlDateTime: now)! }

    func keys() throws -> [TrustedKey] {
        try TrustedKey.all(pem: Array(Data(contentsOf: Self.root.appendingPathComponent(cert))))
    }

    func configuration(replay: SAMLResponseVerifier.ReplayProtection = .skip) throws -> SAMLResponseVerifier.Configuration {
        var configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try keys(),
            issuer: ExpectedValue(orSkip: config.issuer),
            audience: ExpectedValue(orSkip: config.audience),
            destination: ExpectedValue(orSkip: config.destination),
            inResponseTo: ExpectedValue(orSkip: config.inResponseTo),
            replay: replay
        )
        configuration.clock = FixedClock(instant)
        if let recipients = config.recipients { configuration.recipients = .anyOf(recipients) }
        if let spKey {
            configuration.decryptionKeys = [try DecryptionKey(pem: Array(Data(contentsOf: Self.root.appendingPathComponent(spKey))))]
        }
        configuration.encryptionAlgorithms = legacyEncryption == true ? .allowingLegacy : .strict
        return configuration
    }

    func verify(_ adjust: (inout SAMLResponseVerifier.Configuration) -> Void = { _ in }) throws -> VerifiedResponse {
        var configuration = try configuration()
        adjust(&configuration)
        let verifier = try SAMLResponseVerifier(configuration)
        return try verifier.verifyWithoutReplayCheck(bytes, at: instant)
    }
}

/// The outcome of a verification as a comparable value.
enum Verdict: Equatable, CustomStringConvertible {
    case valid
    case invalid(String)

    /// A manifest's `{"expect": "valid" | "invalid", "code": ...}`.
    struct Expected: Decodable, Sendable {
        var expect: String
        var code: String?

        var verdict: Verdict { expect == "valid" ? .valid : .invalid(code ?? "?") }
    }

    init(_ body: () throws -> Void) {
        do {
            try body()
            self = .valid
        } catch let error as SAMLError {
            self = .invalid(error.code.identifier)
        } catch {
            self = .invalid("unexpected \(error)")
        }
    }

    var description: String {
        switch self {
        case .valid: "valid"
        case .invalid(let code): "invalid(\(code))"
        }
    }
}
