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
    /// The floor of primitives (``PrimitivesFloor``) on the same input and thread count, when the input
    /// has one.
    public var floorResponsesPerSecond: Double? = nil
    /// The pipeline's time per response divided by the floor's: how far from the work no verifier can
    /// skip (1.0 would be the primitives alone).
    public var ratioToFloor: Double? { floorResponsesPerSecond.map { $0 / responsesPerSecond } }
    /// The JDK's XML-DSig on the same input (1-thread rows, when a JDK is present).
    public var jdkResponsesPerSecond: Double? = nil
    /// The responses per second of each slice behind this row's median, in the order they ran.
    public var slices: [Double] = []
    /// The JDK's slices, each run right after this row's slice of the same round.
    public var jdkSlices: [Double] = []
    /// This row's throughput divided by the JDK's.
    public var ratioToJDK: Double? { jdkResponsesPerSecond.map { responsesPerSecond / $0 } }
}

/// Measures the full pipeline, the C baseline and the floor of primitives on each input, 1 thread then
/// `threads`, and the JDK's XML-DSig on 1 thread when given. Each figure is the median of `rounds` slices
/// of `seconds`; the slices of one input alternate (project, C baseline, floor, JDK on 1 thread, then
/// project, C baseline and floor on `threads`, round after round), so that every column, and the scaling,
/// meet the machine in the same state.
public enum BenchRunner {
    public static func run(
        inputs: [BenchInput], threads: Int, seconds: Double, rounds: Int = 1, baseline measureBaseline: Bool = true,
        floor measureFloor: Bool = true, jdk: JDKBaseline? = nil, progress: (String) -> Void
    ) throws -> [BenchResult] {
        var results: [BenchResult] = []
        for (index, input) in inputs.enumerated() {
            let label = "[\(index + 1)/\(inputs.count)] \(input.name)"
            // One verification outside the timing, so that a rejected input fails before any number is printed.
            try Pipeline.run(input)
            let baseline = measureBaseline ? try? CBaseline(certificatePEM: input.certificatePEM) : nil
            let workingBaseline = baseline.flatMap { (try? $0.run(input)) != nil ? $0 : nil }
            let floor = measureFloor ? PrimitivesFloor(input) : nil
            var session: JDKBaseline.Session?
            if let jdk {
                progress("\(label): JDK (JIT warm-up \(Int(jdk.warmUpSeconds)) s)")
                session = try jdk.start(input, seconds: seconds)
            }
            defer { session?.close() }
            let counts = Set([1, threads]).sorted()
            var ours: [Int: [Throughput]] = [:]
            var reference: [Int: [Double]] = [:]
            var floors: [Int: [Double]] = [:]
            var jdkSlices: [Double] = []
            for round in 1...rounds {
                for count in counts {
                    progress("\(label): round \(round)/\(rounds), \(count) thread(s)")
                    ours[count, default: []].append(
                        try Throughput.measure(threads: count, seconds: seconds) { try Pipeline.run(input) })
                    if let workingBaseline {
                        progress("\(label): round \(round)/\(rounds), \(count) thread(s), C baseline")
                        reference[count, default: []].append(
                            try Throughput.measure(threads: count, seconds: seconds) { try workingBaseline.run(input) }.perSecond)
                    }
                    if let floor {
                        progress("\(label): round \(round)/\(rounds), \(count) thread(s), floor of primitives")
                        floors[count, default: []].append(
                            try Throughput.measure(threads: count, seconds: seconds) { try floor.run() }.perSecond)
                    }
                    if count == 1, let session {
                        progress("\(label): round \(round)/\(rounds), JDK")
                        jdkSlices.append(try session.slice())
                    }
                }
            }
            let single = median(ours[1]!)
            for count in counts {
                let swift = median(ours[count]!)
                var result = BenchResult(
                    input: input.name, threads: count, responsesPerSecond: swift.perSecond,
                    microsecondsPerResponse: swift.microsecondsPerOperation,
                    baselineResponsesPerSecond: reference[count].map { median($0) },
                    scaling: count == 1 ? nil : swift.perSecond / single.perSecond
                )
                result.slices = ours[count]!.map(\.perSecond)
                result.floorResponsesPerSecond = floors[count].map { median($0) }
                if count == 1, session != nil {
                    result.jdkSlices = jdkSlices
                    result.jdkResponsesPerSecond = median(jdkSlices)
                }
                results.append(result)
            }
        }
        return results
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func median(_ values: [Throughput]) -> Throughput { values.sorted { $0.perSecond < $1.perSecond }[values.count / 2] }
}
