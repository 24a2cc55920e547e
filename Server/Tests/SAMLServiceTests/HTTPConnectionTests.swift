import Foundation
import SAML
import SAMLLoad
import ServiceLifecycle
import Testing

@testable import SAMLService

/// The public listener's HTTP/1.1, as a client sees it on the Token Exchange's route: answers in the
/// requests' order, the limits, `Connection: close`, a half-close, a graceful shutdown, and a client that
/// never reads its answers.
@Suite("HTTP/1.1 on the public listener")
struct HTTPConnectionTests {
    /// A Token Exchange the service refuses after reading it (no `AP-Device-Identifier`: `400`).
    static func exchange(body: String = "SAMLResponse=PHg%2B", extra: String = "", path: String = "/api/v2/REF30/profiles/sso/Apple")
        -> String
    {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n\(extra)"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static let live = "GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test("pipelined requests are answered in order")
    func pipelinedOrder() async throws {
        try await Service.with { port in
            let statuses = try await Self.onThread {
                let connection = try RawConnection(port: port)
                try connection.write(Self.live + Self.exchange() + Self.live + Self.exchange() + Self.exchange() + Self.live)
                return try Self.statuses(connection, count: 6)
            }
            #expect(statuses == [200, 400, 200, 400, 400, 200])
        }
    }

    @Test("a malformed request is answered 400 in its turn and the connection closed, whether behind an exchange or inside one")
    func malformedRequests() async throws {
        try await Service.with { port in
            try await Self.onThread {
                // Behind an exchange being answered: its answer first.
                let behind = try RawConnection(port: port)
                try behind.write(Self.exchange() + "NOT HTTP AT ALL\r\n\r\n")
                #expect(try Self.statuses(behind, count: 2) == [400, 400])
                #expect(behind.isClosed(waiting: .seconds(2)))
                // Inside an exchange: a chunk size that is not hexadecimal.
                let inside = try RawConnection(port: port)
                try inside.write(
                    "POST /api/v2/REF30/profiles/sso/Apple HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
                #expect(try Self.statuses(inside, count: 1) == [400])
                #expect(inside.isClosed(waiting: .seconds(2)))
            }
            #expect(try await Service.send(port, "/health/live", method: "GET").status == 200)
        }
    }

    @Test("a body past the limit, chunked or announced, is 413 and the connection goes on; Connection: close closes it")
    func limitsAndClose() async throws {
        var configuration = Service.configuration()
        configuration.maximumBodyBytes = 1024
        try await Service.with(configuration) { port in
            try await Self.onThread { try Self.limitsAndClose(port: port) }
        }
    }

    static func limitsAndClose(port: Int) throws {
        let connection = try RawConnection(port: port)
        let large = "SAMLResponse=" + String(repeating: "A", count: 2000)
        let chunked =
            "POST /api/v2/REF30/profiles/sso/Apple HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n" + "400\r\n\(large.prefix(1024))\r\n"
            + String(large.utf8.count - 1024, radix: 16) + "\r\n\(large.dropFirst(1024))\r\n0\r\n\r\n"
        try connection.write(chunked + Self.exchange(body: large) + Self.live)
        let answers = try Self.answers(connection, count: 3)
        #expect(answers.map(\.status) == [413, 413, 200])
        #expect(answers[0].text.contains(#""code":"request_too_large""#))

        try connection.write(Self.exchange(extra: "Connection: close\r\n"))
        #expect(try Self.statuses(connection, count: 1) == [400])
        #expect(connection.isClosed(waiting: .seconds(2)))
    }

    @Test("a body announced past the limit is 413 before it is sent; the rest, when it comes, is dropped")
    func announcedTooLarge() async throws {
        var configuration = Service.configuration()
        configuration.maximumBodyBytes = 1024
        configuration.idleTimeout = .seconds(1)
        try await Service.with(configuration) { port in
            try await Self.onThread {
                let head =
                    "POST /api/v2/REF30/profiles/sso/Apple HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: 2000\r\n\r\n"
                let connection = try RawConnection(port: port)
                try connection.write(head)
                #expect(try Self.statuses(connection, count: 1) == [413])
                try connection.write(String(repeating: "A", count: 2000) + Self.live)
                #expect(try Self.statuses(connection, count: 1) == [200])
                // Answered before its end, the request's end leaves the connection idle (closed after
                // the idle timeout), not being answered for ever.
                let idle = try RawConnection(port: port)
                try idle.write(head)
                #expect(try Self.statuses(idle, count: 1) == [413])
                try idle.write(String(repeating: "A", count: 2000))
                let clock = ContinuousClock()
                let idleSince = clock.now
                #expect(idle.isClosed(waiting: .seconds(4)))
                #expect(clock.now - idleSince >= .milliseconds(800))
            }
        }
    }

    @Test("a client's half-close after its requests still gets every answer")
    func halfClose() async throws {
        try await Service.with { port in
            try await Self.onThread {
                for _ in 0..<5 {
                    let connection = try RawConnection(port: port)
                    try connection.write(Self.exchange() + Self.exchange() + Self.live + Self.exchange())
                    shutdown(connection.descriptor, Int32(SHUT_WR))
                    #expect(try Self.statuses(connection, count: 4) == [400, 400, 200, 400])
                    #expect(connection.isClosed(waiting: .seconds(2)))
                }
            }
        }
    }

    @Test("an answer carries Content-Length, Date and Server, and is timed under the route's template")
    func answerHeaders() async throws {
        try await Service.with { port in
            let answers = try await Self.onThread {
                let connection = try RawConnection(port: port)
                try connection.write(Self.exchange() + Self.exchange(path: "/api/v2/REF30/profiles/sso/Apple?from=query"))
                return try Self.answers(connection, count: 2)
            }
            for answer in answers {
                #expect(answer.status == 400)
                #expect(answer.head.contains("\r\nServer: swift-saml\r\n"))
                #expect(
                    answer.head.range(
                        of: #"\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\r\n"#, options: .regularExpression)
                        != nil)
            }
            #expect(Self.code(answers[0]) == Self.code(answers[1]))
            let metrics = try await Service.send(port, "/metrics", method: "GET").text
            #expect(
                metrics.contains(
                    #"saml_http_request_duration_seconds_count{endpoint="/api/v2/{serviceProvider}/profiles/sso/{partner}",status="400"} 2"#
                ))
        }
    }

    @Test("a graceful shutdown lets an exchange in progress finish before the connection closes")
    func shutdownWaitsForTheAnswer() async throws {
        let store = GatedStore()
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = try ServiceApplication.buildApplication(
            configuration: Service.configuration(), store: store, logger: Service.quiet, onRunning: { continuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [application], logger: Service.quiet))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let session = try await Service.session(port, Service.pfs(Service.mvpdA.providerID).headerValue)
        let response = try Service.response(Service.mvpdA, to: try #require(session.partnerRequestID))
        let answer = Task { try await Service.send(port, Service.exchange(response, Service.pfs(Service.mvpdA.providerID))) }
        await store.reached()
        await group.triggerGracefulShutdown()
        try await Task.sleep(for: .milliseconds(200))
        store.open()
        let status = try await answer.value.status
        #expect(status == 201)
        try await running.value
    }

    @Test("a client that pipelines requests and never reads the answers is stopped: reading stops while answers cannot be written")
    func clientThatNeverReads() async throws {
        try await Service.with { port in
            let sent = try await Self.onThread { () -> Int in
                let connection = try RawConnection(port: port)
                let request = Array(Self.exchange(body: "SAMLResponse=x").utf8)
                var batch: [UInt8] = []
                for _ in 0..<64 { batch += request }
                // Small socket buffers on the client's side, so that the server's output fills (and, with
                // backpressure, its reading stops) after a few thousand answers, not a few hundred thousand.
                var small: Int32 = 4096
                setsockopt(connection.descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                setsockopt(connection.descriptor, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                // Non-blocking: a write that would block means the server stopped reading.
                _ = fcntl(connection.descriptor, F_SETFL, fcntl(connection.descriptor, F_GETFL) | O_NONBLOCK)
                var sent = 0
                var blockedSince: ContinuousClock.Instant?
                let deadline = ContinuousClock.now + .seconds(60)
                // Without backpressure, the server reads (and answers into memory) for as long as the client
                // writes: 64 MiB would never be reached by a server that stops reading.
                while sent < 64 << 20, ContinuousClock.now < deadline {
                    let count = batch.withUnsafeBytes { send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if count > 0 {
                        sent += count
                        blockedSince = nil
                    } else if errno == EAGAIN || errno == EWOULDBLOCK {
                        if let since = blockedSince {
                            if ContinuousClock.now - since > .seconds(2) { break }
                        } else {
                            blockedSince = .now
                        }
                        usleep(10_000)
                    } else {
                        break
                    }
                }
                return sent
            }
            #expect(sent < 16 << 20, "the server kept reading \(sent) bytes of requests whose answers were never read")
            // The service still answers others.
            #expect(try await Service.send(port, "/health/live", method: "GET").status == 200)
            print("client that never reads: \(sent) bytes sent before the server stopped reading")
        }
    }

    // MARK: Support

    /// Runs `body` on a thread of its own: its blocking reads would otherwise hold the concurrency pool's
    /// threads, on which the service's tasks run in tests.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    struct Answer {
        var status: Int
        var head: String
        var text: String
    }

    /// Reads `count` whole answers (each with a Content-Length) from `connection`, within 5 s.
    static func answers(_ connection: RawConnection, count: Int) throws -> [Answer] {
        var bytes: [UInt8] = []
        var answers: [Answer] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while answers.count < count, ContinuousClock.now < deadline {
            bytes += connection.read(waiting: .milliseconds(200))
            while let answer = take(&bytes) { answers.append(answer) }
        }
        guard answers.count == count else { throw POSIXError(.ETIMEDOUT) }
        return answers
    }

    static func statuses(_ connection: RawConnection, count: Int) throws -> [Int] {
        try answers(connection, count: count).map(\.status)
    }

    private static func take(_ bytes: inout [UInt8]) -> Answer? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = String(text[..<end.lowerBound])
        guard let lengthLine = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
            let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
            let status = Int(head.split(separator: " ")[1])
        else { return nil }
        let headBytes = head.utf8.count + 4
        guard bytes.count >= headBytes + length else { return nil }
        let body = String(decoding: bytes[headBytes..<headBytes + length], as: UTF8.self)
        bytes.removeFirst(headBytes + length)
        return Answer(status: status, head: head + "\r\n", text: body)
    }

    static func code(_ answer: Answer) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])?["code"] as? String
    }
}

/// An in-memory store whose consumptions wait until ``open()``; ``reached()`` returns once one waits.
final class GatedStore: SAMLStateStore {
    private let store = InMemoryStateStore()
    private let waiting = AsyncStream<Void>.makeStream()
    private let gate = AsyncStream<Void>.makeStream()

    func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
        waiting.continuation.yield()
        for await _ in gate.stream { break }
        return try await store.consume(request: request, assertion: assertion, now: now)
    }

    func reached() async {
        for await _ in waiting.stream { break }
    }

    func open() {
        gate.continuation.finish()
    }
}
