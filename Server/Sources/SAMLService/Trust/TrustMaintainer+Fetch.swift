import AppleSSO
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SAML
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Fetching an MVPD's metadata: conditional requests, a size and a time bound.
extension TrustMaintainer {
    /// The document at `url`, or nil when it has not changed since the last good answer (`304` to a
    /// conditional request); the whole fetch within `limit`.
    func fetch(_ url: String, mvpd: String, within limit: Duration) async throws -> [UInt8]? {
        enum Outcome: Sendable {
            case fetched([UInt8]?)
            case timedOut
        }
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask { .fetched(try await self.fetch(url, mvpd: mvpd)) }
            group.addTask {
                try await Task.sleep(for: limit)
                return .timedOut
            }
            defer { group.cancelAll() }
            guard case .fetched(let document) = try await group.next() else {
                throw Failure(reason: "timeout", message: "expected the whole metadata document within \(limit), found it still arriving")
            }
            return document
        }
    }

    func httpClient() -> HTTPClient {
        client.withLock { client in
            if let client { return client }
            var configuration = HTTPClient.Configuration(
                // No redirect is followed: a metadata URL is configuration, and a redirect could lead the
                // fetch anywhere (another scheme, a Unix socket, an internal address).
                redirectConfiguration: .disallow,
                timeout: HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(30)))
            // ``fetchTimeout`` bounds each fetch as a whole (AsyncHTTPClient's own deadline covers the head only).
            configuration.decompression = .disabled
            let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            client = made
            return made
        }
    }

    func fetch(_ url: String, mvpd: String) async throws -> [UInt8]? {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8")
        let cached = state.withLock { $0.cached[mvpd] }
        // Conditional only while that answer is what the registry trusts.
        var conditional = false
        if cached?.digest != nil, registry.identityProvider(for: mvpd) != nil {
            if let etag = cached?.etag { request.headers.add(name: "If-None-Match", value: etag) }
            if let lastModified = cached?.lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
            conditional = cached?.etag != nil || cached?.lastModified != nil
        }
        let response = try await httpClient().execute(request, timeout: .nanoseconds(fetchTimeout.nanoseconds))
        switch response.status.code {
        case 304:
            // Not modified since what? Only an answer to If-None-Match / If-Modified-Since says.
            guard conditional else {
                throw Failure(reason: "http-status", message: "expected 200 to an unconditional request, found 304")
            }
            return nil
        case 200:
            break
        default:
            throw Failure(reason: "http-status", message: "expected 200 or 304 from the metadata URL, found \(response.status.code)")
        }
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > Self.maximumDocumentBytes {
            throw Failure(reason: "too-large", message: "expected at most \(Self.maximumDocumentBytes) bytes, found \(length) announced")
        }
        let body = try await response.body.collect(upTo: Self.maximumDocumentBytes)
        let etag = response.headers.first(name: "ETag")
        let lastModified = response.headers.first(name: "Last-Modified")
        state.withLock {
            $0.cached[mvpd, default: Cached()].etag = etag
            $0.cached[mvpd, default: Cached()].lastModified = lastModified
        }
        return Array(body.readableBytesView)
    }
}
