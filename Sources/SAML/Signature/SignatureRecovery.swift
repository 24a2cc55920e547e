internal import CSAMLShim

/// Undoes the Adobe Pass cookbook's whitespace normalisation on signed content, with the signature as
/// the proof (docs/recovery.md).
///
/// The cookbook's client deletes every newline and collapses runs of spaces and tabs before it encodes
/// the response. What that does to a signed document is regular: Base64 that a signer wrapped into lines
/// is joined, and the indentation between elements becomes one space (or nothing, where there was only a
/// newline). When a signature fails on a document that bears those marks, this rebuilds candidates of the
/// signed bytes (the layouts real signers write) in the parsed tree and lets xmlsec verify each, by the
/// same path as any verification: the first candidate under which every digest and the signature value
/// verify is, by the collision resistance of the digest and the signature, what the IdP signed, and the
/// response is read from that tree. Bounded by ``maximumCandidates`` xmlsec runs per signature and a time
/// budget.
enum SignatureRecovery {
    /// The most xmlsec runs spent on one signature (both stages together).
    static let maximumCandidates = 24
    /// The time budget of one signature's recovery: this multiple of the failed verification's duration,
    /// plus ``budgetAllowance``, and never more than ``budgetCeiling``. A guard: the candidate cap binds
    /// first unless building candidates is slow, or each candidate is (a document built to spend its whole
    /// canonicalisation budget on every run: 24 runs of the most it allows would cost seconds).
    static let budgetMultiple = 64
    static let budgetAllowance = Duration.milliseconds(50)
    static let budgetCeiling = Duration.milliseconds(150)

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
        /// SignatureValue, DigestValue, X509SKI.
        case value
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
        /// The line breaks were `\r\n` written as `&#13;\n` (Santuario, the JDK): each surviving `\r`
        /// marks where a `\n` was deleted.
        var carriageReturns = false

        static let unchanged = Base64Layout()

