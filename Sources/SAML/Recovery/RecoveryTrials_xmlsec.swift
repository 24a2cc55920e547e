internal import CSAMLShim
import CookbookEncoding

extension SignatureRecovery {
    /// The canonical bytes of a region, made once with every place a candidate can change marked, from
    /// which each candidate's canonical bytes are assembled without touching the tree or canonicalising
    /// again.
    ///
    /// The marks are texts the document cannot hold (a 0x01 byte, the place's number, a 0x02 byte: XML 1.0
    /// allows neither control character, so the parser refused any document that had one), set in the
    /// tree for one canonicalisation and taken out again. Canonicalisation writes a text's bytes as they
    /// are but for `&`, `<`, `>` and carriage returns, which ``escaped(_:)`` escapes the same way.
    struct CanonicalTemplate {
        /// A run of `bytes`, or a place (`slot` >= 0) whose content the candidate decides.
        private struct Piece {
            var literal: Range<Int>
            var slot: Int
        }
        private var bytes: [UInt8] = []
        private var pieces: [Piece] = []
        private var slotOfNode: [xmlNodePtr: Int] = [:]
        private var slotOfInsertion: [Plan.Insertion: Int] = [:]
        /// What each place holds now, escaped (empty for a place where nothing is now).
        private var originals: [[UInt8]] = []
        /// The length of the canonical bytes as the region is now.
        private(set) var length = 0
        /// The namespace work recovery spends on its one canonicalisation (c14n_budget.c): a real response
        /// needs about 0.2 steps per byte; a document built to need more than 1 (plus the slack) is not
        /// recovered, so that it costs no more than refusing it as it came.
        static let workFactor: UInt32 = 1
        static let workSlack: UInt64 = 20_000

        /// Canonicalises `apex` (without `excluded`) with `method`, the places of `region` marked; nil when
        /// the canonicalisation fails (its budget included).
        init?(region: Region, apex: xmlNodePtr, excluded: xmlNodePtr?, method: Canonicalization) {
            let places = region.places
            var edits: [Edit] = []
            defer { Edit.revert(edits) }
            for (index, node) in places.replaced.enumerated() {
                guard let old = node.pointee.content else { return nil }
                let content = Array(UnsafeBufferPointer(start: old, count: strlen(old)))
                edits.append(.replaced(node, content))
                originals.append(Self.escaped(content))
                slotOfNode[node] = index
                let mark = Self.mark(index)
                mark.withUnsafeBufferPointer { xmlNodeSetContentLen(node, $0.baseAddress, Int32($0.count)) }
            }
            for insertion in places.inserted {
                let index = originals.count
                let mark = Self.mark(index)
                guard
                    let text = mark.withUnsafeBufferPointer({
                        xmlNewDocTextLen(insertion.parent.pointee.doc, $0.baseAddress, Int32($0.count))
                    })
                else { return nil }
                // Neighbours are elements, so libxml2 merges no text nodes here.
                if let before = insertion.before { xmlAddPrevSibling(before, text) } else { xmlAddChild(insertion.parent, text) }
                edits.append(.inserted(text))
                originals.append([])
                slotOfInsertion[insertion] = index
            }
            guard let document = apex.pointee.doc else { return nil }
            var output: UnsafeMutablePointer<UInt8>?
            var count = 0
            let status = saml_shim_canonicalize(
                document, apex, excluded, method.mode, method.withComments ? 1 : 0, method.prefixList, Self.workFactor, Self.workSlack,
                &output, &count)
            defer { saml_shim_free_buffer(output) }
            guard status == 0, let output else { return nil }
            guard parse(UnsafeBufferPointer(start: output, count: count)) else { return nil }
        }

