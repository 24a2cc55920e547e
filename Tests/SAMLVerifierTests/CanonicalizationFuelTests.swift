import Foundation
@_spi(Stages) import SAML
import Testing

/// The canonicaliser's fuel (c14n_budget.c): what real responses spend per byte, against the tank.
@Suite("Canonicalisation fuel")
struct CanonicalizationFuelTests {
    /// Parses and verifies the signatures of `xml`; the fuel its document spent, per byte of input.
    static func fuelPerByte(_ xml: [UInt8], verifier: SAMLResponseVerifier) -> (spent: UInt64, limit: UInt64)? {
        try? xml.withUnsafeBytes { bytes in
            let parsed = try verifier.parse(bytes)
            _ = try? verifier.verifySignatures(parsed)
            return parsed.canonicalizationFuel
        }
    }

    @Test("probe")
    func probe() throws {
        var worst: [(Double, String, Int)] = []
        for vector in Vector.all {
            guard let verifier = try? SAMLResponseVerifier(vector.configuration()),
                let fuel = Self.fuelPerByte(vector.bytes, verifier: verifier)
            else { continue }
            worst.append((Double(fuel.spent) / Double(vector.bytes.count), vector.id, vector.bytes.count))
        }
        worst.sort { $0.0 > $1.0 }
        print("FUEL", worst.prefix(10))
    }
}
