import SAML

/// One row of `saml bench`: an input at a thread count, with the C baseline measured in the same run.
public struct BenchResult: Sendable {
    public let input: String
    public let threads: Int
    public let responsesPerSecond: Double
    public let microsecondsPerResponse: Double
    /// The C baseline on the same input and thread count, when it can process the input.
    public let baselineResponsesPerSecond: Double?
    /// This row's throughput divided by the baseline's.
    public var ratioToBaseline: Double? { baselineResponsesPerSecond.map { responsesPerSecond / $0 } }
    /// For a multi-thread row: its throughput divided by the 1-thread row's.
    public let scaling: Double?
    /// The JDK's XML-DSig on the same input (1-thread rows, when a JDK is present).
    public var jdkResponsesPerSecond: Double? = nil
    /// This row's throughput divided by the JDK's.
    public var ratioToJDK: Double? { jdkResponsesPerSecond.map { responsesPerSecond / $0 } }
}

/// Measures the full pipeline and the C baseline on each input, 1 thread then `threads`.
public enum BenchRunner {
    public static func run(
        inputs: [BenchInput], threads: Int, seconds: Double, baseline measureBaseline: Bool = true, jdk: JDKBaseline? = nil,
        progress: (String) -> Void
    ) throws -> [BenchResult] {
        var results: [BenchResult] = []
        for (index, input) in inputs.enumerated() {
            // One verification outside the timing, so that a rejected input fails before any number is printed.
            try Pipeline.run(input)
            let baseline = measureBaseline ? try? CBaseline(certificatePEM: input.certificatePEM) : nil
            let baselineWorks = baseline.map { (try? $0.run(input)) != nil } ?? false
            var single: Throughput?
            for count in Set([1, threads]).sorted() {
                progress("[\(index + 1)/\(inputs.count)] \(input.name): \(count) thread(s)")
                let swift = try Throughput.measure(threads: count, seconds: seconds) { try Pipeline.run(input) }
                var reference: Throughput?
                if baselineWorks, let baseline {
                    progress("[\(index + 1)/\(inputs.count)] \(input.name): \(count) thread(s), C baseline")
                    reference = try Throughput.measure(threads: count, seconds: seconds) { try baseline.run(input) }
                }
                if count == 1 { single = swift }
                var result = BenchResult(
                    input: input.name, threads: count, responsesPerSecond: swift.perSecond,
                    microsecondsPerResponse: swift.microsecondsPerOperation,
                    baselineResponsesPerSecond: reference?.perSecond,
                    scaling: count == 1 ? nil : single.map { swift.perSecond / $0.perSecond }
                )
                if count == 1, let jdk {
                    progress("[\(index + 1)/\(inputs.count)] \(input.name): JDK (JIT warm-up \(Int(jdk.warmUpSeconds)) s)")
                    result.jdkResponsesPerSecond = try jdk.measure(input, seconds: seconds)
                }
                results.append(result)
            }
        }
        return results
    }
}
