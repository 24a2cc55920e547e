import Foundation

/// The report page's charts: SVG axes, ticks and plots.
extension LoadReportPage {
    /// The plot area of every chart, in SVG units.
    struct Frame {
        var width = 900.0, height = 300.0
        var left = 70.0, right = 36.0, top = 20.0, bottom = 48.0
        var plotWidth: Double { width - left - right }
        var plotHeight: Double { height - top - bottom }
    }

    /// The top of a value axis: `peak` with a tenth of headroom, up to a whole `step`.
    static func axisTop(_ peak: Double, step: Double) -> Double { max(step, (peak * 1.1 / step).rounded(.up) * step) }

    /// A step of about a fifth of `range`: 1, 2 or 5 times a power of ten.
    static func niceStep(_ range: Double, ticks: Double = 5) -> Double {
        guard range > 0, range.isFinite else { return 1 }
        let raw = range / ticks
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let normalized = raw / magnitude
        return (normalized < 1.5 ? 1 : normalized < 3 ? 2 : normalized < 7 ? 5 : 10) * magnitude
    }

    /// The frame, grid lines and tick labels of a chart; `xTicks` and `yTicks` are (value, label).
    static func axes(
        _ frame: Frame, x: (Double) -> Double, y: (Double) -> Double, xTicks: [(Double, String)], yTicks: [(Double, String)],
        xLabel: String,
        yLabel: String
    ) -> String {
        let c = coordinate
        var out = ""
        for (value, label) in yTicks {
            out +=
                "<line class=\"grid\" x1=\"\(c(frame.left))\" x2=\"\(c(frame.width - frame.right))\" y1=\"\(c(y(value)))\" y2=\"\(c(y(value)))\"/>"
            out += "<text x=\"\(c(frame.left - 6))\" y=\"\(c(y(value) + 4))\" text-anchor=\"end\">\(escape(label))</text>\n"
        }
        for (value, label) in xTicks {
            out +=
                "<line class=\"grid\" x1=\"\(c(x(value)))\" x2=\"\(c(x(value)))\" y1=\"\(c(frame.top))\" y2=\"\(c(frame.height - frame.bottom))\"/>"
            out +=
                "<text x=\"\(c(x(value)))\" y=\"\(c(frame.height - frame.bottom + 16))\" text-anchor=\"middle\">\(escape(label))</text>\n"
        }
        let bottom = frame.height - frame.bottom
        out +=
            "<line class=\"axis\" x1=\"\(c(frame.left))\" x2=\"\(c(frame.width - frame.right))\" y1=\"\(c(bottom))\" y2=\"\(c(bottom))\"/>"
        out += "<line class=\"axis\" x1=\"\(c(frame.left))\" x2=\"\(c(frame.left))\" y1=\"\(c(frame.top))\" y2=\"\(c(bottom))\"/>\n"
        out +=
            "<text x=\"\(c(frame.left + frame.plotWidth / 2))\" y=\"\(c(frame.height - 8))\" text-anchor=\"middle\">\(escape(xLabel))</text>\n"
        out +=
            "<text transform=\"translate(16 \(c(frame.top + frame.plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(escape(yLabel))</text>\n"
        return out
    }

