import AppleSSO
import ArgumentParser
import Foundation
import SAML

/// The quick start's main job: runs the bundled test vectors through the library and prints each result.
struct VectorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vectors",
        abstract: "Run the bundled TestVectors/ responses through the cookbook codec and print a table."
    )

    @Option(help: "The TestVectors folder.")
    var directory = "TestVectors"

    func run() throws {
        let folder = URL(fileURLWithPath: directory).appendingPathComponent("responses")
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".xml") }.sorted()
        } catch {
            throw CommandFailure.io("cannot list \(folder.path): run from the repository root or pass --directory")
        }
        var failures = 0
        StandardStreams.writeOutput(row("response", "xml bytes", "encoded bytes", "round trip"))
        for name in names {
            var bytes = try StandardStreams.readAll(folder.appendingPathComponent(name).path)
            let size = bytes.count
            let verdict: String
            var encodedCount = 0
            do {
                let encoded = try Cookbook.encode(normalizingInPlace: &bytes)
                encodedCount = encoded.count
                let decoded = try SAMLResponseDecoder().decode(encoded)
                verdict = decoded.bytes == bytes ? "ok" : "MISMATCH"
            } catch let error as SAMLError {
                verdict = "error \(error.code)"
            }
            if verdict != "ok" { failures += 1 }
            StandardStreams.writeOutput(row(name, String(size), String(encodedCount), verdict))
        }
        StandardStreams.writeOutput("\(names.count) responses, \(failures) failures\n")
        if failures > 0 || names.isEmpty {
            throw CommandFailure(status: CommandFailure.rejectedStatus, code: "vectors.failed", message: "\(failures) of \(names.count) vectors failed")
        }
    }

    private func row(_ columns: String...) -> String {
        let widths = [44, 10, 14, 12]
        return zip(columns, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ") + "\n"
    }
}
