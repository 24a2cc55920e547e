import AppleSSO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SAML
import Synchronization
import Testing

@testable import SAMLLoad
@testable import SAMLService

/// The routes through Hummingbird's router test client (no sockets): what does not need real HTTP.
@Suite("Service routes")
struct ServiceRouterTests {
    /// A clock the test moves.
    final class MovableClock: SAMLClock {
        let instant: Mutex<SAMLInstant>
        init(_ start: SAMLInstant) { instant = Mutex(start) }
        func now() -> SAMLInstant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 = $0 + duration } }
    }

    static func form(_ extra: HTTPFields = [:]) -> HTTPFields {
        var fields: HTTPFields = [
            .contentType: "application/x-www-form-urlencoded",
            HTTPField.Name("AP-Device-Identifier")!: "fingerprint \(Service.deviceValue)",
        ]
        fields.append(contentsOf: extra)
        return fields
    }

    @Test("one injected clock: a request past its lifetime by the service's clock is refused as expired")
    func injectedClock() async throws {
        let clock = MovableClock(.now())
        var configuration = Service.configuration()
        configuration.clock = clock
        configuration.requestLifetime = .seconds(10)
        let application = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
        try await application.test(.router) { client in
            let status = Service.pfs("ProviderA", expiresIn: 86_400_000)
            let pfs = HTTPField.Name("AP-Partner-Framework-Status")!
            let session = try await client.execute(
                uri: "/api/v2/REF30/sessions/sso/Apple", method: .post, headers: Self.form([pfs: status.headerValue]),
                body: ByteBuffer(string: "domainName=app.example&redirectUrl=https%3A%2F%2Fapp.example"))
            let answer = HTTPConnection.Answer(status: Int(session.status.code), headers: [], body: Array(session.body.readableBytesView))
            let requestID = try #require(answer.partnerRequestID)
            let request = Service.exchange(try Service.response(Service.mvpdA, to: requestID), status)
            var headers: HTTPFields = [:]
            for header in request.headers { headers.append(HTTPField(name: HTTPField.Name(header.name)!, value: header.value)) }
            clock.advance(.seconds(20))
            let refused = try await client.execute(
                uri: request.path, method: .post, headers: headers, body: ByteBuffer(bytes: request.body))
            let object = try JSONSerialization.jsonObject(with: Data(refused.body.readableBytesView)) as? [String: Any]
            #expect(refused.status == .badRequest && object?["details"] as? String == "in-response-to.expired")
        }
    }

    @Test(
        "the form media type: any case, parameters and surrounding spaces allowed; nothing else, not even a look-alike",
        arguments: [
            ("application/x-www-form-urlencoded", true), ("Application/X-WWW-Form-URLEncoded", true),
            (" application/x-www-form-urlencoded ; charset=UTF-8", true), ("\tapplication/x-www-form-urlencoded\t", true),
            ("application/x-www-form-urlencodedx", false), ("application/x\u{0D}www-form-urlencoded", false),
            ("application/x\u{0F}www-form-urlencoded", false), ("text/plain", false), ("", false), (" ; charset=UTF-8", false),
            ("application/json; x=application/x-www-form-urlencoded", false), ("application/x-www-form-urlencoded\u{E9}", false),
        ])
    func formMediaType(value: String, expected: Bool) {
        #expect(BodyMiddleware.isForm(value) == expected)
    }

    @Test("authentication first, then the media type, then the path")
    func checkOrder() async throws {
        var configuration = Service.configuration()
        configuration.bearerTokens = ["token"]
        let application = try ServiceApplication.buildApplication(configuration: configuration, logger: Service.quiet)
        try await application.test(.router) { client in
            let unauthenticated = try await client.execute(
                uri: "/api/v2/OTHER/sessions/sso/Apple", method: .post, headers: [.contentType: "text/plain"])
            #expect(unauthenticated.status == .unauthorized)
            let plain = try await client.execute(
                uri: "/api/v2/OTHER/sessions/sso/Apple", method: .post,
                headers: [.contentType: "text/plain", .authorization: "Bearer token"])
            #expect(plain.status == .unsupportedMediaType)
            let otherSP = try await client.execute(
                uri: "/api/v2/OTHER/sessions/sso/Apple", method: .post, headers: Self.form([.authorization: "bearer token"]))
            #expect(otherSP.status == .badRequest)
        }
    }
}
