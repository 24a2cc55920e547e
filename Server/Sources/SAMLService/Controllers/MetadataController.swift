import AppleSSO
import Foundation
import Hummingbird
import Logging
import SAML
import Synchronization

// The SP's own SAML metadata and the MVPD configuration with Apple's picker lists.

extension TokenExchangeService {
    /// `GET /api/v2/{serviceProvider}/saml/metadata`: the SP's own SAML 2.0 metadata (entity ID, assertion
    /// consumer services, the request-signing certificate, the encryption certificate, NameID formats,
    /// `validUntil` 7 days ahead, `cacheDuration` 6 hours), signed with the request-signing key when there
    /// is one. Public, as SP metadata is (no bearer token); made at most once an hour whatever the traffic,
    /// so that a caller cannot make the service sign on demand. 404 without an assertion consumer service.
    func spMetadata(serviceProvider: String) -> ServiceAnswer {
        if let refusal = checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        let now = configuration.clock.now()
        let cached = spMetadataCache.document.withLock { cached -> [UInt8]? in
            guard let cached, now < cached.madeAt + .seconds(3600), cached.madeAt <= now else { return nil }
            return cached.bytes
        }
        if let cached {
            return ServiceAnswer(status: 200, body: cached, code: "ok", mvpd: nil, contentType: "application/samlmetadata+xml")
        }
        let urls =
            configuration.assertionConsumerServiceURLs.isEmpty
            ? configuration.destination.map { [$0] } ?? [] : configuration.assertionConsumerServiceURLs
        guard !urls.isEmpty else {
            return .error(EnhancedError(status: 404, code: "not_found", message: "No SP metadata is configured.", details: nil))
        }
        do {
            let encryption = try configuration.encryptionCertificatePath.map { try TrustedKey.all(pem: try Self.read($0)) } ?? []
            let metadata = try ServiceProviderMetadata(
                entityID: configuration.spEntityID, assertionConsumerServiceURLs: urls, signingKey: signingKey, encryptionKeys: encryption)
            let bytes = try metadata.xml(signedWith: signingKey, now: now)
            spMetadataCache.document.withLock { $0 = (bytes, now) }
            return ServiceAnswer(status: 200, body: bytes, code: "ok", mvpd: nil, contentType: "application/samlmetadata+xml")
        } catch {
            logger.error("SP metadata not written", metadata: ["error": "\((error as? SAMLError)?.message ?? "\(error)")"])
            return .error(
                EnhancedError(
                    status: 500, code: "internal_error", message: "The SP metadata cannot be written.", details: error as? SAMLError))
        }
    }

    /// `GET /api/v2/{serviceProvider}/configuration`, from the snapshot's template
    /// (``ConfigurationAnswers``): `304` for an `If-None-Match` naming its `ETag`.
    func mvpdConfiguration(serviceProvider: String, headers: RequestHeaders) -> ServiceAnswer {
        if let refusal = checkPath(serviceProvider: serviceProvider, partner: nil) { return refusal }
        let built = configurationAnswers.v2(
            device: Self.deviceType(headers.deviceInfo), time: configuration.clock.now(),
            completesSSO: { trust.identityProvider(for: $0) != nil })
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

    /// Where the request is addressed: the IdP's single sign-on endpoint from its metadata (HTTP-POST,
    /// then HTTP-Redirect, then the first), or none (Destination is optional; the entity ID is not an
    /// endpoint, and an IdP refuses a request destined for an address it does not answer on).
    static func destination(of idp: IdentityProvider) -> String? {
        let endpoints = idp.singleSignOnServices.filter { !$0.location.isEmpty }
        let preferred = ["urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"]
        return preferred.lazy.compactMap { binding in endpoints.first { $0.binding == binding } }.first?.location
            ?? endpoints.first?.location
    }

    /// The SP metadata last written, and when: made at most once an hour whatever the traffic.
    final class SPMetadataCache: Sendable {
        let document = Mutex<(bytes: [UInt8], madeAt: SAMLInstant)?>(nil)
    }
}

/// The SP's metadata (public: the MVPDs fetch it) and REST API v2's configuration.
struct MetadataController: Sendable {
    let service: TokenExchangeService

    func addRoutes(to routes: ServiceRoutes) {
        routes.family(authenticated: false).get("/api/v2/:serviceProvider/saml/metadata") { _, context in
            service.spMetadata(serviceProvider: context.parameters.get("serviceProvider") ?? "")
        }
        routes.family().get("/api/v2/:serviceProvider/configuration") { _, context in
            service.mvpdConfiguration(serviceProvider: context.parameters.get("serviceProvider") ?? "", headers: context.headers)
        }
    }
}
