import Foundation

extension LoadReport {
    /// The report as a self-contained HTML page (`saml-server load --report FILE.html`): inline CSS and
    /// SVG, no script, nothing fetched. It shows the run's parameters, the headline (requests/s, the
    /// latency percentiles, the audit's verdict and counts), requests/s over the timed phase by class
    /// with the outage window shaded, the p99 latency per bucket, the latency's percentile distribution
    /// (HdrHistogram's plot: latency against percentile on a `1/(1-p)` axis), and the verdicts by kind
    /// and by answer. Every text is escaped: answers and descriptions come from the network.
    public func htmlPage(title: String? = nil, generated: Date = Date()) -> String {
        LoadReportPage(report: self).html(title: title ?? "Load report", generated: generated)
    }
}

/// Writes ``LoadReport/htmlPage(title:generated:)``.
struct LoadReportPage {
    let report: LoadReport

    /// The colour of each class in the charts and their legend.
    static func colour(_ answerClass: LoadAnswerClass) -> String {
        switch answerClass {
        case .accepted: "#2e7d32"
        case .refused: "#1565c0"
        case .unavailable: "#ef6c00"
        case .wrong: "#c62828"
        }
    }

    /// `text` safe inside an element or a quoted attribute.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static func number(_ value: Double, _ decimals: Int = 0) -> String { String(format: "%.\(decimals)f", value) }

