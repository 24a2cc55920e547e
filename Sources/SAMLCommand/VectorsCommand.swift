import AppleSSO
import ArgumentParser
import Foundation
import SAML

/// The quick start's main job: verifies every bundled test vector and prints each verdict beside the
/// expected one, and checks the cookbook codec's round trip on each.
struct VectorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vectors",
        abstract: "Verify every TestVectors/ response against its manifest entry; print verdicts beside expected ones."
    )

    @Option(help: "The TestVectors folder.")
    var directory = "TestVectors"

    /// One manifest entry (see TestVectors/README.md).
    struct Entry: Decodable {
        struct Config: Decodable {
            var issuer, audience, destination, inResponseTo: String?
            var recipients: [String]?
        }

        var id, file, cert, now, expect: String
        var code: String?
        var config: Config
        var nameID: String?
        var spKey: String?
        var legacyEncryption: Bool?
    }

    func run() throws {
        let root = URL(fileURLWithPath: directory)
        let entries: [Entry]
        do {
            entries = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: root.appendingPathComponent("manifest.json")))
        } catch {
            throw CommandFailure.io("cannot read \(directory)/manifest.json: run from the repository root or pass --directory")
        }
        var failures = 0
        StandardStreams.writeOutput(row("vector", "expected", "verdict", "codec", "result"))
        for entry in entries {
            let bytes = try StandardStreams.readAll(root.appendingPathComponent(entry.file).path)
            let expected = entry.expect == "valid" ? "valid" : entry.code ?? "invalid"
            let verdict = try verify(entry, bytes: bytes, root: root)
            let codec = roundTrip(bytes)
            let ok = verdict == expected && codec == "ok"
            if !ok { failures += 1 }
            StandardStreams.writeOutput(row(entry.id, expected, verdict, codec, ok ? "ok" : "MISMATCH"))
        }
        StandardStreams.writeOutput("\(entries.count) vectors, \(failures) mismatches\n")
        if failures > 0 || entries.isEmpty {
            throw CommandFailure(
                status: CommandFailure.rejectedStatus, code: "vectors.mismatch",
                message: "\(failures) of \(entries.count) vectors did not get their expected verdict")
        }
    }

    private func verify(_ entry: Entry, bytes: [UInt8], root: URL) throws -> String {
        let pem = try StandardStreams.readAll(root.appendingPathComponent(entry.cert).path)
        guard let now = SAMLInstant(xmlDateTime: entry.now) else { throw CommandFailure.io("bad now in \(entry.id)") }
        do {
            var configuration = SAMLResponseVerifier.Configuration(
                trustedKeys: try TrustedKey.all(pem: pem),
                issuer: ExpectedValue(orSkip: entry.config.issuer),
                audience: ExpectedValue(orSkip: entry.config.audience),
                destination: ExpectedValue(orSkip: entry.config.destination),
                inResponseTo: ExpectedValue(orSkip: entry.config.inResponseTo),
                replay: .skip
            )
            configuration.clock = FixedClock(now)
            if let recipients = entry.config.recipients { configuration.recipients = .anyOf(recipients) }
            if let spKey = entry.spKey {
                configuration.decryptionKeys = [
                    try DecryptionKey(pem: try StandardStreams.readAll(root.appendingPathComponent(spKey).path))
                ]
            }
            configuration.encryptionAlgorithms = entry.legacyEncryption == true ? .allowingLegacy : .strict
            let response = try SAMLResponseVerifier(configuration).verifyWithoutReplayCheck(bytes, at: now)
            if let nameID = entry.nameID, response.assertion.nameID?.value != nameID { return "valid, wrong NameID" }
            return "valid"
        } catch let error as SAMLError {
            return error.code.identifier
        }
    }

    /// Cookbook encoding then server decoding gives the normalised document back.
    private func roundTrip(_ bytes: [UInt8]) -> String {
        var normalized = bytes
        guard let encoded = try? Cookbook.encode(normalizingInPlace: &normalized),
            let decoded = try? SAMLResponseDecoder().decode(encoded)
        else { return "error" }
        return decoded.bytes == normalized ? "ok" : "MISMATCH"
    }

    private func row(_ columns: String...) -> String {
        let widths = [44, 32, 32, 6, 8]
        return zip(columns, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ") + "\n"
    }
}
