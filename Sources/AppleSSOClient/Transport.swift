import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the client talks HTTP: one request, one answer. ``URLSessionTransport`` is the real one; a test or
/// an app with its own networking stack brings another.
public protocol AppleSSOTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// An HTTP request: the path (with its query) below the service's base URL.
public struct TransportRequest: Sendable, Hashable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: Data

    public init(method: String, path: String, headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// An HTTP answer; header names lowercased.
public struct TransportResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// ``AppleSSOTransport`` over `URLSession` (FoundationNetworking on Linux): nothing cached, redirects not
/// followed (an answer of the service is read as it comes), `timeout` per request.
public final class URLSessionTransport: NSObject, AppleSSOTransport, URLSessionTaskDelegate, @unchecked Sendable {
    private let baseURL: URL
    private let session: URLSession
    private let timeout: TimeInterval

    /// `baseURL`: the service's origin (`https://sp.example.com`); paths are appended to it.
    public init(baseURL: URL, configuration: URLSessionConfiguration = .ephemeral, timeout: TimeInterval = 15) {
        self.baseURL = baseURL
        self.timeout = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        guard let url = URL(string: base + request.path) else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = request.body }
        let (data, response) = try await session.data(for: urlRequest, delegate: self)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for case let (name as String, value as String) in http.allHeaderFields { headers[name] = value }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }

    // The completion-handler form: FoundationNetworking (Linux) declares no other.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