    /// A coordinate in an SVG attribute.
    static func coordinate(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Microseconds shown in milliseconds (3 significant digits at least down to 1 µs).
    static func milliseconds(_ microseconds: Double) -> String {
        let ms = microseconds / 1000
        return ms >= 100 ? number(ms, 0) : ms >= 10 ? number(ms, 1) : ms >= 1 ? number(ms, 2) : number(ms, 3)
    }

    static func seconds(_ value: Double?) -> String { value.map { number($0, 2) + " s" } ?? "—" }

    func html(title: String, generated: Date) -> String {
        let e = Self.escape
        let parameters = report.parameters
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(e(title))</title>
            <style>
            \(Self.style)
            </style>
            </head>
            <body>
            <h1>\(e(title))</h1>
            <p class="generated">Generated \(e(ISO8601DateFormatter().string(from: generated))) by <code>saml-server load</code>.</p>

            """
        page += "<p class=\"verdict \(report.passed ? "pass" : "fail")\">Audit \(report.passed ? "passed" : "FAILED"): "
        page +=
            "\(report.wrong) wrong answers, \(report.failures.count) failures, \(report.multiplyAccepted) assertions accepted more than once</p>\n"

        page += "<h2>Run</h2>\n<table class=\"pairs\">\n"
        let rows: [(String, String)] = [
            ("targets", parameters.targets.joined(separator: ", ")),
            ("connections", "\(parameters.connections)"),
            ("rate", parameters.rate.map { "\(Self.number($0)) requests/s" } ?? "as fast as the service answers"),
            ("requests prepared", "\(parameters.requests)"),
            ("duration", parameters.duration.map { Self.seconds($0) } ?? "none (until every request is sent)"),
            ("seed", "\(parameters.seed)"),
            ("503 answers", parameters.tolerateUnavailable ? "unavailable (tolerated: a failover run)" : "wrong"),
            ("settle phase", parameters.settle ? "yes" : "no"),
            ("killed on purpose", parameters.killed.isEmpty ? "none" : parameters.killed.joined(separator: ", ")),
            ("prepared in", Self.seconds(report.generationSeconds) + " (sessions/sso and signing, not timed)"),
        ]
        for (name, value) in rows { page += "<tr><th>\(e(name))</th><td>\(e(value))</td></tr>\n" }
        page += "</table>\n"

        page += "<h2>Headline</h2>\n<table class=\"figures\">\n<tr>"
        let headline: [(String, String)] = [
            ("requests/s", Self.number(report.requestsPerSecond)), ("answers", "\(report.answered)"),
            ("timed phase", Self.seconds(report.timedSeconds)), ("p50", Self.milliseconds(report.p50) + " ms"),
            ("p90", Self.milliseconds(report.p90) + " ms"), ("p99", Self.milliseconds(report.p99) + " ms"),
            ("p99.9", Self.milliseconds(report.p999) + " ms"), ("max", Self.milliseconds(report.maximum) + " ms"),
        ]
        for (name, _) in headline { page += "<th>\(e(name))</th>" }
        page += "</tr>\n<tr>"
        for (_, value) in headline { page += "<td>\(e(value))</td>" }
        page += "</tr>\n</table>\n"
        page += availability()

        page += "<h2>Requests over time</h2>\n"
        page += legend()
        page += timelineChart()
        page += "<h2>p99 latency per bucket</h2>\n"
        page += p99Chart()
        page += "<h2>Latency distribution</h2>\n"
        page += latencyChart()

        page += "<h2>Verdicts by kind</h2>\n<table class=\"counts\">\n"
        page +=
            "<tr><th>kind</th><th>sent</th><th>as expected</th><th>wrong</th><th>unanswered</th><th>unavailable</th><th>withheld</th></tr>\n"
        for line in report.lines {
            page += "<tr><th>\(e(line.kind))</th><td>\(line.sent)</td><td>\(line.asExpected)</td>"
            page += "<td\(line.wrong > 0 ? " class=\"bad\"" : "")>\(line.wrong)</td>"
            page += "<td>\(line.unanswered)</td><td>\(line.unavailable)</td><td>\(line.withheld)</td></tr>\n"
        }
        page += "</table>\n"

        page += "<h2>Verdicts by answer</h2>\n<table class=\"counts\">\n"
        page += "<tr><th>answer</th><th>count</th><th>as expected</th><th>unavailable</th><th>wrong</th></tr>\n"
        for answer in report.answers {
            page += "<tr><th><code>\(e(answer.answer))</code></th><td>\(answer.count)</td><td>\(answer.asExpected)</td>"
            page += "<td>\(answer.unavailable)</td><td\(answer.wrong > 0 ? " class=\"bad\"" : "")>\(answer.wrong)</td></tr>\n"
        }
        page += "</table>\n"

        page += "<h2>Settle phase and audit</h2>\n<table class=\"pairs\">\n"
        let audit: [(String, String)] = [
            ("accepted responses re-posted", "\(report.settleChecked) (\(report.settleWrong) wrong)"),
            ("lost answers re-posted", "\(report.lostThenAccepted) accepted then, \(report.lostButCommitted) had been committed"),
            ("assertions accepted more than once", "\(report.multiplyAccepted)"),
            ("prepared requests not sent", "\(report.notSent)\(report.deadlineReached ? " (the duration was over)" : "")"),
        ]
        for (name, value) in audit { page += "<tr><th>\(e(name))</th><td>\(e(value))</td></tr>\n" }
        page += "</table>\n"
        if !report.wrongAnswers.isEmpty {
            page += "<h3>Wrong answers (the first)</h3>\n<ul class=\"problems\">\n"
            for description in report.wrongAnswers { page += "<li>\(e(description))</li>\n" }
            page += "</ul>\n"
        }
        if !report.failures.isEmpty {
            page += "<h3>Failures</h3>\n<ul class=\"problems\">\n"
            for failure in report.failures { page += "<li>\(e(failure))</li>\n" }
            page += "</ul>\n"
        }
        page += "</body>\n</html>\n"
        return page
    }

    static let style = """
        body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 960px; padding: 0 1em; color: #222; }
        h1 { font-size: 1.6em; margin-bottom: 0.2em; }
        h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
        .generated { color: #666; font-size: 0.9em; }
        .verdict { font-weight: bold; padding: 0.5em 0.8em; border-radius: 4px; }
        .pass { background: #e8f5e9; color: #1b5e20; }
        .fail { background: #ffebee; color: #b71c1c; }
        table { border-collapse: collapse; margin: 0.5em 0; }
        th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; }
        th { text-align: left; background: #f6f6f6; font-weight: 600; }
        table.counts td, table.figures td { text-align: right; font-variant-numeric: tabular-nums; }
        td.bad { color: #b71c1c; font-weight: bold; }
        .legend span { display: inline-block; margin-right: 1.2em; }
        .legend i { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: -0.1em; }
        svg { display: block; max-width: 100%; height: auto; }
        svg text { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 12px; fill: #333; }
        svg .grid { stroke: #e4e4e4; stroke-width: 1; }
        svg .axis { stroke: #555; stroke-width: 1; }
        ul.problems li { font-family: ui-monospace, Menlo, monospace; font-size: 0.85em; margin-bottom: 0.3em; word-break: break-word; }
        """

    func availability() -> String {
        let e = Self.escape
        let availability = report.availability
        var rows: [(String, String)] = []
        if let first = availability.firstUnavailable, let last = availability.lastUnavailable {
            rows.append(("first unavailable at", Self.seconds(first)))
            rows.append(("last unavailable at", Self.seconds(last)))
            rows.append(
                ("recovered after", availability.recoveredAfter.map { Self.seconds($0) } ?? "not recovered by the end of the timed phase"))
        } else {
            rows.append(("unavailable requests", "none"))
        }
        if let start = availability.outageStart {
            rows.append(
                (
                    "longest stretch without an acceptance",
                    "\(Self.number(availability.outageSeconds, 3)) s from \(Self.seconds(start)) (\(availability.outageUnavailable) unavailable in it\(availability.outageRecovered ? "" : ", not recovered"))"
                ))
        }
        var out = "<table class=\"pairs\">\n"
        for (name, value) in rows { out += "<tr><th>\(e(name))</th><td>\(e(value))</td></tr>\n" }
        return out + "</table>\n"
    }

    func legend() -> String {
        var out = "<p class=\"legend\">"
        for answerClass in LoadAnswerClass.allCases {
            out += "<span><i style=\"background: \(Self.colour(answerClass))\"></i>\(Self.escape(answerClass.rawValue))</span>"
        }
        if report.availability.outageWindow != nil {
            out += "<span><i style=\"background: rgba(0, 0, 0, 0.12)\"></i>outage (no acceptance, requests unavailable)</span>"
        }
        return out + "</p>\n"
    }

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
