internal import CSAMLShim

/// SAML Core 3.2.2.2: the top-level StatusCode must be Success; otherwise report it and its sub-status.
enum StatusPolicy {
    static let success = "urn:oasis:names:tc:SAML:2.0:status:Success"

    static func check(response: xmlNodePtr) throws {
        guard let status = response.firstChild(Namespace.samlProtocol, "Status"),
            let code = status.firstChild(Namespace.samlProtocol, "StatusCode")
        else {
            throw SAMLError(.structureMissingElement, "expected samlp:Status/samlp:StatusCode, found none")
        }
        let value = code.attribute("Value") ?? ""
        guard value != success else { return }
        var found = SAMLError.quote(value)
        if let sub = code.firstChild(Namespace.samlProtocol, "StatusCode")?.attribute("Value") {
            found += " / " + SAMLError.quote(sub)
        }
        if let message = status.firstChild(Namespace.samlProtocol, "StatusMessage")?.textContent, !message.isEmpty {
            found += " (" + SAMLError.quote(message) + ")"
        }
        throw SAMLError(.statusNotSuccess, "expected status \(success), found \(found)")
    }
}
