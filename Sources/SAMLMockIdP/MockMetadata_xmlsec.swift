internal import CSAMLShim
import SAML

extension MockIdentityProvider {
    /// SAML 2.0 IdP metadata for `entityID` listing `signingCertificates` (PEM) as its signing keys, signed
    /// by this mock's key as a metadata signer (an IdP or a federation) signs it: for tests of metadata
    /// refresh and key rollover. Compact, one line of Base64 per certificate.
    public func metadata(
        entityID: String, signingCertificates: [[UInt8]], validUntil: SAMLInstant?, cacheDuration: String? = "PT1H",
        singleSignOnLocation: String = "https://idp.example/sso", signed: Bool = true
    ) throws -> [UInt8] {
        let escaped = XMLEscaping.escape
        let keys = signingCertificates.map { pem in
            let body = String(decoding: pem, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            return "<md:KeyDescriptor use=\"signing\"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\(body)"
                + "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
        }.joined()
        var root = "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\""
        root += " ID=\"_md-\(UInt64.random(in: 0...UInt64.max))\" entityID=\"\(escaped(entityID))\""
        if let validUntil { root += " validUntil=\"\(validUntil)\"" }
        if let cacheDuration { root += " cacheDuration=\"\(cacheDuration)\"" }
        let xml =
            root + "><md:IDPSSODescriptor protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">" + keys
            + "<md:SingleSignOnService Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" Location=\""
            + escaped(singleSignOnLocation) + "\"/></md:IDPSSODescriptor></md:EntityDescriptor>"
        guard signed else { return Array(xml.utf8) }
        var output: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        let bytes = Array(xml.utf8)
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                saml_shim_sign_root($0.baseAddress, Int32($0.count), key.key, &output, &length)
            }
        }
        guard status == 0, let output else {
            throw SAMLError(.signatureMalformed, "expected xmlsec to sign the generated metadata, it failed")
        }
        defer { saml_shim_free_buffer(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
