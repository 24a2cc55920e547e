import CSAMLExecutor
import Foundation
import NIOCore
import NIOPosix

/// NIO's event loops, one per CPU the process may use (`taskset`, a cpuset), not one per CPU of the machine;
/// and Swift concurrency's global executor for every command: NIO's event loop when the process may use one
/// CPU, Swift's own pool otherwise (`SAML_SERVER_EXECUTOR=nio` or `swift` decides instead). On one CPU a
/// request then runs where it was read, without a hop to Swift's pool and back at each `await` (1,560 →
/// 2,430 requests/s); on two, computing on the event loops delays their I/O and Swift's pool is faster
/// (docs/benchmarks-history.md, "The service at the speed of the library"). Nothing in saml-server blocks a
/// thread.
///
/// Installed through the runtime's hook as NIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
/// does (each job enqueued on the current event loop, or the next one, and run as that loop's serial
/// executor), but with the hook reached by the linker (CSAMLExecutor) instead of `dlsym`, which finds
/// nothing in a binary with Swift's runtime linked in (every Linux build of saml-server: Server/Package.swift;
/// before, the container's `--static-swift-stdlib` binary ran on Swift's pool on one CPU, with 1.23x the
/// CPU a login, and said nothing).
struct GlobalExecutor: Sendable, CustomStringConvertible {
    /// What was asked for: `nio` or `swift`.
    let requested: String
    /// Whether NIO's event loops run Swift's global jobs.
    let eventLoop: Bool

    /// Chosen and installed on first use, which `main` makes before any task runs.
    static let selected: GlobalExecutor = {
        let allowed = allowedCPUs()
        if let allowed { NIOSingletons.groupLoopCountSuggestion = min(allowed, System.coreCount) }
        let variable = ProcessInfo.processInfo.environment["SAML_SERVER_EXECUTOR"].flatMap { $0.isEmpty ? nil : $0 }
        let requested = variable ?? (allowed == 1 ? "nio" : "swift")
        return GlobalExecutor(requested: requested, eventLoop: requested == "nio" && installEventLoop())
    }()

    /// Why what was asked for is not what runs, if it is not: an unknown `SAML_SERVER_EXECUTOR`, or another
    /// hook installed first.
    var mismatch: String? {
        switch requested {
        case "swift": nil
        case "nio":
            eventLoop ? nil : "expected to run Swift's jobs on NIO's event loop, found another global executor installed: on Swift's pool"
        default: "expected SAML_SERVER_EXECUTOR=nio or swift, found another value: on Swift's pool"
        }
    }

    var description: String { eventLoop ? "nio" : "swift" }

    private static func installEventLoop() -> Bool {
        saml_executor_install { job in
            MultiThreadedEventLoopGroup.singleton.any().enqueue(ExecutorJob(unsafeBitCast(job, to: UnownedJob.self)))
        } == 0
    }
}

/// The CPUs this process may run on (`taskset`, `sched_setaffinity`), from `Cpus_allowed` in
/// /proc/self/status: a hex mask, comma-separated in groups of 32 bits.
func allowedCPUs() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
    else { return nil }
    let count = line.dropFirst("Cpus_allowed:".count).reduce(0) { sum, character in
        sum + (character.hexDigitValue?.nonzeroBitCount ?? 0)
    }
    return count > 0 ? count : nil
}
