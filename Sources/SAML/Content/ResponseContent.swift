/// What the protocol checks and the extraction read of a verified Response and its Assertion, as plain
/// values. The verifier builds it (``ResponseContentReader``) from the elements the signatures covered,
/// after they verified; the policies of `Validation/` and ``AssertionExtraction`` work on it alone, without
/// a C pointer, and can be tested with values written by hand.
struct ResponseContent: Sendable, Hashable {
    /// A `saml:Issuer`: its text (trimmed of XML whitespace) and `Format`.
    struct Issuer: Sendable, Hashable {
        var value: String
        var format: String?
    }

    /// `samlp:Status`: the top-level code, the second-level one, the message (trimmed).
    struct Status: Sendable, Hashable {
        var code: String
        var subcode: String?
        var message: String?
    }

    /// An attribute that holds an `xs:dateTime`, read as the content is: its instant
    /// (``SAMLInstant/init(xmlDateTime:)-(String)``), or, when it is not one, what the message says.
    struct Instant: Sendable, Hashable {
        /// A value that is not an `xs:dateTime`: the text as written and where it was found, for example
        /// `saml:Conditions/@NotBefore`.
        struct Malformed: Sendable, Hashable {
            var text: String
            var location: String
        }

        /// Nil when the value is malformed.
        var value: SAMLInstant?
        var malformed: Malformed?

        init(_ value: SAMLInstant) {
            self.value = value
        }

        init(malformed text: String, location: String) {
            malformed = Malformed(text: text, location: location)
        }

        /// The attribute `attribute` of `element` (a qualified name, for the message) holding `text`.
        init(text: String, element: String, attribute: String) {
            if let value = SAMLInstant(xmlDateTime: text) {
                self.init(value)
            } else {
                self.init(malformed: text, location: "\(element)/@\(attribute)")
            }
        }
    }

    /// A `saml:SubjectConfirmation`.
    struct Confirmation: Sendable, Hashable {
        /// `Method`, trimmed.
        var method: String?
        var data: ConfirmationData?
    }

    /// `saml:SubjectConfirmationData`.
    struct ConfirmationData: Sendable, Hashable {
        /// As written (compared trimmed).
        var recipient: String?
        var notBefore: Instant?
        var notOnOrAfter: Instant?
        /// Trimmed.
        var inResponseTo: String?
    }

    /// `saml:Conditions`.
    struct Conditions: Sendable, Hashable {
        var notBefore: Instant?
        var notOnOrAfter: Instant?
        /// The `Audience` texts of each `AudienceRestriction`.
        var audienceRestrictions: [[String]]
    }

    struct Assertion: Sendable, Hashable {
        /// `prefix:Assertion` as written, for messages.
        var name: String
        var id: String
        var issuer: Issuer?
        var issueInstant: Instant?
        var nameID: NameID?
        var confirmations: [Confirmation]
        var conditions: Conditions?
        /// The first `AuthnStatement`'s `SessionIndex` and `AuthnInstant`.
        var sessionIndex: String?
        var authnInstant: Instant?
        var attributes: [SAMLAttribute]
        /// What the schema allows at most once, as counted (``AssertionSchemaPolicy`` judges it).
        var shape: Shape
    }

    /// What the SAML 2.0 assertion schema allows at most once in an assertion's Subject and Conditions,
    /// as counted, and the first condition the verifier cannot evaluate.
    struct Shape: Sendable, Hashable {
        var subjects = 0
        /// `NameID`, `BaseID` and `EncryptedID` in the first `Subject`.
        var identifiers = 0
        var conditions = 0
        /// In the first `Conditions`.
        var oneTimeUse = 0
        var proxyRestrictions = 0
        /// The first child of the first `Conditions` other than `AudienceRestriction`, `OneTimeUse` and
        /// `ProxyRestriction`, as written.
        var unknownCondition: String?
    }

    /// `prefix:Response` as written, for messages.
    var name: String
    var id: String
    var issuer: Issuer?
    /// As written (compared trimmed).
    var destination: String?
    /// Trimmed.
    var inResponseTo: String?
    var issueInstant: Instant?
    /// Nil when `samlp:Status/samlp:StatusCode` is absent.
    var status: Status?
    var assertion: Assertion
}
