internal import CSAMLShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The namespaces the verifier reads.
/// Names are `StaticString`s throughout: they reach libxml2 as pointers to constant storage, where a
/// `String` argument would be copied into a temporary C string on every call.
enum Namespace {
    static let samlProtocol: StaticString = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let samlAssertion: StaticString = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let xmlDSig: StaticString = "http://www.w3.org/2000/09/xmldsig#"
    static let xmlEnc: StaticString = "http://www.w3.org/2001/04/xmlenc#"
    static let xmlEnc11: StaticString = "http://www.w3.org/2009/xmlenc11#"
    static let xml: StaticString = "http://www.w3.org/XML/1998/namespace"
    static let samlMetadata: StaticString = "urn:oasis:names:tc:SAML:2.0:metadata"
    static let excC14N: StaticString = "http://www.w3.org/2001/10/xml-exc-c14n#"
}

/// libxml2's NUL-terminated names compared with a constant inline, without a call into libxml2 per
/// comparison (the verifier compares names on every element it looks at).
enum XMLName {
    @inline(__always)
    static func equals(_ name: UnsafePointer<xmlChar>, _ constant: StaticString) -> Bool {
        let expected = constant.utf8Start
        let count = constant.utf8CodeUnitCount
        guard name.pointee == expected.pointee else { return false }
        if count > 16 {
            // Namespace URIs: libc's vectorised comparison, which stops at `name`'s terminator.
            let cName = UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self)
            let cExpected = UnsafeRawPointer(expected).assumingMemoryBound(to: CChar.self)
            return strncmp(cName, cExpected, count) == 0 && name[count] == 0
        }
        // `expected` holds no NUL: a shorter `name` differs at its terminator, before anything past it is read.
        var index = 0
        while index < count {
            guard name[index] == expected[index] else { return false }
            index += 1
        }
        return name[count] == 0
    }
}

/// The element children of a node, walked through the sibling pointers (no allocation).
struct ElementChildren: Sequence, IteratorProtocol {
    private var upcoming: xmlNodePtr?

    init(_ parent: xmlNodePtr) {
        upcoming = parent.pointee.children
    }

    mutating func next() -> xmlNodePtr? {
        while let current = upcoming {
            upcoming = current.pointee.next
            if current.pointee.type == XML_ELEMENT_NODE { return current }
        }
        return nil
    }
}

extension UnsafeMutablePointer where Pointee == xmlNode {
    var isElement: Bool { pointee.type == XML_ELEMENT_NODE }

    /// True for an element with this namespace URI and local name.
    func `is`(_ namespace: StaticString, _ localName: StaticString) -> Bool {
        guard isElement, let name = pointee.name, let ns = pointee.ns, let href = ns.pointee.href else { return false }
        return XMLName.equals(name, localName) && XMLName.equals(href, namespace)
    }

    var localName: String { pointee.name.map { String(cString: $0) } ?? "" }

    /// This element and its element ancestors counted: 1 for the document element.
    var elementDepth: Int {
        var depth = 0
        var ancestor: xmlNodePtr? = self
        while let current = ancestor, current.isElement {
            depth += 1
            ancestor = current.pointee.parent
        }
        return depth
    }

    /// The namespace declarations on this element and its ancestors (what a fragment parsed here has in
    /// scope).
    var namespacesInScope: Int {
        var count = 0
        var ancestor: xmlNodePtr? = self
        while let current = ancestor, current.isElement {
            var ns = current.pointee.nsDef
            while let declaration = ns {
                count += 1
                ns = declaration.pointee.next
            }
            ancestor = current.pointee.parent
        }
        return count
    }

    /// `prefix:name`, for messages: one string written in place.
    var qualifiedDescription: String {
        guard let prefix = pointee.ns?.pointee.prefix else { return localName }
        let prefixLength = strlen(prefix)
        let nameLength = pointee.name.map { strlen($0) } ?? 0
        return String(unsafeUninitializedCapacity: prefixLength + 1 + nameLength) { buffer in
            guard let base = buffer.baseAddress else { return 0 }
            memcpy(base, prefix, prefixLength)
            base[prefixLength] = UInt8(ascii: ":")
            if let name = pointee.name { memcpy(base + prefixLength + 1, name, nameLength) }
            return prefixLength + 1 + nameLength
        }
    }

    /// `/prefix:name/...` from the root element down to this one, for messages and reports.
    var elementPath: String {
        var names: [String] = []
        var current: xmlNodePtr? = self
        while let element = current, element.isElement {
            names.append(element.qualifiedDescription)
            current = element.pointee.parent
        }
        return "/" + names.reversed().joined(separator: "/")
    }

