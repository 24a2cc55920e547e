internal import CSAMLShim

/// Undoes the Adobe Pass cookbook's whitespace normalisation on signed content, with the signature as
/// the proof (docs/recovery.md).
///
/// The cookbook's client deletes every newline and collapses runs of spaces and tabs before it encodes
/// the response. What that does to a signed document is regular: Base64 that a signer wrapped into lines
/// is joined, and the indentation between elements becomes one space (or nothing, where there was only a
/// newline). When a signature fails on a document that bears those marks, this builds candidates of the
/// signed bytes (the layouts real signers write). Each candidate is first tried cheaply against the
/// signature's own values, by hashing bytes assembled from one canonicalisation of the region
/// (``CanonicalTemplate``): against the Reference's DigestValue, then against the digest the RSA
/// signature value carries. Only a candidate that matches is made in the parsed tree and verified by
/// xmlsec, by the same path as any verification: the first under which every digest and the signature
/// value verify is, by the collision resistance of the digest and the signature, what the IdP signed,
/// and the response is read from that tree. Bounded per signature by the bytes hashed (a multiple of the
/// region's canonical size), ``maximumRuns`` xmlsec runs and a time budget.
enum SignatureRecovery {
    /// The most xmlsec runs spent on one signature (both stages together); only candidates that passed
    /// their trial get one, so a real response uses one per stage.
    static let maximumRuns = 6
    /// The most candidates tried per stage.
    static let maximumCandidates = 96
    /// The bytes hashed by one stage's trials: this multiple of the region's canonical size, plus
    /// ``trialWorkSlack``. A forged response that bears the marks spends all of it before it is refused.
    static let trialWorkFactor = 40
    static let trialWorkSlack = 16 * 1024
    /// A candidate longer than this multiple of the region's canonical size (plus the slack) is not tried:
    /// no real layout more than doubles a document, and deep indentation must not amplify a forged one.
    static let candidateGrowthFactor = 2
    /// A backstop on one signature's recovery time, checked between candidates. The work bounds above
    /// decide (the same verdict on a loaded machine as on an idle one); this only stops a recovery that
    /// something unforeseen makes slow, and a signature whose failed verification alone took a quarter
    /// of it is not retried.
    static let timeCeiling = Duration.seconds(1)

    /// What a successful recovery found.
    struct Recovered {
        var key: TrustedKey
        var style: Style
        var candidatesTried: Int
    }

