import AppleSSO
import Foundation
import SAML
import SAMLTestSupport
import Testing

/// Trust per MVPD: each MVPD's responses are verified only with its own IdP's entity ID and keys.
@Suite("Trust per MVPD")
struct TrustPerMVPDTests {
    static let root = TokenExchangeTests.vectors
    static let cases = try! ExchangeCases.load(vectors: root)
    static let now = SAMLInstant(xmlDateTime: cases.now)!
    static func file(_ path: String) throws -> [UInt8] { try TokenExchangeTests.file(path) }

    static func template(replay: SAMLResponseVerifier.ReplayProtection = .skip) -> SAMLResponseVerifier.Configuration {
        var template = SAMLResponseVerifier.Configuration.template(audience: .equals(cases.audience), destination: .skip, replay: replay)
        template.inResponseTo = .equals(cases.inResponseTo)
        template.clock = FixedClock(now)
        return template
    }

    static func exchange(replay: SAMLResponseVerifier.ReplayProtection = .skip) throws -> TokenExchange {
        let configuration = try MVPDConfiguration.decode(try file("exchange/mvpd-configuration.json"))
        let trust = try TrustFile.load(contentsOf: root.appendingPathComponent("exchange/trust.json").path, now: now)
        return TokenExchange(configuration: configuration, trust: try TrustRegistry(trust, template: template(replay: replay)))
    }

    static func header(_ providerID: String) -> String {
        PartnerFrameworkStatus(accessStatus: .granted, providerID: providerID, expirationMilliseconds: 1_900_000_000_000).headerValue
    }

    @Test("every (response from A or B) × (posted as A, B or an MVPD without trust): only the matching ones succeed")
    func crossMVPDMatrix() async throws {
        let exchange = try Self.exchange()
        #expect(Self.cases.cases.count == 6)
        for c in Self.cases.cases {
            let body = TokenExchangeTests.deviceBody(try Self.file(c.response))
            let result = await exchange.result(body: body, partnerFrameworkStatus: Self.header(c.providerID))
            switch result {
            case .success(let profile):
                #expect(c.expect == "valid", "\(c.from) as \(c.postedAs)")
                #expect(profile.mvpd == c.postedAs)
            case .failure(let error):
                #expect(c.expect == "invalid", "\(c.from) as \(c.postedAs): \(error.details ?? "")")
                #expect(error.status == c.status, "\(c.from) as \(c.postedAs)")
                #expect(error.cause?.code.identifier == c.code, "\(c.from) as \(c.postedAs)")
            }
        }
    }

    @Test("a response from A's IdP posted as B fails on the issuer even when A's keys are also pinned for B")
    func issuerBindsEvenWithSharedKeys() async throws {
        let keys =
            try TrustedKey.all(pem: try Self.file("keys/rsa-2048.cert.pem"))
            + TrustedKey.all(pem: try Self.file("keys/ecdsa-p256.cert.pem"))
        let registry = try TrustRegistry(
            [
                "MVPD-A": try IdentityProvider(entityID: "https://idp.mvpd.example.com", keys: keys),
                "MVPD-B": try IdentityProvider(entityID: "https://idp.mvpd-b.example.com", keys: keys),
            ],
            template: Self.template())
        let exchange = TokenExchange(
            configuration: try MVPDConfiguration.decode(try Self.file("exchange/mvpd-configuration.json")), trust: registry)
        let body = TokenExchangeTests.deviceBody(try Self.file("responses/typical-rsa2048-assertion-signed.xml"))
        let error = try #require(await exchange.result(body: body, partnerFrameworkStatus: Self.header("ProviderB")).failure)
        #expect(error.cause?.code == .issuerMismatch)
        #expect(error.status == 400)
    }

