/// SAML Core 3.2.2.2: the response's top-level status must be Success.
enum StatusPolicy {
    static let success = "urn:oasis:names:tc:SAML:2.0:status:Success"

    static func check(_ status: ResponseContent.Status?) throws {
        guard let status else {
            throw SAMLError(.structureMissingElement, "expected samlp:Status/samlp:StatusCode, found none")
        }
        guard status.code != success else { return }
        var found = SAMLError.quote(status.code)
        if let subcode = status.subcode {
            found += " / " + SAMLError.quote(subcode)
        }
        if let message = status.message, !message.isEmpty {
            found += " (" + SAMLError.quote(message) + ")"
        }
        throw SAMLError(.statusNotSuccess, "expected status \(success), found \(found)")
    }
}
