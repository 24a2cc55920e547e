internal import CSAMLShim

/// SAML Core 3.2.2: `Destination`, when present, must be the endpoint the response was sent to; Bindings
/// 3.5.5.2: a signed Response must carry it, so when the endpoint is configured a signed Response without
/// one is refused (an unsigned Response's attribute proves nothing, so its absence is not held against it).
enum DestinationPolicy {
    static func check(response: xmlNodePtr, responseSigned: Bool, expected: ExpectedValue<String>) throws {
        guard let endpoint = expected.expected else { return }
        guard let destination = response.attribute("Destination") else {
            guard !responseSigned else {
                throw SAMLError(.destinationMissing, "expected Destination \(SAMLError.quote(endpoint)) on the signed Response, found none")
            }
            return
        }
        guard XMLWhitespace.trimmed(destination) == endpoint else {
            throw SAMLError(
                .destinationMismatch,
                "expected Destination \(SAMLError.quote(endpoint)), found \(SAMLError.quote(destination))"
            )
        }
    }
}