        func wrapping(_ kind: Base64Kind) -> Wrapping? {
            switch kind {
            case .value: values
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
            /// Inside `ds:Signature` subtrees (libxmlsec1's and xml-security-c's templates put one before,
            /// between and after each child).
            case signatures
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
    /// - Throws: ``SAMLError/Code/signatureNormalisationDamage`` when the failing part bears the
    ///   cookbook's marks and no candidate verifies; otherwise the error of the failed verification.
    static func recover(
        signature: xmlNodePtr, failed: SignatureVerification.Outcome, failedDuration: Duration,
        keys: [TrustedKey], algorithms: AlgorithmPolicy, fastCanonicalization: Bool
    ) throws -> Recovered {
        let clock = ContinuousClock()
        let deadline = clock.now + min(failedDuration * budgetMultiple + budgetAllowance, budgetCeiling)
        // The deadline is checked between runs: a run that alone takes a quarter of the ceiling (a
        // document near its canonicalisation budget, never a real response) is not retried at all.
        guard failedDuration * 4 <= budgetCeiling, let parent = signature.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE,
            let signedInfo = signature.firstChild(Namespace.xmlDSig, "SignedInfo")
        else {
            throw SignatureVerification.failure(failed, signature: signature, keys: keys)
        }
        var tried = 0
        var kept: [Edit] = []
        var winner: Style?
        var outcome = failed
        func attempt() throws -> SignatureVerification.Outcome {
            tried += 1
            return try SignatureVerification.attempt(
                signature: signature, keys: keys, algorithms: algorithms, fastCanonicalization: fastCanonicalization)
        }
        func withinBounds() -> Bool { tried < maximumCandidates && clock.now < deadline }
        /// Tries the region's candidates until `done` accepts an outcome; that candidate's edits stay.
        func search(_ region: Region, preferring: Style?, done: (SignatureVerification.Outcome) -> Bool) throws
            -> (edits: [Edit], style: Style, outcome: SignatureVerification.Outcome)?
        {
            var seen = Set<Plan>()
            for style in region.candidates(preferring: preferring) where withinBounds() {
                let plan = region.plan(style)
                guard !plan.isEmpty, seen.insert(plan).inserted else { continue }
                let edits = plan.apply()
                let result = try attempt()
                if done(result) { return (edits, style, result) }
                Edit.revert(edits)
            }
            return nil
        }

        // Stage 1: the signed element's content (a Reference digest failed).
        if case .digestMismatch = outcome {
            // A signed Assertion inside a signed Response is recovered first, with its own signature as the
            // proof: its edits stay, and its layout is the first one tried for the rest.
            let learnt = recoverNested(
                in: parent, besides: signature, failedDuration: failedDuration, keys: keys, algorithms: algorithms,
                fastCanonicalization: fastCanonicalization)
            let region = Region(root: parent, excluding: signature)
            guard let found = try search(region, preferring: learnt, done: { if case .digestMismatch = $0 { false } else { true } }) else {
                throw diagnosis(
                    region.marks, failed: failed,
                    part: "the Reference digest of the signed \(SignatureVerification.signedElementDescription(signature))",
                    tried: tried, signature: signature, keys: keys)
            }
            (kept, winner, outcome) = (found.edits, found.style, found.outcome)
        }
        // Stage 2: ds:SignedInfo (the digests match; the signature value does not verify).
        if case .signatureInvalid = outcome {
            let region = Region(root: signedInfo, excluding: nil)
            if let found = try search(region, preferring: winner, done: { if case .valid = $0 { true } else { false } }) {
                kept += found.edits
                winner = merged(winner, found.style)
                outcome = found.outcome
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
    private static func recoverNested(
        in element: xmlNodePtr, besides signature: xmlNodePtr, failedDuration: Duration, keys: [TrustedKey],
        algorithms: AlgorithmPolicy, fastCanonicalization: Bool
    ) -> Style? {
        var learnt: Style?
        for nested in element.descendants(where: { $0 != signature && $0.is(Namespace.xmlDSig, "Signature") }) {
            guard let nestedParent = nested.pointee.parent, let document = nested.pointee.doc,
                (try? SignatureProfile.check(signature: nested, parent: nestedParent, document: document, algorithms: algorithms)) != nil,
                let outcome = try? SignatureVerification.attempt(
                    signature: nested, keys: keys, algorithms: algorithms, fastCanonicalization: fastCanonicalization)
            else { continue }
            switch outcome {
            case .digestMismatch, .signatureInvalid:
                if let recovered = try? recover(
                    signature: nested, failed: outcome, failedDuration: failedDuration, keys: keys, algorithms: algorithms,
                    fastCanonicalization: fastCanonicalization)
                {
                    learnt = recovered.style
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
        /// Whitespace-only texts between elements, now spaces, with the depth of the line they begin.
        var spaceGaps: [(node: xmlNodePtr, level: Int, inSignature: Bool)] = []
        /// A ds:SignedInfo laid out as xmlseclibs' template leaves it after the cookbook:
        /// `<ds:SignedInfo><ds:CanonicalizationMethod/> <ds:SignatureMethod/> <ds:Reference>`.
        var xmlseclibsShape = false
        /// Places where two elements (or an element and its parent's tag) touch in element-only content:
        /// `before` nil for the end of the parent; `inSignature` inside a `ds:Signature` subtree.
        var emptyGaps: [(parent: xmlNodePtr, before: xmlNodePtr?, inSignature: Bool)] = []
        /// The document element, when its end tag follows an element: an indented document has a newline
        /// there, with no indentation, which the cookbook deleted entirely.
        var documentEnd: xmlNodePtr?
        /// Base64 texts of XML-DSig and XML Encryption elements.
        var base64Texts: [(node: xmlNodePtr, kind: Base64Kind, length: Int)] = []
        var marks = Marks()

        init(root: xmlNodePtr, excluding excluded: xmlNodePtr?) {
            let rootDepth = root.elementDepth - 1
            var signatureDepth: Int?  // the walk depth of the ds:Signature being walked, if any
            if root.is(Namespace.xmlDSig, "SignedInfo") { signatureDepth = 0 }
            root.walk { node, depth in
                if let start = signatureDepth, start > 0, depth <= start { signatureDepth = nil }
                if node == excluded { return false }
                guard node.isElement else { return false }
                if signatureDepth == nil, node.is(Namespace.xmlDSig, "Signature") { signatureDepth = depth }
                let level = rootDepth + depth - 1  // the element's depth in the document (root element 0)
                if let kind = Self.base64Kind(node) {
                    collectBase64(node, kind: kind)
                    return false
                }
                collectGaps(node, level: level, inSignature: signatureDepth != nil, excluded: excluded)
                return true
            }
        }

        private static func base64Kind(_ element: xmlNodePtr) -> Base64Kind? {
            guard let ns = element.pointee.ns?.pointee.href, let name = element.pointee.name else { return nil }
            let local = String(cString: name)
            if XMLName.equals(ns, Namespace.xmlDSig) {
                switch local {
                case "X509Certificate", "X509CRL", "Modulus", "Exponent", "P", "Q", "G", "Y", "J", "Seed", "PgenCounter": return .key
                case "SignatureValue", "DigestValue", "X509SKI": return .value
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
            base64Texts.append((text, kind, length))
        }

        private mutating func collectGaps(_ element: xmlNodePtr, level: Int, inSignature: Bool, excluded: xmlNodePtr?) {
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
                        spaceGaps.append((current, current.pointee.next == nil ? level : level + 1, inSignature))
                        marks.collapsedIndentation = true
                    }
                    previousIsText = true
                    continue
                }
                if !previousIsText { emptyGaps.append((element, current, inSignature)) }
                previousIsText = false
            }
            if !previousIsText {
                if level == 0 { documentEnd = element } else { emptyGaps.append((element, nil, inSignature)) }
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
            if emptyGaps.contains(where: \.inSignature) { newlines.insert(.signatures, at: 0) }
            if !spaceGaps.isEmpty, emptyGaps.contains(where: { !$0.inSignature }) { newlines.append(.everywhere) }
            if xmlseclibsShape { newlines.insert(.xmlseclibs, at: 0) }
            if xmlseclibsShape,
                spaceGaps.allSatisfy({ Self.xmlseclibsGap(parent: $0.node.pointee.parent, before: $0.node.pointee.next) != nil })
            {
                indentations = [nil]
            }
            let documentEnds = documentEnd != nil && spaceGaps.contains(where: { !$0.inSignature }) ? [true, false] : [false]
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
            for (node, level, _) in spaceGaps {
                if style.newlines == .xmlseclibs {
                    if let text = Self.xmlseclibsGap(parent: node.pointee.parent, before: node.pointee.next) {
                        plan.contents.append(.init(node: node, content: text))
                        continue
                    }
                }
                guard let unit = style.indentation else { continue }
                var text: [UInt8] = [0x0A]
                for _ in 0..<level { text += unit }
                plan.contents.append(.init(node: node, content: text))
            }
            switch style.newlines {
            case .none:
                break
            case .signatures, .everywhere:
                plan.insertions = emptyGaps.filter { style.newlines == .everywhere || $0.inSignature }
                    .map { .init(parent: $0.parent, before: $0.before) }
            case .xmlseclibs:
                // The template's closing `\n` ends up before KeyInfo when one is appended, else before the end tag.
                plan.insertions = emptyGaps.filter { gap in
                    if gap.before == nil, gap.parent.is(Namespace.xmlEnc, "EncryptedData") { return true }
                    guard gap.inSignature, gap.parent.is(Namespace.xmlDSig, "Signature") else { return false }
                    guard let before = gap.before else { return gap.parent.firstChild(Namespace.xmlDSig, "KeyInfo") == nil }
                    return before.is(Namespace.xmlDSig, "KeyInfo")
                }.map { .init(parent: $0.parent, before: $0.before) }
            }
            if style.documentEndNewline, let documentEnd {
                plan.insertions.append(.init(parent: documentEnd, before: nil))
            }
            if style.base64 != .unchanged {
                for (node, kind, length) in base64Texts {
                    guard let content = node.pointee.content else { continue }
                    let bytes = Array(UnsafeBufferPointer(start: content, count: strlen(content)))
                    let rewritten: [UInt8]
                    if style.base64.carriageReturns {
                        guard bytes.contains(0x0D) else { continue }
                        rewritten = bytes.flatMap { $0 == 0x0D ? [0x0D, 0x0A] : [$0] }
                    } else if let wrapping = style.base64.wrapping(kind), length > wrapping.width,
                        !bytes.contains(0x0D)
                    {
                        rewritten = Self.wrapped(bytes, wrapping)
                    } else {
                        continue
                    }
                    plan.contents.append(.init(node: node, content: rewritten))
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

        private static func wrapped(_ bytes: [UInt8], _ wrapping: Wrapping) -> [UInt8] {
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
