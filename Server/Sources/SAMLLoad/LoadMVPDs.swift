import AppleSSO
import Foundation
import SAML
import SAMLMockIdP

/// What the harness reads of the service's configuration (`serve --config`): the service provider, the
/// audience, and for each MVPD the provider id Apple reports, its `requiredMetadataFields` and the
/// `userMetadataMapping` its profiles show.
public struct LoadServiceFacts: Sendable {
    public var serviceProvider: String?
    public var audience: String?
    var configuration: MVPDConfiguration?
    var mapping: UserMetadataMapping

    /// Reads `path` (a service configuration) and the MVPD configuration it names (relative to it).
    public init(serviceConfiguration path: String) throws {
        guard
            let service = (try? JSONSerialization.jsonObject(with: Data(try Self.read(path, what: "a service configuration"))))
                as? [String: Any]
        else {
            throw SAMLError(.configurationInvalid, "expected a JSON object in \(path), found something else")
        }
        serviceProvider = service["serviceProvider"] as? String
        audience = service["spEntityID"] as? String
        mapping = UserMetadataMapping(service["userMetadataMapping"] as? [String: String] ?? [:])
        configuration = try (service["mvpdConfiguration"] as? String).map {
            try MVPDConfiguration.decode(try Self.read(Self.resolve($0, beside: path), what: "the MVPD configuration"))
        }
    }

    func mvpd(_ id: String) -> MVPD? { configuration?.mvpd(id: id) }

    static func read(_ path: String, what: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected \(what) at \(path), found no readable file")
        }
        return Array(data)
    }

    /// `path` as written in `file`: absolute, or relative to the folder holding `file`.
    static func resolve(_ path: String, beside file: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
    }
}

extension LoadMVPD {
    /// The two MVPDs of the bundled `TestVectors/exchange/` (MVPD-A: RSA-2048, its IdP from signed
    /// metadata; MVPD-B: ECDSA P-256, a pinned certificate), with the test keys of `TestVectors/keys/`,
    /// their `requiredMetadataFields` and the `userMetadataMapping` of the service's configuration
    /// (`facts`; default: those of `TestVectors/exchange/service.json`).
    public static func bundled(vectors: String, facts: LoadServiceFacts? = nil) throws -> [LoadMVPD] {
        let facts = try facts ?? LoadServiceFacts(serviceConfiguration: "\(vectors)/exchange/service.json")
        func mvpd(_ id: String, _ provider: String, _ issuer: String, key: String) throws -> LoadMVPD {
            LoadMVPD(
                id: id, providerID: provider, issuer: issuer,
                identityProvider: try MockIdentityProvider(
                    privateKeyPEM: try LoadServiceFacts.read("\(vectors)/keys/\(key).key.pem", what: "a test key"),
                    certificatePEM: try LoadServiceFacts.read("\(vectors)/keys/\(key).cert.pem", what: "a test certificate")),
                profileFields: facts.mvpd(id)?.requiredMetadataFields ?? [], mapping: facts.mapping)
        }
        return [
            try mvpd("MVPD-A", "ProviderA", "https://idp.mvpd.example.com", key: "rsa-2048"),
            try mvpd("MVPD-B", "ProviderB", "https://idp.mvpd-b.example.com", key: "ecdsa-p256"),
        ]
    }

    /// The operator's own MVPDs, as `file` lists them (docs/service.md, "The load harness"):
    ///
    ///     {"mvpds": [{"id": "MVPD-X", "issuer": "https://idp.example.com",
    ///                 "signingKey": "idp.key.pem", "signingCertificate": "idp.cert.pem"}]}
    ///
    /// `id` is the MVPD's id in the service's MVPD configuration, `issuer` the entity ID its trust gives
    /// that MVPD's IdP, and the key and certificate (PEM, paths relative to `file`) a key pair that trust
    /// holds (a test IdP's: the harness signs as that IdP). The provider id, the `requiredMetadataFields`
    /// and the mapping come from the service's configuration, which must name every listed MVPD.
    public static func configured(file: String, facts: LoadServiceFacts) throws -> [LoadMVPD] {
        let object = try? JSONSerialization.jsonObject(with: Data(try LoadServiceFacts.read(file, what: "the harness's MVPD list")))
        guard let entries = (object as? [String: Any])?["mvpds"] as? [[String: Any]], !entries.isEmpty else {
            throw SAMLError(.configurationInvalid, "expected {\"mvpds\": [...]} with at least one entry in \(file), found none")
        }
        return try entries.enumerated().map { index, entry in
            func field(_ name: String) throws -> String {
                guard let value = entry[name] as? String, !value.isEmpty else {
                    throw SAMLError(.configurationInvalid, "expected a string \"\(name)\" in entry \(index + 1) of \(file), found none")
                }
                return value
            }
            let id = try field("id")
            guard let mvpd = facts.mvpd(id) else {
                throw SAMLError(
                    .configurationInvalid,
                    "expected MVPD \(id) (entry \(index + 1) of \(file)) in the service's MVPD configuration, found none")
            }
            guard let provider = mvpd.platformMappingId else {
                throw SAMLError(
                    .configurationInvalid, "expected a platformMappingId for MVPD \(id) in the service's MVPD configuration, found none")
            }
            return LoadMVPD(
                id: id, providerID: provider, issuer: try field("issuer"),
                identityProvider: try MockIdentityProvider(
                    privateKeyPEM: try LoadServiceFacts.read(
                        LoadServiceFacts.resolve(try field("signingKey"), beside: file), what: "a signing key"),
                    certificatePEM: try LoadServiceFacts.read(
                        LoadServiceFacts.resolve(try field("signingCertificate"), beside: file), what: "a signing certificate")),
                profileFields: mvpd.requiredMetadataFields, mapping: facts.mapping)
        }
    }
}
