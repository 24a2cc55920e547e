import Foundation
import Testing

/// The README's and the DocC catalogues' code blocks, compiled as written: scripts/ci/doc-snippets turns each
/// into a file of Snippets/ with the block's own imports and its code in a function, and nothing is
/// declared around them, so a block that uses a name or a module it does not declare, or an API that
/// changed, fails the build. The functions are never called: the blocks read files of the reader's own.
@Suite("Documentation")
struct DocumentationTests {
    @Test("the README's and the DocC catalogues' code blocks are the ones compiled in Snippets/")
    func snippetsAreCurrent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Tests/DocumentationTests/Snippets")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        let snippets = try files.map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
        var documents = [root.appendingPathComponent("README.md")]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let folder = sources.appendingPathComponent("\(module)/\(module).docc")
            guard FileManager.default.fileExists(atPath: folder.path) else { continue }
            documents += try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".md") }
                .map { folder.appendingPathComponent($0) }
        }
        var blocks = 0
        for document in documents {
            let lines = try String(contentsOf: document, encoding: .utf8).components(separatedBy: "\n")
            var inBlock = false
            for line in lines {
                if line.trimmingCharacters(in: .whitespaces) == "```swift" {
                    inBlock = true
                    blocks += 1
                } else if inBlock, line.trimmingCharacters(in: .whitespaces) == "```" {
                    inBlock = false
                } else if inBlock, !line.hasPrefix("import "), !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    #expect(snippets.contains("    " + line), "\(document.lastPathComponent): \(line) (run scripts/ci/doc-snippets)")
                }
            }
        }
        #expect(blocks >= 10)
        #expect(files.count == blocks)
    }
}
