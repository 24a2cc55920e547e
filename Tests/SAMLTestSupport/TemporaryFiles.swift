import Foundation
import Synchronization

/// Temporary folders and files for tests, every one of them under a single folder of the test process that
/// is removed, with all it holds, when the process exits: a test run leaves nothing in the temporary directory.
///
/// The process's folder, `<FileManager.default.temporaryDirectory>/swift-saml-tests-<pid>-<random>` (mode
/// 0700), is created by the first call, whichever thread makes it, and removed by an `atexit` handler: when
/// the process calls `exit` or returns from `main`, not when a signal kills it. Each call answers a new
/// name in that folder, the prefix given followed by a UUID, so that tests running in parallel never share
/// a path and a file seen while a test is stopped in a debugger still says which test made it.
///
/// A test does not remove what it made here: it removes a path only when the removal is what it checks.
public enum TemporaryFiles {
    /// A new, empty folder named `<prefix>-<UUID>` in the process's folder.
    ///
    /// - Parameter prefix: the start of the folder's name, which says which test made it (`"trust-sources"`).
    /// - Returns: the folder's URL, the folder created.
    public static func folder(_ prefix: String) throws -> URL {
        let folder = try root().appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        return folder
    }

    /// A new path in the process's folder with nothing at it: `name` with `-<UUID>` before its extension
    /// (`"backing.xml"` gives `backing-<UUID>.xml`; a name without a dot ends with the UUID).
    ///
    /// Nothing is created there: the test writes the file, or the code under test creates the file or the
    /// folder it is given.
    ///
    /// - Parameter name: the file's name, which says which test made it, and its extension if it needs one.
    /// - Returns: the path's URL.
    public static func file(_ name: String) throws -> URL {
        let unique: String
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            unique = "\(name[..<dot])-\(UUID().uuidString)\(name[dot...])"
        } else {
            unique = "\(name)-\(UUID().uuidString)"
        }
        return try root().appendingPathComponent(unique, isDirectory: false)
    }

    /// The process's folder, named once. A static property so that the exit handler, a C function that
    /// captures nothing, can read it.
    private static let path = FileManager.default.temporaryDirectory.appendingPathComponent(
        "swift-saml-tests-\(ProcessInfo.processInfo.processIdentifier)-\(UInt64.random(in: 0...UInt64.max))",
        isDirectory: true)

    /// Whether ``path`` is created and its removal at exit registered.
    private static let created = Mutex(false)

    /// ``path``, created and its removal at exit registered by the first call.
    private static func root() throws -> URL {
        try created.withLock { created in
            guard !created else { return }
            try FileManager.default.createDirectory(
                at: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            atexit { try? FileManager.default.removeItem(at: TemporaryFiles.path) }
            created = true
        }
        return path
    }
}
