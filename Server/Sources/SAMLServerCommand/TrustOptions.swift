import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

/// What verify and exchange share.
struct TrustOptions: ParsableArguments {
    @Option(name: .customLong("cert"), help: "A pinned IdP certificate (PEM). Repeatable.") var certificates: [String] = []
    @Option(name: .customLong("metadata"), help: "IdP metadata whose keys and entity ID are trusted.") var metadata: String?
    @Option(help: "The IdP entity ID (required with --cert).") var issuer: String?
    @Option(help: "The expected Audience.") var audience: String?
    @Option(help: "The endpoint the response was posted to.") var destination: String?
    @Option(help: "Also require this request ID (checked as a value, besides the store).") var inResponseTo: String?
    @Flag(help: "Accept responses that answer no request (IdP-initiated).") var allowUnsolicited = false
    @Flag(help: "Accept SHA-1.") var allowSHA1 = false

    func identityProvider() throws -> IdentityProvider {
        if let metadata {
            return IdentityProvider(metadata: try IdentityProviderMetadata.read(try read(metadata), entityID: issuer))
        }
        guard let issuer, !certificates.isEmpty else { throw ValidationError("give --metadata, or --issuer with --cert") }
        return try IdentityProvider(entityID: issuer, keys: try certificates.flatMap { try TrustedKey.all(pem: try read($0)) })
    }

    func template(_ store: any SAMLStateStore) -> SAMLResponseVerifier.Configuration {
        var configuration = SAMLResponseVerifier.Configuration.template(
            audience: ExpectedValue(orSkip: audience), destination: ExpectedValue(orSkip: destination),
            replay: .store(store, unsolicited: allowUnsolicited ? .allow : .refuse))
        configuration.inResponseTo = ExpectedValue(orSkip: inResponseTo)
        configuration.algorithms = allowSHA1 ? .allowingSHA1 : .strict
        return configuration
    }
}
