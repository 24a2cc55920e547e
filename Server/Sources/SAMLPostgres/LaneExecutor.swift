import NIOCore
import NIOPosix

/// A task executor on one NIO event loop: a lane's task prefers it, so that its code, and the
/// postgres-nio calls it awaits, run on the thread that does the connection's I/O. Each answer from the
/// server then resumes the lane on that same thread, instead of queueing behind verifications for one
/// of Swift's shared threads (with a synchronous standby, a batch was three round trips then: those waits
/// were most of a commit's latency under load).
final class LaneExecutor: TaskExecutor, Sendable {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute { job.runSynchronously(on: executor) }
    }
}
