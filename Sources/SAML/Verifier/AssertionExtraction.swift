internal import CSAMLShim

/// Reads the verified assertion into ``VerifiedAssertion``. Called only with the Assertion element that
/// a verified signature covered (its own, or the Response's).
enum AssertionExtraction {
    /// `window` and `issued` are the values the time checks already read.
    static func read(
        _ assertion: xmlNodePtr, conditions: xmlNodePtr?, window: TimeWindowPolicy.Window, issued: SAMLInstant
    ) throws -> VerifiedAssertion {
        let saml = Namespace.samlAssertion
        let subject = assertion.firstChild(saml, "Subject")
        let nameID = subject?.firstChild(saml, "NameID").map { node in
            NameID(
                value: node.textContent,
                format: node.attribute("Format"),
                nameQualifier: node.attribute("NameQualifier"),
                spNameQualifier: node.attribute("SPNameQualifier")
            )
        }
        let authn = assertion.firstChild(saml, "AuthnStatement")
        var attributes: [SAMLAttribute] = []
        for statement in assertion.children(saml, "AttributeStatement") {
            for attribute in statement.children(saml, "Attribute") {
                attributes.append(
                    SAMLAttribute(
                        name: attribute.attribute("Name") ?? "",
                        friendlyName: attribute.attribute("FriendlyName"),
                        nameFormat: attribute.attribute("NameFormat"),
                        attributeValues: attribute.children(saml, "AttributeValue").map(value)
                    )
                )
            }
        }
        return VerifiedAssertion(
            id: assertion.attribute("ID") ?? "",
            issuer: IssuerPolicy.issuer(of: assertion) ?? "",
            issueInstant: issued,
            nameID: nameID,
            sessionIndex: authn?.attribute("SessionIndex"),
            authnInstant: try authn.flatMap { try TimeWindowPolicy.instant($0, "AuthnInstant") },
            notBefore: window.notBefore,
            notOnOrAfter: window.notOnOrAfter,
            audiences: AudiencePolicy.audiences(conditions: conditions).flatMap { $0 },
            attributes: attributes
        )
    }

    static let xsi: StaticString = "http://www.w3.org/2001/XMLSchema-instance"

    /// One AttributeValue, as signed: text untrimmed, element content serialised, `xsi:nil` recognised.
    static func value(_ node: xmlNodePtr) -> SAMLAttributeValue {
        let type = xmlHasNsProp(node, "type", xsi.utf8Start)?.value
        if let null = xmlHasNsProp(node, "nil", xsi.utf8Start).map({ XMLWhitespace.trimmed($0.value) }), null == "true" || null == "1" {
            return SAMLAttributeValue(string: "", content: .null, type: type)
        }
        guard node.elementChildren.contains(where: { _ in true }) else {
            return SAMLAttributeValue(string: Text.string(Text.concatenated(node.pointee.children, textOnly: true)), content: .text, type: type)
        }
        return SAMLAttributeValue(string: serializedContent(of: node), content: .xml, type: type)
    }

    /// The element and text children of `node` as XML; each element is copied into a scratch document
    /// first, so that the namespaces it uses are declared on it (comments and PIs are left out).
    private static func serializedContent(of node: xmlNodePtr) -> String {
        guard let scratch = xmlNewDoc("1.0"), let buffer = xmlBufferCreate() else { return "" }
        defer {
            xmlBufferFree(buffer)
            xmlFreeDoc(scratch)
        }
        var child = node.pointee.children
        while let current = child {
            child = current.pointee.next
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                guard let copy = xmlDocCopyNode(current, scratch, 1) else { continue }
                if let previous = xmlDocSetRootElement(scratch, copy) { xmlFreeNode(previous) }
                xmlNodeDump(buffer, scratch, copy, 0, 0)
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                xmlNodeDump(buffer, node.pointee.doc, current, 0, 0)
            default:
                continue
            }
        }
        guard let content = xmlBufferContent(buffer) else { return "" }
        return String(cString: content)
    }
}
