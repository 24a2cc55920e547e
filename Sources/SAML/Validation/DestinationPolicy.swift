/// SAML Bindings 3.5.5.2: a signed Response's Destination must be present and name the endpoint it was
/// received at; an unsigned one's, when present, must too.
enum DestinationPolicy {
    static func check(destination: String?, responseSigned: Bool, expected: ExpectedValue<String>) throws {
        guard let endpoint = expected.expected else { return }
        guard let destination else {
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
