#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-input reads and unbuffered writes on file descriptors, without copies through Foundation.
enum StandardStreams {
    /// Reads a whole file, or standard input for `nil` and `-`.
    static func readAll(_ path: String?) throws -> [UInt8] {
        let name = path ?? "standard input"
        let descriptor: Int32
        if let path, path != "-" {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw CommandFailure.io("cannot open \(path): \(lastError())") }
        } else {
            descriptor = 0
        }
        defer { if descriptor != 0 { close(descriptor) } }
        var status = stat()
        let sizeHint = fstat(descriptor, &status) == 0 && status.st_size > 0 ? Int(status.st_size) : 0
        var chunk = Swift.max(sizeHint + 1, 1 << 16)
        var result = [UInt8]()
        while true {
            // Read straight into fresh, uninitialised storage (no zero-filling); a regular file is read
            // into a single buffer of its size.
            var atEnd = false
            var failure: Int32 = 0
            let part = [UInt8](unsafeUninitializedCapacity: chunk) { buffer, count in
                count = 0
                while count < buffer.count {
                    let n = read(descriptor, buffer.baseAddress! + count, buffer.count - count)
                    if n < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    if n == 0 {
                        atEnd = true
                        return
                    }
                    count += n
                }
            }
            guard failure == 0 else {
                throw CommandFailure.io("cannot read \(name): \(String(cString: strerror(failure)))")
            }
            if result.isEmpty { result = part } else { result.append(contentsOf: part) }
            if atEnd { return result }
            chunk = Swift.max(chunk, result.count)
        }
    }

    static func writeOutput(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write(to: 1, $0) }
    }

    static func writeOutput(_ bytes: UnsafeRawBufferPointer) {
        write(to: 1, bytes)
    }

    static func writeOutput(_ text: String) {
        writeOutput(Array(text.utf8))
    }

    /// A progress line on standard error, rewritten in place on a terminal; nothing when standard error is
    /// not a terminal (a log file or a pipe would keep every line and its escape codes).
    static func writeProgress(_ line: String) {
        guard isatty(2) == 1 else { return }
        writeError("\r\u{1B}[K" + line)
    }

    static func writeError(_ text: String) {
        Array(text.utf8).withUnsafeBytes { write(to: 2, $0) }
    }

    private static func write(to descriptor: Int32, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let n = posixWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
