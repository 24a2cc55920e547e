import Benchmark
import Foundation
@_spi(Stages) import SAML
import SAMLBench

// Each stage of verification (decode, parse, verify, validate + extract) and the full pipeline on the
// bundled vectors, beside the C libxml2 + libxmlsec1 baseline on the same input. Allocation counts are
// deterministic: their thresholds are checked in (Thresholds/) and `swift package benchmark thresholds
// check` fails on a regression.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(2),
        maxIterations: 50_000,
        thresholds: [.mallocCountTotal: .init(relative: [.p50: 5.0])]
    )
    let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TestVectors")
    // The vectors are committed; a failure here is a broken checkout, not a benchmark result.
    let inputs = try! BenchInput.bundled(directory: directory)

    for input in inputs {
        let name = input.name
        let decoder = SAMLResponseDecoder()
        let xml = try! decoder.decode(input.transported).bytes

        Benchmark("pipeline:\(name)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try Pipeline.run(input, decoder: decoder)) }
        }
        if let baseline = try? CBaseline(certificatePEM: input.certificatePEM), (try? baseline.run(input)) != nil {
            Benchmark("pipeline:\(name):c-baseline") { benchmark in
                for _ in benchmark.scaledIterations { blackHole(try baseline.run(input)) }
            }
        }
        guard name == "typical-rsa2048-assertion-signed" || name == "large-rsa2048-assertion-signed" else { continue }
        Benchmark("stage:decode:\(name)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try decoder.decode(input.transported)) }
        }
        Benchmark("stage:parse:\(name)") { benchmark in
            for _ in benchmark.scaledIterations {
                try xml.withUnsafeBytes { blackHole(try input.verifier.parse($0)) }
            }
        }
        Benchmark("stage:verify:\(name)") { benchmark in
            let parsed = try xml.withUnsafeBytes { try input.verifier.parse($0) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try input.verifier.verifySignatures(parsed)) }
        }
        Benchmark("stage:validate-extract:\(name)") { benchmark in
            let parsed = try xml.withUnsafeBytes { try input.verifier.parse($0) }
            let signed = try input.verifier.verifySignatures(parsed)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let (response, _) = try input.verifier.validateAndExtract(parsed, signed: signed, now: input.now)
                blackHole(try response.fields(input.fields))
            }
        }
    }
}