        /// Splits the canonical bytes at the marks.
        private mutating func parse(_ canonical: UnsafeBufferPointer<UInt8>) -> Bool {
            bytes.reserveCapacity(canonical.count)
            var start = 0
            var index = 0
            while index < canonical.count {
                guard canonical[index] == 0x01 else {
                    index += 1
                    continue
                }
                var slot = 0
                var end = index + 1
                while end < canonical.count, canonical[end] >= 0x30, canonical[end] <= 0x39, slot < originals.count {
                    slot = slot * 10 + Int(canonical[end] - 0x30)
                    end += 1
                }
                guard end < canonical.count, canonical[end] == 0x02, end > index + 1, slot < originals.count else { return false }
                let literalStart = bytes.count
                bytes += canonical[start..<index]
                pieces.append(Piece(literal: literalStart..<bytes.count, slot: slot))
                length += bytes.count - literalStart + originals[slot].count
                index = end + 1
                start = index
            }
            let literalStart = bytes.count
            bytes += canonical[start..<canonical.count]
            pieces.append(Piece(literal: literalStart..<bytes.count, slot: -1))
            length += bytes.count - literalStart
            return true
        }

        /// The canonical bytes of the region under `plan`, into `output` (replaced). False, with nothing
        /// written, when they would pass `limit` bytes.
        func assemble(_ plan: Plan, into output: inout [UInt8], limit: Int) -> Bool {
            var chosen = [[UInt8]?](repeating: nil, count: originals.count)
            var size = length
            for change in plan.contents {
                guard let slot = slotOfNode[change.node] else { continue }
                let escaped = Self.escaped(change.content)
                size += escaped.count - (chosen[slot] ?? originals[slot]).count
                chosen[slot] = escaped
            }
            for insertion in plan.insertions {
                guard let slot = slotOfInsertion[insertion] else { continue }
                size += 1 - (chosen[slot] ?? originals[slot]).count
                chosen[slot] = [0x0A]
            }
            guard size <= limit else { return false }
            output.removeAll(keepingCapacity: true)
            output.reserveCapacity(size)
            bytes.withUnsafeBufferPointer { literals in
                for piece in pieces {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: literals[piece.literal]))
                    if piece.slot >= 0 { output.append(contentsOf: chosen[piece.slot] ?? originals[piece.slot]) }
                }
            }
            return true
        }

        private static func mark(_ index: Int) -> [UInt8] {
            [0x01] + Array(String(index).utf8) + [0x02]
        }

        /// A text's bytes as canonicalisation writes them.
        static func escaped(_ text: [UInt8]) -> [UInt8] {
            guard text.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x0D }) else { return text }
            var out: [UInt8] = []
            out.reserveCapacity(text.count + 16)
            for byte in text {
                switch byte {
                case 0x26: out += Array("&amp;".utf8)
                case 0x3C: out += Array("&lt;".utf8)
                case 0x3E: out += Array("&gt;".utf8)
                case 0x0D: out += Array("&#xD;".utf8)
                default: out.append(byte)
                }
            }
            return out
        }
    }

    /// A canonicalisation method as a signature names it.
    struct Canonicalization {
        var mode: saml_shim_c14n_mode
        var withComments: Bool
        var prefixList: String?

        /// `algorithm` (a URI of ``AlgorithmPolicy/canonicalizations``) as written on `element` (its
        /// InclusiveNamespaces PrefixList); `comments`: whether the node set keeps comments at all.
        init?(algorithm: String, element: xmlNodePtr?, comments: Bool) {
            switch algorithm {
            case "http://www.w3.org/2001/10/xml-exc-c14n#", "http://www.w3.org/2001/10/xml-exc-c14n#WithComments":
                mode = SAML_SHIM_C14N_EXCLUSIVE
            case "http://www.w3.org/TR/2001/REC-xml-c14n-20010315", "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments":
                mode = SAML_SHIM_C14N_INCLUSIVE_1_0
            case "http://www.w3.org/2006/12/xml-c14n11", "http://www.w3.org/2006/12/xml-c14n11#WithComments":
                mode = SAML_SHIM_C14N_INCLUSIVE_1_1
            default:
                return nil
            }
            withComments = comments && algorithm.hasSuffix("#WithComments")
            if mode == SAML_SHIM_C14N_EXCLUSIVE,
                let inclusive = element?.firstChild(Namespace.excC14N, "InclusiveNamespaces")
            {
                prefixList = inclusive.attribute("PrefixList") ?? ""
            }
        }
    }

    /// The digest a signature algorithm or DigestMethod URI names.
    static func digest(of algorithm: String) -> saml_shim_digest? {
        switch algorithm {
        case "http://www.w3.org/2000/09/xmldsig#sha1", "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
            "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1":
            SAML_SHIM_DIGEST_SHA1
        case "http://www.w3.org/2001/04/xmlenc#sha256", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
            "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256":
            SAML_SHIM_DIGEST_SHA256
        case "http://www.w3.org/2001/04/xmldsig-more#sha384", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
            "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384":
            SAML_SHIM_DIGEST_SHA384
        case "http://www.w3.org/2001/04/xmlenc#sha512", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
            "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512":
            SAML_SHIM_DIGEST_SHA512
        default:
            nil
        }
    }

    /// The Base64 value of an element's text, whatever its line breaks.
    static func base64Value(_ element: xmlNodePtr) -> [UInt8]? {
        let text = element.textContent.utf8.filter { Base64.values[Int($0)] != Base64.invalid || $0 == UInt8(ascii: "=") }
        var repairs: [SAMLResponseDecoder.Repair] = []
        return try? Base64Decoding.decode(Array(text), maximumBytes: 1024, repairs: &repairs)
    }

    /// Checks a candidate layout of the signed element against the Reference's DigestValue.
    struct DigestTrial {
        let template: CanonicalTemplate
        let digest: saml_shim_digest
        let expected: [UInt8]

        init?(signature: xmlNodePtr, signedElement: xmlNodePtr, region: Region) {
            let dsig = Namespace.xmlDSig
            guard let reference = signature.firstChild(dsig, "SignedInfo")?.firstChild(dsig, "Reference"),
                let digest = SignatureRecovery.digest(of: reference.firstChild(dsig, "DigestMethod")?.attribute("Algorithm") ?? ""),
                let value = reference.firstChild(dsig, "DigestValue"), let expected = SignatureRecovery.base64Value(value)
            else { return nil }
            // After the enveloped-signature transform, the canonicalisation the Reference names, or
            // inclusive C14N 1.0 (XML-DSig's default for a node set); a same-document Reference selects no comments.
            let transform = reference.firstChild(dsig, "Transforms")?.children(dsig, "Transform").first {
                $0.attribute("Algorithm") != AlgorithmPolicy.envelopedSignature
            }
            guard
                let method = Canonicalization(
                    algorithm: transform?.attribute("Algorithm") ?? "http://www.w3.org/TR/2001/REC-xml-c14n-20010315", element: transform,
                    comments: false),
                let template = CanonicalTemplate(region: region, apex: signedElement, excluded: signature, method: method)
            else { return nil }
            (self.template, self.digest, self.expected) = (template, digest, expected)
        }

        func accepts(_ plan: Plan, scratch: inout [UInt8], work: inout Int, limit: Int) -> Bool {
            guard template.assemble(plan, into: &scratch, limit: limit) else { return false }
            work += scratch.count
            var value = [UInt8](repeating: 0, count: Int(SAML_SHIM_MAX_DIGEST))
            var length = 0
            guard scratch.withUnsafeBufferPointer({ saml_shim_digest_bytes(digest, $0.baseAddress, $0.count, &value, &length) }) == 0
            else { return false }
            return length == expected.count && value.prefix(length).elementsEqual(expected)
        }
    }

    /// What a signature value can be checked against without its SignedInfo: the digest an RSA value
    /// signs under each pinned RSA key it decodes with, and the pinned keys checked by a verification
    /// (ECDSA). Nil when no pinned key can have made the value (an RSA value that decodes under none of
    /// the RSA keys, and no other key): then no layout of anything can make the signature verify.
    struct SignatureValue {
        let digest: saml_shim_digest
        let value: [UInt8]
        let signedDigests: [(key: TrustedKey, digest: [UInt8])]
        let verifyingKeys: [TrustedKey]

        init?(signature: xmlNodePtr, keys: [TrustedKey]) {
            let dsig = Namespace.xmlDSig
            guard let method = signature.firstChild(dsig, "SignedInfo")?.firstChild(dsig, "SignatureMethod")?.attribute("Algorithm"),
                let digest = SignatureRecovery.digest(of: method),
                let valueElement = signature.firstChild(dsig, "SignatureValue"), let value = SignatureRecovery.base64Value(valueElement)
            else { return nil }
            var signedDigests: [(key: TrustedKey, digest: [UInt8])] = []
            var verifyingKeys: [TrustedKey] = []
            let rsa = method.contains("#rsa-")
            for key in keys {
                var output = [UInt8](repeating: 0, count: Int(SAML_SHIM_MAX_DIGEST))
                var length = 0
                let status = value.withUnsafeBufferPointer {
                    saml_shim_rsa_signed_digest(key.handle.key, digest, $0.baseAddress, $0.count, &output, &length)
                }
                switch status {
                case 0 where rsa: signedDigests.append((key, Array(output.prefix(length))))
                case 1 where !rsa: verifyingKeys.append(key)
                default: continue
                }
            }
            guard !signedDigests.isEmpty || !verifyingKeys.isEmpty else { return nil }
            (self.digest, self.value, self.signedDigests, self.verifyingKeys) = (digest, value, signedDigests, verifyingKeys)
        }
    }

    /// Checks a candidate layout of `ds:SignedInfo` against the signature value: against the digest an RSA
    /// value carries, or by a signature verification per candidate for other keys (at most
    /// ``maximumSignatureVerifications``).
    struct SignatureTrial {
        static let maximumSignatureVerifications = 3
        let template: CanonicalTemplate
        let signed: SignatureValue

        init?(signedInfo: xmlNodePtr, region: Region, value: SignatureValue) {
            guard let c14nElement = signedInfo.firstChild(Namespace.xmlDSig, "CanonicalizationMethod"),
                let c14n = Canonicalization(algorithm: c14nElement.attribute("Algorithm") ?? "", element: c14nElement, comments: true),
                let template = CanonicalTemplate(region: region, apex: signedInfo, excluded: nil, method: c14n)
            else { return nil }
            (self.template, self.signed) = (template, value)
        }

        /// The key under which the signature value signs the region laid out by `plan`, if any.
        func accepts(_ plan: Plan, scratch: inout [UInt8], work: inout Int, limit: Int, verifications: inout Int) -> TrustedKey? {
            guard template.assemble(plan, into: &scratch, limit: limit) else { return nil }
            work += scratch.count
            var hash = [UInt8](repeating: 0, count: Int(SAML_SHIM_MAX_DIGEST))
            var length = 0
            guard scratch.withUnsafeBufferPointer({ saml_shim_digest_bytes(signed.digest, $0.baseAddress, $0.count, &hash, &length) }) == 0
            else { return nil }
            let computed = hash.prefix(length)
            if let match = signed.signedDigests.first(where: { $0.digest.elementsEqual(computed) }) { return match.key }
            for key in signed.verifyingKeys where verifications < Self.maximumSignatureVerifications {
                verifications += 1
                let valid = signed.value.withUnsafeBufferPointer { signature in
                    hash.withUnsafeBufferPointer {
                        saml_shim_verify_signed_digest(
                            key.handle.key, signed.digest, $0.baseAddress, length, signature.baseAddress, signature.count)
                    }
                }
                if valid == 1 { return key }
            }
            return nil
        }
    }
}
