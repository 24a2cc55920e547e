internal import CSAMLShim

/// The structure of a SAML document, read without judging it: for operators looking at a response that
/// was rejected. Parsed with the same safe parser as verification (a DOCTYPE is still refused), but no
/// signature is verified and nothing here is trustworthy.
package struct DocumentOutline: Sendable, Hashable {
    package struct Signature: Sendable, Hashable {
        /// Where the signature sits, e.g. `/samlp:Response/saml:Assertion/ds:Signature`.
        package let path: String
        package let canonicalization: String?
        package let signatureMethod: String?
        /// Each Reference's URI, transforms and digest method.
        package let references: [Reference]
        /// The child elements of ds:KeyInfo, by name (ds:X509Data, ds:KeyValue, ...).
        package let keyInfo: [String]
        package let hasObject: Bool
    }

    package struct Reference: Sendable, Hashable {
        package let uri: String?
        package let transforms: [String]
        package let digestMethod: String?
    }

    package struct Assertion: Sendable, Hashable {
        package let path: String
        package let id: String?
        package let issuer: String?
        package let nameID: String?
        package let issueInstant: String?
        package let notBefore: String?
        package let notOnOrAfter: String?
        /// `NotBefore` and `NotOnOrAfter` of each `SubjectConfirmationData`.
        package let confirmationNotBefore: [String]
        package let confirmationNotOnOrAfter: [String]
        package let audiences: [String]
        package let attributeNames: [String]
    }

    /// An `ID` or `xml:id` attribute and the element carrying it.
    package struct Identifier: Sendable, Hashable {
        package let path: String
        package let value: String
    }

    package let root: String
    package let version: String?
    package let destination: String?
    package let inResponseTo: String?
    package let issueInstant: String?
    package let issuer: String?
    /// The StatusCode values, outermost first.
    package let status: [String]
    package let assertions: [Assertion]
    package let encryptedAssertions: Int
    package let signatures: [Signature]
    package let identifiers: [Identifier]

    /// Outlines a document. Throws only when it cannot be parsed safely.
    package static func read(_ xml: UnsafeRawBufferPointer, limits: XMLParserLimits = XMLParserLimits()) throws -> DocumentOutline {
        let tree = try SafeXMLParser.parse(xml, limits: limits)
        let root = tree.root
        let saml = Namespace.samlAssertion
        let dsig = Namespace.xmlDSig
        var status: [String] = []
        var code = root.firstChild(Namespace.samlProtocol, "Status")?.firstChild(Namespace.samlProtocol, "StatusCode")
        while let current = code {
            status.append(current.attribute("Value") ?? "")
            code = current.firstChild(Namespace.samlProtocol, "StatusCode")
        }
        let assertions = root.descendants { $0.is(saml, "Assertion") }.map { node in
            let conditions = node.firstChild(saml, "Conditions")
            let subject = node.firstChild(saml, "Subject")
            let confirmations = (subject?.children(saml, "SubjectConfirmation") ?? []).compactMap {
                $0.firstChild(saml, "SubjectConfirmationData")
            }
            return Assertion(
                path: node.elementPath, id: node.attribute("ID"), issuer: ResponseContentReader.issuer(of: node)?.value,
                nameID: subject?.firstChild(saml, "NameID")?.textContent, issueInstant: node.attribute("IssueInstant"),
                notBefore: conditions?.attribute("NotBefore"), notOnOrAfter: conditions?.attribute("NotOnOrAfter"),
                confirmationNotBefore: confirmations.compactMap { $0.attribute("NotBefore") },
                confirmationNotOnOrAfter: confirmations.compactMap { $0.attribute("NotOnOrAfter") },
                audiences: (conditions.map(ResponseContentReader.audiences(of:)) ?? []).flatMap { $0 },
                attributeNames: node.children(saml, "AttributeStatement").flatMap { $0.children(saml, "Attribute") }
                    .map { $0.attribute("Name") ?? "" }
            )
        }
        let signatures = root.descendants { $0.is(dsig, "Signature") }.map { node in
            let signedInfo = node.firstChild(dsig, "SignedInfo")
            return Signature(
                path: node.elementPath,
                canonicalization: signedInfo?.firstChild(dsig, "CanonicalizationMethod")?.attribute("Algorithm"),
                signatureMethod: signedInfo?.firstChild(dsig, "SignatureMethod")?.attribute("Algorithm"),
                references: (signedInfo?.children(dsig, "Reference") ?? []).map { reference in
                    Reference(
                        uri: reference.attribute("URI"),
                        transforms: (reference.firstChild(dsig, "Transforms")?.children(dsig, "Transform") ?? [])
                            .map { $0.attribute("Algorithm") ?? "" },
                        digestMethod: reference.firstChild(dsig, "DigestMethod")?.attribute("Algorithm")
                    )
                },
                keyInfo: node.firstChild(dsig, "KeyInfo")?.elementChildren.map(\.qualifiedDescription) ?? [],
                hasObject: node.firstChild(dsig, "Object") != nil
            )
        }
        var identifiers: [Identifier] = []
        for element in root.descendants(where: { _ in true }) {
            if let value = element.attribute("ID") { identifiers.append(Identifier(path: element.elementPath, value: value)) }
        }
        return DocumentOutline(
            root: root.qualifiedDescription, version: root.attribute("Version"), destination: root.attribute("Destination"),
            inResponseTo: root.attribute("InResponseTo"), issueInstant: root.attribute("IssueInstant"),
            issuer: ResponseContentReader.issuer(of: root)?.value, status: status, assertions: assertions,
            encryptedAssertions: root.descendants { $0.is(saml, "EncryptedAssertion") }.count,
            signatures: signatures, identifiers: identifiers
        )
    }
}
