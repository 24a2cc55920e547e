import Synchronization

/// Runs an operation against a deadline.
enum Deadline {
    static func race<T: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T, onTimeout: @escaping @Sendable () -> Error
    ) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.state.withLock { $0.0 = continuation }
                let work = Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    race.finish(.failure(onTimeout()))
                }
                race.state.withLock { $0.1 = [work, timer] }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// The state of one race: the continuation, resumed once, and the two tasks to cancel then.
private final class Race<T: Sendable>: Sendable {
    let state = Mutex<(CheckedContinuation<T, Error>?, [Task<Void, Never>])>((nil, []))

    func finish(_ result: Result<T, Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, Error>?, [Task<Void, Never>]) in
            let taken = state.0
            state.0 = nil
            return (taken, state.1)
        }
        guard let continuation else { return }
        continuation.resume(with: result)
        tasks.forEach { $0.cancel() }
    }
}
