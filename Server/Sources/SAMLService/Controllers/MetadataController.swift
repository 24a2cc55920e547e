import AppleSSO
import Foundation
import Hummingbird
import Logging
import SAML
import Synchronization

/// The SP's metadata (public: the MVPDs fetch it) and REST API v2's configuration.
struct MetadataController: Sendable {
    let service: TokenExchangeService

    func addRoutes(to routes: ServiceRoutes) {
        routes.family(authenticated: false).get("/api/v2/:serviceProvider/saml/metadata") { _, context in
            spMetadata(serviceProvider: context.parameters.get("serviceProvider") ?? "")
        }
        routes.family().get("/api/v2/:serviceProvider/configuration") { _, context in
            mvpdConfiguration(serviceProvider: context.parameters.get("serviceProvider") ?? "", headers: context.headers)
        }
    }

    /// `GET /api/v2/{serviceProvider}/saml/metadata`: the SP's own SAML 2.0 metadata (entity ID, assertion
    /// consumer services, the request-signing certificate, the encryption certificate, NameID formats,
    /// `validUntil` 7 days ahead, `cacheDuration` 6 hours), signed with the request-signing key when there
    /// is one. Public, as SP metadata is (no bearer token); made at most once an hour whatever the traffic,
    /// so that a caller cannot make the service sign on demand. 404 without an assertion consumer service.
    func spMetadata(serviceProvider: String) -> ServiceAnswer {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        let now = service.configuration.clock.now()
        let cached = service.spMetadataCache.document.withLock { cached -> [UInt8]? in
            guard let cached, now < cached.madeAt + .seconds(3600), cached.madeAt <= now else { return nil }
            return cached.bytes
        }
        if let cached {
            return ServiceAnswer(status: 200, body: cached, code: "ok", mvpd: nil, contentType: "application/samlmetadata+xml")
        }
        let urls =
            service.configuration.assertionConsumerServiceURLs.isEmpty
            ? service.configuration.destination.map { [$0] } ?? [] : service.configuration.assertionConsumerServiceURLs
        guard !urls.isEmpty else {
            return .error(EnhancedError(status: 404, code: "not_found", message: "No SP metadata is configured.", details: nil))
        }
        do {
            let encryption =
                try service.configuration.encryptionCertificatePath.map { try TrustedKey.all(pem: try TokenExchangeService.read($0)) } ?? []
            let metadata = try ServiceProviderMetadata(
                entityID: service.configuration.spEntityID, assertionConsumerServiceURLs: urls, signingKey: service.signingKey,
                encryptionKeys: encryption)
            let bytes = try metadata.xml(signedWith: service.signingKey, now: now)
            service.spMetadataCache.document.withLock { $0 = (bytes, now) }
            return ServiceAnswer(status: 200, body: bytes, code: "ok", mvpd: nil, contentType: "application/samlmetadata+xml")
        } catch {
            service.logger.error("SP metadata not written", metadata: ["error": "\((error as? SAMLError)?.message ?? "\(error)")"])
            return .error(
                EnhancedError(
                    status: 500, code: "internal_error", message: "The SP metadata cannot be written.", details: error as? SAMLError))
        }
    }

    /// `GET /api/v2/{serviceProvider}/configuration`, from the snapshot's template
    /// (``ConfigurationAnswers``): `304` for an `If-None-Match` naming its `ETag`.
    func mvpdConfiguration(serviceProvider: String, headers: RequestHeaders) -> ServiceAnswer {
        if let refusal = service.checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        let built = service.configurationAnswers.v2(
            device: Self.deviceType(headers.deviceInfo), time: service.configuration.clock.now(),
            completesSSO: { service.trust.identityProvider(for: $0) != nil })
        return ServiceAnswer(built, ifNoneMatch: headers.ifNoneMatch)
    }

    /// `device` of the configuration: the `X-Device-Info` header's `osName` (or `model`), else `unknown`.
    static func deviceType(_ header: String?) -> String {
        guard let header, let data = Data(base64Encoded: header), case .object(let object)? = try? JSONValue(parsing: data, maxDepth: 16)
        else { return "unknown" }
        for key in ["osName", "model"] {
            if case .string(let value)? = object[key] { return String(value.prefix(64)) }
        }
        return "unknown"
    }
}

extension TokenExchangeService {
    /// The SP metadata last written, and when: made at most once an hour whatever the traffic.
    final class SPMetadataCache: Sendable {
        let document = Mutex<(bytes: [UInt8], madeAt: SAMLInstant)?>(nil)
    }
}
