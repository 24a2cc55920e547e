import Logging
import NIOCore
import PostgresNIO
import SAML
import Synchronization

/// The store's connections: ``PostgresStateStore/Configuration/maximumConnections`` lanes, each one
/// connection running one piece of work at a time from the ``OperationQueue``.
///
/// A lane connects when it first has work, to the first server of the host list that matches
/// `target_session_attrs` (libpq's rule), and keeps the connection until anything fails on it: then it
/// closes it, and its next work connects again, going through the host list from the start. So after
/// a failover the lanes find the promoted server by themselves, and in between every operation fails
/// closed (``SAMLError/Code/storeUnavailable``). A piece of work that outlives the deadline closes its
/// connection (postgres-nio would otherwise wait for the server's answer).
final class StoreLanes: Sendable {
    let configuration: PostgresStateStore.Configuration
    let queue: OperationQueue
    private let logger: Logger
    private let connectionIDs = Atomic<Int>(0)
    private let tls: Result<PostgresConnection.Configuration.TLS, SAMLError>

    init(configuration: PostgresStateStore.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        queue = OperationQueue(capacity: configuration.maximumQueue, maximumBatch: configuration.maximumBatch)
        do {
            tls = .success(try configuration.makeClientTLS())
        } catch {
            tls = .failure(SAMLError(.configurationInvalid, "expected a usable TLS configuration for PostgreSQL, found NIOSSL refusing it"))
        }
    }

    /// Runs the lanes until the task is cancelled; then queued operations fail closed.
    func run() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for lane in 0..<max(1, configuration.maximumConnections) {
                    group.addTask { await self.lane(lane) }
                }
            }
        } onCancel: {
            queue.close()
        }
    }

    /// One lane: takes work, runs it on its connection within the deadline, answers its operations.
    private func lane(_ number: Int) async {
        let connection = LaneConnection()
        while let work = await queue.next() {
            let timeout = configuration.timeout
            do {
                try await Deadline.race(timeout) {
                    let live = try await connection.current { try await self.connect() }
                    switch work {
                    case .batch(let operations):
                        try await GroupCommit.run(operations, on: live, logger: self.logger)
                    case .job(let operation):
                        guard case .job(let body) = operation.kind else { return }
                        operation.finish(.success(.value(try await body(live))))
                    }
                } onTimeout: {
                    SAMLError(.storeUnavailable, "expected PostgreSQL to answer within \(timeout), found no answer: refused, not accepted")
                }
            } catch {
                // Whatever failed, the connection's state is unknown (a transaction may be open, the
                // server may be gone or read-only now): close it; the next work connects again.
                let failure = Self.storeError(error)
                logger.debug("store work failed: connection closed", metadata: ["lane": "\(number)", "code": "\(failure.code)"])
                await connection.drop()
                switch work {
                case .batch(let operations): operations.forEach { $0.finish(.failure(failure)) }
                case .job(let operation): operation.finish(.failure(failure))
                }
            }
        }
        await connection.drop()
    }

    /// A connection to the first server of the host list that matches `target_session_attrs`.
    private func connect() async throws -> PostgresConnection {
        let tls = try self.tls.get()
        var found: [String] = []
        for (index, endpoint) in configuration.endpoints.enumerated() {
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(
                    configuration: configuration.connection(to: endpoint, tls: tls), id: connectionIDs.add(1, ordering: .relaxed).newValue,
                    logger: logger)
            } catch {
                found.append("host \(index + 1): \(Self.kind(error))")
                continue
            }
            do {
                if try await matches(connection) { return connection }
                found.append("host \(index + 1): not \(configuration.targetSessionAttributes.rawValue)")
            } catch {
                found.append("host \(index + 1): \(Self.kind(error))")
            }
            try? await connection.close()
        }
        logger.debug("no PostgreSQL server to connect to", metadata: ["hosts": "\(found.joined(separator: "; "))"])
        throw SAMLError(
            .storeUnavailable,
            "expected a \(configuration.targetSessionAttributes.rawValue) PostgreSQL server among \(configuration.endpoints.count) host(s), found none (\(found.joined(separator: "; "))): refused, not accepted"
        )
    }

    /// Whether the server matches `target_session_attrs` (libpq's checks).
    private func matches(_ connection: PostgresConnection) async throws -> Bool {
        switch configuration.targetSessionAttributes {
        case .any:
            return true
        case .readWrite:
            for try await value in try await connection.query("SHOW transaction_read_only", logger: logger).decode(String.self) {
                return value == "off"
            }
            return false
        case .primary:
            for try await value in try await connection.query("SELECT pg_is_in_recovery()", logger: logger).decode(Bool.self) {
                return !value
            }
            return false
        }
    }

    /// A `SAMLError` stays (the deadline's, a schema this release cannot run against); anything else
    /// becomes `store.unavailable`.
    static func storeError(_ error: any Error) -> SAMLError {
        if let error = error as? SAMLError { return error }
        return SAMLError(.storeUnavailable, "expected PostgreSQL to answer, found it failing (\(kind(error))): refused, not accepted")
    }

    /// The kind of a failure for logs: PostgreSQL's code, or the error's type; never a message that could
    /// hold data.
    static func kind(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState].map { "SQLSTATE \($0)" } ?? "\(error.code)"
        }
        return String(reflecting: type(of: error))
    }
}

/// A lane's connection: kept while it works, replaced after any failure.
private final class LaneConnection: Sendable {
    private let connection = Mutex<PostgresConnection?>(nil)

    /// The open connection, or a new one from `connect`.
    func current(_ connect: () async throws -> PostgresConnection) async throws -> PostgresConnection {
        if let open = connection.withLock({ $0 }), !open.isClosed { return open }
        let new = try await connect()
        connection.withLock { $0 = new }
        return new
    }

    /// Closes the connection, if any.
    func drop() async {
        let old = connection.withLock { state -> PostgresConnection? in
            defer { state = nil }
            return state
        }
        try? await old?.close()
    }
}
