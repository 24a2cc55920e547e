import CFuzzCost
import Foundation
import FuzzSupport
@_spi(Stages) import SAML

// Cost-seeking: the objective is the canonicalisation fuel an input spends per byte (c14n_budget.c), fed
// back to libFuzzer as coverage (CFuzzCost), so that the corpus fills with the most expensive inputs it
// finds. The invariant is the bound itself, for the whole signature pipeline before any digest is
// compared: a document never spends more than its tank (16 units a unit of weight plus 1M, the weight
// at most twice the input's bytes) and one comparison past it (at most the input's length).
// docs/fuzzing.md has the longer run and what it found; `saml bench --hostile` measures the finds.
let verifier = Fuzz.verifier(recovery: true)
nonisolated(unsafe) var costliest = 0.0

Fuzz.run { data, count in
    let input = UnsafeRawBufferPointer(Fuzz.bytes(data, count))
    guard let parsed = try? verifier.parse(input) else { return 0 }
    _ = try? verifier.verifySignatures(parsed)
    let fuel = parsed.canonicalizationFuel
    let overshoot = UInt64(count) + 64
    Fuzz.require(
        fuel.spent <= fuel.limit + overshoot, "spent \(fuel.spent) fuel, past the tank of \(fuel.limit) by more than one comparison")
    Fuzz.require(
        fuel.spent <= 32 * UInt64(count) + 1_000_000 + overshoot, "spent \(fuel.spent) fuel on \(count) bytes: more than 32 a byte plus 1M")
    saml_fuzz_cost_record(fuel.spent, fuel.limit, count)
    let perByte = Double(fuel.spent) / Double(max(count, 1))
    if perByte > costliest * 1.25, fuel.spent > 20_000 {
        costliest = perByte
        FileHandle.standardError.write(Data("costliest so far: \(fuel.spent) fuel, \(count) bytes, \(Int(perByte)) a byte\n".utf8))
    }
    return 0
}
