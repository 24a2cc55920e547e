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

    /// `text` safe inside an element or a quoted attribute: by Unicode scalar (a `Character` such as `"`
    /// followed by a combining mark is not equal to `"`, and would end the attribute unescaped); control
    /// characters other than tab and line feed become U+FFFD.
    static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            case "\t", "\n": out.append(scalar)
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value): out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
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

        page += "<h2>Instances</h2>\n<table class=\"counts\">\n"
        page += "<tr><th>instance</th><th>accepted</th><th>refused as expected</th><th>unavailable</th><th>wrong</th>"
        page += "<th>first answer</th><th>last answer</th><th>unanswered from</th></tr>\n"
        for instance in report.instances {
            page +=
                "<tr><th>\(e(instance.target))</th><td>\(instance.accepted)</td><td>\(instance.refused)</td><td>\(instance.unavailable)</td>"
            page += "<td\(instance.wrong > 0 ? " class=\"bad\"" : "")>\(instance.wrong)</td><td>\(Self.seconds(instance.firstAnswer))</td>"
            page += "<td>\(Self.seconds(instance.lastAnswer))</td><td>\(Self.seconds(instance.unavailableAfterLastAnswer))</td></tr>\n"
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
}
