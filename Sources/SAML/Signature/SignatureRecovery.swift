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

    /// How a signer laid out the Base64 of one kind of element: lines of `width` characters separated by
    /// `\n`, optionally a line break before the first and after the last; values not longer than `width`
    /// are written on one line, without breaks (what every observed signer does).
    struct Wrapping: Hashable {
        var width: Int
        var leadingBreak = false
        var trailingBreak = false

        var description: String {
            "lines of \(width)" + (leadingBreak ? ", a break before" : "") + (trailingBreak ? ", a break after" : "")
        }
    }

    /// What a Base64 element holds: signers lay the kinds out differently.
    enum Base64Kind {
        /// SignatureValue, X509SKI.
        case value
        /// DigestValue.
        case digest
        /// X509Certificate, X509CRL and the numbers of RSAKeyValue / DSAKeyValue.
        case key
        /// CipherValue, OAEPparams (XML Encryption).
        case cipher
    }

    /// The Base64 layouts of the signers observed. `nil`: left on one line.
    struct Base64Layout: Hashable {
        var values: Wrapping?
        var certificates: Wrapping?
        /// XML Encryption's values; `nil` here means laid out as ``values``.
        var ciphers: Wrapping??
        /// DigestValue; `nil` here means laid out as ``values``.
        var digests: Wrapping??
        /// The line breaks were `\r\n` written as `&#13;\n` (Santuario, the JDK): each surviving `\r`
        /// marks where a `\n` was deleted.
        var carriageReturns = false

        static let unchanged = Base64Layout()

        func wrapping(_ kind: Base64Kind) -> Wrapping? {
            switch kind {
            case .value: values
            case .digest: digests ?? values
            case .key: certificates
            case .cipher: ciphers ?? values
            }
        }
        /// In order of trial.
        static let signers: [Base64Layout] = [
            // libxmlsec1 1.2 (xmlsec1 tool, pysaml2, Debian's python-xmlsec builds).
            Base64Layout(values: Wrapping(width: 64), certificates: Wrapping(width: 64)),
            // libxmlsec1 1.3 (python-xmlsec wheels), xml-security-c (OpenSAML C++, Shibboleth SP).
            Base64Layout(values: Wrapping(width: 64), certificates: Wrapping(width: 64, trailingBreak: true)),
            // pysaml2: xmlsec1 signs a template holding the certificate on one line.
            Base64Layout(values: Wrapping(width: 64), certificates: nil),
            // xml-security-c's digests (OpenSAML C++ samlsign), in MIME lines beside values of 64.
            Base64Layout(
                values: Wrapping(width: 64), certificates: Wrapping(width: 64, trailingBreak: true), digests: Wrapping(width: 76)),
            // signxml and others that copy the PEM body: certificate lines of 64, values on one line.
            Base64Layout(values: nil, certificates: Wrapping(width: 64, trailingBreak: true)),
            // Okta and others: certificates in MIME lines, values on one line.
            Base64Layout(values: nil, certificates: Wrapping(width: 76)),
            // MIME width without the carriage returns (Santuario with \n, PingFederate without the breaks around).
            Base64Layout(values: Wrapping(width: 76), certificates: Wrapping(width: 76)),
            // PingFederate: MIME lines with a break before and after (its encrypter's without).
            Base64Layout(
                values: Wrapping(width: 76, leadingBreak: true, trailingBreak: true),
                certificates: Wrapping(width: 76, leadingBreak: true, trailingBreak: true), ciphers: Wrapping(width: 76)),
            Base64Layout(values: Wrapping(width: 64, trailingBreak: true), certificates: Wrapping(width: 64, trailingBreak: true)),
        ]
    }

    /// One reconstruction of the signed content.
    struct Style: Hashable {
        /// The unit of indentation restored where a whitespace-only text between elements is now one space.
        var indentation: [UInt8]?
        /// Where a newline is restored between elements that touch now.
        var newlines = Newlines.none
        /// A newline restored before the document element's end tag (where an indented document has one
        /// with no indentation after it, which the cookbook deleted entirely).
        var documentEndNewline = false
        var base64 = Base64Layout.unchanged

        enum Newlines: Hashable {
            case none
            /// Inside `ds:Signature` subtrees (libxmlsec1's templates put one before, between and after each child).
            case signatures
            /// Inside `ds:Signature` subtrees but not in their KeyInfo, nor after it (xml-security-c).
            case signaturesOutsideKeyInfo
            /// Inside `ds:Signature` and XML Encryption subtrees (libxmlsec1's encryption templates too).
            case templates
            /// Wherever elements touch in element-only content (serialisers that end some lines without
            /// indenting the next, in a document that is indented elsewhere).
            case everywhere
            /// xmlseclibs' template (SimpleSAMLphp, php-saml and the toolkits whose fixtures it made):
            /// `<ds:Signature>\n  <ds:SignedInfo>` with `\n    ` before SignatureMethod and `\n  ` before
            /// the Reference (appended after the template's closing indentation), `\n` before KeyInfo (or
            /// before `</ds:Signature>` when there is none); nothing elsewhere in the signature.
            case xmlseclibs
        }

        static let indentations: [[UInt8]] = [Array("  ".utf8), Array("    ".utf8), [0x09]]

        var repairs: [SAMLResponseDecoder.Repair] {
            var repairs: [SAMLResponseDecoder.Repair] = []
            if indentation != nil || newlines != .none || documentEndNewline { repairs.append(.signedWhitespaceRestored) }
            if base64 != .unchanged { repairs.append(.signedBase64LineBreaksRestored) }
            return repairs
        }

        var description: String {
            var parts: [String] = []
            if let indentation {
                parts.append("indentation by " + (indentation == [0x09] ? "tabs" : "\(indentation.count) spaces"))
            }
            switch newlines {
            case .none: break
            case .signatures: parts.append("newlines between ds:Signature elements")
            case .signaturesOutsideKeyInfo: parts.append("newlines between ds:Signature elements outside ds:KeyInfo")
            case .templates: parts.append("newlines between ds:Signature and XML Encryption elements")
            case .everywhere: parts.append("newlines between elements")
            case .xmlseclibs: parts.append("xmlseclibs' templates")
            }
            if documentEndNewline { parts.append("a newline before the document's end tag") }
            if base64.carriageReturns { parts.append("Base64 lines ending in &#13;") }
            if let values = base64.values { parts.append("signature values in " + values.description) }
            if let certificates = base64.certificates { parts.append("certificates and keys in " + certificates.description) }
            if let ciphers = base64.ciphers { parts.append("ciphertext " + (ciphers.map { "in " + $0.description } ?? "on one line")) }
            return parts.joined(separator: ", ")
        }
    }

    /// The damage classes a region bears, named in a diagnosis.
    struct Marks {
        var collapsedIndentation = false
        var joinedBase64 = false
        var carriageReturns = false

        var isEmpty: Bool { !collapsedIndentation && !joinedBase64 && !carriageReturns }

        var description: String {
            var parts: [String] = []
            if collapsedIndentation { parts.append("whitespace between elements collapsed to one space") }
            if joinedBase64 { parts.append("Base64 longer than a line with no line break") }
            if carriageReturns { parts.append("Base64 with carriage returns and no line feeds") }
            return parts.joined(separator: "; ")
        }
    }

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
    /// - Parameter decidedLater: the signature is verified by xmlsec later anyway (an Assertion's, nested in
    ///   a signed Response): a candidate that passes its trials is kept without an xmlsec run of its own.
    /// - Throws: ``SAMLError/Code/signatureNormalisationDamage`` when the failing part bears the
    ///   cookbook's marks and no candidate verifies; otherwise the error of the failed verification.
    static func recover(
        signature: xmlNodePtr, failed: SignatureVerification.Outcome, failedDuration: Duration,
        keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool, decidedLater: Bool = false
    ) throws -> Recovered {
        let clock = ContinuousClock()
        let deadline = clock.now + timeCeiling
        // The deadline is checked between candidates: a run that alone takes a quarter of the ceiling (a
        // document near its canonicalisation budget, never a real response) is not retried at all.
        guard failedDuration * 4 <= timeCeiling, let parent = signature.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE,
            let signedInfo = signature.firstChild(Namespace.xmlDSig, "SignedInfo")
        else {
            throw SignatureVerification.failure(failed, signature: signature, keys: keys)
        }
        // A value that no pinned key can have made (a forger's) fails whatever the layout: refused before
        // anything is rebuilt.
        guard let signatureValue = SignatureValue(signature: signature, keys: keys) else {
            throw SignatureVerification.failure(.signatureInvalid, signature: signature, keys: keys)
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
                in: parent, besides: signature, failedDuration: failedDuration, keys: keys, algorithms: algorithms,
                fastCanonicalization: fastCanonicalization)
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
            throw SignatureVerification.failure(outcome, signature: signature, keys: keys)
        }
        return Recovered(key: key, style: winner, candidatesTried: tried)
    }

    /// Recovers the signatures nested in `element` that fail; returns the layout of the last one recovered.
    ///
    /// - Throws: why the signature of an Assertion child of `element` could not be recovered: the verifier
    ///   requires that signature too, so nothing is left to try.
    private static func recoverNested(
        in element: xmlNodePtr, besides signature: xmlNodePtr, failedDuration: Duration, keys: [TrustedKey],
        algorithms: AlgorithmPolicy, fastCanonicalization: Bool
    ) throws -> Style? {
        var learnt: Style?
        for nested in element.descendants(where: { $0 != signature && $0.is(Namespace.xmlDSig, "Signature") }) {
            guard let nestedParent = nested.pointee.parent, let document = nested.pointee.doc,
                (try? SignatureProfile.check(signature: nested, parent: nestedParent, document: document, algorithms: algorithms)) != nil,
                let outcome = try? SignatureVerification.attempt(
                    signature: nested, keys: keys, algorithms: algorithms, fastCanonicalization: fastCanonicalization)
            else { continue }
            // The verifier checks an Assertion child's signature with xmlsec after the Response's.
            let isRequired = nestedParent.pointee.parent == element && nestedParent.is(Namespace.samlAssertion, "Assertion")
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
        guard !marks.isEmpty else { return SignatureVerification.failure(failed, signature: signature, keys: keys) }
        return SAMLError(
            .signatureNormalisationDamage,
            "expected \(part) to verify once the cookbook's whitespace normalisation was undone, found \(marks.description) "
                + "and no reconstruction that verifies (\(tried) tried): changed by more than that normalisation "
                + "(text or attribute values, or after signing)"
        )
    }

    // MARK: The tree

    /// The part of the tree a digest or the SignedInfo signature covers, and what the cookbook left in it.
    struct Region {
        /// Where a gap between elements is: signers lay out their templates (XML-DSig, XML Encryption) apart
        /// from the content around them.
        enum Context {
            case content
            /// Inside a `ds:Signature`, outside its `ds:KeyInfo`.
            case signature
            /// Inside a `ds:Signature`'s `ds:KeyInfo`.
            case keyInfo
            /// Inside an `xenc:EncryptedData` or `xenc:EncryptedKey` (its KeyInfo included).
            case encryption

            /// The context of the children of `element`, whose parent's children are in `self`.
            func entering(_ element: xmlNodePtr) -> Context {
                switch self {
                case .content:
                    if element.is(Namespace.xmlDSig, "Signature") { return .signature }
                    if element.is(Namespace.xmlEnc, "EncryptedData") || element.is(Namespace.xmlEnc, "EncryptedKey") { return .encryption }
                    return .content
                case .signature:
                    return element.is(Namespace.xmlDSig, "KeyInfo") ? .keyInfo : .signature
                case .encryption:
                    // OAEP parameters are added to the template by hand (libxmlsec1 has no call for them).
                    return element.is(Namespace.xmlEnc, "EncryptionMethod") ? .content : .encryption
                case .keyInfo:
                    return self
                }
            }

            var inSignature: Bool { self == .signature || self == .keyInfo }
        }

        /// Whitespace-only texts between elements, now spaces, with the depth of the line they begin.
        var spaceGaps: [(node: xmlNodePtr, level: Int, context: Context)] = []
        /// A ds:SignedInfo laid out as xmlseclibs' template leaves it after the cookbook:
        /// `<ds:SignedInfo><ds:CanonicalizationMethod/> <ds:SignatureMethod/> <ds:Reference>`.
        var xmlseclibsShape = false
        /// Places where two elements (or an element and its parent's tag) touch in element-only content:
        /// `before` nil for the end of the parent.
        var emptyGaps: [(parent: xmlNodePtr, before: xmlNodePtr?, context: Context)] = []
        /// The document element, when its end tag follows an element: an indented document has a newline
        /// there, with no indentation, which the cookbook deleted entirely.
        var documentEnd: xmlNodePtr?
        /// Base64 texts of XML-DSig and XML Encryption elements.
        var base64Texts: [(node: xmlNodePtr, kind: Base64Kind, length: Int, bytes: [UInt8])] = []
        /// The wrapped forms of ``base64Texts`` made so far (each candidate reuses them).
        let wrappings = WrappedBase64()
        var marks = Marks()

        /// Every place a candidate can change: texts it may rewrite, and where it may insert a newline.
        var places: (replaced: [xmlNodePtr], inserted: [Plan.Insertion]) {
            var inserted = emptyGaps.map { Plan.Insertion(parent: $0.parent, before: $0.before) }
            if let documentEnd { inserted.append(Plan.Insertion(parent: documentEnd, before: nil)) }
            return (spaceGaps.map(\.node) + base64Texts.map(\.node), inserted)
        }

        init(root: xmlNodePtr, excluding excluded: xmlNodePtr?) {
            let rootDepth = root.elementDepth - 1
            // The context of the root's siblings, from its ancestors (outermost first).
            var ancestors: [xmlNodePtr] = []
            var ancestor = root.pointee.parent
            while let current = ancestor, current.pointee.type == XML_ELEMENT_NODE {
                ancestors.append(current)
                ancestor = current.pointee.parent
            }
            var contexts = [ancestors.reversed().reduce(Context.content) { $0.entering($1) }]  // by walk depth - 1
            root.walk { node, depth in
                if node == excluded { return false }
                guard node.isElement else { return false }
                let level = rootDepth + depth - 1  // the element's depth in the document (root element 0)
                if let kind = Self.base64Kind(node) {
                    collectBase64(node, kind: kind)
                    return false
                }
                let context = contexts[depth - 1].entering(node)
                if contexts.count > depth { contexts[depth] = context } else { contexts.append(context) }
                collectGaps(node, level: level, context: context, excluded: excluded)
                return true
            }
        }

        private static func base64Kind(_ element: xmlNodePtr) -> Base64Kind? {
            guard let ns = element.pointee.ns?.pointee.href, let name = element.pointee.name else { return nil }
            let local = String(cString: name)
            if XMLName.equals(ns, Namespace.xmlDSig) {
                switch local {
                case "X509Certificate", "X509CRL", "Modulus", "Exponent", "P", "Q", "G", "Y", "J", "Seed", "PgenCounter": return .key
                case "SignatureValue", "X509SKI": return .value
                case "DigestValue": return .digest
                default: return nil
                }
            }
            if XMLName.equals(ns, Namespace.xmlEnc), local == "CipherValue" || local == "OAEPparams" {
                return .cipher
            }
            return nil
        }

        private mutating func collectBase64(_ element: xmlNodePtr, kind: Base64Kind) {
            guard let text = element.pointee.children, text.pointee.next == nil, text.pointee.type == XML_TEXT_NODE,
                let content = text.pointee.content
            else { return }
            var length = 0
            var carriageReturns = false
            var byte = content
            while byte.pointee != 0 {
                if byte.pointee == 0x0D {
                    carriageReturns = true
                } else if Base64.values[Int(byte.pointee)] != Base64.invalid || byte.pointee == UInt8(ascii: "=") {
                    length += 1
                } else {
                    return  // spaces or other bytes: not a layout this recovery knows
                }
                byte += 1
            }
            if carriageReturns { marks.carriageReturns = true }
            if length > 64 { marks.joinedBase64 = true }
            base64Texts.append((text, kind, length, Array(UnsafeBufferPointer(start: content, count: strlen(content)))))
        }

        private mutating func collectGaps(_ element: xmlNodePtr, level: Int, context: Context, excluded: xmlNodePtr?) {
            var hasElement = false
            var child = element.pointee.children
            while let current = child {
                switch current.pointee.type {
                case XML_ELEMENT_NODE:
                    hasElement = true
                case XML_TEXT_NODE:
                    guard Text.isBlank(current.pointee.content) else { return }  // mixed content: left alone
                default:
                    break
                }
                child = current.pointee.next
            }
            guard hasElement else { return }
            child = element.pointee.children
            var previousIsText = false
            while let current = child {
                child = current.pointee.next
                if current.pointee.type == XML_TEXT_NODE {
                    // Blank text other than spaces was restored already (by a nested signature's recovery).
                    if Self.isSpaces(current.pointee.content) {
                        spaceGaps.append((current, current.pointee.next == nil ? level : level + 1, context))
                        marks.collapsedIndentation = true
                    }
                    previousIsText = true
                    continue
                }
                if !previousIsText { emptyGaps.append((element, current, context)) }
                previousIsText = false
            }
            if !previousIsText {
                if level == 0 { documentEnd = element } else { emptyGaps.append((element, nil, context)) }
            }
            if element.is(Namespace.xmlDSig, "SignedInfo"), let first = element.pointee.children,
                first.is(Namespace.xmlDSig, "CanonicalizationMethod"), let gap = first.pointee.next, Self.isSpaces(gap.pointee.content),
                let method = gap.pointee.next, method.is(Namespace.xmlDSig, "SignatureMethod")
            {
                xmlseclibsShape = true
            }
            if element.is(Namespace.xmlEnc, "CipherData"), let first = element.pointee.children, Self.isSpaces(first.pointee.content),
                let value = first.pointee.next, value.is(Namespace.xmlEnc, "CipherValue")
            {
                xmlseclibsShape = true
            }
        }

        private static func isSpaces(_ content: UnsafeMutablePointer<xmlChar>?) -> Bool {
            guard var byte = content, byte.pointee != 0 else { return false }
            while byte.pointee != 0 {
                guard byte.pointee == 0x20 else { return false }
                byte += 1
            }
            return true
        }

        /// The styles worth trying, in order: each dimension's options that occur in this region, the
        /// preferred style's (learnt from a nested signature or the content) first.
        func candidates(preferring preferred: Style? = nil) -> [Style] {
            var indentations: [[UInt8]?] = spaceGaps.isEmpty ? [nil] : Style.indentations
            var newlines: [Style.Newlines] = [.none]
            if emptyGaps.contains(where: \.context.inSignature) { newlines.insert(.signatures, at: 0) }
            if emptyGaps.contains(where: { $0.context == .encryption }) { newlines.append(.templates) }
            if emptyGaps.contains(where: { $0.context == .keyInfo }) { newlines.append(.signaturesOutsideKeyInfo) }
            if !spaceGaps.isEmpty, emptyGaps.contains(where: { $0.context == .content }) { newlines.append(.everywhere) }
            if xmlseclibsShape { newlines.insert(.xmlseclibs, at: 0) }
            if xmlseclibsShape,
                spaceGaps.allSatisfy({ Self.xmlseclibsGap(parent: $0.node.pointee.parent, before: $0.node.pointee.next) != nil })
            {
                indentations = [nil]
            }
            let documentEnds = documentEnd != nil && spaceGaps.contains(where: { $0.context == .content }) ? [true, false] : [false]
            var layouts: [Base64Layout] =
                marks.carriageReturns
                ? [Base64Layout(carriageReturns: true)]
                : marks.joinedBase64 ? Base64Layout.signers + [.unchanged] : [.unchanged]
            if xmlseclibsShape { Self.moveToFront(Base64Layout.unchanged, in: &layouts) }  // xmlseclibs writes Base64 on one line
            if let preferred {
                Self.moveToFront(preferred.indentation, in: &indentations)
                Self.moveToFront(preferred.newlines, in: &newlines)
                Self.moveToFront(preferred.base64, in: &layouts)
            }
            var styles: [Style] = []
            for indentation in indentations {
                for newline in newlines {
                    for documentEnd in documentEnds {
                        for layout in layouts {
                            styles.append(
                                Style(indentation: indentation, newlines: newline, documentEndNewline: documentEnd, base64: layout))
                        }
                    }
                }
            }
            return styles
        }

        /// Puts `value` first among `options`, adding it when absent (a nested signature proved it).
        private static func moveToFront<T: Equatable>(_ value: T, in options: inout [T]) {
            options.removeAll { $0 == value }
            options.insert(value, at: 0)
        }

        /// The edits that turn this region into `style`.
        func plan(_ style: Style) -> Plan {
            var plan = Plan()
            var indentations: [[UInt8]] = []  // by level, shared by the gaps of one level
            for (node, level, _) in spaceGaps {
                if style.newlines == .xmlseclibs {
                    if let text = Self.xmlseclibsGap(parent: node.pointee.parent, before: node.pointee.next) {
                        plan.contents.append(.init(node: node, content: text))
                        continue
                    }
                }
                guard let unit = style.indentation else { continue }
                while indentations.count <= level {
                    indentations.append(indentations.last.map { $0 + unit } ?? [0x0A])
                }
                plan.contents.append(.init(node: node, content: indentations[level]))
            }
            switch style.newlines {
            case .none:
                break
            case .signatures, .templates, .everywhere:
                plan.insertions = emptyGaps.filter {
                    switch style.newlines {
                    case .signatures: $0.context.inSignature
                    case .templates: $0.context != .content
                    default: true
                    }
                }.map { .init(parent: $0.parent, before: $0.before) }
            case .signaturesOutsideKeyInfo:
                // xml-security-c: none inside KeyInfo, and none between KeyInfo and the end of the signature.
                plan.insertions = emptyGaps.filter { gap in
                    guard gap.context == .signature else { return false }
                    guard gap.before == nil, gap.parent.is(Namespace.xmlDSig, "Signature") else { return true }
                    return !(xmlLastElementChild(gap.parent)?.is(Namespace.xmlDSig, "KeyInfo") ?? false)
                }.map { .init(parent: $0.parent, before: $0.before) }
            case .xmlseclibs:
                // The template's closing `\n` ends up before KeyInfo when one is appended, else before the end tag.
                plan.insertions = emptyGaps.filter { gap in
                    if gap.before == nil, gap.parent.is(Namespace.xmlEnc, "EncryptedData") { return true }
                    guard gap.context.inSignature, gap.parent.is(Namespace.xmlDSig, "Signature") else { return false }
                    guard let before = gap.before else { return gap.parent.firstChild(Namespace.xmlDSig, "KeyInfo") == nil }
                    return before.is(Namespace.xmlDSig, "KeyInfo")
                }.map { .init(parent: $0.parent, before: $0.before) }
            }
            if style.documentEndNewline, let documentEnd {
                plan.insertions.append(.init(parent: documentEnd, before: nil))
            }
            if style.base64 != .unchanged {
                for (index, text) in base64Texts.enumerated() {
                    let carriageReturns = text.bytes.contains(0x0D)
                    let rewritten: [UInt8]
                    if style.base64.carriageReturns {
                        guard carriageReturns else { continue }
                        rewritten = text.bytes.flatMap { $0 == 0x0D ? [0x0D, 0x0A] : [$0] }
                    } else if let wrapping = style.base64.wrapping(text.kind), text.length > wrapping.width, !carriageReturns {
                        rewritten = wrappings.wrapped(index, text.bytes, wrapping)
                    } else {
                        continue
                    }
                    plan.contents.append(.init(node: text.node, content: rewritten))
                }
            }
            return plan
        }

        /// The whitespace xmlseclibs' template leaves before `before` in `parent`, where it leaves any.
        private static func xmlseclibsGap(parent: xmlNodePtr?, before: xmlNodePtr?) -> [UInt8]? {
            guard let parent else { return nil }
            // Its encryption template: `<xenc:EncryptedData>\n   <xenc:CipherData>\n      <xenc:CipherValue/>\n   </xenc:CipherData>\n</xenc:EncryptedData>`.
            if parent.is(Namespace.xmlEnc, "CipherData") { return Array((before == nil ? "\n   " : "\n      ").utf8) }
            guard let before else { return nil }
            if parent.is(Namespace.xmlEnc, "EncryptedData"), before.is(Namespace.xmlEnc, "CipherData") { return Array("\n   ".utf8) }
            if parent.is(Namespace.xmlDSig, "Signature"), before.is(Namespace.xmlDSig, "SignedInfo") { return Array("\n  ".utf8) }
            guard parent.is(Namespace.xmlDSig, "SignedInfo") else { return nil }
            if before.is(Namespace.xmlDSig, "SignatureMethod") { return Array("\n    ".utf8) }
            if before.is(Namespace.xmlDSig, "Reference") { return Array("\n  ".utf8) }
            return nil
        }

        /// A region's Base64 texts as wrapped for the candidates so far.
        final class WrappedBase64 {
            private var made: [Int: [Wrapping: [UInt8]]] = [:]

            func wrapped(_ index: Int, _ bytes: [UInt8], _ wrapping: Wrapping) -> [UInt8] {
                if let known = made[index]?[wrapping] { return known }
                let result = Region.wrapped(bytes, wrapping)
                made[index, default: [:]][wrapping] = result
                return result
            }
        }

        fileprivate static func wrapped(_ bytes: [UInt8], _ wrapping: Wrapping) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / wrapping.width + 2)
            if wrapping.leadingBreak { out.append(0x0A) }
            var start = 0
            while start < bytes.count {
                if start > 0 { out.append(0x0A) }
                out += bytes[start..<min(start + wrapping.width, bytes.count)]
                start += wrapping.width
            }
            if wrapping.trailingBreak { out.append(0x0A) }
            return out
        }
    }

    /// A set of edits to the tree, compared by value so that two styles with the same effect are tried once.
    struct Plan: Hashable {
        struct Content: Hashable {
            var node: xmlNodePtr
            var content: [UInt8]

            // Plans are compared on every candidate: hashed by place and length only (equal hashes compare
            // the bytes).
            func hash(into hasher: inout Hasher) {
                hasher.combine(node)
                hasher.combine(content.count)
            }
        }
        struct Insertion: Hashable {
            var parent: xmlNodePtr
            var before: xmlNodePtr?
        }
        var contents: [Content] = []
        var insertions: [Insertion] = []

        var isEmpty: Bool { contents.isEmpty && insertions.isEmpty }

        /// Applies the plan; returns what undoes it.
        func apply() -> [Edit] {
            var edits: [Edit] = []
            for change in contents {
                guard let old = change.node.pointee.content else { continue }
                edits.append(.replaced(change.node, Array(UnsafeBufferPointer(start: old, count: strlen(old)))))
                change.content.withUnsafeBufferPointer { xmlNodeSetContentLen(change.node, $0.baseAddress, Int32($0.count)) }
            }
            for insertion in insertions {
                guard let text = xmlNewDocTextLen(insertion.parent.pointee.doc, "\n", 1) else { continue }
                // Neighbours are elements (the gap is empty), so libxml2 merges no text nodes here.
                if let before = insertion.before {
                    xmlAddPrevSibling(before, text)
                } else {
                    xmlAddChild(insertion.parent, text)
                }
                edits.append(.inserted(text))
            }
            return edits
        }
    }

    /// One applied change, and how to undo it.
    enum Edit {
        case replaced(xmlNodePtr, [UInt8])
        case inserted(xmlNodePtr)

        static func revert(_ edits: [Edit]) {
            for edit in edits.reversed() {
                switch edit {
                case .replaced(let node, let content):
                    content.withUnsafeBufferPointer { xmlNodeSetContentLen(node, $0.baseAddress, Int32($0.count)) }
                case .inserted(let node):
                    xmlUnlinkNode(node)
                    xmlFreeNode(node)
                }
            }
        }
    }
}
