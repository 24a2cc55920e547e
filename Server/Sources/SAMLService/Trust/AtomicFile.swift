#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces a file's contents so that a reader sees the old file or the new one, never a part, and so
/// that nothing else in the directory can redirect the write: a temporary name no other process can guess
/// (128 random bits), created with `O_CREAT | O_EXCL | O_NOFOLLOW` (a planted file or symlink makes it
/// fail instead of being followed or overwritten), mode 0600, written whole, `fsync`ed, then renamed over
/// the target (atomic on one file system; `rename` replaces a symlink at the target, never its target)
/// and the directory `fsync`ed so that the rename survives a crash.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible {
        let step: String
        let errno: Int32
        var description: String { "\(step) failed: errno \(errno)" }
    }

    static func replace(_ path: String, with bytes: [UInt8]) throws {
        let temporary = path + ".tmp-" + RandomIdentifier.uuid()
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(step: "open", errno: errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            var written = 0
            while written < bytes.count {
                let result = bytes.withUnsafeBytes { buffer in
                    write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw Failure(step: "write", errno: errno)
                }
                written += result
            }
            guard fsync(descriptor) == 0 else { throw Failure(step: "fsync", errno: errno) }
        }
        guard rename(temporary, path) == 0 else { throw Failure(step: "rename", errno: errno) }
        renamed = true
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let handle = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if handle >= 0 {
            _ = fsync(handle)
            close(handle)
        }
    }
}