    /// Tries the reconstructions of the content signed by `signature` after a failed verification whose
    /// outcome was `failed` and which took `failedDuration`. On success the tree holds the verified
    /// reconstruction; on failure it is as it was.
    ///
    /// - Parameters:
    ///   - decidedLater: the signature is verified by xmlsec later anyway (an Assertion's, nested in a
    ///     signed Response): a candidate that passes its trials is kept without an xmlsec run of its own.
    ///     Set only by the nested recovery, under ``isDecidedLater(_:nestedIn:verifiedAfterwards:)``.
    ///   - verifiedAfterwards: the signature nested in the signed element that the caller verifies with
    ///     xmlsec after this one, whatever this recovery does (the Assertion's, for a Response's signature).
    /// - Throws: ``SAMLError/Code/signatureNormalizationDamage`` when the failing part bears the
    ///   cookbook's marks and no candidate verifies; otherwise the error of the failed verification.
    static func recover(
        signature: xmlNodePtr, failed: SignatureVerification.Outcome, failedDuration: Duration,
        keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool, decidedLater: Bool = false,
        verifiedAfterwards: xmlNodePtr? = nil
    ) throws -> Recovered {
        let clock = ContinuousClock()
        let deadline = clock.now + timeCeiling
        // The deadline is checked between candidates: a run that alone takes a quarter of the ceiling (a
        // document near its canonicalisation budget, never a real response) is not retried at all.
        guard failedDuration * 4 <= timeCeiling, let parent = signature.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE,
            let signedInfo = signature.firstChild(Namespace.xmlDSig, "SignedInfo")
        else {
            throw SignatureVerification.failure(failed, signature: signature, keys: keys, cookbookShaped: true)
        }
        // A value that no pinned key can have made (a forger's) fails whatever the layout: refused before
        // anything is rebuilt.
        guard let signatureValue = SignatureValue(signature: signature, keys: keys) else {
            throw SignatureVerification.failure(.signatureInvalid, signature: signature, keys: keys, cookbookShaped: true)
        }
        var tried = 0  // candidates tried, for the diagnosis
        var runs = 0
        var kept: [Edit] = []
        var winner: Style?
        var outcome = failed
        var scratch: [UInt8] = []
        /// Tries the region's candidates, each first against `trial` (with the bytes it may assemble; the
        /// outcome it predicts, or nil) and then, when it passes, by xmlsec (unless `decidedLater`), until
        /// `done` accepts an outcome; that candidate's edits stay.
        func search(
            _ region: Region, preferring: Style?, canonicalSize: Int,
            trial: (Plan, inout [UInt8], inout Int, Int) -> SignatureVerification.Outcome?,
            done: (SignatureVerification.Outcome) -> Bool
        ) throws -> (edits: [Edit], style: Style, outcome: SignatureVerification.Outcome)? {
            var seen = Set<Plan>()
            var work = 0
            let workLimit = canonicalSize * trialWorkFactor + trialWorkSlack
            let candidateLimit = canonicalSize * candidateGrowthFactor + trialWorkSlack
            var candidates = 0
            for style in region.candidates(preferring: preferring) {
                guard candidates < maximumCandidates, work < workLimit, runs < maximumRuns, clock.now < deadline else { break }
                let plan = region.plan(style)
                guard seen.insert(plan).inserted else { continue }
                candidates += 1
                tried += 1
                guard let predicted = trial(plan, &scratch, &work, candidateLimit) else { continue }
                let edits = plan.apply()
                let result: SignatureVerification.Outcome
                if decidedLater {
                    result = predicted
                } else {
                    runs += 1
                    result = try SignatureVerification.attempt(
                        signature: signature, keys: keys, algorithms: algorithms, fastCanonicalization: fastCanonicalization)
                }
                if done(result) { return (edits, style, result) }
                Edit.revert(edits)
            }
            return nil
        }

        // Stage 1: the signed element's content (a Reference digest failed).
        if case .digestMismatch = outcome {
            // A signed Assertion inside a signed Response is recovered first, with its own signature as the
            // proof: its edits stay, and its layout is the first one tried for the rest.
            let learnt = try recoverNested(
                in: parent, besides: signature, verifiedAfterwards: verifiedAfterwards, failedDuration: failedDuration, keys: keys,
                algorithms: algorithms, fastCanonicalization: fastCanonicalization)
            let region = Region(root: parent, excluding: signature)
            let part = "the Reference digest of the signed \(SignatureVerification.signedElementDescription(signature))"
            guard let trial = DigestTrial(signature: signature, signedElement: parent, region: region) else {
                throw diagnosis(region.marks, failed: failed, part: part, tried: tried, signature: signature, keys: keys)
            }
            guard
                let found = try search(
                    region, preferring: learnt, canonicalSize: trial.template.length,
                    trial: { trial.accepts($0, scratch: &$1, work: &$2, limit: $3) ? .signatureInvalid : nil },
                    done: { if case .digestMismatch = $0 { false } else { true } })
            else {
                throw diagnosis(region.marks, failed: failed, part: part, tried: tried, signature: signature, keys: keys)
            }
            (kept, winner, outcome) = (found.edits, found.style, found.outcome)
        }
        // Stage 2: ds:SignedInfo (the digests match; the signature value does not verify).
        if case .signatureInvalid = outcome {
            let region = Region(root: signedInfo, excluding: nil)
            var verifications = 0
            if let trial = SignatureTrial(signedInfo: signedInfo, region: region, value: signatureValue) {
                var work = 0
                func predicted(_ plan: Plan, _ scratch: inout [UInt8], _ work: inout Int, _ limit: Int) -> SignatureVerification.Outcome? {
                    trial.accepts(plan, scratch: &scratch, work: &work, limit: limit, verifications: &verifications).map {
                        SignatureVerification.Outcome.valid($0)
                    }
                }
                if decidedLater, winner != nil, let intact = predicted(Plan(), &scratch, &work, Int.max) {
                    // Without an xmlsec run after the content's recovery, SignedInfo may well be intact.
                    outcome = intact
                } else if let found = try search(
                    region, preferring: winner, canonicalSize: trial.template.length, trial: predicted,
                    done: { if case .valid = $0 { true } else { false } })
                {
                    kept += found.edits
                    winner = merged(winner, found.style)
                    outcome = found.outcome
                }
            }
        }
        guard case .valid(let key) = outcome, let winner else {
            Edit.revert(kept)
            let marks = Region(root: signedInfo, excluding: nil).marks
            if case .signatureInvalid = outcome {
                throw diagnosis(
                    marks, failed: outcome,
                    part: "the ds:SignedInfo of the signature on \(SignatureVerification.signedElementDescription(signature))",
                    tried: tried, signature: signature, keys: keys)
            }
            throw SignatureVerification.failure(outcome, signature: signature, keys: keys, cookbookShaped: true)
        }
        return Recovered(key: key, style: winner, candidatesTried: tried)
    }

