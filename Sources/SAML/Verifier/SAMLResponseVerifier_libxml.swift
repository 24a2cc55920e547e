internal import CSAMLShim

// The verifier's stages run in order over the libxml2 tree: the C-facing half of the verifier, as
// swift-crypto keeps `ECDSA.swift` apart from `ECDSA_boring.swift` (each stage's own C-facing files are
// named `_libxml`, `_xmlsec` or `_shim` in its folder). SAMLResponseVerifier.swift holds the public API and
// the orchestration (expectations, logging, replay) and calls `verifyDocument` here.

extension SAMLResponseVerifier {
    /// Returns the verified response and the instant until which its assertion ID must be remembered.
    func verifyDocument(_ xml: UnsafeRawBufferPointer, now: SAMLInstant) throws -> (VerifiedResponse, SAMLInstant) {
        let spans = VerificationSpans(configuration.tracer)
        let parsed = try spans.phase("saml.parse") { try parse(xml) }
        let signed = try spans.phase("saml.signature") { try verifySignatures(parsed) }
        return try spans.phase("saml.validate") { try validateAndExtract(parsed, signed: signed, now: now) }
    }

    /// Stage 1: safe parsing and the structure checks.
    @_spi(Stages)
    public func parse(_ xml: UnsafeRawBufferPointer) throws -> ParsedResponse {
        let tree = try SafeXMLParser.parse(xml, limits: configuration.parserLimits)
        let cookbookShaped =
            xml.baseAddress.map { bytes in
                [0x0A, 0x0D, 0x09].allSatisfy { memchr(bytes, $0, xml.count) == nil }
            } ?? false
        return ParsedResponse(tree: tree, structure: try DocumentStructure(tree), cookbookShaped: cookbookShaped)
    }

    /// Stage 2: every signature present must satisfy the profile and verify; then the policy decides
    /// whether the ones present are enough. An encrypted assertion is decrypted here, after the Response's
    /// signature (which covers the ciphertext) and before the Assertion's own (which covers the plaintext);
    /// encrypted NameIDs and attributes are decrypted after both.
    ///
    /// `fastCanonicalization: false` runs libxmlsec1's stock canonicalisation, XPointer reference
    /// resolution and RSA signature transform, for the tests that compare: libxml2's canonicaliser, unmetered
    /// (the early estimate and the output limit only), and OpenSSL's context built per signature; never for
    /// unverified input.
    @_spi(Stages)
    public func verifySignatures(_ parsed: ParsedResponse, fastCanonicalization: Bool = true) throws -> SignedParts {
        let structure = parsed.structure
        // Whose response is this? An Issuer that names another IdP is reported as such before its
        // signature (made with that other IdP's key) is tried: the code says what happened.
        try IssuerPolicy.checkNamedIssuers(
            response: ResponseContentReader.issuer(of: structure.response)?.value,
            assertion: structure.assertion.flatMap(ResponseContentReader.issuer(of:))?.value, expected: configuration.issuer)
        var signed: SignedParts = []
        let recoverable = configuration.recoversNormalizationDamage && parsed.cookbookShaped
        func verify(_ signature: xmlNodePtr, on parent: xmlNodePtr, as part: SignedParts) throws {
            let legacy = try SignatureProfile.check(
                signature: signature, parent: parent, document: parent.pointee.doc, algorithms: configuration.algorithms)
            let keys = configuration.trustedKeys
            let clock = ContinuousClock()
            let started = clock.now
            let outcome = try SignatureVerification.attempt(
                signature: signature, keys: keys, algorithms: configuration.algorithms, fastCanonicalization: fastCanonicalization)
            switch outcome {
            case .valid(let key):
                structure.signingKeyFingerprint = key.fingerprint
            case .digestMismatch where recoverable, .signatureInvalid where recoverable:
                // The Assertion's signature, verified below whatever the Response's recovery does.
                let recovered = try SignatureRecovery.recover(
                    signature: signature, failed: outcome, failedDuration: clock.now - started, keys: keys,
                    algorithms: configuration.algorithms, fastCanonicalization: fastCanonicalization,
                    verifiedAfterwards: part == .response ? structure.assertionSignature : nil)
                structure.signingKeyFingerprint = recovered.key.fingerprint
                structure.repairs += recovered.style.repairs.filter { !structure.repairs.contains($0) }
                configuration.logger.debug(
                    "SAML signature recovered from the cookbook's normalisation",
                    metadata: [
                        "saml.signed": "\(parent.qualifiedDescription)", "saml.layout": "\(recovered.style.description)",
                        "saml.candidates": "\(recovered.candidatesTried)",
                    ])
            default:
                throw SignatureVerification.failure(outcome, signature: signature, keys: keys, cookbookShaped: parsed.cookbookShaped)
            }
            signed.insert(part)
            structure.legacyAlgorithms.formUnion(legacy)
        }
        if let signature = structure.responseSignature {
            try verify(signature, on: structure.response, as: .response)
        }
        if structure.assertion == nil, let encrypted = structure.encryptedAssertion {
            try VerificationSpans(configuration.tracer).phase("saml.decrypt") {
                let plaintext = try Decryption.decrypt(
                    encrypted, keys: configuration.decryptionKeys, policy: configuration.encryptionAlgorithms,
                    limits: configuration.parserLimits)
                try structure.adoptDecryptedAssertion(plaintext)
            }
        }
        guard let assertion = structure.assertion else {
            throw SAMLError(.assertionMissing, "expected one Assertion, found none")
        }
        if let signature = structure.assertionSignature {
            try verify(signature, on: assertion, as: .assertion)
        }
        try configuration.signaturePolicy.check(signed)
        try decryptIdentifiersAndAttributes(in: assertion)
        return signed
    }

