internal import CSAMLShim

/// A plain Swift copy of a small XML document (configuration files), parsed with the same safe parser
/// as responses. For modules that must not see libxml2's C types.
package struct SimpleXMLElement: Sendable, Hashable {
    package var localName: String
    package var namespace: String?
    package var attributes: [String: String]
    package var children: [SimpleXMLElement]
    /// The element's own text and CDATA, trimmed of XML whitespace.
    package var text: String

    /// Parses `bytes` safely (no DTD, no entities, size caps) into a tree.
    package static func parse(_ bytes: [UInt8], limits: XMLParserLimits = XMLParserLimits()) throws -> SimpleXMLElement {
        let tree = try bytes.withUnsafeBytes { try SafeXMLParser.parse($0, limits: limits) }
        return copy(tree.root)
    }

    private static func copy(_ node: xmlNodePtr) -> SimpleXMLElement {
        var attributes: [String: String] = [:]
        var attribute = node.pointee.properties
        while let current = attribute {
            if let name = current.pointee.name { attributes[String(cString: name)] = current.value }
            attribute = current.pointee.next
        }
        return SimpleXMLElement(
            localName: node.localName,
            namespace: node.pointee.ns?.pointee.href.map { String(cString: $0) },
            attributes: attributes,
            children: node.elementChildren.map(copy),
            text: node.textContent
        )
    }

    package func child(_ localName: String) -> SimpleXMLElement? {
        children.first { $0.localName == localName }
    }
}
