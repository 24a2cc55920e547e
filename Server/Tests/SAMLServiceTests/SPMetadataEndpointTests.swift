import Foundation
import SAML
import SAMLService
import Testing

/// `GET /api/v2/{serviceProvider}/saml/metadata`: the SP's own metadata, as an IdP onboarding the service reads it.
@Suite("SP metadata endpoint")
struct SPMetadataEndpointTests {
    static func configuration(acs: [String]) -> ServiceConfiguration {
        var configuration = Service.configuration()
        configuration.assertionConsumerServiceURLs = acs
        configuration.requestSigningKeyPath = "\(Service.vectors)/keys/sp-rsa-2048.key.pem"
        configuration.requestSigningCertificatePath = "\(Service.vectors)/keys/sp-rsa-2048.cert.pem"
        configuration.encryptionCertificatePath = "\(Service.vectors)/keys/sp-rsa-2048.cert.pem"
        configuration.bearerTokens = ["token"]
        return configuration
    }

    @Test("signed SP metadata, without a bearer token, read back by the project's reader; made once, not per request")
    func published() async throws {
        let acs = "https://sp.example.com/api/v2/REF30/profiles/sso/Apple"
        try await Service.with(Self.configuration(acs: [acs])) { port in
            let answer = try await Service.send(port, "/api/v2/REF30/saml/metadata", method: "GET")
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/samlmetadata+xml")
            let signer = try TrustedKey.all(
                pem: Array(try Data(contentsOf: URL(fileURLWithPath: "\(Service.vectors)/keys/sp-rsa-2048.cert.pem"))))
            let metadata = try ServiceProviderMetadata.read(answer.body, options: .init(signers: signer))
            #expect(metadata.entityID == "https://saml.sp.auth.adobe.com")
            #expect(metadata.assertionConsumerServices.map(\.location) == [acs])
            #expect(metadata.signingKeys.count == 1 && metadata.encryptionKeys.count == 1)
            #expect(metadata.authnRequestsSigned)
            let again = try await Service.send(port, "/api/v2/REF30/saml/metadata", method: "GET")
            #expect(again.body == answer.body)
            #expect(try await Service.send(port, "/api/v2/OTHER/saml/metadata", method: "GET").status == 400)
        }
        try await Service.with(Self.configuration(acs: [])) { port in
            let answer = try await Service.send(port, "/api/v2/REF30/saml/metadata", method: "GET")
            #expect(answer.status == 404)
        }
    }
}
