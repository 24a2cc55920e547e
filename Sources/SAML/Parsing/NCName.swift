/// xs:NCName (Namespaces in XML 1.0, production 4; XML 1.0 fifth edition's NameStartChar and NameChar
/// without the colon), the type of every SAML `ID` and of the XML-DSig/XML-Enc `Id`s.
///
/// A value that passes cannot hold what an XPointer or XPath expression needs (blank, quote,
/// parenthesis, bracket, `|`, `/`, `*`, `=`, colon), so a Reference `#` + an NCName is a plain name
/// looked up in the document's ID table and nothing else.
///
/// ``isAcceptedID(_:)`` is what the verifier requires of IDs (responses, decrypted assertions, metadata):
/// NCName characters throughout. It also takes a first character that only NameChar allows (digit, `-`,
/// `.`), which a strict xs:NCName does not: real IdPs (SecureWorks, in the conformance corpus) use bare
/// UUIDs as IDs, and a digit first gives an XPointer nothing more than a letter does.
enum NCName {
    /// Whether `value` is acceptable as an ID: not empty, every character an NCName character.
    static func isAcceptedID(_ value: String) -> Bool {
        var scalars = value.unicodeScalars.makeIterator()
        guard let first = scalars.next(), isStart(first.value) || isPart(first.value) else { return false }
        while let scalar = scalars.next() {
            guard isStart(scalar.value) || isPart(scalar.value) else { return false }
        }
        return true
    }

    /// Whether `value` begins as a strict xs:NCName does: with a letter or `_` (NameStartChar without the
    /// colon), not with the digit, `-`, `.` or combining mark ``isAcceptedID(_:)`` also takes. What the
    /// library writes as an ID (``SAMLRequest``) passes both.
    static func startsAsNCName(_ value: String) -> Bool {
        value.unicodeScalars.first.map { isStart($0.value) } ?? false
    }

    private static func isStart(_ c: UInt32) -> Bool {
        switch c {
        case 0x41...0x5A, 0x5F, 0x61...0x7A: true  // A-Z _ a-z (no colon: an NCName)
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D,
            0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            true
        default: false
        }
    }

    private static func isPart(_ c: UInt32) -> Bool {
        switch c {
        case 0x2D, 0x2E, 0x30...0x39, 0xB7, 0x300...0x36F, 0x203F...0x2040: true  // - . 0-9 and combining marks
        default: false
        }
    }
}
