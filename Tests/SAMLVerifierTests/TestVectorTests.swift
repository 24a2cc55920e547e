import SAML
import SAMLTestSupport
import Testing

@Suite("Bundled test vectors")
struct TestVectorTests {
    @Test("every vector gets its verdict and, when rejected, its own code", arguments: Vector.all)
    func vectorGetsItsVerdict(vector: Vector) throws {
        let verdict = Verdict { _ = try vector.verify() }
        let expected: Verdict = vector.expect == "valid" ? .valid : .invalid(vector.code ?? "?")
        #expect(verdict == expected, "\(vector.description)")
        if expected == .valid {
            let response = try vector.verify()
            #expect(response.assertion.nameID?.value == vector.nameID)
            for (name, values) in vector.fields ?? [:] {
                #expect(try response.fields([name])[name] == values, "\(name)")
            }
            for name in vector.missingFields ?? [] {
                #expect(throws: SAMLError(.fieldsMissing, "")) { try response.fields([name]) }
                #expect(try response.fields([name], allowMissing: true).missing == [name])
            }
        }
    }

    @Test("what a device sends (the cookbook's encoding) gets the verdict the manifest records", arguments: Vector.all)
    func devicePath(vector: Vector) throws {
        let (verdict, response) = vector.deviceVerdict(recovery: true)
        #expect(verdict == vector.device.verdict, "\(vector.description)")
        let (withoutRecovery, _) = vector.deviceVerdict(recovery: false)
        if vector.cookbookDamaged {
            // The signed content changed on the way: only recovery can make it verify, and it says so.
            #expect(withoutRecovery != .valid)
            if verdict == .valid { #expect(response?.repairs.isEmpty == false) }
        } else {
            #expect(withoutRecovery == verdict, "\(vector.description): recovery changed the verdict of an undamaged vector")
            #expect(response?.repairs.isEmpty ?? true)
        }
    }

    @Test("cookbookDamaged marks exactly the valid vectors whose device form verifies only with recovery")
    func damagedVectorsAreMarked() {
        var damaged = 0
        for vector in Vector.all where vector.expect == "valid" {
            let (withoutRecovery, _) = vector.deviceVerdict(recovery: false)
            #expect(vector.cookbookDamaged == (withoutRecovery != .valid), "\(vector.id): mark and device verdict disagree")
            if vector.cookbookDamaged { damaged += 1 }
        }
        #expect(damaged >= 2, "the bundle keeps damaged vectors to recover")
    }

    @Test("the manifest has a negative vector for every attack class of the security document")
    func coversEveryAttackClass() {
        let codes = Set(Vector.all.compactMap(\.code))
        for required in [
            "assertion.multiple", "signature.digest-mismatch", "xml.doctype-forbidden", "id.duplicate",
            "signature.untrusted-key", "signature.transform-not-allowed", "signature.object-forbidden",
            "signature.algorithm-not-allowed", "signature.missing", "signature.misplaced", "signature.invalid",
            "signature.reference-mismatch", "time.expired", "time.not-yet-valid", "audience.mismatch",
            "issuer.mismatch", "status.not-success", "in-response-to.mismatch", "destination.mismatch", "xml.malformed",
        ] {
            #expect(codes.contains(required), "no vector fails with \(required)")
        }
        // Every rejection is distinguishable: no negative vector without a code.
        #expect(Vector.all.filter { $0.expect == "invalid" && $0.code == nil }.isEmpty)
    }

    @Test("every decryption failure of an oracle group gives the same code and the same message")
    func oracleGroupsAnswerAlike() throws {
        let groups = Dictionary(grouping: Vector.all.filter { $0.oracle != nil }, by: { $0.oracle! })
        #expect(!groups.isEmpty)
        for (group, vectors) in groups {
            #expect(vectors.count >= 5, "\(group)")
            let answers = Set(
                vectors.map { vector -> String in
                    do {
                        _ = try vector.verify()
                        return "valid"
                    } catch let error as SAMLError {
                        return error.description
                    } catch {
                        return "\(error)"
                    }
                })
            #expect(answers.count == 1, "\(group): \(answers)")
        }
    }

    @Test(
        "the legacy digests (SHA-1, SHA-224) are accepted only with the explicit opt-in, and say so",
        arguments: [
            ("sha1-without-opt-in", ["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1"]),
            (
                "sha224-without-opt-in",
                ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha224", "http://www.w3.org/2001/04/xmldsig-more#sha224"]
            ),
        ])
    func legacyDigestsNeedOptIn(id: String, algorithms: [String]) throws {
        let vector = Vector.named(id)
        let error = try #require(throws: SAMLError.self) { try vector.verify() }
        #expect(error.code == .signatureAlgorithmNotAllowed)
        #expect(error.message.contains("legacy digest"))
        let logs = CapturedLogs()
        let response = try vector.verify {
            $0.algorithms = .allowingSHA1
            $0.logger = logs.logger
        }
        #expect(response.legacyAlgorithms == algorithms.sorted())
        let warnings = logs.all.filter { $0.level == .warning }
        #expect(warnings.count == 1 && warnings.first?.metadata["saml.legacy-algorithms"] == algorithms.sorted().joined(separator: ","))
        #expect(try Vector.named("typical-rsa2048-assertion-signed").verify { $0.algorithms = .allowingSHA1 }.legacyAlgorithms.isEmpty)
    }

    @Test("the opt-in is per identity provider: a registry accepts a legacy digest only for the MVPD that allows it")
    func legacyDigestsPerIdentityProvider() async throws {
        let vector = Vector.named("sha224-without-opt-in")
        var template = try vector.configuration()
        template.inResponseTo = .skip
        let keys = try vector.keys()
        var legacy = try IdentityProvider(entityID: "https://idp.mvpd.example.com", keys: keys)
        legacy.algorithms = .allowingSHA1
        let registry = try TrustRegistry(
            ["LEGACY": legacy, "MODERN": try IdentityProvider(entityID: "https://idp.mvpd.example.com", keys: keys)], template: template)
        let accepted = try registry.verifier(for: "LEGACY").verifyWithoutReplayCheck(vector.bytes, at: vector.instant)
        #expect(accepted.legacyAlgorithms.count == 2)
        let error = try #require(throws: SAMLError.self) {
            try registry.verifier(for: "MODERN").verifyWithoutReplayCheck(vector.bytes, at: vector.instant)
        }
        #expect(error.code == .signatureAlgorithmNotAllowed)
    }

    @Test("the cookbook's normalisation of a pretty-printed signed response is recovered; a digest mismatch with recovery off")
    func normalisationDamageIsRecovered() throws {
        let vector = Vector.named("pretty-printed-then-normalised")
        let response = try vector.verify()
        #expect(response.repairs == [.signedWhitespaceRestored])
        let error = try #require(throws: SAMLError.self) { try vector.verify { $0.recoversNormalizationDamage = false } }
        #expect(error.code == .signatureDigestMismatch)
        #expect(error.message.contains("saml:Assertion"))
    }
}
