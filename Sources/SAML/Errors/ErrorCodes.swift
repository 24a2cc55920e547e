// The codes of every failure, grouped by stage, each with its HTTP meaning (400 unless stated).
// docs/error-codes.md is generated from this file (scripts/ci/error-codes-table) and checked in CI.

extension SAMLError.Code {
    // MARK: Input (bytes handed to the library)

    /// Bytes that must be UTF-8 are not.
    public static let inputNotUTF8 = Self("input.not-utf8")

    // MARK: Decoding of what a Token Exchange endpoint receives

    /// Nothing left after trimming whitespace.
    public static let decodeEmpty = Self("decode.empty")
    /// The input or the decoded document exceeds a configured size cap.
    public static let decodeTooLarge = Self("decode.too-large", httpStatus: 413)
    /// A form body without the expected field.
    public static let decodeMissingField = Self("decode.missing-field")
    /// A form body that carries the expected field more than once.
    public static let decodeDuplicateField = Self("decode.duplicate-field")
    /// A `%` not followed by two hexadecimal digits.
    public static let decodeInvalidPercentEncoding = Self("decode.invalid-percent-encoding")
    /// The value was URL-encoded twice and the policy is to reject that.
    public static let decodeDoubleURLEncoded = Self("decode.double-url-encoded")
    /// A byte outside the Base64 alphabet, or misplaced padding.
    public static let decodeInvalidBase64 = Self("decode.invalid-base64")
    /// Base64 whose length cannot be a whole encoding (cut off in transit).
    public static let decodeTruncatedBase64 = Self("decode.truncated-base64")
    /// The decoded bytes are not UTF-8.
    public static let decodeNotUTF8 = Self("decode.not-utf8")
    /// A form field's text has more than 30 combining characters (non-starters) in a row: not Unicode
    /// stream-safe text (UAX #15), which no real text needs, and on which Swift's string comparisons
    /// take quadratic time.
    public static let decodeNotStreamSafe = Self("decode.not-stream-safe")
    /// A document that starts as UTF-16 (a byte order mark, or `<?` in UTF-16) is not well-formed UTF-16:
    /// an odd length, an unpaired surrogate, U+0000, or a declaration naming another encoding.
    public static let decodeNotUTF16 = Self("decode.not-utf16")
    /// The decoded bytes do not start like an XML document.
    public static let decodeNotXML = Self("decode.not-xml")
    /// The decoded document stops before its end (it does not end with `>`).
    public static let decodeTruncatedXML = Self("decode.truncated-xml")

    // MARK: XML parsing

    /// The document is over ``XMLParserLimits/maximumDocumentBytes``.
    public static let xmlTooLarge = Self("xml.too-large", httpStatus: 413)
    /// libxml2 refused the document; the message names line and column.
    public static let xmlMalformed = Self("xml.malformed")
    /// The document has a DOCTYPE (DTDs, external and internal entities are refused outright).
    public static let xmlDoctypeForbidden = Self("xml.doctype-forbidden")
    /// An entity reference or declaration.
    public static let xmlEntityForbidden = Self("xml.entity-forbidden")
    /// A processing instruction before or after the document element (the XML declaration is not one):
    /// nothing in SAML needs one, and a Reference with an empty URI would cover it.
    public static let xmlProcessingInstructionForbidden = Self("xml.processing-instruction-forbidden")
    /// A cap of ``XMLParserLimits`` exceeded (size of a text run, depth, elements, nodes, attributes or
    /// namespace declarations per element or in all, comments outside the document element), found before
    /// libxml2 parses.
    public static let xmlLimitExceeded = Self("xml.limit-exceeded")

    // MARK: Structure

    /// The root element is not `samlp:Response`.
    public static let structureNotAResponse = Self("structure.not-a-response")
    /// `Version` is not `2.0`.
    public static let structureVersion = Self("structure.version")
    /// A required element or attribute is absent (the message names it).
    public static let structureMissingElement = Self("structure.missing-element")
    /// No `saml:Assertion`.
    public static let assertionMissing = Self("assertion.missing")
    /// More than one `saml:Assertion` (anywhere in the document).
    public static let assertionMultiple = Self("assertion.multiple")
    /// The assertion is not a direct child of the Response.
    public static let assertionMisplaced = Self("assertion.misplaced")
    /// An element the SAML 2.0 assertion schema allows once (`Subject`, `Conditions`) appears twice.
    public static let assertionDuplicateElement = Self("assertion.duplicate-element")
    /// Response or Assertion without an `ID`.
    public static let idMissing = Self("id.missing")
    /// The same `ID` value twice in the document.
    public static let idDuplicate = Self("id.duplicate")
    /// An `ID` (Response, Assertion, metadata) or an `Id` xmlsec would register that is not made of
    /// xs:NCName characters (letters, digits, `.`, `-`, `_`; no colon, blank, quote, bracket or slash), or a
    /// Reference URI other than `""` or `#` + such a name: a Reference can only ever name a plain ID,
    /// resolved through the document's ID table, never an XPointer or XPath expression.
    public static let idMalformed = Self("id.malformed")

