import FuzzSupport
@_spi(Stages) import SAML

// The package's canonicaliser (fast_c14n.c, canonicalizer.c) against libxmlsec1's stock one on the same
// document: the same verdict, the same canonical bytes of every signed reference, and canonicalizer.c's bytes
// equal to libxml2's for every element a signature could canonicalise.
let verifier = Fuzz.verifier(recovery: false)

func verdict(_ input: UnsafeRawBufferPointer, fast: Bool) -> String {
    do {
        let parsed = try verifier.parse(input)
        _ = try verifier.verifySignatures(parsed, fastCanonicalization: fast)
        return "valid"
    } catch let error as SAMLError {
        return error.code.identifier
    } catch {
        return "\(error)"
    }
}

Fuzz.run { data, count in
    let input = UnsafeRawBufferPointer(Fuzz.bytes(data, count))
    let fast = verdict(input, fast: true)
    let stock = verdict(input, fast: false)
    Fuzz.require(fast == stock, "fast canonicalisation says \(fast), stock xmlsec says \(stock)")
    if let references = try? verifier.parse(input) {
        let fastBytes = verifier.canonicalReferenceBytes(references, fastCanonicalization: true)
        let parsedAgain = try? verifier.parse(input)
        let stockBytes = parsedAgain.map { verifier.canonicalReferenceBytes($0, fastCanonicalization: false) }
        Fuzz.require(stockBytes == nil || fastBytes == stockBytes!, "fast and stock canonical bytes differ")
    }
    if let report = try? CanonicalizationComparison.compareEveryElement(input, signedShapesOnly: true) {
        Fuzz.require(report.differences.isEmpty, "canonicalizer.c and libxml2 differ: \(report.differences.prefix(3))")
    }
    return 0
}