    @Test("signed metadata verifies against its signer; tampered, unsigned-when-required and expired metadata are refused")
    func metadataSignatureAndValidity() throws {
        let signer = try TrustedKey.all(pem: try Self.file("keys/metadata-signer-rsa-2048.cert.pem"))
        var options = IdentityProviderMetadata.Options(signers: signer, now: Self.now)
        let signed = try IdentityProviderMetadata.read(try Self.file("metadata/idp-a-signed.xml"), entityID: nil, options: options)
        #expect(signed.entityID == "https://idp.mvpd.example.com")
        #expect(signed.signingKeys.map(\.fingerprint) == ["18bc64b7283d40050305c36561ca7e2e36a7ade46d5fc1b773b5eb360c48e6a8"])
        #expect(signed.singleSignOnServices.count == 2)
        #expect(signed.cacheDuration == .seconds(21_600))
        #expect(signed.validUntil == SAMLInstant(xmlDateTime: "2036-01-01T00:00:00Z"))
        #expect(throws: SAMLError(.signatureDigestMismatch, "")) {
            try IdentityProviderMetadata.read(try Self.file("metadata/idp-a-signed-tampered.xml"), options: options)
        }
        #expect(throws: SAMLError(.metadataUnsigned, "")) {
            try IdentityProviderMetadata.read(try Self.file("metadata/idp-a.xml"), options: options)
        }
        options.signers = []
        #expect(throws: SAMLError(.metadataExpired, "")) {
            try IdentityProviderMetadata.read(try Self.file("metadata/idp-a-expired.xml"), options: options)
        }
        // Without a signer the signature is not required; the encryption key is not a signing key.
        let unsigned = try IdentityProviderMetadata.read(
            try Self.file("metadata/idp-a.xml"), entityID: "https://idp.mvpd.example.com", options: options)
        #expect(unsigned.signingKeys.count == 1)
        #expect(throws: SAMLError(.metadataNoIdentityProvider, "")) {
            try IdentityProviderMetadata.read(try Self.file("metadata/idp-a.xml"), entityID: "https://other.example", options: options)
        }
    }

    @Test("a trust file reads RSA-SHA1-signed metadata only with allowSHA1MetadataSignature")
    func trustFileSHA1OptIn() throws {
        let folder = try TemporaryFiles.folder("trust-sha1")
        try Data(try Self.file("metadata/idp-a-signed-sha1.xml")).write(to: folder.appendingPathComponent("idp.xml"))
        try Data(try Self.file("keys/metadata-signer-rsa-2048.cert.pem")).write(to: folder.appendingPathComponent("signer.pem"))
        func load(_ optIn: String) throws -> [String: IdentityProvider] {
            let trust = folder.appendingPathComponent("trust.json")
            try Data(#"{"A": {"metadata": "idp.xml", "signer": "signer.pem"\#(optIn)}}"#.utf8).write(to: trust)
            return try TrustFile.load(contentsOf: trust.path, now: Self.now)
        }
        #expect(throws: SAMLError(.signatureAlgorithmNotAllowed, "")) { try load("") }
        #expect(throws: SAMLError(.signatureAlgorithmNotAllowed, "")) { try load(#", "allowSHA1MetadataSignature": false"#) }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try load(#", "allowSHA1MetadataSignature": "yes""#) }
        #expect(try load(#", "allowSHA1MetadataSignature": true"#)["A"]?.entityID == "https://idp.mvpd.example.com")
    }

    @Test("allowLegacyDigests is per MVPD, for pinned and metadata entries alike, and concerns responses, not the metadata signature")
    func trustFileLegacyDigests() throws {
        let folder = try TemporaryFiles.folder("trust-legacy")
        try Data(try Self.file("metadata/idp-a-signed.xml")).write(to: folder.appendingPathComponent("idp.xml"))
        try Data(try Self.file("metadata/idp-a-signed-sha1.xml")).write(to: folder.appendingPathComponent("idp-sha1.xml"))
        try Data(try Self.file("keys/metadata-signer-rsa-2048.cert.pem")).write(to: folder.appendingPathComponent("signer.pem"))
        try Data(try Self.file("keys/rsa-2048.cert.pem")).write(to: folder.appendingPathComponent("idp.pem"))
        let trust = folder.appendingPathComponent("trust.json")
        try Data(
            #"""
            {"Pinned": {"issuer": "https://idp.mvpd.example.com", "certificates": ["idp.pem"], "allowLegacyDigests": true},
             "Strict": {"issuer": "https://idp.mvpd.example.com", "certificates": ["idp.pem"]},
             "Metadata": {"metadata": "idp.xml", "signer": "signer.pem", "allowLegacyDigests": true}}
            """#.utf8
        ).write(to: trust)
        let loaded = try TrustFile.load(contentsOf: trust.path, now: Self.now)
        #expect(loaded["Pinned"]?.algorithms == .allowingSHA1)
        #expect(loaded["Strict"]?.algorithms == nil)
        #expect(loaded["Metadata"]?.algorithms == .allowingSHA1)
        // The MVPD's responses, not its metadata's signature: SHA-1-signed metadata still needs its own opt-in.
        try Data(#"{"A": {"metadata": "idp-sha1.xml", "signer": "signer.pem", "allowLegacyDigests": true}}"#.utf8).write(to: trust)
        #expect(throws: SAMLError(.signatureAlgorithmNotAllowed, "")) { try TrustFile.load(contentsOf: trust.path, now: Self.now) }
        try Data(#"{"A": {"metadata": "idp.xml", "allowLegacyDigests": "yes"}}"#.utf8).write(to: trust)
        #expect(throws: SAMLError(.configurationInvalid, "")) { try TrustFile.read(contentsOf: trust.path) }
    }

    @Test("a trust file refuses unknown members, two sources, an unsigned http URL; a URL source is read from its backing copy")
    func trustFileSources() throws {
        let folder = try TemporaryFiles.folder("trust-sources")
        try Data(try Self.file("metadata/idp-a-signed.xml")).write(to: folder.appendingPathComponent("idp.xml"))
        try Data(try Self.file("keys/metadata-signer-rsa-2048.cert.pem")).write(to: folder.appendingPathComponent("signer.pem"))
        func read(_ entry: String) throws -> TrustFile.Contents {
            let trust = folder.appendingPathComponent("trust.json")
            try Data(#"{"A": {\#(entry)}}"#.utf8).write(to: trust)
            return try TrustFile.read(contentsOf: trust.path)
        }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try read(#""metadata": "idp.xml", "signr": "signer.pem""#) }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try read(#""metadata": "idp.xml", "metadataURL": "https://idp/md""#) }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try read(#""metadataURL": "http://idp/md""#) }
        #expect(throws: SAMLError(.configurationInvalid, "")) {
            try read(#""metadataURL": "http://idp/md", "allowUnsignedMetadata": true"#)
        }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try read(#""metadataURL": "ftp://idp/md", "signer": "signer.pem""#) }
        #expect(throws: SAMLError(.configurationInvalid, "")) { try read(#""metadata": "idp.xml", "requireValidUntil": "yes""#) }
        let contents = try read(#""metadataURL": "http://127.0.0.1:9/md", "signer": "signer.pem", "backingFile": "idp.xml""#)
        let source = try #require(contents.sources["A"])
        #expect(source.requiresValidUntil && source.maximumValidity == nil)
        #expect(source.backingFile == folder.appendingPathComponent("idp.xml").path)
        // The bundled document is valid until 2036: read without a maximum, refused with one of 30 days.
        #expect(try source.read(try source.storedDocument(), now: Self.now).entityID == "https://idp.mvpd.example.com")
        let bounded = try read(
            #""metadataURL": "http://127.0.0.1:9/md", "signer": "signer.pem", "backingFile": "idp.xml", "maximumValiditySeconds": 2592000"#)
        let boundedSource = try #require(bounded.sources["A"])
        let error = #expect(throws: SAMLError.self) { try boundedSource.read(try boundedSource.storedDocument(), now: Self.now) }
        #expect(error?.code == .metadataValidUntilTooFar)
        let relaxed = try read(
            #""metadataURL": "http://127.0.0.1:9/md", "signer": "signer.pem", "backingFile": "idp.xml", "maximumValiditySeconds": 310000000"#
        )
        let a = try #require(relaxed.sources["A"])
        #expect(try a.read(try a.storedDocument(), now: Self.now).entityID == "https://idp.mvpd.example.com")
    }

    @Test("rotation: with both keys in the metadata both verify; after the old one is removed only the new one does")
    func rotation() async throws {
        let options = IdentityProviderMetadata.Options(now: Self.now)
        let both = try IdentityProviderMetadata.read(try Self.file("metadata/idp-a-rotation.xml"), entityID: nil, options: options)
        let next = try IdentityProviderMetadata.read(try Self.file("metadata/idp-a-rotated.xml"), entityID: nil, options: options)
        let registry = try TrustRegistry(["MVPD-A": IdentityProvider(metadata: both)], template: Self.template())
        let old = try Self.file("responses/typical-rsa2048-assertion-signed.xml")
        let new = try Self.file("responses/typical-rsa4096-assertion-signed.xml")
        func verdict(_ bytes: [UInt8]) async -> String {
            do {
                let response = try await registry.verifier(for: "MVPD-A").verify(bytes)
                return response.signingKeyFingerprint
            } catch let error as SAMLError {
                return error.code.identifier
            } catch {
                return "\(error)"
            }
        }
        #expect(await verdict(old) == both.signingKeys[0].fingerprint)
        #expect(await verdict(new) == both.signingKeys[1].fingerprint)
        try registry.update(IdentityProvider(metadata: next), for: "MVPD-A")
        #expect(await verdict(old) == "signature.untrusted-key")
        #expect(await verdict(new) == next.signingKeys[0].fingerprint)
        try registry.update(nil, for: "MVPD-A")
        #expect(await verdict(new) == "trust.unknown-mvpd")
    }

    @Test("replacing the trust while requests run: each request sees the old trust or the new one, never a mix")
    func atomicSwap() async throws {
        let a = try IdentityProvider(
            entityID: "https://idp.mvpd.example.com", keys: try TrustedKey.all(pem: try Self.file("keys/rsa-2048.cert.pem")))
        let b = try IdentityProvider(
            entityID: "https://idp.mvpd-b.example.com", keys: try TrustedKey.all(pem: try Self.file("keys/ecdsa-p256.cert.pem")))
        let registry = try TrustRegistry(["X": a], template: Self.template())
        let responseA = try Self.file("responses/typical-rsa2048-assertion-signed.xml")
        let responseB = try Self.file("responses/typical-mvpd-b-ecdsa-assertion-signed.xml")
        let outcomes = try await withThrowingTaskGroup(of: (Bool, Bool)?.self) { group in
            group.addTask {
                for round in 0..<200 { try registry.replace(["X": round % 2 == 0 ? b : a]) }
                return nil
            }
            for _ in 0..<400 {
                group.addTask {
                    let verifier = try registry.verifier(for: "X")
                    let acceptsA = (try? await verifier.verify(responseA)) != nil
                    let acceptsB = (try? await verifier.verify(responseB)) != nil
                    return (acceptsA, acceptsB)
                }
            }
            var all: [(Bool, Bool)] = []
            for try await outcome in group { if let outcome { all.append(outcome) } }
            return all
        }
        // One verifier is one IdP: exactly one of the two responses is accepted, never both, never none.
        #expect(outcomes.count == 400)
        #expect(outcomes.allSatisfy { $0.0 != $0.1 })
    }

    @Test("a replay store that fails makes the exchange fail closed with 503; other errors are never the client's 400")
    func failingStoreIs503() async throws {
        struct Broken: Error {}
        struct FailingStore: SAMLStateStore {
            func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
                throw Broken()
            }
        }
        struct UnavailableStore: SAMLStateStore {
            func consume(request: IssuedRequestID?, assertion: UsedAssertion, now: SAMLInstant) async throws -> StateStoreOutcome {
                throw SAMLError(.storeUnavailable, "expected the store to answer within 1 s, found no answer")
            }
        }
        let body = TokenExchangeTests.deviceBody(try Self.file("responses/typical-rsa2048-assertion-signed.xml"))
        for store in [FailingStore() as any SAMLStateStore, UnavailableStore()] {
            let exchange = try Self.exchange(replay: .assertions(store))
            let error = try #require(await exchange.result(body: body, partnerFrameworkStatus: Self.header("ProviderA")).failure)
            #expect(error.status == 503)
            #expect(error.code == "service_unavailable")
            #expect(error.cause?.code == .storeUnavailable)
        }
    }

    @Test("per-request expectations: the verifier is shared, the request ID and endpoint come with each call")
    func perRequestExpectations() async throws {
        var template = Self.template()
        template.inResponseTo = .skip
        let registry = try TrustRegistry(
            [
                "MVPD-A": try IdentityProvider(
                    entityID: "https://idp.mvpd.example.com", keys: try TrustedKey.all(pem: try Self.file("keys/rsa-2048.cert.pem")))
            ],
            template: template)
        let verifier = try registry.verifier(for: "MVPD-A")
        let bytes = try Self.file("responses/typical-rsa2048-assertion-signed.xml")
        let destination = "https://sp.example.com/api/v2/REF30/profiles/sso/Apple"
        let response = try await verifier.verify(bytes, expecting: .init(inResponseTo: "_aq-3f9a1b2c", destination: destination))
        #expect(response.inResponseTo == "_aq-3f9a1b2c")
        await #expect(throws: SAMLError(.inResponseToMismatch, "")) {
            _ = try await verifier.verify(bytes, expecting: .init(inResponseTo: "_aq-other"))
        }
        await #expect(throws: SAMLError(.destinationMismatch, "")) {
            _ = try await verifier.verify(bytes, expecting: .init(destination: "https://elsewhere.example/acs"))
        }
    }

    @Test("the decoder's repairs and the verifying key travel with the verified response")
    func repairsAndKey() async throws {
        let verifier = try SAMLResponseVerifier(try Self.typicalConfiguration())
        let xml = try Self.file("responses/typical-rsa2048-assertion-signed.xml")
        let value = Cookbook.encode(String(decoding: xml, as: UTF8.self)).replacingOccurrences(of: "%", with: "%25")
        let decoded = try SAMLResponseDecoder().decode(Array(("SAMLResponse=" + value).utf8))
        let response = try await verifier.verify(decoded)
        #expect(response.repairs == [.doubleURLEncoding])
        #expect(response.signingKeyFingerprint == "18bc64b7283d40050305c36561ca7e2e36a7ade46d5fc1b773b5eb360c48e6a8")
    }

    @Test("a corrupt block in a PEM bundle is an error that names it, not a smaller key set")
    func corruptPEMBlock() throws {
        let good = String(decoding: try Self.file("keys/rsa-2048.cert.pem"), as: UTF8.self)
        let corrupt = good + good.replacingOccurrences(of: "MII", with: "M!I")
        let error = try #require(throws: SAMLError.self) { try TrustedKey.all(pem: Array(corrupt.utf8)) }
        #expect(error.code == .configurationInvalidKey)
        #expect(error.message.contains("PEM block 2"))
        let unterminated = good + "-----BEGIN CERTIFICATE-----\nMIIB\n"
        #expect(throws: SAMLError(.configurationInvalidKey, "")) { try TrustedKey.all(pem: Array(unterminated.utf8)) }
    }
}

extension TrustPerMVPDTests {
    /// The typical vector's configuration (AppleSSOTests cannot see SAMLVerifierTests' helpers).
    static func typicalConfiguration() throws -> SAMLResponseVerifier.Configuration {
        var configuration = SAMLResponseVerifier.Configuration(
            identityProvider: try IdentityProvider(
                entityID: "https://idp.mvpd.example.com",
                keys: try TrustedKey.all(pem: try TokenExchangeTests.file("keys/rsa-2048.cert.pem"))),
            audience: .equals("https://saml.sp.auth.adobe.com"), destination: .skip, inResponseTo: .skip, replay: .skip)
        configuration.clock = FixedClock(TrustPerMVPDTests.now)
        return configuration
    }
}
