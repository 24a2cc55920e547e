import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Print a SAML request (Base64, as REST API v2 carries it), its ID and until when it can be answered.",
        discussion: """
            With --request-keys (the service's key file, <id>:<hex> per line), the ID is MACed for the \
            --service-provider, --mvpd, --identity-provider, --device and --api given, as the service's \
            sessions/sso issues it; otherwise a random ID that the caller must remember (verify --in-response-to).
            """)

    @Option(help: "The SP entity ID.") var issuer: String
    @Option(help: "The IdP endpoint.") var destination: String
    @Flag(help: "An AttributeQuery instead of an AuthnRequest.") var attributeQuery = false
    @Option(help: "Comma-separated attribute names (AttributeQuery).") var attributes: String?
    @Option(help: "The SP private key (PEM) to sign with.") var signKey: String?
    @Option(help: "The SP certificate (PEM) to put in KeyInfo.") var signCert: String?
    @Option(help: "Seconds the request can be answered.") var lifetime: Int = 300
    @Option(help: "A file of request-ID keys (<id>:<hex secret> per line), to MAC the ID as the service does.") var requestKeys: String?
    @Option(help: "Binding: the service provider.") var serviceProvider = ""
    @Option(help: "Binding: the MVPD id.") var mvpd = ""
    @Option(help: "Binding: the MVPD's IdP entity ID (default: --destination).") var identityProvider: String?
    @Option(help: "Binding: the device (AP-Device-Identifier value).") var device = ""
    @Option(help: "Binding: the API (v2 or v1).") var api = "v2"

    func run() async throws {
        let key = try signKey.map { try SigningKey(privateKeyPEM: try read($0), certificatePEM: try signCert.map(read)) }
        let names = (attributes ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        var issued: IssuedRequestID?
        do {
            if let requestKeys {
                let keys = try ServiceConfiguration.parseRequestKeys(
                    String(decoding: try read(requestKeys), as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init))
                let binding = RequestBinding(
                    serviceProvider: serviceProvider, mvpd: mvpd, identityProvider: identityProvider ?? destination, device: device,
                    api: api)
                issued = try RequestIDAuthority(keys: keys).issue(for: binding, lifetime: .seconds(lifetime), now: .now())
            }
        } catch let error as SAMLError {
            fail(error)
        }
        let request = try SAMLRequest(
            attributeQuery ? .attributeQuery(attributes: names) : .authnRequest, id: issued?.id, issuer: issuer, destination: destination,
            signingKey: key)
        let expiry = issued?.expiry ?? request.issueInstant + .seconds(lifetime)
        let object: [String: Any] = [
            "id": request.id, "request": request.base64, "type": "saml", "attributesNames": names, "notOnOrAfter": "\(expiry)",
        ]
        FileHandle.standardOutput.write(
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
    }
}
