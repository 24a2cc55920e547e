import Foundation

/// The JDK's XML-DSig (`Benchmarks/JDK/JDKVerifyBench.java`, JDK only) on the same inputs, as a third
/// column of `saml bench --jdk`: compiled once with `javac`, then run per input in a child process (which
/// inherits the CPU affinity, so `taskset -c 1 saml bench --jdk --threads 1` pins all three to one core). The
/// harness first checks that the input verifies and that a tampered copy does not, warms the JIT up,
/// then times one slice per request, alternated with the project's slices (``start(_:seconds:)``).
public final class JDKBaseline: Sendable {
    let classes: URL
    let java: String
    public let warmUpSeconds: Double

    /// Compiles the harness; nil when no JDK (`javac`, `java`) is on the PATH or the source is missing.
    public init?(source: URL, warmUpSeconds: Double = 20) {
        guard FileManager.default.fileExists(atPath: source.path), let javac = Self.which("javac"), let java = Self.which("java") else {
            return nil
        }
        let classes = FileManager.default.temporaryDirectory.appendingPathComponent("saml-jdk-bench-\(UInt64.random(in: 0...UInt64.max))")
        guard (try? FileManager.default.createDirectory(at: classes, withIntermediateDirectories: true)) != nil,
            (try? Self.execute(javac, ["-d", classes.path, source.path]))?.status == 0
        else {
            try? FileManager.default.removeItem(at: classes)
            return nil
        }
        self.classes = classes
        self.java = java
        self.warmUpSeconds = warmUpSeconds
    }

    deinit {
        try? FileManager.default.removeItem(at: classes)
    }

    /// Starts the harness on `input` (`--interleave`): it checks the input and a tampered copy, warms
    /// the JIT up, then times one slice of `seconds` per ``Session/slice()``.
    public func start(_ input: BenchInput, seconds: Double) throws -> Session {
        try Session(self, input: input, seconds: seconds)
    }

    /// One harness process, kept up between slices.
    public final class Session {
        let process = Process()
        let folder: URL
        let errors: URL
        let commands = Pipe()
        var lines: LineReader

        init(_ baseline: JDKBaseline, input: BenchInput, seconds: Double) throws {
            folder = baseline.classes.appendingPathComponent("input-\(UInt64.random(in: 0...UInt64.max))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let transported = folder.appendingPathComponent("response.b64")
            let certificate = folder.appendingPathComponent("certificate.pem")
            errors = folder.appendingPathComponent("stderr")
            try Data(input.transported).write(to: transported)
            try Data(input.certificatePEM).write(to: certificate)
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: baseline.java)
            process.arguments = [
                "-cp", baseline.classes.path, "JDKVerifyBench", "--cert", certificate.path, "--seconds", String(seconds),
                "--warm-up", String(baseline.warmUpSeconds), "--interleave", transported.path,
            ]
            let answers = Pipe()
            process.standardInput = commands
            process.standardOutput = answers
            process.standardError = try FileHandle(forWritingTo: errors)
            lines = LineReader(answers.fileHandleForReading)
            try process.run()
            guard let ready = lines.next(), ready.contains("ready") else { throw failure() }
        }

        /// Responses per second of one timed slice.
        public func slice() throws -> Double {
            commands.fileHandleForWriting.write(Data("go\n".utf8))
            guard let line = lines.next(),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let perSecond = object["responses_per_second"] as? Double
            else { throw failure() }
            return perSecond
        }

        /// Ends the harness (it exits when its standard input closes) and removes its files.
        public func close() {
            try? commands.fileHandleForWriting.close()
            if process.isRunning { process.waitUntilExit() }
            try? FileManager.default.removeItem(at: folder)
        }

        private func failure() -> JDKFailure {
            if process.isRunning { process.terminate() }
            return JDKFailure(message: String(decoding: JDKBaseline.contents(of: errors).suffix(400), as: UTF8.self))
        }
    }

    /// Lines of a pipe, read as they arrive.
    struct LineReader {
        let handle: FileHandle
        var pending: [UInt8] = []

        init(_ handle: FileHandle) { self.handle = handle }

        mutating func next() -> String? {
            while true {
                if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<end], as: UTF8.self)
                    pending.removeSubrange(...end)
                    return line
                }
                let data = handle.availableData
                if data.isEmpty { return nil }
                pending.append(contentsOf: data)
            }
        }
    }

    public struct JDKFailure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { "the JDK harness failed: \(message)" }
    }

    /// Whether `javac` and `java` are on the PATH.
    public static var isAvailable: Bool { which("javac") != nil && which("java") != nil }

    static func which(_ name: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static func execute(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: Data, error: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // Standard error to a file, standard output (one JSON line) through a pipe: the child never
        // blocks on a full pipe.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("saml-jdk-\(UInt64.random(in: 0...UInt64.max)).err")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errors) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, outputData, contents(of: errors))
    }

    /// A file's bytes, empty when it cannot be read. An empty file is not read: FoundationEssentials leaks
    /// its 4 KiB read buffer on one (LeakSanitizer).
    static func contents(of file: URL) -> Data {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        return size > 0 ? (try? Data(contentsOf: file)) ?? Data() : Data()
    }
}
