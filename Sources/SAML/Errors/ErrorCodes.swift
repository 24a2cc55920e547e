// The codes of every failure, grouped by stage. Documented in docs/error-codes.md; keep both in step.

extension SAMLError.Code {
    // MARK: Input (bytes handed to the library)

    /// Bytes that must be UTF-8 are not.
    public static let inputNotUTF8 = Self("input.not-utf8")

    // MARK: Decoding of what a Token Exchange endpoint receives

    /// Nothing left after trimming whitespace.
    public static let decodeEmpty = Self("decode.empty")
    /// The input or the decoded document exceeds a configured size cap.
    public static let decodeTooLarge = Self("decode.too-large")
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
    /// The decoded bytes do not start like an XML document.
    public static let decodeNotXML = Self("decode.not-xml")
    /// The decoded document stops before its end (it does not end with `>`).
    public static let decodeTruncatedXML = Self("decode.truncated-xml")

    // MARK: Library start-up

    /// libxmlsec1 or its OpenSSL backend failed to initialise, or its ABI differs from the headers.
    public static let runtimeInitialisationFailed = Self("runtime.initialisation-failed")
}
