import AppleSSO
import Foundation
import Logging
import SAML
import Testing

// The free names the documentation's code blocks use. Snippets.swift (generated) is only compiled: the
// functions are never called, so these are never evaluated.

var samlAttributeQueryResponse: String { fatalError("documentation only") }
var requestBody: [UInt8] { fatalError("documentation only") }
var responseXML: [UInt8] { fatalError("documentation only") }
var tamperedXML: [UInt8] { fatalError("documentation only") }
var idpMetadataXML: [UInt8] { fatalError("documentation only") }
var metadataXMLOfA: [UInt8] { fatalError("documentation only") }
var idpCertificatePEM: [UInt8] { fatalError("documentation only") }
var certificatePEM: [UInt8] { fatalError("documentation only") }
var federationSignerPEM: [UInt8] { fatalError("documentation only") }
var pemOfB: [UInt8] { fatalError("documentation only") }
var spPrivateKeyPEM: [UInt8] { fatalError("documentation only") }
var configurationJSON: [UInt8] { fatalError("documentation only") }
var pfsHeader: String { fatalError("documentation only") }
var requestID: String { fatalError("documentation only") }
var sharedSecret: [UInt8] { fatalError("documentation only") }
var deviceIdentifier: String { fatalError("documentation only") }
var outstandingRequestID: String { fatalError("documentation only") }
var decoded: SAMLResponseDecoder.Decoded { fatalError("documentation only") }
var verifier: SAMLResponseVerifier { fatalError("documentation only") }
var trust: TrustRegistry { fatalError("documentation only") }
var exchange: TokenExchange { fatalError("documentation only") }
var logger: Logger { fatalError("documentation only") }
var idp: IdentityProvider { fatalError("documentation only") }
func log(_ message: String) {}
func respond(_ status: Int, _ body: [UInt8]) {}

@Suite("Documentation")
struct DocumentationTests {
    @Test("the README's and the DocC catalogues' code blocks are the ones compiled in Snippets.swift")
    func snippetsAreCurrent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let snippets = try String(contentsOf: root.appendingPathComponent("Tests/DocumentationTests/Snippets.swift"), encoding: .utf8)
        var documents = [root.appendingPathComponent("README.md")]
        for catalogue in ["Sources/SAML/SAML.docc", "Sources/AppleSSO/AppleSSO.docc"] {
            let folder = root.appendingPathComponent(catalogue)
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
                    #expect(snippets.contains("    " + line), "\(document.lastPathComponent): \(line) (run scripts/doc-snippets)")
                }
            }
        }
        #expect(blocks >= 10)
        #expect(snippets.components(separatedBy: "\nfunc ").count - 1 == blocks)
    }
}
