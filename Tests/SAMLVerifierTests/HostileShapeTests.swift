import Foundation
@_spi(Stages) import SAML
import SAMLBench
import Testing

/// Issue 33's unauthenticated inputs that cost far more than a login: each gets its refusal, before any
/// digest, with the fast canonicalisation and with libxml2's own (their costs: `saml bench --hostile`).
@Suite("Hostile shapes")
struct HostileShapeTests {
    static let shapes: [HostileShape] = (try? HostileShapes.all(directory: Vector.root)) ?? []

    @Test("every shape is built", arguments: [0])
    func built(_: Int) {
        #expect(Self.shapes.count == 31)
    }

    @Test("each shape gets its code, with the fast canonicalisation and with libxml2's", arguments: shapes.map(\.name))
    func refused(name: String) throws {
        let shape = try #require(Self.shapes.first { $0.name == name })
        let fast = Verdict { _ = try shape.verifier.verifyWithoutReplayCheck(shape.xml, at: shape.now) }
        #expect(fast == .invalid(shape.expectedCode))
        // libxml2's own canonicaliser (the stock mode, for differential tests) is not metered: the
        // shapes only the fuel stops would cost it seconds.
        guard !shape.name.hasPrefix("attribute-sort"), !shape.name.hasPrefix("prefix-search"), !shape.name.hasPrefix("inclusive-in-scope")
        else { return }
        let stock = Verdict {
            try shape.xml.withUnsafeBytes { bytes in
                let parsed = try shape.verifier.parse(bytes)
                _ = try shape.verifier.verifySignatures(parsed, fastCanonicalization: false)
            }
        }
        // libxml2 walks the whole document where the package's canonicaliser walks the signed subtree.
        let stockCode =
            shape.name == "inclusive-c14n-namespace-chain-outside-signed-part" ? "signature.budget-exceeded" : shape.expectedCode
        #expect(stock == .invalid(stockCode))
    }

    @Test("valid responses the size of the shapes verify (the cost table's comparison)", arguments: [8_000, 170_000])
    func typicalOfTheSameSize(bytes: Int) throws {
        let typical = try HostileShapes.typical(bytes: bytes, directory: Vector.root)
        #expect(abs(typical.xml.count - bytes) < bytes / 5 + 1_000, "\(typical.xml.count) bytes")
        let response = try typical.verifier.verifyWithoutReplayCheck(typical.xml, at: typical.now)
        #expect(response.signedParts == .assertion)
    }

    @Test("the output budget stops exclusive C14N within a small multiple of the document, not at its full amplification")
    func outputBudgetMessage() throws {
        let shape = try #require(Self.shapes.first { $0.name == "exc-c14n-namespace-amplification" })
        let error = try #require(throws: SAMLError.self) {
            try shape.verifier.verifyWithoutReplayCheck(shape.xml, at: shape.now)
        }
        #expect(error.message.contains("canonical bytes within 4 times the document's size"))
        let prefixes = try #require(Self.shapes.first { $0.name == "prefix-list-20000-over-5000" })
        let refusal = try #require(throws: SAMLError.self) {
            try prefixes.verifier.verifyWithoutReplayCheck(prefixes.xml, at: prefixes.now)
        }
        #expect(refusal.message.contains("PrefixList of at most 32 prefixes"))
    }
}
