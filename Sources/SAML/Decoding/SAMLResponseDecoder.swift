import CookbookEncoding

/// Turns what a Token Exchange endpoint (or any SAML HTTP-POST endpoint) receives into the bytes of the
/// SAML response document.
///
/// The input may be a whole `application/x-www-form-urlencoded` body (`SAMLResponse=...&...`), the form
/// value alone, bare Base64, or the raw XML; ``Decoded/format`` says which was found. The rules, in order:
///
/// 1. The input is trimmed of ASCII whitespace; more than ``Options/maximumInputBytes`` is refused.
/// 2. Raw XML (it starts with `<`, after an optional UTF-8 byte order mark) is taken as is.
/// 3. A form body (it starts with `SAMLResponse=` or contains `&`) yields the value of
///    ``Options/fieldName``, which must occur exactly once.
/// 4. The value is percent-decoded exactly once (`+` stays `+`, as Base64 needs; in a value that is
///    percent-encoded XML, `+` is a space, as form encoding defines). A `%` that survives that decoding means the client
///    URL-encoded twice (the cookbook warns against it; an HTTP client that form-encodes an already
///    encoded value does it). ``Options/doubleEncoding`` decides: ``DoubleEncodingPolicy/repair``
///    (the default) decodes once more and records ``Repair/doubleURLEncoding``;
///    ``DoubleEncodingPolicy/reject`` throws ``SAMLError/Code/decodeDoubleURLEncoded``. Repairing is safe
///    because the signature, not the transport, protects the content.
/// 5. Base64: line breaks and tabs are skipped, padding is optional, and a space is read as the `+` that
///    a form decoder turned into it (recorded as ``Repair/spaceAsPlus``); where that gives no UTF-8 XML
///    document, spaces are skipped as the whitespace of an encoder's wrapping instead. Any other byte
///    outside the alphabet, data after padding, or a length that no encoding can have is an error.
/// 6. With ``Content/xml`` (the default) the result must be UTF-8, start with `<` and end with `>`. A
///    UTF-16 document (raw, or in Base64) is transcoded to UTF-8 first (`UTF16Transcoding`).
public struct SAMLResponseDecoder: Sendable {
    /// What to do with a value that was URL-encoded twice.
    public enum DoubleEncodingPolicy: Sendable, Hashable {
        /// Decode once more and record ``Repair/doubleURLEncoding``.
        case repair
        /// Throw ``SAMLError/Code/decodeDoubleURLEncoded``.
        case reject
    }

    /// What the decoded bytes must be.
    public enum Content: Sendable, Hashable {
        /// A UTF-8 XML document: starts with `<`, ends with `>`.
        case xml
        /// Any bytes (for transport round trips of arbitrary text).
        case any
    }

    /// Limits and policies.
    public struct Options: Sendable, Hashable {
        /// The form field that carries the response.
        public var fieldName: String = "SAMLResponse"
        /// The largest input accepted, before any decoding. Default 4 MiB.
        public var maximumInputBytes: Int = 4 << 20
        /// The largest decoded document accepted. Default 1 MiB.
        public var maximumDecodedBytes: Int = 1 << 20
        /// See ``DoubleEncodingPolicy``. Default ``DoubleEncodingPolicy/repair``.
        public var doubleEncoding: DoubleEncodingPolicy = .repair
        /// See ``Content``. Default ``Content/xml``.
        public var content: Content = .xml

        public init() {}
    }

    /// The shape the input arrived in.
    public enum InputFormat: String, Sendable, Hashable {
        case formBody = "form-body"
        case formValue = "form-value"
        case base64
        case xml
    }

    /// A deviation from the cookbook's encoding that was repaired: by the decoder (`decode.*`), or by the
    /// verifier's recovery of signed content the cookbook's normalisation damaged (`signature.*`).
    public enum Repair: String, Sendable, Hashable {
        /// The value had been URL-encoded twice.
        case doubleURLEncoding = "decode.repaired-double-url-encoding"
        /// Spaces in the Base64 were read as `+`.
        case spaceAsPlus = "decode.repaired-space-as-plus"
        /// The verifier restored the whitespace between signed elements that the cookbook's normalisation
        /// had collapsed, and the signature verified over the restored bytes (docs/recovery.md).
        case signedWhitespaceRestored = "signature.restored-whitespace"
        /// The verifier restored the line breaks of signed Base64 (SignatureValue, X509Certificate,
        /// CipherValue, ...) that the cookbook's normalisation had deleted, and the signature verified.
        case signedBase64LineBreaksRestored = "signature.restored-base64-line-breaks"
    }

    /// The decoded document and how it arrived.
    public struct Decoded: Sendable, Hashable {
        /// The document bytes.
        public var bytes: [UInt8]
        /// The shape of the input.
        public var format: InputFormat
        /// The repairs applied, in order.
        public var repairs: [Repair]
    }

