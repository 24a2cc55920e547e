internal import CSAMLShim

/// SAML Core 3.2.2: `Destination`, when present, must be the endpoint the response was sent to.
enum DestinationPolicy {
    static func check(response: xmlNodePtr, expected: ExpectedValue<String>) throws {
        guard let endpoint = expected.expected, let destination = response.attribute("Destination") else { return }
        guard XMLWhitespace.trimmed(destination) == endpoint else {
            throw SAMLError(
                .destinationMismatch,
                "expected Destination \(SAMLError.quote(endpoint)), found \(SAMLError.quote(destination))"
            )
        }
    }
}

/// SAML Core 3.2.2 and Profiles 4.1.4.3: `InResponseTo` must name the request the service sent, when the
/// service knows it. The Response's attribute, when present, must match; some IdPs put it only on the
/// bearer SubjectConfirmationData, which ``SubjectConfirmationPolicy`` matches; one of the two must carry it.
enum InResponseToPolicy {
    /// Checks the Response's attribute, when it has one.
    static func check(response: xmlNodePtr, expected: ExpectedValue<String>) throws {
        guard let requestID = expected.expected, let found = response.attribute("InResponseTo") else { return }
        guard found == requestID else { throw mismatch(requestID, found) }
    }

    /// When the Response has no attribute, the satisfying bearer confirmation must have carried it.
    static func checkFallback(response: xmlNodePtr, confirmationInResponseTo: String?, expected: ExpectedValue<String>) throws {
        guard let requestID = expected.expected, response.attribute("InResponseTo") == nil else { return }
        guard confirmationInResponseTo == requestID else { throw mismatch(requestID, confirmationInResponseTo) }
    }

    private static func mismatch(_ requestID: String, _ found: String?) -> SAMLError {
        SAMLError(
            .inResponseToMismatch,
            "expected InResponseTo \(SAMLError.quote(requestID)), found \(found.map { SAMLError.quote($0) } ?? "none")"
        )
    }
}
