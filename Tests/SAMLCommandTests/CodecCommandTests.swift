import Foundation
import Testing

@Suite("saml normalize, encode, decode")
struct CodecCommandTests {
    static let pretty = "<samlp:Response>\n  <saml:Issuer>\n    idp\n  </saml:Issuer>\r\n\t<x a=\"1\"/>\u{2028}\u{3000}</samlp:Response>\n"

    @Test("encode writes the cookbook value with no added newline")
    func encodeWritesCookbookValue() throws {
        let result = try CommandRunner.run(["encode"], input: Data("<a>x</a>".utf8))
        #expect(result.status == 0)
        #expect(result.outputText == "PGE%2BeDwvYT4%3D")
    }

    @Test("normalize and decode undo what encode did")
    func normalizeMatchesDecodeOfEncode() throws {
        let normalized = try CommandRunner.run(["normalize", "-"], input: Data(Self.pretty.utf8))
        #expect(normalized.status == 0)
        #expect(normalized.outputText == "<samlp:Response> <saml:Issuer> idp </saml:Issuer> <x a=\"1\"/>\u{3000}</samlp:Response>")
        let encoded = try CommandRunner.run(["encode"], input: Data(Self.pretty.utf8))
        let decoded = try CommandRunner.run(["decode"], input: Data("SAMLResponse=".utf8) + encoded.output)
        #expect(decoded.status == 0)
        #expect(decoded.output == normalized.output)
        #expect(decoded.error.isEmpty)
    }

    @Test("decode reports repairs on stderr and still succeeds")
    func decodeReportsRepairs() throws {
        let result = try CommandRunner.run(["decode"], input: Data("SAMLResponse=PGE%252BeDwvYT4%253D".utf8))
        #expect(result.status == 0)
        #expect(result.outputText == "<a>x</a>")
        #expect(result.error == "note: decode.repaired-double-url-encoding\n")
        let strict = try CommandRunner.run(["decode", "--reject-double-encoding"], input: Data("PGE%252BeDwvYT4%253D".utf8))
        #expect(strict.status == 1)
        #expect(strict.error.hasPrefix("error: decode.double-url-encoded: expected"))
    }

    @Test("a rejected input exits 1 with error: <code>: <message>")
    func rejectionExitsOne() throws {
        let truncated = try CommandRunner.run(["decode"], input: Data("PHNhbWxwOlJlc3BvbnNlP".utf8))
        #expect(truncated.status == 1)
        #expect(truncated.error.hasPrefix("error: decode.truncated-base64: "))
        #expect(truncated.output.isEmpty)
        let notUTF8 = try CommandRunner.run(["normalize"], input: Data([0x3C, 0xFF, 0x3E]))
        #expect(notUTF8.status == 1)
        #expect(notUTF8.error.hasPrefix("error: input.not-utf8: "))
    }

    @Test("usage and I/O errors exit 2")
    func usageAndIOErrorsExitTwo() throws {
        #expect(try CommandRunner.run(["encode", "--no-such-flag"]).status == 2)
        #expect(try CommandRunner.run(["no-such-command"]).status == 2)
        let missing = try CommandRunner.run(["decode", "/nonexistent/response.b64"])
        #expect(missing.status == 2)
        #expect(missing.error.hasPrefix("error: io: "))
        #expect(try CommandRunner.run(["--help"]).status == 0)
    }

    @Test("encode handles a multi-megabyte input in one piece")
    func encodesLargeInput() throws {
        let large = String(repeating: Self.pretty, count: 40_000)
        let encoded = try CommandRunner.run(["encode"], input: Data(large.utf8))
        #expect(encoded.status == 0)
        let decoded = try CommandRunner.run(["decode", "--max-decoded-bytes", "8000000"], input: encoded.output)
        let normalized = try CommandRunner.run(["normalize"], input: Data(large.utf8))
        #expect(decoded.status == 0)
        #expect(decoded.output == normalized.output)
        #expect(normalized.output.count > 2_000_000)
    }
}