    /// Recovers the signatures nested in `element` that fail; returns the layout of the last one recovered.
    ///
    /// - Throws: why the signature of an Assertion child of `element` could not be recovered: the verifier
    ///   requires that signature too, so nothing is left to try.
    private static func recoverNested(
        in element: xmlNodePtr, besides signature: xmlNodePtr, verifiedAfterwards: xmlNodePtr?, failedDuration: Duration,
        keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool
    ) throws -> Style? {
        var learnt: Style?
        for nested in element.descendants(where: { $0 != signature && $0.is(Namespace.xmlDSig, "Signature") }) {
            guard let nestedParent = nested.pointee.parent, let document = nested.pointee.doc,
                (try? SignatureProfile.check(signature: nested, parent: nestedParent, document: document, algorithms: algorithms)) != nil,
                let outcome = try? SignatureVerification.attempt(
                    signature: nested, keys: keys, algorithms: algorithms, fastCanonicalization: fastCanonicalization)
            else { continue }
            // Kept on its trials alone only where the caller verifies it with xmlsec afterwards; any other
            // nested signature gets an xmlsec run per candidate.
            let isRequired = isDecidedLater(nested, nestedIn: element, verifiedAfterwards: verifiedAfterwards)
            switch outcome {
            case .digestMismatch, .signatureInvalid:
                do {
                    learnt =
                        try recover(
                            signature: nested, failed: outcome, failedDuration: failedDuration, keys: keys, algorithms: algorithms,
                            fastCanonicalization: fastCanonicalization, decidedLater: isRequired
                        ).style
                } catch  where isRequired {
                    throw error
                } catch {
                    continue
                }
            case .valid, .processingFailed:
                continue
            }
        }
        return learnt
    }

    /// Whether a candidate of `nested`'s signed content may be kept without an xmlsec run of its own: only
    /// when the caller verifies `nested` with xmlsec after `element`'s signature (`verifiedAfterwards`), and
    /// `nested` is where the verifier's structure allows it (the one signature of the one Assertion child
    /// of a Response that is the document element), so that no other signature is ever decided later.
    static func isDecidedLater(_ nested: xmlNodePtr, nestedIn element: xmlNodePtr, verifiedAfterwards: xmlNodePtr?) -> Bool {
        guard nested == verifiedAfterwards, let assertion = nested.pointee.parent, let document = element.pointee.doc,
            xmlDocGetRootElement(document) == element, element.is(Namespace.samlProtocol, "Response"),
            assertion.pointee.parent == element, assertion.is(Namespace.samlAssertion, "Assertion")
        else { return false }
        return element.children(Namespace.samlAssertion, "Assertion").count == 1
            && assertion.children(Namespace.xmlDSig, "Signature").count == 1
    }

    private static func merged(_ content: Style?, _ signedInfo: Style) -> Style {
        guard var content else { return signedInfo }
        content.indentation = content.indentation ?? signedInfo.indentation
        if content.newlines == .none { content.newlines = signedInfo.newlines }
        if content.base64 == .unchanged { content.base64 = signedInfo.base64 }
        return content
    }

    private static func diagnosis(
        _ marks: Marks, failed: SignatureVerification.Outcome, part: String, tried: Int, signature: xmlNodePtr, keys: [TrustedKey]
    ) -> SAMLError {
        guard !marks.isEmpty else { return SignatureVerification.failure(failed, signature: signature, keys: keys, cookbookShaped: false) }
        return SAMLError(
            .signatureNormalizationDamage,
            "expected \(part) to verify once the cookbook's whitespace normalisation was undone, found \(marks.description) "
                + "and no reconstruction that verifies (\(tried) tried): changed by more than that normalisation "
                + "(text or attribute values, or after signing)"
        )
    }
}
