import Foundation
import SAML

/// A JSON file that says which identity provider each MVPD trusts, for servers and the CLI:
///
/// ```json
/// {
///   "Cablevision": {"metadata": "idp-cablevision.xml"},
///   "Spectrum": {"metadata": "aggregate.xml", "entityID": "https://idp.spectrum.example", "signer": "federation-signer.pem"},
///   "Legacy": {"metadata": "old-federation.xml", "signer": "old-signer.pem", "allowSHA1MetadataSignature": true},
///   "Example": {"issuer": "https://idp.example.com", "certificates": ["example-2026.pem", "example-2027.pem"]}
/// }
/// ```
///
/// Paths are relative to the trust file. `metadata` is SAML 2.0 IdP metadata (its `validUntil` is
/// enforced; `entityID` picks one entity of an aggregate; `signer` is a PEM the metadata must be signed
/// by; a signature made with RSA-SHA1 is refused unless `allowSHA1MetadataSignature` is `true`, which
/// concerns that metadata's signature only, never the MVPD's responses). `issuer` with `certificates`
/// pins PEM keys for an IdP without metadata.
public enum TrustFile {
    /// Reads the file and every file it names.
    public static func load(contentsOf path: String, now: SAMLInstant = .now()) throws -> [String: IdentityProvider] {
        let url = URL(fileURLWithPath: path)
        let base = url.deletingLastPathComponent()
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        } catch {
            throw SAMLError(
                .configurationInvalid, "expected a JSON trust file at \(SAMLError.quote(path)), found one that cannot be read or parsed")
        }
        guard let entries = object as? [String: Any] else {
            throw SAMLError(
                .configurationInvalid, "expected a JSON object mapping MVPD ids to identity providers in \(SAMLError.quote(path))")
        }
        func read(_ relative: String) throws -> [UInt8] {
            let file = relative.hasPrefix("/") ? URL(fileURLWithPath: relative) : base.appendingPathComponent(relative)
            guard let data = try? Data(contentsOf: file) else {
                throw SAMLError(.configurationInvalid, "expected a readable file at \(SAMLError.quote(file.path)), found none")
            }
            return Array(data)
        }
        var result: [String: IdentityProvider] = [:]
        for (mvpd, value) in entries {
            guard let entry = value as? [String: Any] else {
                throw SAMLError(.configurationInvalid, "expected an object for the MVPD \(SAMLError.quote(mvpd)) in the trust file")
            }
            do {
                if let metadata = entry["metadata"] as? String {
                    var options = IdentityProviderMetadata.Options(now: now)
                    if let signer = entry["signer"] as? String {
                        options.signers = try TrustedKey.all(pem: try read(signer))
                    }
                    switch entry["allowSHA1MetadataSignature"] {
                    case nil: break
                    case let allow as Bool: options.algorithms = allow ? .allowingSHA1 : .strict
                    default: throw SAMLError(.configurationInvalid, "expected true or false in \"allowSHA1MetadataSignature\"")
                    }
                    let idp = try IdentityProviderMetadata.read(
                        try read(metadata), entityID: entry["entityID"] as? String, options: options)
                    result[mvpd] = IdentityProvider(metadata: idp)
                } else if let issuer = entry["issuer"] as? String, let certificates = entry["certificates"] as? [String] {
                    result[mvpd] = try IdentityProvider(
                        entityID: issuer, keys: try certificates.flatMap { try TrustedKey.all(pem: try read($0)) })
                } else {
                    throw SAMLError(.configurationInvalid, "expected \"metadata\", or \"issuer\" with \"certificates\"")
                }
            } catch let error as SAMLError {
                throw SAMLError(error.code, "MVPD \(SAMLError.quote(mvpd)) in the trust file: \(error.message)")
            }
        }
        return result
    }
}
