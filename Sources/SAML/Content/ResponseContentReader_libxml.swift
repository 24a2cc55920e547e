internal import CSAMLShim

/// Reads ``ResponseContent`` from the verified Response and Assertion elements: the one place where the
/// protocol checks' inputs come out of the libxml2 tree.
enum ResponseContentReader {
    static let xsi: StaticString = "http://www.w3.org/2001/XMLSchema-instance"

    static func read(response: xmlNodePtr, assertion: xmlNodePtr) -> ResponseContent {
        ResponseContent(
            name: response.qualifiedDescription,
            id: response.attribute("ID") ?? "",
            issuer: issuer(of: response),
            destination: response.attribute("Destination"),
            inResponseTo: response.attribute("InResponseTo").map(XMLWhitespace.trimmed),
            issueInstant: instant(response, "IssueInstant"),
            status: status(of: response),
            assertion: read(assertion: assertion)
        )
    }

    private static func read(assertion: xmlNodePtr) -> ResponseContent.Assertion {
        let saml = Namespace.samlAssertion
        let subject = assertion.firstChild(saml, "Subject")
        let authn = assertion.firstChild(saml, "AuthnStatement")
        // Walked without intermediate arrays: a response can carry hundreds of attributes. Counted first,
        // so that the array is allocated once; the NameFormat most responses repeat on every attribute is
        // one string.
        let statements = assertion.elementChildren.lazy.filter { $0.is(saml, "AttributeStatement") }
        var attributes: [SAMLAttribute] = []
        attributes.reserveCapacity(statements.reduce(0) { $0 + $1.elementChildren.count { $0.is(saml, "Attribute") } })
        var nameFormat: String?
        for statement in statements {
            for attribute in statement.elementChildren where attribute.is(saml, "Attribute") {
                var values: [SAMLAttributeValue] = []
                values.reserveCapacity(attribute.elementChildren.count { _ in true })
                for value in attribute.elementChildren where value.is(saml, "AttributeValue") {
                    values.append(attributeValue(value))
                }
                attributes.append(
                    SAMLAttribute(
                        name: attribute.attribute("Name") ?? "",
                        friendlyName: attribute.attribute("FriendlyName"),
                        nameFormat: attribute.attribute("NameFormat", sameAs: &nameFormat),
                        attributeValues: values
                    )
                )
            }
        }
        return ResponseContent.Assertion(
            name: assertion.qualifiedDescription,
            id: assertion.attribute("ID") ?? "",
            issuer: issuer(of: assertion),
            issueInstant: instant(assertion, "IssueInstant"),
            nameID: subject?.firstChild(saml, "NameID").map(nameID(of:)),
            confirmations: (subject?.children(saml, "SubjectConfirmation") ?? []).map { confirmation in
                ResponseContent.Confirmation(
                    method: confirmation.attribute("Method").map(XMLWhitespace.trimmed),
                    data: confirmation.firstChild(saml, "SubjectConfirmationData").map { data in
                        ResponseContent.ConfirmationData(
                            recipient: data.attribute("Recipient"), notBefore: instant(data, "NotBefore"),
                            notOnOrAfter: instant(data, "NotOnOrAfter"),
                            inResponseTo: data.attribute("InResponseTo").map(XMLWhitespace.trimmed))
                    })
            },
            conditions: assertion.firstChild(saml, "Conditions").map { conditions in
                ResponseContent.Conditions(
                    notBefore: instant(conditions, "NotBefore"), notOnOrAfter: instant(conditions, "NotOnOrAfter"),
                    audienceRestrictions: audiences(of: conditions))
            },
            sessionIndex: authn?.attribute("SessionIndex"),
            authnInstant: authn.flatMap { instant($0, "AuthnInstant") },
            attributes: attributes,
            shape: shape(of: assertion)
        )
    }

    /// Counts what the schema allows at most once (a reader that took the first and a checker that took
    /// the second could disagree: ``AssertionSchemaPolicy`` refuses a second one).
    private static func shape(of assertion: xmlNodePtr) -> ResponseContent.Shape {
        let saml = Namespace.samlAssertion
        var shape = ResponseContent.Shape()
        for child in assertion.elementChildren {
            if child.is(saml, "Subject") {
                shape.subjects += 1
                if shape.subjects == 1 {
                    shape.identifiers = child.elementChildren.count {
                        $0.is(saml, "NameID") || $0.is(saml, "BaseID") || $0.is(saml, "EncryptedID")
                    }
                }
            } else if child.is(saml, "Conditions") {
                shape.conditions += 1
                guard shape.conditions == 1 else { continue }
                for condition in child.elementChildren {
                    if condition.is(saml, "OneTimeUse") {
                        shape.oneTimeUse += 1
                    } else if condition.is(saml, "ProxyRestriction") {
                        shape.proxyRestrictions += 1
                    } else if !condition.is(saml, "AudienceRestriction"), shape.unknownCondition == nil {
                        shape.unknownCondition = condition.qualifiedDescription
                    }
                }
            }
        }
        return shape
    }

