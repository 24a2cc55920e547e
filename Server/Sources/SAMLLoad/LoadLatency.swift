import Histogram

/// The latency of the timed phase's answers in an HDR histogram: microseconds with 3 significant
/// digits, from 1 µs up to 60 s (it grows past that rather than drop a value).
struct LoadLatency {
    private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)

    init() {
        histogram.autoResize = true
    }

    init(_ microseconds: some Sequence<Double>) {
        self.init()
        for value in microseconds { record(value) }
    }

    /// Records one answer's latency (rounded to the microsecond; 0 µs counts as 1).
    mutating func record(_ microseconds: Double) {
        histogram.record(UInt64(max(1, microseconds.rounded())))
    }

    var count: Int { Int(histogram.totalCount) }

    /// The latency at `percentile` (0...100) in microseconds; 0 without an answer.
    func at(_ percentile: Double) -> Double {
        histogram.totalCount == 0 ? 0 : Double(histogram.valueAtPercentile(percentile))
    }

    /// The largest latency recorded (exact, not rounded to its bucket); 0 without an answer.
    var maximum: Double { histogram.totalCount == 0 ? 0 : Double(histogram.maxRecorded) }

    /// The percentile distribution as HdrHistogram prints it: the steps halve their distance to 100%
    /// (5 per half), each with the latency reached there (at most the maximum); the last is the
    /// maximum, at 100%.
    var distribution: [LoadReport.Percentile] {
        guard histogram.totalCount > 0 else { return [] }
        let maximum = maximum
        var points = histogram.percentiles(ticksPerHalfDistance: 5).map {
            LoadReport.Percentile(
                percentile: $0.percentileLevelIteratedTo, microseconds: min(maximum, Double($0.value)), count: Int($0.totalCountToThisValue)
            )
        }
        if let last = points.indices.last { points[last].microseconds = maximum }
        return points
    }
}
