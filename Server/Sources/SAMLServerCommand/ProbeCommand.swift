import ArgumentParser
import Foundation

/// `saml-server probe URL`: a container's health check without curl in the image. One `GET` over plain
/// HTTP/1.1 to a loopback or pod address, exit 0 on a 2xx answer within the timeout, 1 otherwise.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "GET a health URL (http://host:port/path); exit 0 on a 2xx answer, 1 otherwise.")

    @Argument(help: "The URL, e.g. http://127.0.0.1:8081/health/ready.") var url: String
    @Option(help: "Seconds to wait for the answer.") var timeout: Double = 3

    func run() throws {
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host,
            let port = components.port ?? 80 as Int?, (1...65535).contains(port)
        else {
            throw ValidationError("expected an http://host:port/path URL")
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let address = results else { throw ExitCode.failure }
        defer { freeaddrinfo(results) }
        let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard descriptor >= 0 else { throw ExitCode.failure }
        defer { close(descriptor) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else { throw ExitCode.failure }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw ExitCode.failure
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        // "HTTP/1.1 2xx"
        guard count >= 12, buffer[9] == UInt8(ascii: "2") else { throw ExitCode.failure }
    }
}
