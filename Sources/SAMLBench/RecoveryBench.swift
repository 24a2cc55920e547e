import AppleSSO
import Foundation
import SAML

/// One row of `saml bench --recovery`: what the recovery of the cookbook's damage costs on one response of
/// TestVectors/recovery/, beside the same response as its IdP signed it.
public struct RecoveryCost: Sendable {
    public let name: String
    public let bytes: Int
    /// CPU milliseconds of one verification (the calling thread's, the median of the iterations).
    public let signedCPUMilliseconds: Double
    /// After the cookbook's normalisation: recovered.
    public let recoveredCPUMilliseconds: Double
    public let recoveredVerdict: String
    /// After the normalisation, an attribute value changed: what a forger sends (refused).
    public let forgedContentCPUMilliseconds: Double
    public let forgedContentVerdict: String
    /// After the normalisation, the signature value changed (the digests can be made to match by anyone).
    public let forgedSignatureCPUMilliseconds: Double
    public let forgedSignatureVerdict: String

    public var recoveredRatio: Double { recoveredCPUMilliseconds / max(signedCPUMilliseconds, 0.001) }
    public var forgedRatio: Double { max(forgedContentCPUMilliseconds, forgedSignatureCPUMilliseconds) / max(signedCPUMilliseconds, 0.001) }

    /// Issue 29's bounds: a recovered response at most 4 times a signed one, a forged one at most 3 times.
    public static let recoveredBound = 4.0
    public static let forgedBound = 3.0

    public var withinBounds: Bool {
        recoveredVerdict == "valid" && forgedContentVerdict != "valid" && forgedSignatureVerdict != "valid"
            && recoveredRatio <= Self.recoveredBound && forgedRatio <= Self.forgedBound
    }
}

/// Measures the recovery vectors as signed, as the cookbook leaves them, and forged in that shape.
public enum RecoveryBench {
    struct Manifest: Decodable {
        struct Entry: Decodable {
            var id: String
            var file: String
        }
        var now: String
        var cert: String
        var config: [String: String]
        var vectors: [Entry]
    }

    public static func run(directory: URL, iterations: Int, progress: (String) -> Void) throws -> [RecoveryCost] {
        let manifest = try JSONDecoder().decode(
            Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("recovery/manifest.json")))
        guard let now = SAMLInstant(xmlDateTime: manifest.now), let issuer = manifest.config["issuer"],
            let audience = manifest.config["audience"], let destination = manifest.config["destination"],
            let request = manifest.config["inResponseTo"]
        else {
            throw SAMLError(.configurationInvalid, "expected now and the expectations in recovery/manifest.json, found them missing")
        }
        let configuration = SAMLResponseVerifier.Configuration(
            trustedKeys: try TrustedKey.all(pem: Array(Data(contentsOf: directory.appendingPathComponent(manifest.cert)))),
            issuer: .equals(issuer), audience: .equals(audience), destination: .equals(destination), inResponseTo: .equals(request),
            replay: .skip)
        let verifier = try SAMLResponseVerifier(configuration)
        func cost(_ xml: [UInt8]) -> (Double, String) {
            var verdict = "valid"
            let (cpu, _) = HostileBench.measure(iterations: iterations) {
                do {
                    _ = try verifier.verifyWithoutReplayCheck(xml, at: now)
                } catch let error as SAMLError {
                    verdict = error.code.identifier
                } catch {
                    verdict = "\(type(of: error))"
                }
            }
            return (cpu, verdict)
        }
        var rows: [RecoveryCost] = []
        for (index, entry) in manifest.vectors.enumerated() {
            progress("[\(index + 1)/\(manifest.vectors.count)] \(entry.id)")
            let raw = Array(try Data(contentsOf: directory.appendingPathComponent(entry.file)))
            let normalized = try Cookbook.normalize(utf8: raw)
            let text = String(decoding: raw, as: UTF8.self)
            let forgedContent = try Cookbook.normalize(utf8: Array(text.replacingOccurrences(of: ">hh-7731<", with: ">hh-0001<").utf8))
            let (signed, signedVerdict) = cost(raw)
            guard signedVerdict == "valid" else {
                throw SAMLError(.configurationInvalid, "expected \(entry.id) to verify as signed, found \(signedVerdict)")
            }
            let (recovered, recoveredVerdict) = cost(normalized)
            let (content, contentVerdict) = cost(forgedContent)
            let (signature, signatureVerdict) = cost(try alteringFirstSignatureValue(normalized))
            rows.append(
                RecoveryCost(
                    name: entry.id, bytes: raw.count, signedCPUMilliseconds: signed, recoveredCPUMilliseconds: recovered,
                    recoveredVerdict: recoveredVerdict, forgedContentCPUMilliseconds: content, forgedContentVerdict: contentVerdict,
                    forgedSignatureCPUMilliseconds: signature, forgedSignatureVerdict: signatureVerdict))
        }
        return rows
    }

    /// `xml` with the first 8 Base64 characters of its first SignatureValue (the outermost signature's)
    /// replaced: the bytes a forger who recomputed the digests would send.
    static func alteringFirstSignatureValue(_ xml: [UInt8]) throws -> [UInt8] {
        var text = String(decoding: xml, as: UTF8.self)
        guard let element = text.range(of: "SignatureValue"), let start = text[element.upperBound...].firstIndex(of: ">") else {
            throw SAMLError(.configurationInvalid, "expected a SignatureValue in a recovery vector, found none")
        }
        let from = text.index(after: start)
        let to = text.index(from, offsetBy: 8)
        text.replaceSubrange(from..<to, with: text[from..<to] == "AAAAAAAA" ? "BBBBBBBB" : "AAAAAAAA")
        return Array(text.utf8)
    }
}
