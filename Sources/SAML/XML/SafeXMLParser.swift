internal import CSAMLShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses untrusted XML with libxml2, safely.
///
/// Options: no entity substitution (`XML_PARSE_NOENT` is off), no DTD loading or attribute defaulting,
/// no network (`XML_PARSE_NONET`), no `XML_PARSE_HUGE`, no error printing. Any DOCTYPE is rejected, as
/// is any entity reference left in the tree; the caps of ``XMLParserLimits`` are enforced. Every failure
/// is a ``SAMLError`` naming the line and column where libxml2 gave up.
enum SafeXMLParser {
    /// CDATA sections are kept as such (no `XML_PARSE_NOCDATA`): text content joins them explicitly.
    static let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)

    static func parse(_ bytes: UnsafeRawBufferPointer, limits: XMLParserLimits) throws -> XMLTree {
        try XMLSecRuntime.initialize()
        guard bytes.count <= limits.maximumDocumentBytes else {
            throw SAMLError(.xmlTooLarge, "expected at most \(limits.maximumDocumentBytes) bytes of XML, found \(bytes.count)")
        }
        guard bytes.count > 0, bytes.count <= Int(Int32.max) else {
            throw SAMLError(.xmlMalformed, "expected an XML document, found \(bytes.count) bytes")
        }
        // Refuse a DOCTYPE before libxml2 reads its internal subset (entity declarations included).
        if Prolog.hasDoctype(bytes) {
            throw SAMLError(.xmlDoctypeForbidden, "expected no DOCTYPE, found one (DTDs and entities are refused)")
        }
        guard let context = xmlNewParserCtxt() else {
            throw SAMLError(.xmlMalformed, "expected a libxml2 parser context, found none (out of memory)")
        }
        defer { xmlFreeParserCtxt(context) }
        let document = bytes.withMemoryRebound(to: CChar.self) { chars in
            xmlCtxtReadMemory(context, chars.baseAddress, Int32(chars.count), nil, "UTF-8", options)
        }
        guard let document else {
            throw parseError(context)
        }
        let tree = XMLTree(document)
        if document.pointee.intSubset != nil || document.pointee.extSubset != nil {
            throw SAMLError(.xmlDoctypeForbidden, "expected no DOCTYPE, found one (DTDs and entities are refused)")
        }
        guard let root = xmlDocGetRootElement(document) else {
            throw SAMLError(.xmlMalformed, "expected a root element, found none")
        }
        try checkLimits(root, limits: limits)
        return tree
    }

    private static func parseError(_ context: xmlParserCtxtPtr) -> SAMLError {
        guard let error = xmlCtxtGetLastError(context) else {
            return SAMLError(.xmlMalformed, "expected well-formed XML, libxml2 refused it without a reason")
        }
        let line = error.pointee.line
        let column = error.pointee.int2
        var reason = error.pointee.message.map { String(cString: $0) } ?? "error \(error.pointee.code)"
        while reason.last == "\n" { reason.removeLast() }
        let code: SAMLError.Code =
            switch Int(error.pointee.code) {
            case Int(XML_ERR_ENTITY_LOOP.rawValue), Int(XML_ERR_UNDECLARED_ENTITY.rawValue),
                Int(XML_WAR_UNDECLARED_ENTITY.rawValue), Int(XML_ERR_ENTITY_PE_INTERNAL.rawValue):
                .xmlEntityForbidden
            default: .xmlMalformed
            }
        return SAMLError(code, "expected well-formed XML, found at line \(line), column \(column): \(SAMLError.quote(reason))")
    }

    /// Walks the tree once: depth, element count, attributes per element, no entity references.
    static func checkLimits(_ root: xmlNodePtr, limits: XMLParserLimits) throws {
        var elements = 0
        try root.walk { node, depth in
            switch node.pointee.type {
            case XML_ELEMENT_NODE:
                elements += 1
                guard elements <= limits.maximumElements else {
                    throw SAMLError(.xmlLimitExceeded, "expected at most \(limits.maximumElements) elements, found more")
                }
                guard depth <= limits.maximumDepth else {
                    throw SAMLError(.xmlLimitExceeded, "expected nesting of at most \(limits.maximumDepth), found deeper at line \(xmlGetLineNo(node))")
                }
                var attributes = 0
                var attribute = node.pointee.properties
                while let next = attribute {
                    attributes += 1
                    attribute = next.pointee.next
                }
                guard attributes <= limits.maximumAttributesPerElement else {
                    throw SAMLError(
                        .xmlLimitExceeded,
                        "expected at most \(limits.maximumAttributesPerElement) attributes on an element, found \(attributes) at line \(xmlGetLineNo(node))"
                    )
                }
                return true
            case XML_ENTITY_REF_NODE, XML_ENTITY_NODE, XML_ENTITY_DECL, XML_DTD_NODE:
                throw SAMLError(.xmlEntityForbidden, "expected no entities, found one at line \(xmlGetLineNo(node))")
            default:
                return false
            }
        }
    }
}

/// A parsed document; frees the libxml2 tree when released. Used by one verification at a time.
final class XMLTree {
    let document: xmlDocPtr

    init(_ document: xmlDocPtr) {
        self.document = document
    }

    deinit {
        xmlFreeDoc(document)
    }

    var root: xmlNodePtr {
        // Checked in `SafeXMLParser.parse` before the tree is handed out.
        xmlDocGetRootElement(document)!
    }
}

/// Scans the prolog (byte order mark, XML declaration, comments, processing instructions, whitespace)
/// for `<!DOCTYPE`, without parsing anything else.
enum Prolog {
    static func hasDoctype(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func starts(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard i + count <= bytes.count else { return false }
            return memcmp(bytes.baseAddress! + i, text.utf8Start, count) == 0
        }
        func skip(past terminator: StaticString) -> Bool {
            let count = terminator.utf8CodeUnitCount
            while i + count <= bytes.count {
                if memcmp(bytes.baseAddress! + i, terminator.utf8Start, count) == 0 {
                    i += count
                    return true
                }
                i += 1
            }
            return false
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                i += 1
            } else if starts("<?") {
                guard skip(past: "?>") else { return false }
            } else if starts("<!--") {
                guard skip(past: "-->") else { return false }
            } else {
                return starts("<!DOCTYPE")
            }
        }
        return false
    }
}
