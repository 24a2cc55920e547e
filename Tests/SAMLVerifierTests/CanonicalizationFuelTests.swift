import Foundation
@_spi(Stages) import SAML
import SAMLBench
import Testing

/// The canonicaliser's fuel (c14n_budget.c, canonicalizer.c): what real responses spend per byte against
/// the tank (16 units a byte of the document's weight), and shapes whose cost only the fuel bounds.
@Suite("Canonicalisation fuel")
struct CanonicalizationFuelTests {
    /// The tank's factor: units per unit of the document's weight (SAML_C14N_FUEL_FACTOR).
    static let factor = 16.0

    /// Parses `xml` and verifies its signatures; the fuel its document spent and its tank, and the error.
    static func spend(_ xml: [UInt8], verifier: SAMLResponseVerifier) throws -> (spent: UInt64, limit: UInt64, error: SAMLError?) {
        try xml.withUnsafeBytes { bytes in
            let parsed = try verifier.parse(bytes)
            var error: SAMLError?
            do { _ = try verifier.verifySignatures(parsed) } catch let failure as SAMLError { error = failure }
            let fuel = parsed.canonicalizationFuel
            return (fuel.spent, fuel.limit, error)
        }
    }

    @Test("every bundled vector spends at most a quarter of its tank per byte")
    func bundledVectors() throws {
        var worst = (ratio: 0.0, id: "")
        for vector in Vector.all {
            guard let verifier = try? SAMLResponseVerifier(vector.configuration()),
                let fuel = try? Self.spend(vector.bytes, verifier: verifier)
            else { continue }
            let ratio = Double(fuel.spent) / Double(vector.bytes.count)
            if ratio > worst.ratio { worst = (ratio, vector.id) }
        }
        #expect(worst.ratio > 0.5, "the vectors canonicalise: \(worst)")
        #expect(worst.ratio <= Self.factor / 4, "\(worst)")
    }

    @Test("every third-party response spends at most a quarter of its tank per byte", .enabled(if: ConformanceTests.available))
    func corpus() throws {
        var worst = (ratio: 0.0, id: "")
        var measured = 0
        for (id, input, verifier) in try ConformanceTests.signatureCases() {
            guard let fuel = try? Self.spend(input, verifier: verifier) else { continue }
            let ratio = Double(fuel.spent) / Double(input.count)
            if ratio > worst.ratio { worst = (ratio, id) }
            measured += 1
        }
        #expect(measured > 80)
        #expect(worst.ratio <= Self.factor / 4, "\(worst)")
    }

    /// The review's shapes at their reported sizes, with the pre-scan's caps raised so that nothing but the
    /// fuel stands in their way (a PrefixList entry longer than 64 bytes is refused by c14n_budget.c
    /// whatever the limits: that shape runs at the cap): each is refused, having spent no more than its
    /// tank (and one comparison).
    @Test(
        "the fuel alone bounds the review's shapes",
        arguments: [
            (HostileShapes.MeteredKind.attributeSort, 24_000, 300, false), (.attributeSort, 24_000, 300, true),
            (.prefixSearch, 64, 300, false), (.inclusiveScope, 8_000, 1_000, true), (.inclusiveScope, 64, 200, true),
            (.attributeSort, 1_000, 100, false),
        ])
    func reportedSizes(kind: HostileShapes.MeteredKind, length: Int, elements: Int, inclusive: Bool) throws {
        let typical = String(
            decoding: try Data(contentsOf: Vector.root.appendingPathComponent("responses/typical-rsa2048-assertion-signed.xml")),
            as: UTF8.self)
        let xml = Array(try HostileShapes.metered(kind, typical: typical, length: length, elements: elements, inclusive: inclusive).utf8)
        var configuration = try Vector.named("typical-rsa2048-assertion-signed").configuration()
        configuration.parserLimits.maximumPrefixBytes = 1 << 20
        configuration.parserLimits.maximumNamespaceURIBytes = 1 << 20
        let verifier = try SAMLResponseVerifier(configuration)
        let fuel = try Self.spend(xml, verifier: verifier)
        #expect(fuel.error?.code == .signatureBudgetExceeded, "\(String(describing: fuel.error))")
        #expect(fuel.spent > fuel.limit && fuel.spent <= fuel.limit + UInt64(2 * length + 64), "spent \(fuel.spent) of \(fuel.limit)")
        // With the default caps, the pre-scan refuses the longer strings before parsing.
        if length > (kind == .attributeSort ? 1_024 : 64) {
            let capped = try SAMLResponseVerifier(try Vector.named("typical-rsa2048-assertion-signed").configuration())
            let refusal = try #require(throws: SAMLError.self) { try xml.withUnsafeBytes { _ = try capped.parse($0) } }
            #expect(refusal.code == .xmlLimitExceeded)
        }
    }

    @Test("the tank is one per document: a second verification of the same parsed document spends from what is left")
    func oneTankPerDocument() throws {
        let vector = Vector.named("typical-rsa2048-assertion-signed")
        let verifier = try SAMLResponseVerifier(vector.configuration())
        try vector.bytes.withUnsafeBytes { bytes in
            let parsed = try verifier.parse(bytes)
            #expect(parsed.canonicalizationFuel.spent == 0)
            _ = try verifier.verifySignatures(parsed)
            let once = parsed.canonicalizationFuel.spent
            _ = try verifier.verifySignatures(parsed)
            #expect(once > 0 && parsed.canonicalizationFuel.spent == 2 * once)
        }
    }
}
