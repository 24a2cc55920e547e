// The catalogue of recovery: the layouts real signers write (Base64 wrapping, indentation, where newlines
// go), the cookbook's marks, and nothing that touches a tree. SignatureRecovery_libxml.swift tries them;
// SignatureRecovery+Tree_libxml.swift makes one in the parsed document.

extension SignatureRecovery {
    /// How a signer laid out the Base64 of one kind of element: lines of `width` characters separated by
    /// `\n`, optionally a line break before the first and after the last; values not longer than `width`
    /// are written on one line, without breaks (what every observed signer does).
    struct Wrapping: Hashable {
        var width: Int
        var leadingBreak = false
        var trailingBreak = false

        var description: String {
            "lines of \(width)" + (leadingBreak ? ", a break before" : "") + (trailingBreak ? ", a break after" : "")
        }
    }

    /// What a Base64 element holds: signers lay the kinds out differently.
    enum Base64Kind {
        /// SignatureValue, X509SKI.
        case value
        /// DigestValue.
        case digest
        /// X509Certificate, X509CRL and the numbers of RSAKeyValue / DSAKeyValue.
        case key
        /// CipherValue, OAEPparams (XML Encryption).
        case cipher
    }

    /// The Base64 layouts of the signers observed. `nil`: left on one line.
    struct Base64Layout: Hashable {
        var values: Wrapping?
        var certificates: Wrapping?
        /// XML Encryption's values; `nil` here means laid out as ``values``.
        var ciphers: Wrapping??
        /// DigestValue; `nil` here means laid out as ``values``.
        var digests: Wrapping??
        /// The line breaks were `\r\n` written as `&#13;\n` (Santuario, the JDK): each surviving `\r`
        /// marks where a `\n` was deleted.
        var carriageReturns = false

        static let unchanged = Base64Layout()

        func wrapping(_ kind: Base64Kind) -> Wrapping? {
            switch kind {
            case .value: values
            case .digest: digests ?? values
            case .key: certificates
            case .cipher: ciphers ?? values
            }
        }
        /// In order of trial.
        static let signers: [Base64Layout] = [
            // libxmlsec1 1.2 (xmlsec1 tool, pysaml2, Debian's python-xmlsec builds).
            Base64Layout(values: Wrapping(width: 64), certificates: Wrapping(width: 64)),
            // libxmlsec1 1.3 (python-xmlsec wheels), xml-security-c (OpenSAML C++, Shibboleth SP).
            Base64Layout(values: Wrapping(width: 64), certificates: Wrapping(width: 64, trailingBreak: true)),
            // pysaml2: xmlsec1 signs a template holding the certificate on one line.
            Base64Layout(values: Wrapping(width: 64), certificates: nil),
            // xml-security-c's digests (OpenSAML C++ samlsign), in MIME lines beside values of 64.
            Base64Layout(
                values: Wrapping(width: 64), certificates: Wrapping(width: 64, trailingBreak: true), digests: Wrapping(width: 76)),
            // signxml and others that copy the PEM body: certificate lines of 64, values on one line.
            Base64Layout(values: nil, certificates: Wrapping(width: 64, trailingBreak: true)),
            // Okta and others: certificates in MIME lines, values on one line.
            Base64Layout(values: nil, certificates: Wrapping(width: 76)),
            // MIME width without the carriage returns (Santuario with \n, PingFederate without the breaks around).
            Base64Layout(values: Wrapping(width: 76), certificates: Wrapping(width: 76)),
            // PingFederate: MIME lines with a break before and after (its encrypter's without).
            Base64Layout(
                values: Wrapping(width: 76, leadingBreak: true, trailingBreak: true),
                certificates: Wrapping(width: 76, leadingBreak: true, trailingBreak: true), ciphers: Wrapping(width: 76)),
            Base64Layout(values: Wrapping(width: 64, trailingBreak: true), certificates: Wrapping(width: 64, trailingBreak: true)),
        ]
    }

    /// One reconstruction of the signed content.
    struct Style: Hashable {
        /// The unit of indentation restored where a whitespace-only text between elements is now one space.
        var indentation: [UInt8]?
        /// Where a newline is restored between elements that touch now.
        var newlines = Newlines.none
        /// A newline restored before the document element's end tag (where an indented document has one
        /// with no indentation after it, which the cookbook deleted entirely).
        var documentEndNewline = false
        var base64 = Base64Layout.unchanged

        enum Newlines: Hashable {
            case none
            /// Inside `ds:Signature` subtrees (libxmlsec1's templates put one before, between and after each child).
            case signatures
            /// Inside `ds:Signature` subtrees but not in their KeyInfo, nor after it (xml-security-c).
            case signaturesOutsideKeyInfo
            /// Inside `ds:Signature` and XML Encryption subtrees (libxmlsec1's encryption templates too).
            case templates
            /// Wherever elements touch in element-only content (serialisers that end some lines without
            /// indenting the next, in a document that is indented elsewhere).
            case everywhere
            /// xmlseclibs' template (SimpleSAMLphp, php-saml and the toolkits whose fixtures it made):
            /// `<ds:Signature>\n  <ds:SignedInfo>` with `\n    ` before SignatureMethod and `\n  ` before
            /// the Reference (appended after the template's closing indentation), `\n` before KeyInfo (or
            /// before `</ds:Signature>` when there is none); nothing elsewhere in the signature.
            case xmlseclibs
        }

        static let indentations: [[UInt8]] = [Array("  ".utf8), Array("    ".utf8), [0x09]]

        var repairs: [SAMLResponseDecoder.Repair] {
            var repairs: [SAMLResponseDecoder.Repair] = []
            if indentation != nil || newlines != .none || documentEndNewline { repairs.append(.signedWhitespaceRestored) }
            if base64 != .unchanged { repairs.append(.signedBase64LineBreaksRestored) }
            return repairs
        }

        var description: String {
            var parts: [String] = []
            if let indentation {
                parts.append("indentation by " + (indentation == [0x09] ? "tabs" : "\(indentation.count) spaces"))
            }
            switch newlines {
            case .none: break
            case .signatures: parts.append("newlines between ds:Signature elements")
            case .signaturesOutsideKeyInfo: parts.append("newlines between ds:Signature elements outside ds:KeyInfo")
            case .templates: parts.append("newlines between ds:Signature and XML Encryption elements")
            case .everywhere: parts.append("newlines between elements")
            case .xmlseclibs: parts.append("xmlseclibs' templates")
            }
            if documentEndNewline { parts.append("a newline before the document's end tag") }
            if base64.carriageReturns { parts.append("Base64 lines ending in &#13;") }
            if let values = base64.values { parts.append("signature values in " + values.description) }
            if let certificates = base64.certificates { parts.append("certificates and keys in " + certificates.description) }
            if let ciphers = base64.ciphers { parts.append("ciphertext " + (ciphers.map { "in " + $0.description } ?? "on one line")) }
            return parts.joined(separator: ", ")
        }
    }

    /// The damage classes a region bears, named in a diagnosis.
    struct Marks {
        var collapsedIndentation = false
        var joinedBase64 = false
        var carriageReturns = false

        var isEmpty: Bool { !collapsedIndentation && !joinedBase64 && !carriageReturns }

        var description: String {
            var parts: [String] = []
            if collapsedIndentation { parts.append("whitespace between elements collapsed to one space") }
            if joinedBase64 { parts.append("Base64 longer than a line with no line break") }
            if carriageReturns { parts.append("Base64 with carriage returns and no line feeds") }
            return parts.joined(separator: "; ")
        }
    }
}
