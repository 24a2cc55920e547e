/// A SAML response whose signature and conditions were verified, with what its assertion says.
///
/// Only ``SAMLResponseVerifier`` creates one (there is no public initialiser): every value in it was
/// read from the element that a verified signature covered.
public struct VerifiedResponse: Sendable, Hashable {
    /// The Response's `ID` (signed only when ``signedParts`` contains `.response`).
    public let responseID: String
    /// The Response's Issuer, if it has one (it is optional in SAML Core 3.2.2); checked against the
    /// expected issuer when present, signed only when ``signedParts`` contains `.response`.
    public let responseIssuer: String?
    /// The Response's `Destination`, when the Response is signed (an unsigned one's proves nothing).
    public let destination: String?
    /// The request this response answers, from a signed part only: the signed Response's
    /// `InResponseTo`, or the bearer confirmation's in the signed assertion.
    public let inResponseTo: String?
    /// Which elements carried a verified signature.
    public let signedParts: SignedParts
    /// The SHA-256 fingerprint of the pinned key that verified it (``TrustedKey/fingerprint``; the
    /// Assertion's signature's when both are signed): which key of a rotation bundle is in use.
    public let signingKeyFingerprint: String
    /// The legacy algorithms (SHA-1 and SHA-224 signature and digest method URIs, sorted) the verified
    /// signatures used; empty unless ``SAMLResponseVerifier/Configuration/algorithms`` is
    /// ``AlgorithmPolicy/allowingSHA1``. An acceptance under them is also logged at warning level.
    public internal(set) var legacyAlgorithms: [String] = []
    /// What was repaired on the way: by ``SAMLResponseDecoder`` (when verified from its
    /// ``SAMLResponseDecoder/Decoded``), then by the recovery of signed content damaged by the cookbook's
    /// whitespace normalisation (``SAMLResponseVerifier/Configuration/recoversNormalizationDamage``).
    public package(set) var repairs: [SAMLResponseDecoder.Repair] = []
    /// The verified assertion.
    public let assertion: VerifiedAssertion
    /// Checks not run because the configuration said so (for example ``SkippedChecks/audience``).
    public let skippedChecks: SkippedChecks
    /// Whether the state store recorded ``SAMLResponseVerifier/RequestExpectations/attachment``'s value
    /// with the assertion, in the same step (a ``SAMLAttachingStateStore``).
    public package(set) var attachmentRecorded = false
}

/// The content of the verified assertion.
public struct VerifiedAssertion: Sendable, Hashable {
    public let id: String
    public let issuer: String
    public let issueInstant: SAMLInstant
    /// The subject's NameID, if present.
    public let nameID: NameID?
    /// `AuthnStatement/@SessionIndex`, if present.
    public let sessionIndex: String?
    /// `AuthnStatement/@AuthnInstant`, if present.
    public let authnInstant: SAMLInstant?
    /// `Conditions/@NotBefore`.
    public let notBefore: SAMLInstant?
    /// `Conditions/@NotOnOrAfter`.
    public let notOnOrAfter: SAMLInstant?
    /// Every `Audience` of every `AudienceRestriction`.
    public let audiences: [String]
    /// Every attribute of every AttributeStatement, in document order.
    public let attributes: [SAMLAttribute]
}

/// `saml:NameID`.
public struct NameID: Sendable, Hashable {
    /// The full text content, trimmed of XML whitespace.
    public let value: String
    public let format: String?
    public let nameQualifier: String?
    public let spNameQualifier: String?
}

/// `saml:Attribute`.
public struct SAMLAttribute: Sendable, Hashable {
    public let name: String
    public let friendlyName: String?
    public let nameFormat: String?
    /// Each AttributeValue as a string, in order: ``SAMLAttributeValue/string``.
    public var values: [String] { attributeValues.map(\.string) }
    /// Each AttributeValue with what kind of content it had, in order.
    public let attributeValues: [SAMLAttributeValue]
}

/// One `saml:AttributeValue`, exactly as signed.
public struct SAMLAttributeValue: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        /// Text: every text and CDATA child concatenated, comments ignored, whitespace kept (an
        /// `xs:string`'s whitespace is part of the value).
        case text
        /// One `saml:NameID` (eduPersonTargetedID as pysaml2, Shibboleth and others write it):
        /// ``SAMLAttributeValue/string`` is the NameID's value, as ``VerifiedResponse/fields(_:allowMissing:)`` returns it; its format and
        /// qualifiers are here.
        case nameID(NameID)
        /// Other element content: ``SAMLAttributeValue/string`` is its XML, each element serialised with
        /// the namespace declarations it uses.
        case xml
        /// `xsi:nil="true"`: no value; ``SAMLAttributeValue/string`` is empty.
        case null
    }

    /// The value's text, the NameID's value for ``Content/nameID(_:)``, or its XML for ``Content/xml``.
    public let string: String
    public let content: Content
    /// The `xsi:type` attribute, if any (for example `xs:string`).
    public let type: String?

    /// True when the value carries nothing but XML whitespace (a ``Content/null`` value included): such a
    /// value never satisfies a required field.
    public var isEmpty: Bool { string.utf8.allSatisfy(XMLWhitespace.isWhitespace) }
}