    var elementChildren: ElementChildren { ElementChildren(self) }

    func firstChild(_ namespace: StaticString, _ localName: StaticString) -> xmlNodePtr? {
        elementChildren.first { $0.is(namespace, localName) }
    }

    func children(_ namespace: StaticString, _ localName: StaticString) -> [xmlNodePtr] {
        elementChildren.filter { $0.is(namespace, localName) }
    }

    /// The attribute node without namespace (SAML's attributes are all unqualified) or in `namespace`:
    /// what `xmlHasNsProp(element, name, namespace)` returns for a document without DTD.
    func attributeNode(_ name: StaticString, namespace: StaticString? = nil) -> xmlAttrPtr? {
        guard isElement else { return nil }
        var attribute = pointee.properties
        while let current = attribute {
            if current.is(name, namespace: namespace) { return current }
            attribute = current.pointee.next
        }
        return nil
    }

    /// The value of an attribute without namespace.
    func attribute(_ name: StaticString) -> String? {
        attributeNode(name).map(\.value)
    }

    /// The value of an attribute without namespace; `previous` itself (no new string) when the value
    /// has the same bytes, and otherwise the value, which becomes `previous`. For values that repeat
    /// from element to element.
    func attribute(_ name: StaticString, sameAs previous: inout String?) -> String? {
        guard let node = attributeNode(name) else { return nil }
        let gathered = Text.concatenated(node.pointee.children, textOnly: false)
        if case .single(let bytes) = gathered, var last = previous {
            let length = strlen(bytes)
            let same = last.withUTF8 { utf8 in
                guard utf8.count == length, let base = utf8.baseAddress else { return utf8.count == length }
                return memcmp(base, bytes, length) == 0
            }
            if same { return last }
        }
        let value = Text.string(gathered)
        previous = value
        return value
    }

    /// The full text content: every text and CDATA child concatenated, comments and processing
    /// instructions skipped, then trimmed of XML whitespace. Never just the first text node
    /// (CVE-2017-11427 and its siblings read only that).
    var textContent: String {
        XMLWhitespace.trimmed(Text.concatenated(pointee.children, textOnly: true))
    }

    /// The bytes of an `xs:base64Binary` element (CipherValue, X509Certificate, Modulus...): its text
    /// content with XML whitespace, spaces included, allowed anywhere.
    func base64Content(maximumBytes: Int) throws -> [UInt8] {
        var repairs: [SAMLResponseDecoder.Repair] = []
        let text = textContent.utf8.filter { !XMLWhitespace.isWhitespace($0) }
        return try Base64Decoding.decode(text, maximumBytes: maximumBytes, repairs: &repairs)
    }

    /// Every node of the subtree (elements, text, comments, ...), this one included, in document order,
    /// with its depth (1 for this node); `body` returns false to skip a node's children. A walk over the
    /// tree's own pointers, without allocation.
    func walk(_ body: (xmlNodePtr, Int) throws -> Bool) rethrows {
        var node: xmlNodePtr? = self
        var depth = 1
        while let current = node {
            if try body(current, depth), let child = current.pointee.children {
                node = child
                depth += 1
                continue
            }
            // Next sibling, or the next sibling of the nearest ancestor that has one, staying inside self.
            var climber: xmlNodePtr? = current
            node = nil
            while let up = climber, up != self {
                if let sibling = up.pointee.next {
                    node = sibling
                    break
                }
                climber = up.pointee.parent
                depth -= 1
            }
        }
    }

    /// Every element of the subtree, this one included, in document order; `body` returns false to
    /// skip an element's children.
    func forEachElement(_ body: (xmlNodePtr) throws -> Bool) rethrows {
        try walk { node, _ in node.isElement ? try body(node) : false }
    }

    /// All elements of the subtree satisfying `predicate`, in document order.
    func descendants(where predicate: (xmlNodePtr) -> Bool) -> [xmlNodePtr] {
        var found: [xmlNodePtr] = []
        forEachElement { element in
            if predicate(element) { found.append(element) }
            return true
        }
        return found
    }
}

extension UnsafeMutablePointer where Pointee == xmlAttr {
    /// The attribute's value (its text children concatenated, entity-free since DTDs are refused).
    var value: String {
        Text.string(Text.concatenated(pointee.children, textOnly: false))
    }

