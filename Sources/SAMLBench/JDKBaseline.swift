import Foundation

/// The JDK's XML-DSig (`Benchmarks/JDK/JDKVerifyBench.java`, JDK only) on the same inputs, as a third
/// column of `saml bench --jdk`: compiled once with `javac`, then run per input in a child process (which
/// inherits the CPU affinity, so `taskset -c 1 saml bench --jdk --threads 1` pins all three to one core). The
/// harness first checks that the input verifies and that a tampered copy does not, warms the JIT up,
/// then measures one thread.
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

    /// Responses per second on one thread, or the reason it could not be measured.
    public func measure(_ input: BenchInput, seconds: Double) throws -> Double {
        let folder = classes.appendingPathComponent("input-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let transported = folder.appendingPathComponent("response.b64")
        let certificate = folder.appendingPathComponent("certificate.pem")
        try Data(input.transported).write(to: transported)
        try Data(input.certificatePEM).write(to: certificate)
        let result = try Self.execute(
            java,
            [
                "-cp", classes.path, "JDKVerifyBench", "--cert", certificate.path, "--seconds", String(seconds), "--warm-up",
                String(warmUpSeconds), transported.path,
            ])
        guard result.status == 0,
            let object = try? JSONSerialization.jsonObject(with: result.output) as? [String: Any],
            let perSecond = object["responses_per_second"] as? Double
        else {
            throw JDKFailure(message: String(decoding: result.error.suffix(400), as: UTF8.self))
        }
        return perSecond
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
        // An empty file is not read: FoundationEssentials leaks its 4 KiB read buffer on one (LeakSanitizer).
        let size = (try? FileManager.default.attributesOfItem(atPath: errors.path)[.size] as? Int) ?? 0
        return (process.terminationStatus, outputData, size > 0 ? (try? Data(contentsOf: errors)) ?? Data() : Data())
    }
}
