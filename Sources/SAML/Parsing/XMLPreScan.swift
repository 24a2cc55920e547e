#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One linear pass over raw XML bytes that enforces ``XMLParserLimits`` before libxml2 parses them.
///
/// libxml2 2.9 checks every attribute of an element against every other one (duplicates, namespace
/// bindings): 150,000 attributes on one element, or 70,000 namespace declarations, cost seconds. This
/// scan counts tags, attributes, namespace declarations, depth and character-data runs with `memchr`
/// jumps and stops at the first cap exceeded, so that a 1 MiB request costs about a millisecond whatever
/// its shape. It does not validate XML (libxml2 does that next); where it cannot follow the markup it
/// refuses the document as malformed rather than guess, so nothing it did not count reaches libxml2.
/// It also refuses any DOCTYPE or other `<!` declaration and any entity reference other than the five
/// predefined ones (no DTD can declare others).
///
/// Every node counts against ``XMLParserLimits/maximumNodes``: elements, runs of text, CDATA sections,
/// comments and processing instructions. Outside the document element of a document, where a Reference
/// with an empty URI would take them in (XMLDSig 4.3.3.2: libxmlsec1 builds that node set with a linear
/// duplicate check per node, then scans it per node canonicalised), a processing instruction is refused
/// (the XML declaration is not one) and comments are capped by
/// ``XMLParserLimits/maximumCommentsOutsideDocumentElement``.
enum XMLPreScan {
    private static let lt = UInt8(ascii: "<"), gt = UInt8(ascii: ">"), slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?"), bang = UInt8(ascii: "!"), equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\""), apostrophe = UInt8(ascii: "'"), ampersand = UInt8(ascii: "&")

    /// - Parameters:
    ///   - depth: the depth of the element the bytes will be parsed into (0 for a document).
    ///   - namespacesInScope: the namespace declarations in scope there (0 for a document).
    /// - Returns: whether the text may hold non-starters once read: the bytes hold one, or a character
    ///   reference (``StreamSafeTree`` checks the parsed text then).
    @discardableResult
    static func check(
        _ bytes: UnsafeRawBufferPointer, limits: XMLParserLimits, depth initialDepth: Int = 0, namespacesInScope: Int = 0
    ) throws -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        let end = bytes.count
        var i = 0
        var depth = initialDepth
        // The declarations of each open element, and their sum with those of the context.
        var declaredByOpen: [Int] = []
        declaredByOpen.reserveCapacity(min(limits.maximumDepth, 256))
        var inScope = namespacesInScope
        var elements = 0
        var attributesTotal = 0
        var namespacesTotal = 0
        var textRun = 0
        var nodes = 0
        var commentsOutside = 0
        /// Outside the document element: a document (not a fragment parsed into an element) at depth 0.
        var outsideDocumentElement: Bool { initialDepth == 0 && depth == 0 }

        func find(_ byte: UInt8, from start: Int, before limit: Int? = nil) -> Int? {
            let limit = limit ?? end
            guard start < limit, let hit = memchr(base + start, Int32(byte), limit - start) else { return nil }
            return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
        /// The index just past `terminator`, searched from `start`.
        func skip(past terminator: StaticString, from start: Int) -> Int? {
            let length = terminator.utf8CodeUnitCount
            let first = terminator.utf8Start.pointee
            var at = start
            while let hit = find(first, from: at) {
                guard hit + length <= end else { return nil }
                if memcmp(base + hit, terminator.utf8Start, length) == 0 { return hit + length }
                at = hit + 1
            }
            return nil
        }
        func starts(_ text: StaticString, at index: Int) -> Bool {
            let length = text.utf8CodeUnitCount
            return index + length <= end && memcmp(base + index, text.utf8Start, length) == 0
        }
        func line(_ index: Int) -> Int {
            var count = 1
            var at = 0
            while let hit = find(0x0A, from: at, before: index) {
                count += 1
                at = hit + 1
            }
            return count
        }
        func malformed(_ index: Int, _ expected: String) -> SAMLError {
            SAMLError(.xmlMalformed, "expected \(expected), found something else at line \(line(index)) (byte \(index))")
        }
        func exceeded(_ what: String, _ limit: Int, _ index: Int) -> SAMLError {
            SAMLError(.xmlLimitExceeded, "expected at most \(limit) \(what), found more at line \(line(index)) (byte \(index))")
        }
        var run = 0
        var nonStarters = 0
        var characterReferences = false
        if let index = StreamSafeText.firstViolation(
            UnsafeBufferPointer(start: base, count: end), continuing: &run, nonStarters: &nonStarters)
        {
            throw exceeded(
                "non-starters (combining characters) in a row: Unicode's stream-safe text, UAX #15",
                StreamSafeText.maximumNonStarters, index)
        }
        func addNode(at index: Int) throws {
            nodes += 1
            guard nodes <= limits.maximumNodes else { throw exceeded("nodes", limits.maximumNodes, index) }
        }
        func addText(_ count: Int, at index: Int) throws {
            textRun += count
            guard textRun <= limits.maximumTextBytes else {
                throw exceeded("bytes of character data in one run", limits.maximumTextBytes, index)
            }
        }
        // The next `&` of the document at or after where the scan is: ranges are checked in document
        // order, so one search per `&` serves them all, and text or a value without one (nearly all)
        // costs no search. A `&` before a range's start lies in markup skipped on the way (a comment, a
        // CDATA section, a processing instruction): not a reference there.
        var nextAmpersand = find(ampersand, from: 0) ?? end
        /// Entity references in [from, to): only character references and the five predefined names.
        func checkReferences(from: Int, to: Int) throws {
            while nextAmpersand < to {
                let amp = nextAmpersand
                nextAmpersand = find(ampersand, from: amp + 1) ?? end
                guard amp >= from else { continue }
                let at = amp + 1
                guard at < to, base[at] != UInt8(ascii: "#") else {
                    characterReferences = true
                    continue
                }
                guard let semicolon = find(UInt8(ascii: ";"), from: at, before: min(to, at + 5)) else {
                    throw SAMLError(.xmlEntityForbidden, "expected no entity references, found one at line \(line(amp))")
                }
                let name = UnsafeRawBufferPointer(start: base + at, count: semicolon - at)
                guard
                    name.elementsEqual("lt".utf8) || name.elementsEqual("gt".utf8) || name.elementsEqual("amp".utf8)
                        || name.elementsEqual("quot".utf8) || name.elementsEqual("apos".utf8)
                else {
                    throw SAMLError(.xmlEntityForbidden, "expected no entity references, found one at line \(line(amp))")
                }
            }
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
        /// A qualified name in [from, to): its prefix (the part before the first colon; for `xmlns:p`, the
        /// declared `p`) and its local name within their caps.
        let shortName = min(limits.maximumPrefixBytes, limits.maximumNameBytes)
        func checkName(from: Int, to: Int, what: String) throws {
            guard to - from > shortName else { return }  // neither part can be past its cap
            guard let colon = find(UInt8(ascii: ":"), from: from, before: to) else {
                guard to - from <= limits.maximumNameBytes else {
                    throw exceeded("bytes in an \(what) name", limits.maximumNameBytes, from)
                }
                return
            }
            guard colon - from <= limits.maximumPrefixBytes else {
                throw exceeded("bytes in a namespace prefix", limits.maximumPrefixBytes, from)
            }
            let local = to - colon - 1
            let declared = colon - from == 5 && starts("xmlns", at: from)
            guard local <= (declared ? limits.maximumPrefixBytes : limits.maximumNameBytes) else {
                throw declared
                    ? exceeded("bytes in a namespace prefix", limits.maximumPrefixBytes, from)
                    : exceeded("bytes in an \(what) name", limits.maximumNameBytes, from)
            }
        }
        /// Whether the attribute name in [from, to) is `PrefixList` (exclusive C14N's InclusiveNamespaces).
        func isPrefixList(from: Int, to: Int) -> Bool {
            to - from == 10 && starts("PrefixList", at: from)
        }
        /// Every space-separated entry of a PrefixList value in [from, to) within the prefix cap.
        func checkPrefixList(from: Int, to: Int) throws {
            var entryStart = from
            for index in from...to where index == to || isSpace(base[index]) {
                guard index - entryStart <= limits.maximumPrefixBytes else {
                    throw exceeded("bytes in a PrefixList entry", limits.maximumPrefixBytes, entryStart)
                }
                entryStart = index + 1
            }
        }

        /// Reads one start tag from `<`; returns the index after its `>`.
        func startTag(at start: Int) throws -> Int {
            elements += 1
            guard elements <= limits.maximumElements else { throw exceeded("elements", limits.maximumElements, start) }
            guard depth + 1 <= limits.maximumDepth else { throw exceeded("levels of nesting", limits.maximumDepth, start) }
            try addNode(at: start)
            textRun = 0
            var at = start + 1
            while at < end, !isSpace(base[at]), base[at] != gt, base[at] != slash { at += 1 }
            guard at > start + 1 else { throw malformed(start, "an element name after '<'") }
            try checkName(from: start + 1, to: at, what: "element")
            var attributes = 0
            var namespaces = 0
            while true {
                while at < end, isSpace(base[at]) { at += 1 }
                guard at < end else { throw malformed(start, "'>' closing a start tag") }
                if base[at] == gt || base[at] == slash {
                    guard inScope + namespaces <= limits.maximumNamespaceDeclarationsInScope else {
                        throw exceeded("namespace declarations in scope", limits.maximumNamespaceDeclarationsInScope, start)
                    }
                }
                if base[at] == gt {
                    depth += 1
                    declaredByOpen.append(namespaces)
                    inScope += namespaces
                    return at + 1
                }
                if base[at] == slash {
                    guard at + 1 < end, base[at + 1] == gt else { throw malformed(at, "'/>'") }
                    return at + 2
                }
                let nameStart = at
                while at < end, !isSpace(base[at]), base[at] != equals, base[at] != gt, base[at] != slash { at += 1 }
                let nameLength = at - nameStart
                guard nameLength > 0 else { throw malformed(at, "an attribute name") }
                attributes += 1
                attributesTotal += 1
                try checkName(from: nameStart, to: at, what: "attribute")
                let declaration = starts("xmlns", at: nameStart) && (nameLength == 5 || base[nameStart + 5] == UInt8(ascii: ":"))
                if declaration {
                    namespaces += 1
                    namespacesTotal += 1
                    guard namespaces <= limits.maximumNamespaceDeclarationsPerElement else {
                        throw exceeded("namespace declarations on an element", limits.maximumNamespaceDeclarationsPerElement, start)
                    }
                    guard namespacesTotal <= limits.maximumNamespaceDeclarations else {
                        throw exceeded("namespace declarations", limits.maximumNamespaceDeclarations, start)
                    }
                }
                guard attributes <= limits.maximumAttributesPerElement else {
                    throw exceeded("attributes on an element", limits.maximumAttributesPerElement, start)
                }
                guard attributesTotal <= limits.maximumAttributes else {
                    throw exceeded("attributes", limits.maximumAttributes, start)
                }
                while at < end, isSpace(base[at]) { at += 1 }
                guard at < end, base[at] == equals else { throw malformed(at, "'=' after an attribute name") }
                at += 1
                while at < end, isSpace(base[at]) { at += 1 }
                guard at < end, base[at] == quote || base[at] == apostrophe else { throw malformed(at, "a quoted attribute value") }
                guard let close = find(base[at], from: at + 1) else { throw malformed(at, "the end of an attribute value") }
                guard close - at <= limits.maximumTextBytes else {
                    throw exceeded("bytes in an attribute value", limits.maximumTextBytes, at)
                }
                try checkReferences(from: at + 1, to: close)
                if declaration, close - at - 1 > limits.maximumNamespaceURIBytes {
                    throw exceeded("bytes in a namespace URI", limits.maximumNamespaceURIBytes, at)
                }
                if isPrefixList(from: nameStart, to: nameStart + nameLength) {
                    try checkPrefixList(from: at + 1, to: close)
                }
                at = close + 1
            }
        }

        while i < end {
            if base[i] != lt {
                let next = find(lt, from: i) ?? end
                try checkReferences(from: i, to: next)
                if textRun == 0 { try addNode(at: i) }
                try addText(next - i, at: i)
                i = next
                continue
            }
            guard i + 1 < end else { throw malformed(i, "markup after '<'") }
            switch base[i + 1] {
            case slash:
                guard let close = find(gt, from: i + 2) else { throw malformed(i, "'>' closing an end tag") }
                depth -= 1
                inScope -= declaredByOpen.popLast() ?? 0
                textRun = 0
                i = close + 1
            case question:
                guard let after = skip(past: "?>", from: i + 2) else { throw malformed(i, "'?>' closing a processing instruction") }
                guard after - i <= limits.maximumTextBytes else {
                    throw exceeded("bytes in a processing instruction", limits.maximumTextBytes, i)
                }
                if outsideDocumentElement {
                    // The XML declaration, first in the document (after a byte order mark at most), is not a
                    // processing instruction; libxml2 refuses `<?xml` anywhere else.
                    let declaration = starts("<?xml", at: i) && i + 5 < end && isSpace(base[i + 5])
                    guard declaration, i == 0 || (i == 3 && starts("\u{FEFF}", at: 0)) else {
                        throw SAMLError(
                            .xmlProcessingInstructionForbidden,
                            "expected no processing instruction outside the document element, found one at line \(line(i))")
                    }
                } else {
                    try addNode(at: i)
                }
                textRun = 0
                i = after
            case bang:
                if starts("<!--", at: i) {
                    guard let after = skip(past: "-->", from: i + 4) else { throw malformed(i, "'-->' closing a comment") }
                    guard after - i <= limits.maximumTextBytes else { throw exceeded("bytes in a comment", limits.maximumTextBytes, i) }
                    if outsideDocumentElement {
                        commentsOutside += 1
                        guard commentsOutside <= limits.maximumCommentsOutsideDocumentElement else {
                            throw exceeded(
                                "comments outside the document element", limits.maximumCommentsOutsideDocumentElement, i)
                        }
                    }
                    try addNode(at: i)
                    textRun = 0
                    i = after
                } else if starts("<![CDATA[", at: i) {
                    guard let after = skip(past: "]]>", from: i + 9) else { throw malformed(i, "']]>' closing a CDATA section") }
                    try addNode(at: i)
                    try addText(after - i - 12, at: i)
                    i = after
                } else {
                    throw SAMLError(.xmlDoctypeForbidden, "expected no DOCTYPE or other declaration, found one at line \(line(i))")
                }
            default:
                i = try startTag(at: i)
            }
        }
        return nonStarters > 0 || characterReferences
    }
}
