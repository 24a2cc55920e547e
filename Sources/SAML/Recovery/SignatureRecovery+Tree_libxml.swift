internal import CSAMLShim
import CookbookEncoding

// The tree edits of recovery: the region a signature covers, the gaps the cookbook collapsed in it, and
// a plan that makes one layout (RecoveryLayouts.swift) in the parsed document and reverts it.

extension SignatureRecovery {
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