    static func svg(_ frame: Frame, label: String, _ content: String) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(frame.width)) \(Int(frame.height))" width="\(Int(frame.width))" \
        height="\(Int(frame.height))" role="img" aria-label="\(escape(label))">
        \(content)</svg>

        """
    }

    /// Ticks every `step` from 0 to `maximum`.
    static func ticks(to maximum: Double, step: Double, label: (Double) -> String) -> [(Double, String)] {
        var ticks: [(Double, String)] = []
        var value = 0.0
        while value <= maximum * (1 + 1e-9) {
            ticks.append((value, label(value)))
            value += step
        }
        return ticks
    }

    static func tickLabel(_ value: Double, step: Double) -> String {
        step >= 1 ? number(value) : number(value, max(1, Int((-log10(step)).rounded(.up))))
    }

    /// Requests completed per second in each bucket, stacked by class, the outage window shaded.
    func timelineChart() -> String {
        let frame = Frame()
        let timeline = report.timeline
        let end = max(report.timedSeconds, timeline.buckets.last.map { $0.start + $0.seconds } ?? 0, 0.001)
        let peak = timeline.buckets.map(\.requestsPerSecond).max() ?? 0
        let yStep = Self.niceStep(max(peak, 1))
        let yMax = Self.axisTop(max(peak, 1), step: yStep)
        let xStep = Self.niceStep(end, ticks: 10)
        let x = { (t: Double) in frame.left + t / end * frame.plotWidth }
        let y = { (v: Double) in frame.top + frame.plotHeight * (1 - v / yMax) }
        let c = Self.coordinate
        var content = ""
        if let window = report.availability.outageWindow {
            let from = x(max(0, window.lowerBound)), to = x(min(end, window.upperBound))
            content += "<rect x=\"\(c(from))\" y=\"\(c(frame.top))\" width=\"\(c(max(1, to - from)))\" height=\"\(c(frame.plotHeight))\" "
            content += "fill=\"rgba(0, 0, 0, 0.12)\" stroke=\"#555\" stroke-dasharray=\"4 3\"><title>"
            content += Self.escape(
                "outage: \(Self.number(report.availability.outageSeconds, 2)) s without an acceptance from \(Self.seconds(window.lowerBound))"
            )
            content += "</title></rect>\n"
        }
        content += Self.axes(
            frame, x: x, y: y, xTicks: Self.ticks(to: end, step: xStep) { Self.tickLabel($0, step: xStep) },
            yTicks: Self.ticks(to: yMax, step: yStep) { Self.tickLabel($0, step: yStep) },
            xLabel: "seconds into the timed phase (by the instant each request completed)",
            yLabel: "requests/s (per \(Self.number(timeline.bucketSeconds, timeline.bucketSeconds < 1 ? 1 : 0)) s bucket)")
        for bucket in timeline.buckets where bucket.seconds > 0 && bucket.completed > 0 {
            let left = x(bucket.start)
            let width = max(0.5, x(bucket.start + bucket.seconds) - left - (frame.plotWidth / Double(timeline.buckets.count) > 4 ? 1 : 0))
            var stacked = 0.0
            var summary = "\(Self.number(bucket.start, 1))–\(Self.number(bucket.start + bucket.seconds, 1)) s: "
            summary += "\(Self.number(bucket.requestsPerSecond)) requests/s"
            for answerClass in LoadAnswerClass.allCases { summary += ", \(bucket.count(answerClass)) \(answerClass.rawValue)" }
            content += "<g><title>\(Self.escape(summary))</title>"
            for answerClass in LoadAnswerClass.allCases where bucket.count(answerClass) > 0 {
                let rate = Double(bucket.count(answerClass)) / bucket.seconds
                let top = y(stacked + rate), bottom = y(stacked)
                content += "<rect x=\"\(c(left))\" y=\"\(c(top))\" width=\"\(c(width))\" height=\"\(c(max(0.5, bottom - top)))\" "
                content += "fill=\"\(Self.colour(answerClass))\"/>"
                stacked += rate
            }
            content += "</g>\n"
        }
        if let window = report.availability.outageWindow {
            // Above the bars, on a halo.
            content += "<text x=\"\(c(x(max(0, window.lowerBound)) + 4))\" y=\"\(c(frame.top + 14))\" "
            content += "stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">"
            content += Self.escape("outage \(Self.number(report.availability.outageSeconds, 2)) s") + "</text>\n"
        }
        return Self.svg(frame, label: "requests per second over the timed phase, by class", content)
    }

    /// The 99th percentile of each bucket's answers.
    func p99Chart() -> String {
        var frame = Frame()
        frame.height = 220
        let timeline = report.timeline
        let end = max(report.timedSeconds, timeline.buckets.last.map { $0.start + $0.seconds } ?? 0, 0.001)
        let points = timeline.buckets.compactMap { bucket in bucket.p99.map { (bucket.start + bucket.seconds / 2, $0 / 1000) } }
        let peak = points.map(\.1).max() ?? 0
        let yStep = Self.niceStep(max(peak, 0.001))
        let yMax = Self.axisTop(max(peak, 0.001), step: yStep)
        let xStep = Self.niceStep(end, ticks: 10)
        let x = { (t: Double) in frame.left + t / end * frame.plotWidth }
        let y = { (v: Double) in frame.top + frame.plotHeight * (1 - v / yMax) }
        let c = Self.coordinate
        var content = Self.axes(
            frame, x: x, y: y, xTicks: Self.ticks(to: end, step: xStep) { Self.tickLabel($0, step: xStep) },
            yTicks: Self.ticks(to: yMax, step: yStep) { Self.tickLabel($0, step: yStep) }, xLabel: "seconds into the timed phase",
            yLabel: "p99 latency (ms)")
        if let window = report.availability.outageWindow {
            let from = x(max(0, window.lowerBound)), to = x(min(end, window.upperBound))
            content += "<rect x=\"\(c(from))\" y=\"\(c(frame.top))\" width=\"\(c(max(1, to - from)))\" height=\"\(c(frame.plotHeight))\" "
            content += "fill=\"rgba(0, 0, 0, 0.12)\"/>\n"
        }
        if !points.isEmpty {
            let path = points.map { "\(c(x($0.0))),\(c(y($0.1)))" }.joined(separator: " ")
            content += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"#6a1b9a\" stroke-width=\"1.5\"/>\n"
        }
        return Self.svg(frame, label: "p99 latency per bucket of the timed phase", content)
    }

    /// The percentile distribution: latency against percentile, the percentile on a logarithmic
    /// `1/(1-p)` axis (as HdrHistogram plots it), ticks at 50%, 90%, 99%, 99.9%, 99.99%.
    func latencyChart() -> String {
        let frame = Frame()
        let distribution = report.latencyDistribution
        guard let total = distribution.last?.count, total > 0 else {
            return "<p>No answers: no latency to show.</p>\n"
        }
        // The last point (100%) stands where a single answer's share puts it: 1/(1-p) = total.
        let lastX = max(log10(Double(total)), 0.5)
        let decades = min(6, max(4, lastX.rounded(.up)))
        func position(_ percentile: Double) -> Double {
            percentile >= 100 ? lastX : min(lastX, -log10(1 - percentile / 100))
        }
        let peak = distribution.map(\.microseconds).max()! / 1000
        let yStep = Self.niceStep(max(peak, 0.001))
        let yMax = Self.axisTop(max(peak, 0.001), step: yStep)
        let x = { (d: Double) in frame.left + d / decades * frame.plotWidth }
        let y = { (v: Double) in frame.top + frame.plotHeight * (1 - v / yMax) }
        let c = Self.coordinate
        let labels = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
        var xTicks: [(Double, String)] = [(0, "0%"), (log10(2), "50%")]
        for decade in 1...Int(decades) { xTicks.append((Double(decade), labels[decade])) }
        var content = Self.axes(
            frame, x: x, y: y, xTicks: xTicks, yTicks: Self.ticks(to: yMax, step: yStep) { Self.tickLabel($0, step: yStep) },
            xLabel: "percentile (logarithmic in 1/(1−p))", yLabel: "latency (ms)")
        // A step curve: each latency holds up to its percentile.
        var path = ""
        var previous: Double?
        for point in distribution {
            let px = x(position(point.percentile)), py = y(point.microseconds / 1000)
            if let previous { path += " \(c(px)),\(c(previous))" }
            path += " \(c(px)),\(c(py))"
            previous = py
        }
        content += "<polyline points=\"\(path.dropFirst())\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\"/>\n"
        let marks: [(String, Double, Double)] = [
            ("p50", 50, report.p50), ("p90", 90, report.p90), ("p99", 99, report.p99), ("p99.9", 99.9, report.p999),
        ]
        for (name, percentile, value) in marks where position(percentile) < lastX || percentile == 50 {
            let px = x(position(percentile)), py = y(value / 1000)
            content += "<circle cx=\"\(c(px))\" cy=\"\(c(py))\" r=\"3.5\" fill=\"#1565c0\"><title>"
            content += Self.escape("\(name): \(Self.milliseconds(value)) ms") + "</title></circle>"
            content += "<text x=\"\(c(px + 5))\" y=\"\(c(py - 6))\">\(Self.escape("\(name) \(Self.milliseconds(value)) ms"))</text>\n"
        }
        return Self.svg(frame, label: "latency by percentile", content)
    }
}
