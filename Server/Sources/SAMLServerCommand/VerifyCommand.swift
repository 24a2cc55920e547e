import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a response (XML, Base64 or form body) with replay detection and outstanding requests in the store.")

    @OptionGroup var trust: TrustOptions
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The response, or - for standard input.") var file: String = "-"

    func run() async throws {
        let input = try read(file)
        let identity = try trust.identityProvider()
        do {
            let response = try await storeOptions.with { store in
                var configuration = trust.template(store)
                configuration.trustedKeys = identity.keys
                configuration.issuer = .equals(identity.entityID)
                return try await SAMLResponseVerifier(configuration).verify(try SAMLResponseDecoder().decode(input))
            }
            let object: [String: Any] = [
                "valid": true, "assertionID": response.assertion.id, "inResponseTo": response.inResponseTo ?? NSNull(),
                "nameID": response.assertion.nameID?.value ?? NSNull(), "signingKeySHA256": response.signingKeyFingerprint,
            ]
            FileHandle.standardOutput.write(
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
        } catch let error as SAMLError {
            let object: [String: Any] = ["valid": false, "error": ["code": error.code.identifier, "message": error.message]]
            FileHandle.standardOutput.write(
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
            fail(error, json: true)
        }
    }
}
