#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-input reads and unbuffered writes on file descriptors, without copies through Foundation.
enum StandardStreams {
    /// Reads a whole file, or standard input for `nil` and `-`.
    static func readAll(_ path: String?) throws -> [UInt8] {
        let descriptor: Int32
        if let path, path != "-" {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw CommandFailure.io("cannot open \(path): \(lastError())") }
        } else {
            descriptor = 0
        }
        defer { if descriptor != 0 { close(descriptor) } }
        var status = stat()
        var capacity = 1 << 16
        if fstat(descriptor, &status) == 0, status.st_size > 0 { capacity = Int(status.st_size) + 1 }
        var buffer = [UInt8](repeating: 0, count: capacity)
        var count = 0
        while true {
            if count == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandFailure.io("cannot read \(path ?? "standard input"): \(lastError())")
            }
            if n == 0 { break }
            count += n
        }
        buffer.removeSubrange(count...)
        return buffer
    }

    static func writeOutput(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write(to: 1, $0) }
    }

    static func writeOutput(_ text: String) {
        writeOutput(Array(text.utf8))
    }

    static func writeError(_ text: String) {
        Array(text.utf8).withUnsafeBytes { write(to: 2, $0) }
    }

    private static func write(to descriptor: Int32, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
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
