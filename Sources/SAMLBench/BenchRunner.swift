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
    /// The JDK's XML-DSig on the same input (1-thread rows, when a JDK is present): the median of its
    /// slices, alternated with this row's (whose throughput is then the median of its own slices).
    public var jdkResponsesPerSecond: Double? = nil
    /// The slices behind the medians, in the order they ran (ours, then the JDK's, alternately).
    public var interleavedSlices: (ours: [Double], jdk: [Double])? = nil
    /// This row's throughput divided by the JDK's.
    public var ratioToJDK: Double? { jdkResponsesPerSecond.map { responsesPerSecond / $0 } }
}

/// Measures the full pipeline and the C baseline on each input, 1 thread then `threads`. With a JDK, the
/// 1-thread figure and the JDK's come from `jdkRounds` slices of `seconds` each, alternated.
public enum BenchRunner {
    public static func run(
        inputs: [BenchInput], threads: Int, seconds: Double, baseline measureBaseline: Bool = true, jdk: JDKBaseline? = nil,
        jdkRounds: Int = 5, progress: (String) -> Void
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
                var slices: (ours: [Double], jdk: [Double])?
                var swift: Throughput
                if count == 1, let jdk {
                    let warmUp = Int(jdk.warmUpSeconds)
                    progress("[\(index + 1)/\(inputs.count)] \(input.name): JDK (JIT warm-up \(warmUp) s), then \(jdkRounds) slices each")
                    var measured: [Throughput] = []
                    slices = try jdk.interleaved(input, seconds: seconds, rounds: jdkRounds) {
                        measured.append(try Throughput.measure(threads: 1, seconds: seconds) { try Pipeline.run(input) })
                        return measured.last!.perSecond
                    }
                    swift = measured.sorted { $0.perSecond < $1.perSecond }[measured.count / 2]
                } else {
                    swift = try Throughput.measure(threads: count, seconds: seconds) { try Pipeline.run(input) }
                }
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
                if let slices {
                    result.interleavedSlices = slices
                    result.jdkResponsesPerSecond = slices.jdk.sorted()[slices.jdk.count / 2]
                }
                results.append(result)
            }
        }
        return results
    }
}
