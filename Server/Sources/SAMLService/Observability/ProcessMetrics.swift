import Foundation

/// The standard `process_*` metrics (as Prometheus's client libraries name them), read from `/proc/self`
/// at each scrape and appended to the exposition: CPU seconds, resident and virtual memory, open and
/// maximum file descriptors, start time. Linux only; elsewhere nothing.
enum ProcessMetrics {
    static func exposition() -> [UInt8] {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return [] }
        // The fields after the command's closing parenthesis: state is field 3, utime 14, stime 15,
        // starttime 22, vsize 23, rss 24 (proc(5)).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        var lines: [String] = []
        func add(_ name: String, _ type: String, _ help: String, _ value: Double?) {
            guard let value else { return }
            lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(type)", "\(name) \(value)"]
        }
        if let utime = field(14), let stime = field(15) {
            add("process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.", (utime + stime) / ticks)
        }
        add("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23))
        add("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", field(24).map { $0 * page })
        if let started = field(22), let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
            let seconds = Double(uptime.split(separator: " ").first ?? "")
        {
            let boot = Date().timeIntervalSince1970 - seconds
            add(
                "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
                (boot + started / ticks).rounded())
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count).map(Double.init)
        add("process_open_fds", "gauge", "Number of open file descriptors.", descriptors)
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            add("process_max_fds", "gauge", "Maximum number of open file descriptors.", Double(limit.rlim_cur))
        }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }
}
