import CookbookEncoding

/// The one error type of the package.
///
/// Every failure carries a stable ``Code`` (log it, map it to an HTTP answer, match on it) and a message
/// that names what was expected and what was found. Messages never echo unbounded input: values taken
/// from the input are escaped and cut to a fixed length (see `SAMLError.quote`).
///
/// Two errors are equal when their codes are equal; the message is for people.
public struct SAMLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable identifier of a failure, such as `decode.invalid-base64`.
    ///
    /// A struct rather than an enum so that new codes are not a breaking change. The full list is in
    /// `docs/error-codes.md`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The dotted, stable identifier (`area.reason`).
        public let identifier: String
        /// What the failure means to an HTTP server that received the response: 400 (the client sent
        /// something unacceptable), 413 (too large), 500 (the server's own configuration), 503 (a store
        /// or dependency is unavailable: retry later; never a reason to accept).
        public let httpStatus: Int

        package init(_ identifier: String, httpStatus: Int = 400) {
            self.identifier = identifier
            self.httpStatus = httpStatus
        }

        public var description: String { identifier }

        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.identifier == rhs.identifier }
        public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
    }

    /// What failed.
    public let code: Code
    /// A human-readable explanation naming the expected and the found value.
    public let message: String

    /// Makes an error with one of the package's codes. Public so that a ``SAMLStateStore`` or another store
    /// written outside the package can fail with ``Code/storeUnavailable`` (which maps to 503): any
    /// other error a store throws is reported as that code too, never as the client's fault.
    /// The message should name what was expected and what was found, without raw input.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status a service answers this error with (``Code/httpStatus``): 400 for the caller's
    /// input, 413 for its size, 500 for the service's own configuration, 503 when a store does not answer.
    public var httpStatus: Int { code.httpStatus }

    public var description: String { "\(code.identifier): \(message)" }

    public static func == (lhs: SAMLError, rhs: SAMLError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension SAMLError {
    /// The longest excerpt of input that a message may quote.
    package static let maximumQuotedLength = 64

    /// Renders untrusted text for a message: printable ASCII kept, everything else escaped, cut to
    /// ``maximumQuotedLength`` characters, in double quotes.
    package static func quote(_ text: some StringProtocol) -> String {
        quote(bytes: Array(text.utf8))
    }

    /// Renders untrusted bytes for a message (see ``quote(_:)``).
    package static func quote(bytes: some Collection<UInt8>) -> String {
        var out = "\""
        var count = 0
        for byte in bytes {
            if count == maximumQuotedLength {
                out += "…"
                break
            }
            switch byte {
            case 0x20...0x7E where byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "\\x" + Hex.string([byte])
            }
            count += 1
        }
        return out + "\""
    }
}
