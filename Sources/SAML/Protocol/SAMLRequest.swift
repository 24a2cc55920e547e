/// A SAML 2.0 request of the partner flow: what REST API v2 `sessions/sso/{partner}` answers as
/// `authenticationRequest.request` (Base64), with a fresh unpredictable ID that the service records as
/// outstanding (``SAMLStateStore/recordOutstandingRequest(_:expiry:)``) so that only a response to it is
/// accepted later.
public struct SAMLRequest: Sendable, Hashable {
    /// `samlp:AuthnRequest` (the default) or `samlp:AttributeQuery` for the named attributes.
    public enum Kind: Sendable, Hashable {
        case authnRequest
        /// An attribute query about `subject` (a NameID value, when the service knows it) for `attributes`.
        case attributeQuery(attributes: [String], subject: String? = nil)
    }

    /// `_` followed by 32 hexadecimal digits from the system's cryptographic random source.
    public let id: String
    public let issueInstant: SAMLInstant
    /// The request document (signed when a key was given).
    public let xml: [UInt8]

    /// Standard Base64 of ``xml``, as the API carries it.
    public var base64: String { Base64.encode(xml) }

    /// Builds a request.
    ///
    /// - Parameters:
    ///   - issuer: the SP's entity ID.
    ///   - destination: the IdP endpoint the request is for.
    ///   - assertionConsumerServiceURL: where the response is to be posted (AuthnRequest only).
    ///   - signingKey: the SP's key; the request is then signed (enveloped, exclusive C14N, SHA-256).
    public init(
        _ kind: Kind = .authnRequest, issuer: String, destination: String, assertionConsumerServiceURL: String? = nil,
        issuedAt now: SAMLInstant = .now(), signingKey: SigningKey? = nil
    ) throws {
        var random = SystemRandomNumberGenerator()
        id = "_" + (0..<16).map { _ in Hex.string([UInt8.random(in: 0...255, using: &random)], uppercase: false) }.joined()
        issueInstant = now
        let common = #"ID="\#(id)" Version="2.0" IssueInstant="\#(now)" Destination="\#(XMLEscaping.escape(destination))""#
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
            let subjectElement = subject.map { "<saml:Subject><saml:NameID>\(XMLEscaping.escape($0))</saml:NameID></saml:Subject>" } ?? ""
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
}

/// Escaping for values written into XML text or into double-quoted attribute values.
package enum XMLEscaping {
    package static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