    // MARK: Signatures

    /// No signature where the ``SignaturePolicy`` requires one.
    public static let signatureMissing = Self("signature.missing")
    /// A `ds:Signature` that is not a direct child of the Response or of the Assertion.
    public static let signatureMisplaced = Self("signature.misplaced")
    /// Two signatures on one element.
    public static let signatureDuplicate = Self("signature.duplicate")
    /// Not exactly one Reference, or its URI is not `#` + the ID of the signature's parent.
    public static let signatureReferenceMismatch = Self("signature.reference-mismatch")
    /// A transform outside enveloped-signature + one canonicalisation, or more than two transforms.
    public static let signatureTransformNotAllowed = Self("signature.transform-not-allowed")
    /// A `ds:Object` or `ds:Manifest` inside the signature.
    public static let signatureObjectForbidden = Self("signature.object-forbidden")
    /// A signature, digest or canonicalisation algorithm outside the allow-list (or unknown).
    public static let signatureAlgorithmNotAllowed = Self("signature.algorithm-not-allowed")
    /// The referenced element's digest does not match: its content changed after signing (for example
    /// by a whitespace normalisation).
    public static let signatureDigestMismatch = Self("signature.digest-mismatch")
    /// The digests match but the signature value does not verify with any pinned key.
    public static let signatureInvalid = Self("signature.invalid")
    /// A digest or the `SignedInfo` signature fails on a document that bears the marks of the Adobe Pass
    /// cookbook's whitespace normalisation (no newline anywhere; whitespace between elements collapsed to
    /// one space, or Base64 longer than a line unbroken), and no reconstruction of the signer's layout
    /// verifies: the message names the part (the Reference digest or `SignedInfo`) and the marks seen. The
    /// device or the IdP changed more than whitespace between elements and Base64 line breaks (docs/recovery.md).
    public static let signatureNormalizationDamage = Self("signature.normalisation-damage")
    /// The signature value does not verify, and the certificate it carries is not one of the pinned ones.
    public static let signatureUntrustedKey = Self("signature.untrusted-key")
    /// xmlsec could not process the signature (missing parts, bad encoding).
    public static let signatureMalformed = Self("signature.malformed")
    /// Canonicalising the signed content would pass the work budget tied to the document's size: more
    /// canonical bytes than a small multiple of the document, more namespace work than the bound, or an
    /// `InclusiveNamespaces` PrefixList longer than the cap. Checked before any digest is computed.
    public static let signatureBudgetExceeded = Self("signature.budget-exceeded")

    // MARK: Decryption

    /// No SP key is configured, or no EncryptedKey is found.
    public static let decryptionNoKey = Self("decryption.no-key")
    /// Every cryptographic failure of decryption, with one message: the key transport fails with every SP
    /// key (another SP's key, wrong padding), the data does not decrypt, or the plaintext is not one
    /// element within the limits. One answer for all, so that none is an oracle.
    public static let decryptionFailed = Self("decryption.failed")
    /// A `CipherReference`, or a `RetrievalMethod` to anything but a same-document ID: nothing is fetched.
    public static let decryptionExternalReference = Self("decryption.external-reference")
    /// A key transport or data encryption algorithm outside the allow-list (the message names the opt-in).
    public static let decryptionAlgorithmNotAllowed = Self("decryption.algorithm-not-allowed")

    // MARK: Protocol checks (SAML 2.0 Core and Profiles)

    /// A condition this verifier cannot evaluate: a `saml:Condition` of an unknown `xsi:type` or an element
    /// of another namespace inside `Conditions`. SAML Core 2.5.1 makes the assertion Indeterminate, so it
    /// is not valid.
    public static let conditionsUnknown = Self("conditions.unknown")