    /// The canonical bytes xmlsec digests for the Reference of each signature present (Response, then a
    /// plain Assertion), with the first pinned key; nil where xmlsec did not get that far. For the tests
    /// and the fuzz target that compare the canonicalisation fast path with libxmlsec1's own.
    @_spi(Stages)
    public func canonicalReferenceBytes(_ parsed: ParsedResponse, fastCanonicalization: Bool) -> [[UInt8]?] {
        let signatures = [parsed.structure.responseSignature, parsed.structure.assertionSignature].compactMap { $0 }
        return signatures.map { signature in
            SignatureVerification.referenceBytes(
                signature: signature, key: configuration.trustedKeys[0], algorithms: configuration.algorithms,
                fastCanonicalization: fastCanonicalization
            ).bytes
        }
    }

    /// The canonical bytes of every element of `xml` that a `ds:Signature` signed with the first pinned
    /// key and that verifies, read without the structure checks (an `ID` is registered for each signed
    /// element). What the key really signed in a document, for the fuzz target that checks that nothing
    /// else is ever accepted.
    @_spi(Stages)
    public func contentSignedByPinnedKey(_ xml: UnsafeRawBufferPointer) -> [[UInt8]] {
        guard let tree = try? SafeXMLParser.parse(xml, limits: configuration.parserLimits) else { return [] }
        var parts: [[UInt8]] = []
        for signature in tree.root.descendants(where: { $0.is(Namespace.xmlDSig, "Signature") }) {
            guard let parent = signature.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE,
                let id = parent.attributeNode("ID")
            else { continue }
            // The element's ID, and the `Id`s xmlsec registers inside the signature (so that it adds none).
            var identifiers = [id]
            signature.forEachElement { element in
                if let attribute = xmlHasProp(element, "Id") { identifiers.append(attribute) }
                return true
            }
            for attribute in identifiers where xmlGetID(tree.document, attribute.value) == nil {
                xmlAddID(nil, tree.document, attribute.value, attribute)
            }
            let signed = SignatureVerification.referenceBytes(
                signature: signature, key: configuration.trustedKeys[0], algorithms: configuration.algorithms, fastCanonicalization: true)
            if signed.valid, let bytes = signed.bytes { parts.append(bytes) }
        }
        return parts
    }

