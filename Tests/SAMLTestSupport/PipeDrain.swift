import Foundation

/// Reads a pipe to its end on a thread of its own, so that a child process writing to two pipes (its
/// output and its errors) never blocks on the one nobody reads while the test reads the other.
public final class PipeDrain: @unchecked Sendable {
    // @unchecked: `data` is written by the thread only before `done` is signalled and read only after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    public init(_ handle: FileHandle) {
        Thread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }.start()
    }

    /// Waits for the end of the pipe; its text.
    public func finish() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