    /// `body` on the attribute's value as a C string, in place when the value is one text node (as
    /// libxml2's ID table takes it).
    func withValue<Result>(_ body: (UnsafePointer<xmlChar>) throws -> Result) rethrows -> Result {
        try Text.concatenated(pointee.children, textOnly: false).withCString(body)
    }

    /// True for an attribute with this local name and no namespace (`namespace == nil`) or this one.
    func `is`(_ localName: StaticString, namespace: StaticString?) -> Bool {
        guard let name = pointee.name, XMLName.equals(name, localName) else { return false }
        guard let namespace else { return pointee.ns == nil }
        guard let href = pointee.ns?.pointee.href else { return false }
        return XMLName.equals(href, namespace)
    }
}

/// Text gathered from libxml2 node lists.
enum Text {
    /// The content of the nodes of a sibling list. With `textOnly`, only text and CDATA nodes count.
    /// Returns a pointer to the single node's content when there is exactly one (no copy), or a buffer.
    static func concatenated(_ first: xmlNodePtr?, textOnly: Bool) -> Gathered {
        var node = first
        var single: UnsafePointer<xmlChar>?
        var buffer: [UInt8]?
        while let current = node {
            node = current.pointee.next
            let type = current.pointee.type
            guard !textOnly || type == XML_TEXT_NODE || type == XML_CDATA_SECTION_NODE, let content = current.pointee.content else {
                continue
            }
            if buffer != nil {
                buffer!.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
            } else if let previous = single {
                buffer = Array(UnsafeBufferPointer(start: previous, count: strlen(previous)))
                buffer!.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
            } else {
                single = UnsafePointer(content)
            }
        }
        if let buffer { return .buffer(buffer) }
        if let single { return .single(single) }
        return .buffer([])
    }

    /// True when `content` is empty or XML whitespace only.
    static func isBlank(_ content: UnsafePointer<xmlChar>?) -> Bool {
        guard var byte = content else { return true }
        while byte.pointee != 0 {
            guard XMLWhitespace.isWhitespace(byte.pointee) else { return false }
            byte += 1
        }
        return true
    }

    enum Gathered {
        case single(UnsafePointer<xmlChar>)
        case buffer([UInt8])

        /// `body` on the gathered bytes, in place.
        func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
            switch self {
            case .single(let pointer): body(UnsafeBufferPointer(start: pointer, count: strlen(pointer)))
            case .buffer(let bytes): bytes.withUnsafeBufferPointer(body)
            }
        }

        /// `body` on the gathered bytes NUL-terminated: in place when they are one node's.
        func withCString<Result>(_ body: (UnsafePointer<xmlChar>) throws -> Result) rethrows -> Result {
            switch self {
            case .single(let pointer): try body(pointer)
            case .buffer(let bytes): try (bytes + [0]).withUnsafeBufferPointer { try body($0.baseAddress!) }
            }
        }
    }

    static func string(_ gathered: Gathered) -> String {
        switch gathered {
        case .single(let pointer): String(cString: pointer)
        case .buffer(let bytes): String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension String {
    /// Whether both hold the same UTF-8 bytes: linear, whatever they hold. Swift's `==` and hashing
    /// compare canonical equivalence, which normalises, and normalising a run of combining marks is
    /// quadratic in its length: hashing `"_a"` followed by 16,000 pairs of combining marks takes about half
    /// a second, one of the 512 KiB an attribute value may be, half a minute. XML, libxml2 and libxmlsec1
    /// compare bytes, so does the verifier wherever both sides can come from the document, and nothing
    /// from a document before its signature is proven is hashed as a String.
    package func hasSameBytes(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var (lhs, rhs) = (self, other)
        return lhs.withUTF8 { lhs in rhs.withUTF8 { rhs in lhs.count == 0 || memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0 } }
    }
}

enum XMLWhitespace {
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func trimmed(_ gathered: Text.Gathered) -> String {
        gathered.withBytes(trimmed)
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[trimmedRange(bytes)]), as: UTF8.self)
    }

    /// The indices of `bytes` without the XML whitespace at either end: the one trimmer.
    static func trimmedRange<C: BidirectionalCollection<UInt8>>(_ bytes: C) -> Range<C.Index> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isWhitespace(bytes[start]) { start = bytes.index(after: start) }
        while end > start, isWhitespace(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return start..<end
    }

    /// `text` itself (no copy) when it has no XML whitespace at either end.
    static func trimmed(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            let range = trimmedRange(utf8)
            return range.count == utf8.count ? nil : String(decoding: UnsafeBufferPointer(rebasing: utf8[range]), as: UTF8.self)
        } ?? text
    }
}
