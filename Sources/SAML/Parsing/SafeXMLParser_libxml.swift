internal import CSAMLShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Parses untrusted XML with libxml2, safely.
///
/// Options: no entity substitution (`XML_PARSE_NOENT` is off), no DTD loading or attribute defaulting,
/// no network (`XML_PARSE_NONET`), no `XML_PARSE_HUGE`, no error printing; read as UTF-8 (a UTF-16
/// document transcoded first, `UTF16Transcoding`), with the
/// calling thread's parser context (`saml_shim_parse_document`, parser.c). Before libxml2 sees a byte,
/// ``XMLPreScan`` enforces the caps of ``XMLParserLimits`` in one linear pass and refuses any DOCTYPE and
/// any entity reference; after it, ``StreamSafeTree`` checks the text as the verifier will read it.
/// Every failure is a ``SAMLError`` naming the line (and column, for libxml2's) where the input was
/// refused.
enum SafeXMLParser {
    /// CDATA sections are kept as such (no `XML_PARSE_NOCDATA`): text content joins them explicitly.
    static let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)

    static func parse(_ bytes: UnsafeRawBufferPointer, limits: XMLParserLimits) throws -> XMLTree {
        // A UTF-16 document is parsed as its UTF-8 form, under the same pre-scan and caps.
        if let utf8 = try UTF16Transcoding.utf8(bytes, maximumBytes: limits.maximumDocumentBytes) {
            return try utf8.withUnsafeBytes { try parse($0, limits: limits) }
        }
        try XMLSecRuntime.initialize()
        guard bytes.count <= limits.maximumDocumentBytes else {
            throw SAMLError(.xmlTooLarge, "expected at most \(limits.maximumDocumentBytes) bytes of XML, found \(bytes.count)")
        }
        guard bytes.count > 0, bytes.count <= Int(Int32.max) else {
            throw SAMLError(.xmlMalformed, "expected an XML document, found \(bytes.count) bytes")
        }
        let textNeedsReading = try XMLPreScan.check(bytes, limits: limits)
        var error = saml_shim_parse_error()
        let document = bytes.withMemoryRebound(to: CChar.self) { chars in
            saml_shim_parse_document(chars.baseAddress, Int32(chars.count), options, &error)
        }
        guard let document else {
            throw parseError(code: error.code, line: error.line, column: error.column, message: Self.message(of: &error))
        }
        let tree = XMLTree(document)
        if document.pointee.intSubset != nil || document.pointee.extSubset != nil {
            throw SAMLError(.xmlDoctypeForbidden, "expected no DOCTYPE, found one (DTDs and entities are refused)")
        }
        guard xmlDocGetRootElement(document) != nil else {
            throw SAMLError(.xmlMalformed, "expected a root element, found none")
        }
        if textNeedsReading { try StreamSafeTree.check(document.pointee.children) }
        return tree
    }

    /// Parses `bytes` (decrypted plaintext) as content of `context`, whose in-scope namespace declarations
    /// apply, with the same options and caps as a document. Returns the parsed node list, not yet linked
    /// into the tree; the caller links or frees it.
    static func parseFragment(_ bytes: UnsafeRawBufferPointer, in context: xmlNodePtr, limits: XMLParserLimits) throws -> xmlNodePtr {
        guard bytes.count > 0, bytes.count <= limits.maximumDocumentBytes else {
            throw SAMLError(.xmlTooLarge, "expected between 1 and \(limits.maximumDocumentBytes) bytes of XML, found \(bytes.count)")
        }
        let textNeedsReading = try XMLPreScan.check(
            bytes, limits: limits, depth: context.elementDepth, namespacesInScope: context.namespacesInScope)
        var list: xmlNodePtr?
        let status = bytes.withMemoryRebound(to: CChar.self) { chars in
            xmlParseInNodeContext(context, chars.baseAddress, Int32(chars.count), options, &list)
        }
        guard status == XML_ERR_OK, let list else {
            if let list { xmlFreeNodeList(list) }
            throw parseError(code: 0, line: 0, column: 0, message: nil)
        }
        do {
            if textNeedsReading { try StreamSafeTree.check(list) }
        } catch {
            xmlFreeNodeList(list)
            throw error
        }
        return list
    }

    private static func message(of error: inout saml_shim_parse_error) -> String? {
        withUnsafeBytes(of: &error.message) { bytes in
            bytes.first == 0 ? nil : String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func parseError(code: Int32, line: Int32, column: Int32, message: String?) -> SAMLError {
        guard code != 0 else {
            return SAMLError(.xmlMalformed, "expected well-formed XML, libxml2 refused it without a reason")
        }
        var reason = message ?? "error \(code)"
        while reason.last == "\n" { reason.removeLast() }
        let samlCode: SAMLError.Code =
            switch Int(code) {
            case Int(XML_ERR_ENTITY_LOOP.rawValue), Int(XML_ERR_UNDECLARED_ENTITY.rawValue),
                Int(XML_WAR_UNDECLARED_ENTITY.rawValue), Int(XML_ERR_ENTITY_PE_INTERNAL.rawValue):
                .xmlEntityForbidden
            default: .xmlMalformed
            }
        return SAMLError(samlCode, "expected well-formed XML, found at line \(line), column \(column): \(SAMLError.quote(reason))")
    }
}

/// A parsed document; frees the libxml2 tree when released. Used by one verification at a time.
final class XMLTree {
    let document: xmlDocPtr

    init(_ document: xmlDocPtr) {
        self.document = document
    }

    deinit {
        saml_shim_free_document(document)
    }

    var root: xmlNodePtr {
        // Checked in `SafeXMLParser.parse` before the tree is handed out.
        xmlDocGetRootElement(document)!
    }
}
