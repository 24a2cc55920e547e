import Foundation
import SAML

/// A JSON file that says which identity provider each MVPD trusts, for servers and the CLI:
///
/// ```json
/// {
///   "Cablevision": {"metadata": "idp-cablevision.xml"},
///   "Spectrum": {"metadata": "aggregate.xml", "entityID": "https://idp.spectrum.example", "signer": "federation-signer.pem"},
///   "Optimum": {"metadataURL": "https://idp.optimum.example/metadata", "signer": "optimum-signer.pem",
///               "maximumValiditySeconds": 1209600, "minimumRefreshSeconds": 300, "backingFile": "cache/optimum.xml"},
///   "Legacy": {"metadata": "old-federation.xml", "signer": "old-signer.pem", "allowSHA1MetadataSignature": true,
///              "allowLegacyDigests": true},
///   "Example": {"issuer": "https://idp.example.com", "certificates": ["example-2026.pem", "example-2027.pem"]}
/// }
/// ```
///
/// Paths are relative to the trust file. `metadata` is a file of SAML 2.0 IdP metadata (its `validUntil`
/// is enforced; `entityID` picks one entity of an aggregate; `signer` is a PEM the metadata must be signed
/// by; a signature made with RSA-SHA1 is refused unless `allowSHA1MetadataSignature` is `true`, which
/// concerns that metadata's signature only, never the MVPD's responses). `metadataURL` fetches it (the
/// service refreshes it; see `MetadataSource`): a `signer` is required unless `allowUnsignedMetadata` is
/// `true` (then only over `https://`), `validUntil` is required (`requireValidUntil`) and at most
/// `maximumValiditySeconds` away when the operator sets it, the refresh interval follows `cacheDuration` within
/// `minimumRefreshSeconds` (5) and `maximumRefreshSeconds` (14,400), and every good document is kept in
/// `backingFile` (by default `<MVPD>.metadata.xml` beside the trust file), which is read at start-up when
/// the URL does not answer. `issuer` with `certificates` pins PEM keys for an IdP without metadata.
/// `allowLegacyDigests` (`false` by default, any entry) accepts this MVPD's responses signed with the
/// legacy digests, SHA-1 and SHA-224 (`AlgorithmPolicy.allowingSHA1` in SAML), and only this MVPD's:
/// for an IdP that cannot yet do better, with a deadline (docs/security.md, "Legacy digests"); every
/// such acceptance is logged and counted.
/// Unknown members are refused (a misspelt option must not silently weaken a check).
public enum TrustFile {
    /// What a trust file says, its metadata not read yet: pinned IdPs, and the metadata source of each
    /// other MVPD.
    public struct Contents: Sendable {
        public var pinned: [String: IdentityProvider] = [:]
        public var sources: [String: MetadataSource] = [:]
        /// Every MVPD the file names.
        public var mvpds: Set<String> { Set(pinned.keys).union(sources.keys) }
    }

    /// One MVPD's member of the file.
    private struct Entry: Decodable {
        var metadata: String?
        var metadataURL: String?
        var entityID: String?
        var signer: String?
        var allowSHA1MetadataSignature: Bool?
        var allowLegacyDigests: Bool?
        var allowUnsignedMetadata: Bool?
        var requireValidUntil: Bool?
        var maximumValiditySeconds: Double?
        var backingFile: String?
        var minimumRefreshSeconds: Double?
        var maximumRefreshSeconds: Double?
        var issuer: String?
        var certificates: [String]?

        static let members: Set<String> = [
            "metadata", "metadataURL", "entityID", "signer", "allowSHA1MetadataSignature", "allowLegacyDigests", "allowUnsignedMetadata",
            "requireValidUntil", "maximumValiditySeconds", "backingFile", "minimumRefreshSeconds", "maximumRefreshSeconds", "issuer",
            "certificates",
        ]
    }