    public var options: Options

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Decodes a request body, form value, Base64 text or XML document.
    public func decode(_ input: String) throws -> Decoded {
        var input = input
        return try input.withUTF8 { try decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes a request body, form value, Base64 text or XML document.
    public func decode(_ input: [UInt8]) throws -> Decoded {
        try input.withUnsafeBytes { try decode($0) }
    }

    /// Decodes a request body, form value, Base64 text or XML document.
    public func decode(_ input: UnsafeRawBufferPointer) throws -> Decoded {
        guard input.count <= options.maximumInputBytes else {
            throw SAMLError(
                .decodeTooLarge,
                "expected at most \(options.maximumInputBytes) input bytes, found \(input.count)"
            )
        }
        if let utf8 = try UTF16Transcoding.utf8(input, maximumBytes: options.maximumDecodedBytes) {
            return try checked(Decoded(bytes: utf8, format: .xml, repairs: []))
        }
        let trimmed = ASCII.trimmingWhitespace(input[...])
        if trimmed.isEmpty {
            if options.content == .any { return Decoded(bytes: [], format: .base64, repairs: []) }
            throw SAMLError(.decodeEmpty, "expected a SAML response, found only whitespace")
        }
        if ASCII.startsLikeXML(trimmed) {
            return try checked(Decoded(bytes: Array(trimmed), format: .xml, repairs: []))
        }

        var format = InputFormat.base64
        var value = trimmed
        if FormBody.looksLikeFormBody(trimmed, fieldName: options.fieldName) {
            guard let field = try FormBody.field(named: options.fieldName, in: trimmed) else {
                throw FormBody.missingField(options.fieldName, in: trimmed)
            }
            value = field
            format = .formBody
        }
        guard ASCII.contains(value, UInt8(ascii: "%")) else {
            // The common case: bare Base64, decoded straight from the input.
            return try base64(UnsafeRawBufferPointer(rebasing: value), format: format, repairs: [])
        }
        var repairs: [Repair] = []
        let encodedXML = value.starts(with: Array("%3C".utf8)) || value.starts(with: Array("%3c".utf8))
        var text = try PercentDecoding.decode(value, plusAsSpace: encodedXML)
        if format == .base64 { format = .formValue }
        if text.withUnsafeBytes({ ASCII.contains($0[...], UInt8(ascii: "%")) }) {
            guard options.doubleEncoding == .repair else {
                throw SAMLError(
                    .decodeDoubleURLEncoded,
                    "expected a value URL-encoded once, found \(SAMLError.quote(bytes: text.prefix(16)))… "
                        + "still percent-encoded after decoding once"
                )
            }
            text = try PercentDecoding.decode(text)
            repairs.append(.doubleURLEncoding)
        }
        let xmlValue = text.withUnsafeBytes { ASCII.startsLikeXML(ASCII.trimmingWhitespace($0[...])) }
        if xmlValue {
            return try checked(Decoded(bytes: text, format: format, repairs: repairs))
        }
        return try text.withUnsafeBytes { try base64($0, format: format, repairs: repairs) }
    }

    /// The document in Base64 `text`. A space is first read as the `+` a form decoder turned into it;
    /// when that gives no UTF-8 XML document, as the whitespace an encoder wrapped the text with (IdPs and
    /// HTTP clients wrap at 64 or 76 columns with spaces as well as line breaks). Both readings go through
    /// the same checks, so nothing reaches the parser that either reading would not have let through.
    private func base64(_ text: UnsafeRawBufferPointer, format: InputFormat, repairs: [Repair]) throws -> Decoded {
        var plus = repairs
        let first: Result<Decoded, any Error> = Result {
            let bytes = try Base64Decoding.decode(text, maximumBytes: options.maximumDecodedBytes, repairs: &plus)
            return try checked(Decoded(bytes: bytes, format: format, repairs: plus))
        }
        guard case .failure(let failure) = first, options.content == .xml, Base64Decoding.containsSpace(text) else {
            return try first.get()
        }
        var skipped = repairs
        guard
            let bytes = try? Base64Decoding.decode(text, maximumBytes: options.maximumDecodedBytes, spaces: .whitespace, repairs: &skipped)
        else { throw failure }  // not Base64 either way: the first reading's error says where
        guard let decoded = try? checked(Decoded(bytes: bytes, format: format, repairs: skipped)) else {
            // Neither reading is a document: say what was found, not what the `+` reading decoded to.
            throw SAMLError(
                .decodeNotXML,
                "expected Base64 of a UTF-8 XML document, found Base64 with spaces that decodes to none, "
                    + "whether a space is read as '+' or skipped")
        }
        return decoded
    }

    private func checked(_ decoded: Decoded) throws -> Decoded {
        var decoded = decoded
        // A UTF-16 document in Base64: its UTF-8 form (UTF16Transcoding).
        if decoded.format != .xml, options.content == .xml,
            let utf8 = try decoded.bytes.withUnsafeBytes({ try UTF16Transcoding.utf8($0, maximumBytes: options.maximumDecodedBytes) })
        {
            decoded.bytes = utf8
        }
        guard decoded.bytes.count <= options.maximumDecodedBytes else {
            throw SAMLError(
                .decodeTooLarge,
                "expected a document of at most \(options.maximumDecodedBytes) bytes, found \(decoded.bytes.count)"
            )
        }
        guard options.content == .xml else { return decoded }
        try decoded.bytes.withUnsafeBytes { bytes in
            // Text that only happens to be Base64 (`hello world`) decodes to bytes that are not XML: say
            // so, rather than report the first of those bytes as ill-formed UTF-8.
            if decoded.format != .xml {
                var body = bytes[...]
                if body.starts(with: ASCII.byteOrderMark) { body = body.dropFirst(3) }
                body = ASCII.trimmingWhitespace(body)
                if let first = body.first, first != UInt8(ascii: "<") {
                    throw SAMLError(
                        .decodeNotXML,
                        "expected \(decoded.format == .base64 ? "Base64" : "a SAMLResponse field") of an XML document, found text that decodes to byte 0x\(Hex.string([first])) first, not '<'"
                    )
                }
            }
            try ASCII.checkXMLDocumentShape(bytes)
        }
        return decoded
    }
}