    /// EncryptedID (in Subject) and EncryptedAttribute (in AttributeStatements) become NameID and Attribute.
    private func decryptIdentifiersAndAttributes(in assertion: xmlNodePtr) throws {
        let saml = Namespace.samlAssertion
        // Collected without intermediate arrays: most assertions have none. The first Subject only, as
        // extraction reads it.
        var containers: [xmlNodePtr] = []
        var subjectSeen = false
        for child in assertion.elementChildren {
            let kind: StaticString
            if !subjectSeen, child.is(saml, "Subject") {
                subjectSeen = true
                kind = "EncryptedID"
            } else if child.is(saml, "AttributeStatement") {
                kind = "EncryptedAttribute"
            } else {
                continue
            }
            for candidate in child.elementChildren where candidate.is(saml, kind) { containers.append(candidate) }
        }
        guard !containers.isEmpty else { return }
        try VerificationSpans(configuration.tracer).phase("saml.decrypt") {
            try decrypt(containers)
        }
    }

    /// Each EncryptedID or EncryptedAttribute in `containers` replaced by its plaintext element.
    private func decrypt(_ containers: [xmlNodePtr]) throws {
        for container in containers {
            let plaintext = try Decryption.decrypt(
                container, keys: configuration.decryptionKeys, policy: configuration.encryptionAlgorithms,
                limits: configuration.parserLimits)
            // The plaintext element takes the container's place, so that extraction reads NameID and Attribute.
            // Parsed in the container's namespace context, it may use declarations of the container,
            // which is freed: they are declared on the element first.
            let rest = plaintext.nodes == plaintext.element ? plaintext.element.pointee.next : plaintext.nodes
            xmlUnlinkNode(plaintext.element)
            if let rest { xmlFreeNodeList(rest) }
            do {
                try plaintext.element.declareInheritedNamespaces()
            } catch {
                xmlFreeNode(plaintext.element)
                throw error
            }
            xmlReplaceNode(container, plaintext.element)
            xmlFreeNode(container)
        }
    }

