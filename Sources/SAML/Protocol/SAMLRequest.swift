import CookbookEncoding

/// A SAML 2.0 request of the partner flow: what REST API v2 `sessions/sso/{partner}` answers as
/// `authenticationRequest.request` (Base64), with a fresh unpredictable ID that the service records as
/// outstanding (self-describing, MAC-protected IDs, or the ``SAMLStateStore``) so that only a response to it is
/// accepted later.
///
/// The document is valid against the OASIS SAML 2.0 protocol schema, in the schema's element order:
/// Issuer, then the enveloped Signature when signed, then (AttributeQuery) Subject and the Attributes.
///
/// An `AttributeQuery` always has the `saml:Subject` the schema requires (`SubjectQueryAbstractType`).
/// When the service knows the user's NameID (`subject`), it is that NameID with the `unspecified` format
/// (SAML core §8.3.1: the service cannot tell which format the IdP gave it). In the Apple SSO case it does
/// not: the IdP identifies the user by its own login on the device, and the Subject is a transient NameID
/// (§8.3.8) that names nobody, a pseudonym for this one request: 40 hexadecimal digits (160 bits) from the
/// system's cryptographic random source, fresh for every request. It is not the request's ID, which a
/// caller may choose (`id:`) and which appears in the response as `InResponseTo`: a transient value is to
/// be generated as a SAML identifier is (§1.3.4, at most 2^-128 chance of a collision, 2^-160 advised)
/// and must correlate with nothing.
public struct SAMLRequest: Sendable, Hashable {
    /// `samlp:AuthnRequest` (the default) or `samlp:AttributeQuery` for the named attributes.
    public enum Kind: Sendable, Hashable {
        case authnRequest
        /// An attribute query about `subject` (a NameID value, when the service knows it; otherwise a
        /// transient NameID naming nobody) for `attributes`.
        case attributeQuery(attributes: [String], subject: String? = nil)
    }

    /// The ID given to the initialiser, else `_` followed by 32 hexadecimal digits from the system's
    /// cryptographic random source.
    public let id: String
    public let issueInstant: SAMLInstant
    /// The request document (signed when a key was given).
    public let xml: [UInt8]

    /// Standard Base64 of ``xml``, as the API carries it.
    public var base64: String { Base64.encode(xml) }

    /// Builds a request.
    ///
    /// - Parameters:
    ///   - kind: an AuthnRequest (the default) or an AttributeQuery.
    ///   - id: the request's ID (`nil`: a fresh random one). It must be a strict xs:NCName (NCName
    ///     characters, the first a letter or `_`), else `configuration.invalid`; a chosen ID
    ///     should be as unpredictable as the random one, since a response is accepted only for it.
    ///   - issuer: the SP's entity ID.
    ///   - destination: the IdP endpoint the request is sent to; nil when it is not known (the attribute
    ///     is optional, SAML Core 3.2.1, and an IdP refuses a request naming another of its endpoints).
    ///   - assertionConsumerServiceURL: where the response is to be posted (AuthnRequest only).
    ///   - now: the request's IssueInstant.
    ///   - signingKey: the SP's key; the request is then signed (enveloped, exclusive C14N, SHA-256).
    public init(
        _ kind: Kind = .authnRequest, id: String? = nil, issuer: String, destination: String?,
        assertionConsumerServiceURL: String? = nil, issuedAt now: SAMLInstant = .now(), signingKey: SigningKey? = nil
    ) throws {
        if let id {
            guard NCName.isAcceptedID(id), NCName.startsAsNCName(id) else {
                throw SAMLError(
                    .configurationInvalid, "expected a request ID of xs:NCName characters starting with a letter or '_', found another")
            }
            self.id = id
        } else {
            self.id = "_" + Self.randomHex(bytes: 16)
        }
        issueInstant = now
        let destinationAttribute = destination.map { #" Destination="\#(XMLEscaping.escape($0))""# } ?? ""
        let common = #"ID="\#(self.id)" Version="2.0" IssueInstant="\#(now)"\#(destinationAttribute)"#
        let issuerElement = "<saml:Issuer>\(XMLEscaping.escape(issuer))</saml:Issuer>"
        let namespaces = #"xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion""#
        var text: String
        switch kind {
        case .authnRequest:
            let acs =
                assertionConsumerServiceURL.map {
                    #" AssertionConsumerServiceURL="\#(XMLEscaping.escape($0))" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST""#
                } ?? ""
            text =
                "<samlp:AuthnRequest \(namespaces) \(common)\(acs)>\(issuerElement)"
                + #"<samlp:NameIDPolicy AllowCreate="true"/></samlp:AuthnRequest>"#
        case .attributeQuery(let attributes, let subject):
            let nameID =
                if let subject {
                    #"<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">"#
                        + "\(XMLEscaping.escape(subject))</saml:NameID>"
                } else {
                    #"<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:transient">"#
                        + "\(Self.randomHex(bytes: 20))</saml:NameID>"
                }
            let subjectElement = "<saml:Subject>\(nameID)</saml:Subject>"
            let attributeElements = attributes.map {
                #"<saml:Attribute Name="\#(XMLEscaping.escape($0))" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"/>"#
            }.joined()
            text =
                "<samlp:AttributeQuery \(namespaces) \(common)>\(issuerElement)\(subjectElement)\(attributeElements)</samlp:AttributeQuery>"
        }
        let unsigned = Array(text.utf8)
        guard let signingKey else {
            xml = unsigned
            return
        }
        xml = try signingKey.signRoot(of: unsigned)
    }

    /// `bytes` from the system's cryptographic random source, as lowercase hexadecimal (request IDs,
    /// transient NameIDs, the IDs of SP metadata).
    static func randomHex(bytes: Int) -> String {
        Hex.string(RandomBytes.draw(bytes), uppercase: false)
    }
}

/// Escaping for values written into XML text or into double-quoted attribute values.
package enum XMLEscaping {
    /// By Unicode scalar, not by `Character`: a grapheme such as `<` followed by U+200D, or `"` followed by
    /// a combining mark, is not equal to `<` or `"` and would go out unescaped. Tab, line feed and carriage
    /// return are written as character references (an attribute value keeps them; a parser would turn
    /// them into spaces); every other character XML 1.0 forbids (the C0 controls, U+FFFE, U+FFFF) becomes
    /// U+FFFD, so that the document stays well-formed whatever the value.
    package static func escape(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "\t": out.append(contentsOf: "&#9;".unicodeScalars)
            case "\n": out.append(contentsOf: "&#10;".unicodeScalars)
            case "\r": out.append(contentsOf: "&#13;".unicodeScalars)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
