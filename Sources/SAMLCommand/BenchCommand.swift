import ArgumentParser
import Foundation
import SAML
import SAMLBench

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the full pipeline (decode, parse, verify, validate, extract) beside a C libxml2 + libxmlsec1 baseline.",
        discussion: """
            Without FILEs, runs the bundled valid TestVectors/ with the checks their manifest gives. Each \
            timed iteration really verifies: an input that does not verify fails the command (exit 1).
            """
    )

    @Option(
        name: .customLong("cert"),
        help: "The pinned certificate (PEM) for the given FILEs. Repeatable: the first is used by the C baseline.")
    var certificates: [String] = []

    @Option(help: "Threads for the multi-thread run (default: all cores).")
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Seconds of timed runs per measurement (after a warm-up).")
    var seconds: Double = 1.0

    @Flag(help: "Skip the C baseline (for profiling the Swift pipeline alone).")
    var noBaseline = false

    @Flag(
        help:
            "Skip the floor of primitives (libxml2's parse and exclusive C14N, SHA-256, the one RSA verification: the work no verifier can skip; its ratio is the pipeline's time over the floor's)."
    )
    var noFloor = false

    @Flag(
        help:
            "Also measure the JDK's XML-DSig on each input, 1 thread, in slices alternated with the project's (needs javac and java on the PATH; about 20 s of JIT warm-up per input)."
    )
    var jdk = false

    @Option(
        help: "Slices of --seconds per figure, alternated between the columns and thread counts of an input; medians are reported."
    )
    var rounds = 1

    @Option(help: "The JDK harness source.")
    var jdkSource = "Benchmarks/JDK/JDKVerifyBench.java"

    @Option(help: "Seconds of JIT warm-up before the JDK's first slice.")
    var jdkWarmUp: Double = 20

    @Flag(help: "Print JSON: {\"results\": [{\"input\", \"threads\", \"responses_per_second\", \"microseconds_per_response\", ...}]}.")
    var json = false

    @Flag(
        help:
            "Measure instead the CPU time and peak memory of refusing each hostile shape (XPath in an ID, namespace amplification, PrefixList, inclusive namespace chains, nodes outside the document element, the rendered-namespace stack), beside a valid response of the same size; exits 1 if one gets another verdict or passes 50 ms of CPU or 64 MiB."
    )
    var hostile = false

    @Flag(
        help:
            "Measure instead the recovery of the cookbook's damage on TestVectors/recovery/: each response as signed, after the cookbook's normalisation (recovered) and forged in that shape (an attribute value or the signature value changed), in CPU time; exits 1 if a recovered one costs more than 4 times the signed one, or a forged one more than 3 times."
    )
    var recovery = false

    @Flag(
        help:
            "Measure instead the CPU per login (a whole verification and the in-memory store's consume) with the store at 0%, 50% and 99% of a 1,000,000-entry capacity, in alternated rounds; exits 1 if one is more than 10% above the empty store's."
    )
    var occupancy = false

    @Option(help: "With --hostile or --recovery: verifications per input (the median is reported).")
    var iterations = 5

    @Option(help: "The TestVectors folder used when no FILE is given.")
    var directory = "TestVectors"

    @Option(help: "The instant to verify FILEs at (ISO 8601, e.g. 2026-11-21T12:01:00Z); default: inside each response's validity window.")
    var now: String?

    @Argument(help: "Responses to measure (XML, Base64, form value or body).")
    var files: [String] = []

    func validate() throws {
        guard threads >= 1, seconds > 0, rounds >= 1 else {
            throw ValidationError("--threads, --seconds and --rounds must be positive")
        }
        guard files.isEmpty || !certificates.isEmpty else { throw ValidationError("--cert is required with FILEs") }
        guard now.map({ SAMLInstant(xmlDateTime: $0) != nil }) ?? true else {
            throw ValidationError("--now must be an ISO 8601 instant such as 2026-11-21T12:01:00Z")
        }
    }

    func run() throws {
        if files.isEmpty, !FileManager.default.fileExists(atPath: directory + "/manifest.json") {
            throw CommandFailure.io("cannot read \(directory)/manifest.json: run from the repository root or pass --directory")
        }
        if hostile {
            try measureBounded(HostileBench.run, json: Self.hostileJSON, table: Self.hostileTable, within: \.withinBounds)
            return
        }
        if recovery {
            try measureBounded(RecoveryBench.run, json: Self.recoveryJSON, table: Self.recoveryTable, within: \.withinBounds)
            return
        }
        if occupancy {
            let rows = try rejectingOnError { try OccupancyBench.run(vectors: directory) }
            var table = "| store occupancy | µs CPU per login (median) | rounds | vs empty |\n|---:|---:|---|---:|\n"
            for row in rows {
                let rounds = row.rounds.map { String(format: "%.1f", $0) }.joined(separator: ", ")
                table += String(
                    format: "| %.0f%% | %.1f | %@ | %.3f |\n", row.occupancy * 100, row.microsecondsPerLogin, rounds,
                    row.microsecondsPerLogin / rows[0].microsecondsPerLogin)
            }
            table += String(format: "\nAn entry of the store: %.0f bytes of resident memory (its fill).\n", OccupancyBench.bytesPerEntry)
            StandardStreams.writeOutput(table)
            if rows.contains(where: { $0.microsecondsPerLogin > rows[0].microsecondsPerLogin * 1.1 }) { throw ExitCode.failure }
            return
        }
        let inputs: [BenchInput] = try rejectingOnError {
            if files.isEmpty { return try BenchInput.bundled(directory: URL(fileURLWithPath: directory)) }
            let pem = try StandardStreams.readAll(certificates[0])
            let instant = now.flatMap { SAMLInstant(xmlDateTime: $0) }
            return try files.map { try BenchInput.file(path: $0, certificatePEM: pem, now: instant) }
        }
        var baselineJDK: JDKBaseline?
        if jdk {
            baselineJDK = JDKBaseline(source: URL(fileURLWithPath: jdkSource), warmUpSeconds: jdkWarmUp)
            guard baselineJDK != nil else {
                throw CommandFailure.usage("--jdk needs javac and java on the PATH and the harness at \(jdkSource)")
            }
        }
        let results = try rejectingOnError {
            return try BenchRunner.run(
                inputs: inputs, threads: threads, seconds: seconds, rounds: rounds, baseline: !noBaseline, floor: !noFloor,
                jdk: baselineJDK
            ) { line in
                StandardStreams.writeProgress(line)
            }
        }
        StandardStreams.writeProgress("")
        StandardStreams.writeOutput(json ? Self.json(results) : Self.table(results))
    }

    /// Runs a measurement whose rows each have a bound (--hostile, --recovery), prints them, and fails when
    /// one is out of its bound.
    private func measureBounded<Row>(
        _ measure: (URL, Int, (String) -> Void) throws -> [Row], json jsonRows: ([Row]) -> String, table: ([Row]) -> String,
        within: (Row) -> Bool
    ) throws {
        let rows = try rejectingOnError {
            try measure(URL(fileURLWithPath: directory), iterations) { line in StandardStreams.writeProgress(line) }
        }
        StandardStreams.writeProgress("")
        StandardStreams.writeOutput(json ? jsonRows(rows) : table(rows))
        if !rows.allSatisfy(within) { throw ExitCode.failure }
    }

    static func json(_ results: [BenchResult]) -> String {
        let rows: [[String: Any]] = results.map { result in
            [
                "input": result.input, "threads": result.threads,
                "responses_per_second": (result.responsesPerSecond * 10).rounded() / 10,
                "microseconds_per_response": (result.microsecondsPerResponse * 10).rounded() / 10,
                "baseline_responses_per_second": result.baselineResponsesPerSecond.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
                "ratio_to_baseline": result.ratioToBaseline.map { ($0 * 1000).rounded() / 1000 } ?? NSNull(),
                "scaling": result.scaling.map { ($0 * 1000).rounded() / 1000 } ?? NSNull(),
                "floor_responses_per_second": result.floorResponsesPerSecond.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
                "ratio_to_floor": result.ratioToFloor.map { ($0 * 1000).rounded() / 1000 } ?? NSNull(),
                "jdk_responses_per_second": result.jdkResponsesPerSecond.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
                "ratio_to_jdk": result.ratioToJDK.map { ($0 * 1000).rounded() / 1000 } ?? NSNull(),
                "slices": result.slices.map { $0.rounded() },
                "jdk_slices": result.jdkSlices.map { $0.rounded() },
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: ["results": rows], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func hostileJSON(_ rows: [HostileCost]) -> String {
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        let objects: [[String: Any]] = rows.map { row in
            [
                "shape": row.name, "bytes": row.bytes, "verdict": row.verdict, "expected": row.expectedCode,
                "cpu_ms": rounded(row.cpuMilliseconds), "peak_mib": rounded(row.peakMiB),
                "typical_cpu_ms": rounded(row.typicalCPUMilliseconds), "typical_peak_mib": rounded(row.typicalPeakMiB),
                "ratio_to_typical": rounded(row.ratio), "within_bounds": row.withinBounds,
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: ["hostile": objects], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func recoveryJSON(_ rows: [RecoveryCost]) -> String {
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        let objects: [[String: Any]] = rows.map { row in
            [
                "input": row.name, "bytes": row.bytes, "signed_cpu_ms": rounded(row.signedCPUMilliseconds),
                "recovered_cpu_ms": rounded(row.recoveredCPUMilliseconds), "recovered_verdict": row.recoveredVerdict,
                "forged_content_cpu_ms": rounded(row.forgedContentCPUMilliseconds), "forged_content_verdict": row.forgedContentVerdict,
                "forged_signature_cpu_ms": rounded(row.forgedSignatureCPUMilliseconds),
                "forged_signature_verdict": row.forgedSignatureVerdict, "recovered_ratio": rounded(row.recoveredRatio),
                "forged_ratio": rounded(row.forgedRatio), "within_bounds": row.withinBounds,
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: ["recovery": objects], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func recoveryTable(_ rows: [RecoveryCost]) -> String {
        func ms(_ value: Double) -> String { String(format: "%.3f", value) }
        var lines = [
            "| response | bytes | signed: CPU ms | recovered: CPU ms | ratio | forged value: CPU ms, verdict | forged signature: CPU ms, verdict | forged ratio | within 4x / 3x |",
            "|---|---:|---:|---:|---:|---|---|---:|---|",
        ]
        for r in rows {
            let recovered =
                r.recoveredVerdict == "valid" ? ms(r.recoveredCPUMilliseconds) : "\(ms(r.recoveredCPUMilliseconds)) (\(r.recoveredVerdict))"
            lines.append(
                "| \(r.name) | \(r.bytes) | \(ms(r.signedCPUMilliseconds)) | \(recovered) | \(String(format: "%.2f", r.recoveredRatio)) | \(ms(r.forgedContentCPUMilliseconds)) `\(r.forgedContentVerdict)` | \(ms(r.forgedSignatureCPUMilliseconds)) `\(r.forgedSignatureVerdict)` | \(String(format: "%.2f", r.forgedRatio)) | \(r.withinBounds ? "yes" : "NO") |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func hostileTable(_ rows: [HostileCost]) -> String {
        var lines = [
            "| shape | bytes | verdict | CPU ms | peak MiB | valid same size: CPU ms | peak MiB | ratio | within 50 ms, 64 MiB |",
            "|---|---:|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in rows {
            let verdict = r.verdict == r.expectedCode ? r.verdict : "\(r.verdict) (expected \(r.expectedCode))"
            lines.append(
                "| \(r.name) | \(r.bytes) | \(verdict) | \(String(format: "%.2f", r.cpuMilliseconds)) | \(String(format: "%.1f", r.peakMiB)) | \(String(format: "%.2f", r.typicalCPUMilliseconds)) | \(String(format: "%.1f", r.typicalPeakMiB)) | \(String(format: "%.2f", r.ratio)) | \(r.withinBounds ? "yes" : "NO") |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func table(_ results: [BenchResult]) -> String {
        func format(_ value: Double?, _ digits: Int) -> String {
            guard let value else { return "-" }
            return String(format: "%.\(digits)f", value)
        }
        var lines = [
            "| input | threads | responses/s | µs/response per thread | C baseline/s | ratio to C | floor/s | pipeline/floor | JDK/s | ratio to JDK | scaling |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in results {
            lines.append(
                "| \(r.input) | \(r.threads) | \(format(r.responsesPerSecond, 0)) | \(format(r.microsecondsPerResponse, 1)) | \(format(r.baselineResponsesPerSecond, 0)) | \(format(r.ratioToBaseline, 2)) | \(format(r.floorResponsesPerSecond, 0)) | \(format(r.ratioToFloor, 2)) | \(format(r.jdkResponsesPerSecond, 0)) | \(format(r.ratioToJDK, 2)) | \(format(r.scaling, 2)) |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
