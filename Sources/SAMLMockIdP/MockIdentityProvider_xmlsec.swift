internal import CSAMLMockShim
internal import CSAMLShim
import SAML

/// A mock MVPD identity provider: builds MVPD-shaped SAML responses with fresh IDs and times and signs
/// them with xmlsec, for load tests and integration tests (`saml generate`). Not a real IdP: it signs
/// whatever it is given.
public struct MockIdentityProvider: Sendable {
    /// Which elements get an enveloped signature.
    public enum Placement: String, Sendable, CaseIterable {
        case assertion, response, both
    }

    /// What the response says.
    public struct Template: Sendable {
        public var issuer = "https://idp.mvpd.example.com"
        public var audience = "https://saml.sp.auth.adobe.com"
        public var destination: String? = nil
        public var inResponseTo: String? = nil
        public var nameID = "subscriber-0042"
        /// Attribute names with their values, in order; a name with several values is multi-valued.
        public var attributes: [(name: String, values: [String])] = [
            ("uid", ["subscriber-0042"]), ("householdId", ["hh-7731"]), ("zip", ["10001", "10002"]),
            ("channelId", ["espn", "hbo"]), ("maxRating", ["TV-MA"]),
        ]
        /// How long the assertion is valid after it is issued.
        public var lifetime: Duration = .seconds(300)

        public init() {}
    }

    let key: SigningKey

    /// A private key (PEM, RSA or EC) and its certificate (PEM), which goes into ds:KeyInfo.
    public init(privateKeyPEM: [UInt8], certificatePEM: [UInt8]) throws {
        try XMLSecRuntime.initialize()
        guard
            let loaded = privateKeyPEM.withUnsafeBufferPointer({ keyBuffer in
                certificatePEM.withUnsafeBufferPointer { certificateBuffer in
                    saml_shim_signing_key_load(
                        keyBuffer.baseAddress, keyBuffer.count, certificateBuffer.baseAddress, certificateBuffer.count)
                }
            })
        else {
            throw SAMLError(
                .configurationInvalidKey, "expected a PEM private key and its PEM certificate, found something OpenSSL cannot load")
        }
        key = SigningKey(loaded)
    }

    /// A signed response issued at `issuedAt`, with fresh IDs. With `recipient` (the SP's certificate,
    /// as a ``SAML/TrustedKey``), the assertion is encrypted to it after being signed: AES-256-GCM with
    /// RSA-OAEP key transport, inside `saml:EncryptedAssertion`; a Response signature then covers the
    /// ciphertext.
    public func response(_ template: Template, issuedAt: SAMLInstant, placement: Placement, encryptingFor recipient: TrustedKey? = nil)
        throws -> [UInt8]
    {
        let xml = Array(Self.document(template, issuedAt: issuedAt).utf8)
        var output: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        let status = xml.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                saml_mock_sign_encrypt_response(
                    chars.baseAddress, Int32(chars.count), key.key, placement != .response ? 1 : 0, placement != .assertion ? 1 : 0,
                    recipient.map { xmlSecKeyPtr($0.opaqueKey) }, &output, &length)
            }
        }
        guard status == 0, let output else {
            throw SAMLError(.signatureMalformed, "expected xmlsec to sign the generated response, it failed")
        }
        defer { saml_shim_free_buffer(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// `xml` (a response with a plain `saml:Assertion`) with that assertion encrypted to `recipient` as
    /// it stands, signed or not, as ``response(_:issuedAt:placement:encryptingFor:)`` encrypts: for
    /// benchmarks and tests that build the plaintext themselves (a hostile one, say).
    public func encryptingAssertion(of xml: [UInt8], for recipient: TrustedKey) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        let status = xml.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                saml_mock_sign_encrypt_response(
                    chars.baseAddress, Int32(chars.count), key.key, 0, 0, xmlSecKeyPtr(recipient.opaqueKey), &output, &length)
            }
        }
        guard status == 0, let output else {
            throw SAMLError(.decryptionFailed, "expected xmlsec to encrypt the response's assertion, it failed")
        }
        defer { saml_shim_free_buffer(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// `xml` (an unsigned response of the caller's own, with a plain `saml:Assertion`) signed as
    /// `placement` says, as ``response(_:issuedAt:placement:encryptingFor:)`` signs: for tests that change
    /// a response after signing in ways its digest does not see.
    public func signing(_ xml: [UInt8], placement: Placement) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        let status = xml.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                saml_mock_sign_encrypt_response(
                    chars.baseAddress, Int32(chars.count), key.key, placement != .response ? 1 : 0, placement != .assertion ? 1 : 0, nil,
                    &output, &length)
            }
        }
        guard status == 0, let output else {
            throw SAMLError(.signatureMalformed, "expected xmlsec to sign the given response, it failed")
        }
        defer { saml_shim_free_buffer(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    static func document(_ template: Template, issuedAt: SAMLInstant) -> String {
        let issued = issuedAt.description
        let notBefore = (issuedAt - .seconds(60)).description
        let notOnOrAfter = (issuedAt + template.lifetime).description
        let destination = template.destination.map { " Destination=\"\(escape($0))\"" } ?? ""
        let inResponseTo = template.inResponseTo.map { " InResponseTo=\"\(escape($0))\"" } ?? ""
        let recipient = template.destination.map { " Recipient=\"\(escape($0))\"" } ?? ""
        let attributes = template.attributes.map { attribute in
            "<saml:Attribute Name=\"\(escape(attribute.name))\" NameFormat=\"urn:oasis:names:tc:SAML:2.0:attrname-format:basic\">"
                + attribute.values.map { "<saml:AttributeValue>\(escape($0))</saml:AttributeValue>" }.joined()
                + "</saml:Attribute>"
        }.joined()
        return """
            <samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" \
            ID="_\(randomID())" Version="2.0" IssueInstant="\(issued)"\(destination)\(inResponseTo)>\
            <saml:Issuer>\(escape(template.issuer))</saml:Issuer>\
            <samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>\
            <saml:Assertion ID="_\(randomID())" Version="2.0" IssueInstant="\(issued)">\
            <saml:Issuer>\(escape(template.issuer))</saml:Issuer>\
            <saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">\(escape(template.nameID))</saml:NameID>\
            <saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">\
            <saml:SubjectConfirmationData\(inResponseTo)\(recipient) NotOnOrAfter="\(notOnOrAfter)"/>\
            </saml:SubjectConfirmation></saml:Subject>\
            <saml:Conditions NotBefore="\(notBefore)" NotOnOrAfter="\(notOnOrAfter)">\
            <saml:AudienceRestriction><saml:Audience>\(escape(template.audience))</saml:Audience></saml:AudienceRestriction>\
            </saml:Conditions>\
            <saml:AuthnStatement AuthnInstant="\(issued)" SessionIndex="_\(randomID())"><saml:AuthnContext>\
            <saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>\
            </saml:AuthnContext></saml:AuthnStatement>\
            <saml:AttributeStatement>\(attributes)</saml:AttributeStatement>\
            </saml:Assertion></samlp:Response>
            """
    }

    /// 128 random bits in hex.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    static func escape(_ text: String) -> String { XMLEscaping.escape(text) }
}

/// Owns the signing key. `@unchecked Sendable`: never mutated after loading; each signature works on
/// a duplicate (`xmlSecKeyDuplicate`, which only reads it).
final class SigningKey: @unchecked Sendable {
    let key: xmlSecKeyPtr

    init(_ key: xmlSecKeyPtr) {
        self.key = key
    }

    deinit {
        xmlSecKeyDestroy(key)
    }
}
