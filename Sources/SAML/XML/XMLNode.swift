internal import CSAMLShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The namespaces the verifier reads.
enum Namespace {
    static let samlProtocol = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let samlAssertion = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let xmlDSig = "http://www.w3.org/2000/09/xmldsig#"
    static let xmlEnc = "http://www.w3.org/2001/04/xmlenc#"
}

extension UnsafeMutablePointer where Pointee == xmlNode {
    var isElement: Bool { pointee.type == XML_ELEMENT_NODE }

    /// True for an element with this namespace URI and local name.
    func `is`(_ namespace: String, _ localName: String) -> Bool {
        guard isElement, let name = pointee.name, let ns = pointee.ns, let href = ns.pointee.href else { return false }
        return xmlStrEqual(name, localName) != 0 && xmlStrEqual(href, namespace) != 0
    }

    var localName: String { pointee.name.map { String(cString: $0) } ?? "" }

    var namespaceURI: String? { pointee.ns?.pointee.href.map { String(cString: $0) } }

    /// `{namespace}name`, for messages.
    var qualifiedDescription: String {
        let prefix = pointee.ns?.pointee.prefix.map { String(cString: $0) + ":" } ?? ""
        return prefix + localName
    }

    var line: Int { Int(xmlGetLineNo(self)) }

    /// The element children, in document order.
    var elementChildren: [xmlNodePtr] {
        var result: [xmlNodePtr] = []
        var child = pointee.children
        while let current = child {
            if current.isElement { result.append(current) }
            child = current.pointee.next
        }
        return result
    }

    func firstChild(_ namespace: String, _ localName: String) -> xmlNodePtr? {
        var child = pointee.children
        while let current = child {
            if current.is(namespace, localName) { return current }
            child = current.pointee.next
        }
        return nil
    }

    func children(_ namespace: String, _ localName: String) -> [xmlNodePtr] {
        elementChildren.filter { $0.is(namespace, localName) }
    }

    /// The value of an attribute without namespace (SAML's attributes are all unqualified).
    func attribute(_ name: String) -> String? {
        guard let attribute = attributeNode(name) else { return nil }
        var bytes: [UInt8] = []
        var child = attribute.pointee.children
        while let current = child {
            if let content = current.pointee.content {
                bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
            }
            child = current.pointee.next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The attribute node itself, for ID registration.
    func attributeNode(_ name: String) -> xmlAttrPtr? {
        xmlHasNsProp(self, name, nil)
    }

    /// The full text content: every text and CDATA child concatenated, comments and processing
    /// instructions skipped, then trimmed of XML whitespace. Never just the first text node
    /// (CVE-2017-11427 and its siblings read only that).
    var textContent: String {
        var bytes: [UInt8] = []
        var child = pointee.children
        while let current = child {
            if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                let content = current.pointee.content
            {
                bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: strlen(content)))
            }
            child = current.pointee.next
        }
        return XMLWhitespace.trimmed(bytes)
    }

    /// All elements of the subtree, this one included, in document order.
    func descendants(where predicate: (xmlNodePtr) -> Bool) -> [xmlNodePtr] {
        var found: [xmlNodePtr] = []
        var stack: [xmlNodePtr] = [self]
        while let node = stack.popLast() {
            if node.isElement, predicate(node) { found.append(node) }
            var children: [xmlNodePtr] = []
            var child = node.pointee.children
            while let current = child {
                if current.isElement { children.append(current) }
                child = current.pointee.next
            }
            stack.append(contentsOf: children.reversed())
        }
        return found
    }
}

enum XMLWhitespace {
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func trimmed(_ bytes: [UInt8]) -> String {
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    static func trimmed(_ text: String) -> String {
        trimmed(Array(text.utf8))
    }
}