    /// The element's `saml:Issuer`, if any.
    static func issuer(of element: xmlNodePtr) -> ResponseContent.Issuer? {
        element.firstChild(Namespace.samlAssertion, "Issuer").map { .init(value: $0.textContent, format: $0.attribute("Format")) }
    }

    /// `samlp:Status` of a Response; nil without `samlp:Status/samlp:StatusCode`.
    static func status(of response: xmlNodePtr) -> ResponseContent.Status? {
        guard let status = response.firstChild(Namespace.samlProtocol, "Status"),
            let code = status.firstChild(Namespace.samlProtocol, "StatusCode")
        else { return nil }
        return ResponseContent.Status(
            code: code.attribute("Value") ?? "",
            subcode: code.firstChild(Namespace.samlProtocol, "StatusCode")?.attribute("Value"),
            message: status.firstChild(Namespace.samlProtocol, "StatusMessage")?.textContent)
    }

    /// The `Audience` texts of each `AudienceRestriction` of a `saml:Conditions`.
    static func audiences(of conditions: xmlNodePtr) -> [[String]] {
        conditions.children(Namespace.samlAssertion, "AudienceRestriction").map { restriction in
            restriction.children(Namespace.samlAssertion, "Audience").map(\.textContent)
        }
    }

    /// Read in place: a String only for a malformed value's message.
    private static func instant(_ element: xmlNodePtr, _ attribute: StaticString) -> ResponseContent.Instant? {
        guard let node = element.attributeNode(attribute) else { return nil }
        let text = Text.concatenated(node.pointee.children, textOnly: false)
        if let value = text.withBytes(SAMLInstant.init(xmlDateTime:)) { return .init(value) }
        return .init(malformed: Text.string(text), location: "\(element.qualifiedDescription)/@\(attribute)")
    }

    static func nameID(of node: xmlNodePtr) -> NameID {
        NameID(
            value: node.textContent, format: node.attribute("Format"), nameQualifier: node.attribute("NameQualifier"),
            spNameQualifier: node.attribute("SPNameQualifier"))
    }

    /// An AttributeValue exactly as signed: `xsi:nil`, text (untrimmed), one `saml:NameID` (its value), or
    /// other element content serialised.
    static func attributeValue(_ node: xmlNodePtr) -> SAMLAttributeValue {
        let type = node.attributeNode("type", namespace: xsi)?.value
        if let null = node.attributeNode("nil", namespace: xsi).map({ XMLWhitespace.trimmed($0.value) }), null == "true" || null == "1" {
            return SAMLAttributeValue(string: "", content: .null, type: type)
        }
        var elements = node.elementChildren.makeIterator()
        guard let first = elements.next() else {
            return SAMLAttributeValue(
                string: Text.string(Text.concatenated(node.pointee.children, textOnly: true)), content: .text, type: type)
        }
        if elements.next() == nil, first.is(Namespace.samlAssertion, "NameID"), textIsBlank(node) {
            let value = nameID(of: first)
            return SAMLAttributeValue(string: value.value, content: .nameID(value), type: type)
        }
        return SAMLAttributeValue(string: serializedContent(of: node), content: .xml, type: type)
    }

    /// Whether every text and CDATA child of `node` is XML whitespace.
    private static func textIsBlank(_ node: xmlNodePtr) -> Bool {
        var child = node.pointee.children
        while let current = child {
            child = current.pointee.next
            let type = current.pointee.type
            if type == XML_TEXT_NODE || type == XML_CDATA_SECTION_NODE, !Text.isBlank(current.pointee.content) { return false }
        }
        return true
    }

    /// The element content exactly as signed, as self-contained XML: each element child in its exclusive
    /// canonical form (no comments; the namespace declarations it visibly uses, nothing else), text in
    /// canonical text escaping; comments and processing instructions between them left out. Every byte is
    /// one the digest of any Reference covering the value determines, whatever its canonicalisation: a
    /// comment inserted after signing, a declaration added or rebound that nothing in the content
    /// visibly uses (such as one a QName in a text names), whitespace inside tags, change nothing here.
    /// (Exclusive C14N 1.0, section 4, "Limitations": a QName in content is not bound by the signature;
    /// a consumer that resolves one does so at its own risk.)
    private static func serializedContent(of node: xmlNodePtr) -> String {
        var bytes: [UInt8] = []
        var child = node.pointee.children
        while let current = child {
            child = current.pointee.next
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                var output: UnsafeMutablePointer<UInt8>?
                var length = 0
                guard saml_shim_canonical_element(current, &output, &length) == 0, let output else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(start: output, count: length))
                saml_shim_free_buffer(output)
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                guard let content = current.pointee.content else { continue }
                var at = content
                while at.pointee != 0 {
                    switch at.pointee {
                    case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
                    case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
                    case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
                    case 0x0D: bytes.append(contentsOf: "&#xD;".utf8)
                    default: bytes.append(at.pointee)
                    }
                    at += 1
                }
            default:
                continue
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