    /// Reads the file, the certificates it names and nothing else (metadata is read by ``load(contentsOf:now:)``
    /// or, refreshed, by the service).
    public static func read(contentsOf path: String) throws -> Contents {
        let url = URL(fileURLWithPath: path)
        let base = url.deletingLastPathComponent()
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable trust file at \(SAMLError.quote(path)), found none")
        }
        let entries: [String: Entry]
        do {
            entries = try JSONDecoder().decode([String: Entry].self, from: data)
        } catch let DecodingError.typeMismatch(type, context) {
            throw SAMLError(
                .configurationInvalid,
                "expected \(type) at \(context.codingPath.map(\.stringValue).joined(separator: ".")) in the trust file \(SAMLError.quote(path))"
            )
        } catch {
            throw SAMLError(
                .configurationInvalid,
                "expected a JSON object mapping MVPD ids to identity providers in \(SAMLError.quote(path)), found one that cannot be read")
        }
        // Unknown members: a misspelt option must not silently weaken a check.
        let members = (try? JSONSerialization.jsonObject(with: data)) as? [String: [String: Any]] ?? [:]
        func resolve(_ relative: String) -> String {
            relative.hasPrefix("/") ? relative : base.appendingPathComponent(relative).path
        }
        func read(_ relative: String) throws -> [UInt8] {
            let file = resolve(relative)
            guard let data = FileManager.default.contents(atPath: file) else {
                throw SAMLError(.configurationInvalid, "expected a readable file at \(SAMLError.quote(file)), found none")
            }
            return Array(data)
        }
        func seconds(_ value: Double?, _ name: String) throws -> Duration? {
            guard let value else { return nil }
            guard value > 0, value <= 10 * 365 * 86400 else {
                throw SAMLError(.configurationInvalid, "expected a positive number of seconds in \(SAMLError.quote(name))")
            }
            return .milliseconds(Int64(value * 1000))
        }
        var contents = Contents()
        for (mvpd, entry) in entries {
            do {
                if let unknown = members[mvpd]?.keys.sorted().first(where: { !Entry.members.contains($0) }) {
                    throw SAMLError(.configurationInvalid, "expected no member \(SAMLError.quote(unknown)) (not a trust file option)")
                }
                let location: MetadataSource.Location?
                switch (entry.metadata, entry.metadataURL) {
                case (let path?, nil): location = .file(resolve(path))
                case (nil, let url?): location = .url(url)
                case (nil, nil): location = nil
                default:
                    throw SAMLError(.configurationInvalid, "expected one of \"metadata\" (a path) or \"metadataURL\" (a URL), found both")
                }
                if let location {
                    var source = MetadataSource(
                        location: location, entityID: entry.entityID,
                        signers: try entry.signer.map { try TrustedKey.all(pem: try read($0)) } ?? [],
                        algorithms: entry.allowSHA1MetadataSignature == true ? .allowingSHA1 : .strict,
                        requiresValidUntil: entry.requireValidUntil,
                        maximumValidity: try seconds(entry.maximumValiditySeconds, "maximumValiditySeconds"))
                    if case .url = location {
                        let safe = String(mvpd.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
                        source.backingFile = resolve(entry.backingFile ?? "\(safe).metadata.xml")
                    }
                    if let minimum = try seconds(entry.minimumRefreshSeconds, "minimumRefreshSeconds") { source.minimumRefresh = minimum }
                    if let maximum = try seconds(entry.maximumRefreshSeconds, "maximumRefreshSeconds") { source.maximumRefresh = maximum }
                    if entry.allowLegacyDigests == true { source.responseAlgorithms = .allowingSHA1 }
                    try source.validate(allowingUnsigned: entry.allowUnsignedMetadata ?? false)
                    contents.sources[mvpd] = source
                } else if let issuer = entry.issuer, let certificates = entry.certificates {
                    var pinned = try IdentityProvider(
                        entityID: issuer, keys: try certificates.flatMap { try TrustedKey.all(pem: try read($0)) })
                    if entry.allowLegacyDigests == true { pinned.algorithms = .allowingSHA1 }
                    contents.pinned[mvpd] = pinned
                } else {
                    throw SAMLError(.configurationInvalid, "expected \"metadata\", \"metadataURL\", or \"issuer\" with \"certificates\"")
                }
            } catch let error as SAMLError {
                throw SAMLError(error.code, "MVPD \(SAMLError.quote(mvpd)) in the trust file: \(error.message)")
            }
        }
        return contents
    }

    /// Reads the file and every metadata file it names, as of `now`; a `metadataURL` is read from its
    /// backing copy (what the service last fetched), without fetching.
    public static func load(contentsOf path: String, now: SAMLInstant = .now()) throws -> [String: IdentityProvider] {
        let contents = try read(contentsOf: path)
        var result = contents.pinned
        for (mvpd, source) in contents.sources {
            do {
                result[mvpd] = source.identityProvider(try source.read(try source.storedDocument(), now: now))
            } catch let error as SAMLError {
                throw SAMLError(error.code, "MVPD \(SAMLError.quote(mvpd)) in the trust file: \(error.message)")
            }
        }
        return result
    }
}

extension MetadataSource {
    /// The document on disk: the file of a file source, the backing copy of a URL source.
    ///
    /// - Throws: `SAMLError.Code.configurationInvalid` when there is none.
    public func storedDocument() throws -> [UInt8] {
        let path: String
        switch location {
        case .file(let file): path = file
        case .url(let url):
            guard let backingFile else {
                throw SAMLError(.configurationInvalid, "expected a backing copy of \(SAMLError.quote(url)), found none configured")
            }
            path = backingFile
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SAMLError(.configurationInvalid, "expected a readable metadata file at \(SAMLError.quote(path)), found none")
        }
        return Array(data)
    }
}
