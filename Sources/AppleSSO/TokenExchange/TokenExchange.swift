import Foundation
import SAML

/// The server side of the Apple SSO Token Exchange: one call from the incoming form body and headers to
/// either the v2-shaped `appleSSO` profile or an Enhanced Error Code object.
///
/// Order: the `AP-Partner-Framework-Status` header is decoded and checked (permission, provider, expiry);
/// the MVPD is the one the header's provider id maps to through `platformMappingId`, unless given (then
/// the two must agree); the `SAMLResponse` form field is decoded and verified; the MVPD's
/// `requiredMetadataFields` are extracted (every one must be present) and mapped to user-metadata keys.
/// An MVPD without `requiredMetadataFields` gets its NameID and every attribute.
public struct TokenExchange: Sendable {
    public var configuration: MVPDConfiguration
    public var verifier: SAMLResponseVerifier
    public var mapping: UserMetadataMapping
    public var decoder: SAMLResponseDecoder

    public init(
        configuration: MVPDConfiguration, verifier: SAMLResponseVerifier, mapping: UserMetadataMapping = UserMetadataMapping(),
        decoder: SAMLResponseDecoder = SAMLResponseDecoder()
    ) {
        self.configuration = configuration
        self.verifier = verifier
        self.mapping = mapping
        self.decoder = decoder
    }

    /// Runs the exchange for one request.
    ///
    /// - Parameters:
    ///   - body: the `application/x-www-form-urlencoded` request body (or just the SAMLResponse value).
    ///   - partnerFrameworkStatus: the `AP-Partner-Framework-Status` header value.
    ///   - mvpd: the MVPD id, when the request names one.
    public func exchange(body: [UInt8], partnerFrameworkStatus: String?, mvpd: String? = nil) async -> Result<Profile, EnhancedError> {
        let now = verifier.configuration.clock.now()
        guard let header = partnerFrameworkStatus else {
            return .failure(EnhancedError(pfs: .accessNotPresent))
        }
        let status: PartnerFrameworkStatus
        do {
            status = try PartnerFrameworkStatus(headerValue: header)
        } catch let error as SAMLError {
            return .failure(EnhancedError(status: 400, code: "invalid_header_pfs_malformed", message: "The AP-Partner-Framework-Status header cannot be decoded.", details: error))
        } catch {
            return .failure(EnhancedError(status: 400, code: "invalid_header_pfs_malformed", message: "The AP-Partner-Framework-Status header cannot be decoded.", details: nil))
        }
        let provider: MVPD
        do {
            provider = try status.validate(configuration: configuration, requestedMVPD: mvpd, now: now)
        } catch {
            return .failure(EnhancedError(pfs: error))
        }
        do {
            let decoded = try decoder.decode(body)
            let response = try await verifier.verify(decoded.bytes)
            // v2 configurations may carry no requiredMetadataFields (the names then come per request as
            // attributesNames): the profile then carries the NameID and every attribute.
            let names = provider.requiredMetadataFields.isEmpty
                ? ["NameID"] + response.assertion.attributes.map(\.name) : provider.requiredMetadataFields
            let fields = try response.fields(names, allowMissing: provider.requiredMetadataFields.isEmpty)
            return .success(Profile(mvpd: provider.id, response: response, fields: fields, mapping: mapping))
        } catch let error as SAMLError {
            return .failure(EnhancedError(status: 400, code: "invalid_parameter_saml_response", message: "The SAML response is not valid.", details: error))
        } catch {
            return .failure(EnhancedError(status: 400, code: "invalid_parameter_saml_response", message: "The SAML response is not valid.", details: nil))
        }
    }
}

/// The v2 `appleSSO` profile: `{"profiles": {"<mvpd>": {"notBefore", "notAfter", "issuer": "Apple",
/// "type": "appleSSO", "attributes": {"<key>": {"value", "state": "plain"}}}}}`.
public struct Profile: Sendable {
    public let mvpd: String
    /// `Conditions/@NotBefore` in milliseconds (IssueInstant when absent).
    public let notBefore: Int64
    /// `Conditions/@NotOnOrAfter` in milliseconds.
    public let notAfter: Int64
    /// User-metadata key → values (one value is written as a string, several as an array).
    public let attributes: [(key: String, values: [String])]
    /// The verified response it came from.
    public let response: VerifiedResponse

    init(mvpd: String, response: VerifiedResponse, fields: RequiredFields, mapping: UserMetadataMapping) {
        self.mvpd = mvpd
        self.response = response
        let assertion = response.assertion
        notBefore = (assertion.notBefore ?? assertion.issueInstant).millisecondsSinceEpoch
        notAfter = (assertion.notOnOrAfter ?? assertion.issueInstant).millisecondsSinceEpoch
        attributes = fields.values.map { (mapping.key(for: $0.name), $0.values) }
    }

    /// The JSON body of the `201 Created` answer.
    public var json: [UInt8] {
        var attributeObject: [String: Any] = [:]
        for (key, values) in attributes {
            attributeObject[key] = ["value": values.count == 1 ? values[0] as Any : values as Any, "state": "plain"]
        }
        let object: [String: Any] = [
            "profiles": [
                mvpd: [
                    "notBefore": notBefore, "notAfter": notAfter, "issuer": "Apple", "type": "appleSSO",
                    "attributes": attributeObject,
                ] as [String: Any]
            ]
        ]
        // Strings, numbers and dictionaries only: serialisation cannot fail.
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }
}

/// An Enhanced Error Code object: `{"action", "status", "code", "message", "details"}`.
public struct EnhancedError: Error, Sendable {
    public let action: String
    public let status: Int
    public let code: String
    public let message: String
    /// The library's own error, when one caused this (its code goes into `details`).
    public let cause: SAMLError?

    init(status: Int, code: String, message: String, details: SAMLError?, action: String = "none") {
        self.action = action
        self.status = status
        self.code = code
        self.message = message
        self.cause = details
    }

    init(pfs outcome: PartnerFrameworkOutcome) {
        self.init(status: 400, code: outcome.rawValue, message: outcome.message, details: nil)
    }

    /// `details`: the library's code and message, e.g. `signature.digest-mismatch: expected ...`.
    public var details: String? { cause.map { "\($0.code.identifier): \($0.message)" } }

    public var json: [UInt8] {
        var object: [String: Any] = ["action": action, "status": status, "code": code, "message": message]
        object["details"] = details ?? NSNull()
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }
}
