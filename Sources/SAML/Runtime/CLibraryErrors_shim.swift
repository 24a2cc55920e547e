internal import CSAMLShim

/// The reasons libxmlsec1 and OpenSSL give for a failure, collected per thread by the shim while one call
/// runs (xmlsec's error callback is process-wide; the collection is not). Only the libraries' fixed texts
/// (the failing function, the text of the reason code) are kept, at most four and 511 bytes: never the
/// document's bytes, which xmlsec's free-form messages can quote.
enum CLibraryErrors {
    /// Clears what this thread collected; call before the C call whose failure is to be explained.
    static func begin() {
        saml_shim_errors_begin()
    }

    /// What this thread collected since ``begin()``, `"function: reason; ..."`; empty when nothing.
    static func take() -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        let length = saml_shim_errors_take(&buffer, buffer.count)
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