    /// The top-level StatusCode is not Success; the message carries the status and sub-status.
    public static let statusNotSuccess = Self("status.not-success")
    /// No Issuer where one is required.
    public static let issuerMissing = Self("issuer.missing")
    /// The Issuer differs from the expected IdP entity ID.
    public static let issuerMismatch = Self("issuer.mismatch")
    /// The Assertion's Issuer has a `Format` other than the entity format (Profiles 4.1.4.2).
    public static let issuerFormat = Self("issuer.format")
    /// `Destination` differs from the expected endpoint.
    public static let destinationMismatch = Self("destination.mismatch")
    /// A signed Response without `Destination` while the endpoint is configured (Bindings 3.5.5.2).
    public static let destinationMissing = Self("destination.missing")
    /// No AudienceRestriction contains the expected audience.
    public static let audienceMismatch = Self("audience.mismatch")
    /// `InResponseTo` of the Response differs from the expected request ID.
    public static let inResponseToMismatch = Self("in-response-to.mismatch")
    /// A request ID is expected, and no signed part (the signed Response, or the signed assertion's
    /// bearer confirmation) carries an `InResponseTo`.
    public static let inResponseToMissing = Self("in-response-to.missing")
    /// With a state store: the signed `InResponseTo` names no request this service can still answer
    /// (never issued by it, or already answered).
    public static let inResponseToNotOutstanding = Self("in-response-to.not-outstanding")
    /// With a state store: the request the signed `InResponseTo` names can no longer be answered (its
    /// lifetime has passed, by the store's clock).
    public static let inResponseToExpired = Self("in-response-to.expired")
    /// The request the signed `InResponseTo` names was issued to another service provider.
    public static let inResponseToWrongServiceProvider = Self("in-response-to.wrong-service-provider")
    /// The request the signed `InResponseTo` names was issued for another MVPD (or identity provider).
    public static let inResponseToWrongMVPD = Self("in-response-to.wrong-mvpd")
    /// The request the signed `InResponseTo` names was issued to another device.
    public static let inResponseToWrongDevice = Self("in-response-to.wrong-device")
    /// The request the signed `InResponseTo` names was issued through another API (REST API v2 and v1).
    public static let inResponseToWrongAPI = Self("in-response-to.wrong-api")
    /// With a state store that refuses them: a response without `InResponseTo` (IdP-initiated).
    public static let inResponseToUnsolicited = Self("in-response-to.unsolicited")
    /// `Conditions/@NotOnOrAfter` has passed (beyond the skew).
    public static let timeExpired = Self("time.expired")
    /// `Conditions/@NotBefore` is in the future (beyond the skew).
    public static let timeNotYetValid = Self("time.not-yet-valid")
    /// A timestamp is not an xs:dateTime.
    public static let timeMalformed = Self("time.malformed")
    /// `IssueInstant` is in the future beyond the skew, or older than the maximum age.
    public static let timeIssueInstant = Self("time.issue-instant")
    /// No bearer SubjectConfirmation.
    public static let subjectConfirmationMissing = Self("subject-confirmation.missing")
    /// A bearer SubjectConfirmation without SubjectConfirmationData, without `NotOnOrAfter`, or without
    /// `Recipient` while recipients are configured (Profiles 4.1.4.2).
    public static let subjectConfirmationIncomplete = Self("subject-confirmation.incomplete")
    /// The bearer SubjectConfirmationData's Recipient differs from the expected endpoint.
    public static let subjectConfirmationRecipient = Self("subject-confirmation.recipient-mismatch")
    /// The bearer SubjectConfirmationData's NotOnOrAfter has passed, or its NotBefore is in the future.
    public static let subjectConfirmationExpired = Self("subject-confirmation.expired")
    /// The bearer SubjectConfirmationData's InResponseTo differs from the expected request ID.
    public static let subjectConfirmationInResponseTo = Self("subject-confirmation.in-response-to-mismatch")
    /// The assertion ID was seen before (SAML Profiles 4.1.4.5).
    public static let replayDetected = Self("replay.detected")
    /// The in-memory state store (`InMemoryStateStore`) is full of entries that are all still valid (fail
    /// closed).
    public static let replayCacheFull = Self("replay.cache-full", httpStatus: 503)
    /// A state store or another dependency failed or did not answer in time: verification fails closed
    /// (retry later).
    public static let storeUnavailable = Self("store.unavailable", httpStatus: 503)
    /// Required metadata fields are absent; the message lists every missing name.
    public static let fieldsMissing = Self("fields.missing")

    // MARK: Configuration

    /// No pinned key, or a key that cannot be loaded.
    public static let configurationInvalidKey = Self("configuration.invalid-key", httpStatus: 500)
    /// A configuration value that cannot work (the message names it).
    public static let configurationInvalid = Self("configuration.invalid", httpStatus: 500)

    // MARK: Library start-up

    /// libxmlsec1 or its OpenSSL backend failed to initialise, or its ABI differs from the headers.
    public static let runtimeInitializationFailed = Self("runtime.initialisation-failed", httpStatus: 500)
}