    /// Stage 3: the protocol checks and the extraction, all read from the verified elements. Returns the
    /// response and the instant until which its assertion ID must be remembered.
    @_spi(Stages)
    public func validateAndExtract(_ parsed: ParsedResponse, signed: SignedParts, now: SAMLInstant) throws -> (
        VerifiedResponse, SAMLInstant
    ) {
        let response = parsed.structure.response
        guard let assertion = parsed.structure.assertion else {
            throw SAMLError(.assertionMissing, "expected a verified Assertion, found none (verifySignatures first)")
        }
        let context = ValidationContext(now: now, skew: configuration.clockSkew)
        // Everything below reads this value, built from the verified elements only.
        let content = ResponseContentReader.read(response: response, assertion: assertion)
        try AssertionSchemaPolicy.check(content.assertion.shape)
        let responseSigned = signed.contains(.response)
        try StatusPolicy.check(content.status)
        try IssuerPolicy.check(response: content.issuer, assertion: content.assertion.issuer, expected: configuration.issuer)
        try DestinationPolicy.check(destination: content.destination, responseSigned: responseSigned, expected: configuration.destination)
        try InResponseToPolicy.checkResponseAttribute(content.inResponseTo, expected: configuration.inResponseTo)
        let window = try TimeWindowPolicy.checkConditions(content.assertion.conditions, context: context)
        let responseIssued = try TimeWindowPolicy.checkIssueInstant(
            content.issueInstant, of: content.name, maximumAge: configuration.maximumAge, context: context)
        let issued = try TimeWindowPolicy.checkIssueInstant(
            content.assertion.issueInstant, of: content.assertion.name, maximumAge: configuration.maximumAge, context: context)
        try AudiencePolicy.check(content.assertion.conditions, expected: configuration.audience)
        var confirmed: SubjectConfirmationPolicy.Confirmed?
        if configuration.requiresBearerConfirmation {
            confirmed = try SubjectConfirmationPolicy.check(
                content.assertion.confirmations,
                recipients: acceptedRecipients,
                inResponseTo: configuration.inResponseTo,
                context: context
            )
        }
        let inResponseTo = try InResponseToPolicy.check(
            onResponse: content.inResponseTo, responseSigned: responseSigned, confirmationInResponseTo: confirmed?.inResponseTo,
            expected: configuration.inResponseTo)

        let verifiedAssertion = try AssertionExtraction.read(content.assertion, window: window, issued: issued)
        var verified = VerifiedResponse(
            responseID: content.id,
            responseIssuer: content.issuer?.value,
            destination: responseSigned ? content.destination : nil,
            inResponseTo: inResponseTo,
            signedParts: signed,
            signingKeyFingerprint: parsed.structure.signingKeyFingerprint,
            repairs: parsed.structure.repairs,
            assertion: verifiedAssertion,
            skippedChecks: skippedChecks
        )
        verified.legacyAlgorithms = parsed.structure.legacyAlgorithms.sorted()
        let expiry = Self.retention(
            notOnOrAfter: [verifiedAssertion.notOnOrAfter, confirmed?.notOnOrAfter], issued: [responseIssued, issued],
            maximumAge: configuration.maximumAge, skew: configuration.clockSkew, now: now)
        return (verified, expiry)
    }

    /// The instant until which an accepted assertion's ID must be remembered: the first instant at which
    /// this verifier refuses the response anyway, and no earlier. A NotOnOrAfter refuses from
    /// NotOnOrAfter + skew on; with a maximum age, an IssueInstant is accepted up to and including
    /// IssueInstant + maximum age + skew, so it refuses from one millisecond later (SAMLInstant's
    /// resolution). Without either, an hour (or the maximum age) from now, plus the skew.
    static func retention(
        notOnOrAfter: [SAMLInstant?], issued: [SAMLInstant], maximumAge: Duration?, skew: Duration, now: SAMLInstant
    ) -> SAMLInstant {
        var refusedFrom: SAMLInstant?
        func refuse(from instant: SAMLInstant) { refusedFrom = min(refusedFrom ?? instant, instant) }
        for case let instant? in notOnOrAfter { refuse(from: instant + skew) }
        if let maximumAge { for instant in issued { refuse(from: instant + maximumAge + skew + .milliseconds(1)) } }
        return refusedFrom ?? now + (maximumAge ?? .seconds(3600)) + skew
    }

    /// The accepted bearer Recipient values; nil when not checked.
    private var acceptedRecipients: [String]? {
        switch configuration.recipients {
        case .destination: configuration.destination.expected.map { [$0] }
        case .anyOf(let values): values
        case .skip: nil
        }
    }

    private var skippedChecks: SkippedChecks {
        var skipped: SkippedChecks = []
        if configuration.issuer == .skip { skipped.insert(.issuer) }
        if configuration.audience == .skip { skipped.insert(.audience) }
        if configuration.destination == .skip { skipped.insert(.destination) }
        if configuration.requiresBearerConfirmation, acceptedRecipients == nil { skipped.insert(.recipient) }
        if configuration.inResponseTo == .skip, issuedRequest == nil { skipped.insert(.inResponseTo) }
        if case .skip = configuration.replay { skipped.insert(.replay) }
        if case .store(_, .allow) = configuration.replay { skipped.insert(.unsolicited) }
        if configuration.maximumAge == nil { skipped.insert(.issueInstantAge) }
        if !configuration.requiresBearerConfirmation { skipped.insert(.subjectConfirmation) }
        return skipped
    }
}
