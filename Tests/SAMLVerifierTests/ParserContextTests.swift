import Foundation
@_spi(Stages) import SAML
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The parser keeps one libxml2 context per thread between documents (Sources/CSAMLShim/parser.c). What
/// must not leak from one document into the next, and what the reading as UTF-8 still refuses.
@Suite("Parser context reuse")
struct ParserContextTests {
    let typical = Vector.named("typical-rsa2048-assertion-signed")

    func verdict(_ text: String) -> Verdict {
        verdict(Array(text.utf8))
    }

    func verdict(_ bytes: [UInt8]) -> Verdict {
        Verdict {
            let verifier = try SAMLResponseVerifier(typical.configuration())
            _ = try verifier.verifyWithoutReplayCheck(bytes, at: typical.instant)
        }
    }

    var typicalText: String { String(decoding: typical.bytes, as: UTF8.self) }

    @Test("a document refused half-way leaves none of its namespace bindings to the next one")
    func noBindingsAfterAnError() {
        // libxml2 2.9 does not rewind its namespace stack on reset: a context reused after this error would
        // resolve the next document's undeclared samlp: prefix with the binding made here.
        let broken = #"<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"><samlp:Status>"#  // truncated
        let undeclared = typicalText.replacingOccurrences(of: #" xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol""#, with: "")
        #expect(undeclared != typicalText)
        for _ in 0..<3 {
            #expect(verdict(broken) == .invalid("xml.malformed"))
            #expect(verdict(undeclared) == .invalid("structure.not-a-response"))
            #expect(verdict(typical.bytes) == .valid)
        }
    }

    /// The error verifying `bytes` raises, if any.
    func refusal(_ bytes: [UInt8]) throws -> SAMLError? {
        let verifier = try SAMLResponseVerifier(typical.configuration())
        do {
            _ = try verifier.verifyWithoutReplayCheck(bytes, at: typical.instant)
            return nil
        } catch let error as SAMLError {
            return error
        }
    }

    @Test("a document written in EBCDIC is refused before libxml2 decodes it: the bytes are read as UTF-8 only")
    func ebcdicRefused() throws {
        // libxml2 recognises EBCDIC by the first four bytes ("<?xm" in code page 037) and decodes the whole
        // document with the declared code page; read as UTF-8, the same bytes are not XML.
        for body in ["<samlp:Response/>", typicalText] {
            let ebcdic = try #require(Self.iconv(#"<?xml version="1.0" encoding="IBM037"?>"# + body, to: "IBM037"))
            #expect(Array(ebcdic.prefix(4)) == [0x4C, 0x6F, 0xA7, 0x94])
            let error = try #require(try refusal(ebcdic))
            #expect(error.code == .xmlMalformed)
            #expect(error.message.contains("another encoding than UTF-8"), "\(error.message)")
        }
    }

    @Test("bytes in UCS-4 are refused")
    func otherEncodings() {
        #expect(verdict(Array("<\0\0\0a\0\0\0/\0\0\0>\0\0\0".utf8)) == .invalid("xml.malformed"))
    }

    @Test(
        "bytes in UTF-16 get the verdict of their UTF-8 form (UTF16Transcoding)",
        arguments: [
            ("UTF-16LE byte order mark", [0xFF, 0xFE] + Array("<\0a\0/\0>\0".utf8), "<a/>"),
            ("UTF-16BE byte order mark", [0xFE, 0xFF] + Array("\0<\0a\0/\0>".utf8), "<a/>"),
            ("UTF-16LE without a mark", Array("<\0?\0x\0m\0l\0 \0?\0>\0".utf8), "<?xml ?>"),
        ])
    func utf16(name: String, bytes: [UInt8], utf8: String) {
        #expect(verdict(bytes) == verdict(Array(utf8.utf8)), "\(name)")
    }

    static func iconv(_ text: String, to encoding: String) -> [UInt8]? {
        let converter = iconv_open(encoding, "UTF-8")
        guard converter != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: input.count * 4)
        let written = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer -> Int? in
                var inPointer = inBuffer.baseAddress
                var inLeft = inBuffer.count
                var outPointer = outBuffer.baseAddress
                var outLeft = outBuffer.count
                guard Glibc.iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        return written.map { output.prefix($0).map { UInt8(bitPattern: $0) } }
    }

    @Test("the document is read as UTF-8 whatever its declaration says, as when the encoding was forced")
    func declarationIgnored() throws {
        // Declared Latin-1 but written in UTF-8 (é as C3 A9): read as UTF-8, the signed bytes are unchanged.
        let declared = #"<?xml version="1.0" encoding="ISO-8859-1"?>"# + typicalText
        #expect(verdict(declared) == .valid)
        let withMark = [0xEF, 0xBB, 0xBF] + typical.bytes
        #expect(verdict(withMark) == .valid)
        // A Latin-1 byte (E9 alone) is not UTF-8: refused, not reinterpreted.
        var latin1 = Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><a>"#.utf8)
        latin1 += [0xE9] + Array("</a>".utf8)
        #expect(verdict(latin1) == .invalid("xml.malformed"))
    }

    /// A tree whose thread moved on: finished on another thread while the first parses more documents.
    /// Each document has its own dictionary, so the two threads never write the same one.
    @Test("a parsed response finished on another thread while its parser's thread parses on")
    func treeOutlivesItsParse() async throws {
        let verifier = try SAMLResponseVerifier(typical.configuration())
        let bytes = typical.bytes
        let now = typical.instant
        struct Handed: @unchecked Sendable { let parsed: ParsedResponse }
        for _ in 0..<20 {
            let handed = try bytes.withUnsafeBytes { Handed(parsed: try verifier.parse($0)) }
            async let finished: Bool = Task.detached {
                let signed = try verifier.verifySignatures(handed.parsed)
                let (response, _) = try verifier.validateAndExtract(handed.parsed, signed: signed, now: now)
                return response.assertion.nameID?.value == "subscriber-0042"
            }.value
            var parsedMeanwhile = 0
            for _ in 0..<50 {
                _ = try bytes.withUnsafeBytes { try verifier.parse($0) }
                parsedMeanwhile += 1
            }
            #expect(try await finished)
            #expect(parsedMeanwhile == 50)
        }
    }
}
