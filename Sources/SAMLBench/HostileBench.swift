import Foundation
import SAML

#if canImport(Glibc)
    import Glibc
#endif

/// One row of `saml bench --hostile`: what a hostile shape costs to refuse, beside a valid response of
/// the same size.
public struct HostileCost: Sendable {
    public let name: String
    public let bytes: Int
    /// The code the verifier refused it with ("valid" if it did not).
    public let verdict: String
    public let expectedCode: String
    /// CPU time of one verification (the calling thread's), the median of the iterations.
    public let cpuMilliseconds: Double
    /// The process's peak resident memory during the iterations, beyond what it held before them.
    public let peakMiB: Double
    /// The same for a valid response of about the same size (``HostileShapes/typical(bytes:directory:)``).
    public let typicalCPUMilliseconds: Double
    public let typicalPeakMiB: Double

    public var ratio: Double { cpuMilliseconds / max(typicalCPUMilliseconds, 0.001) }
    /// Issue 33's bound for any unauthenticated input.
    public var withinBounds: Bool { verdict == expectedCode && cpuMilliseconds < 50 && peakMiB < 64 }
}

/// Measures each hostile shape and a valid response of its size, one verification at a time on the
/// calling thread: CPU time from `CLOCK_THREAD_CPUTIME_ID`, peak memory from the kernel's high-water mark
/// (`VmHWM`, reset through `/proc/self/clear_refs` before each measurement; Linux only, 0 elsewhere).
public enum HostileBench {
    public static func run(directory: URL, iterations: Int, progress: (String) -> Void) throws -> [HostileCost] {
        let shapes = try HostileShapes.all(directory: directory)
        var rows: [HostileCost] = []
        for (index, shape) in shapes.enumerated() {
            progress("[\(index + 1)/\(shapes.count)] \(shape.name)")
            var verdict = "valid"
            let (cpu, peak) = measure(iterations: iterations) {
                do {
                    _ = try shape.verifier.verifyWithoutReplayCheck(shape.xml, at: shape.now)
                } catch let error as SAMLError {
                    verdict = error.code.identifier
                } catch {
                    verdict = "\(type(of: error))"
                }
            }
            let typical = try HostileShapes.typical(bytes: shape.xml.count, directory: directory)
            var typicalFailure: Error?
            let (typicalCPU, typicalPeak) = measure(iterations: iterations) {
                do {
                    _ = try typical.verifier.verifyWithoutReplayCheck(typical.xml, at: typical.now)
                } catch {
                    typicalFailure = error
                }
            }
            if let typicalFailure { throw typicalFailure }
            rows.append(
                HostileCost(
                    name: shape.name, bytes: shape.xml.count, verdict: verdict, expectedCode: shape.expectedCode, cpuMilliseconds: cpu,
                    peakMiB: peak, typicalCPUMilliseconds: typicalCPU, typicalPeakMiB: typicalPeak))
        }
        return rows
    }

    /// The median CPU milliseconds of `body` and the peak memory beyond the resting set, in MiB.
    static func measure(iterations: Int, _ body: () -> Void) -> (Double, Double) {
        body()  // warm-up: first-use allocations are not the input's cost
        let resting = memoryKiB("VmRSS:")
        resetPeak()
        var samples: [Double] = []
        for _ in 0..<max(1, iterations) {
            let start = threadCPUNanoseconds()
            body()
            samples.append(Double(threadCPUNanoseconds() - start) / 1e6)
        }
        let peak = max(0, memoryKiB("VmHWM:") - resting)
        return (samples.sorted()[samples.count / 2], Double(peak) / 1024)
    }

    static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// A field of /proc/self/status in KiB; 0 where there is none.
    static func memoryKiB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Resets VmHWM to the current resident set (Linux 4.0+).
    static func resetPeak() {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        handle.write(Data("5".utf8))
        try? handle.close()
    }
}
