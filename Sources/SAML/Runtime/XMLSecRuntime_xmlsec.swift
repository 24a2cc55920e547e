internal import CSAMLShim

/// The process-wide start-up of libxml2, libxmlsec1 and its OpenSSL backend.
///
/// Runs once per process, the first time any part of the library needs the C libraries, and is safe
/// when that first use happens on many threads at once (a Swift global is initialised exactly once,
/// under `swift_once`). It is never undone: `xmlSecShutdown` cannot be reversed while other code in
/// the process may still use the libraries. It also checks that the loaded libxmlsec1 is
/// ABI-compatible with the headers the package was built against.
package enum XMLSecRuntime {
    private static let state: Result<Void, SAMLError> = {
        switch saml_shim_initialize() {
        case SAML_SHIM_INIT_OK:
            return .success(())
        case SAML_SHIM_INIT_VERSION_MISMATCH:
            return .failure(
                SAMLError(
                    .runtimeInitializationFailed,
                    "expected a libxmlsec1 ABI-compatible with \(compiledVersion), found an incompatible one"
                )
            )
        case let other:
            return .failure(
                SAMLError(.runtimeInitializationFailed, "libxmlsec1 start-up step \(other.rawValue) failed")
            )
        }
    }()

    /// Initialises the C libraries if that has not happened yet.
    ///
    /// Calling this is optional: every API that needs the libraries calls it. Call it at start-up to
    /// fail early.
    package static func initialize() throws {
        try state.get()
    }

    /// The libxmlsec1 version the package was compiled against.
    package static var compiledVersion: String {
        String(cString: saml_shim_xmlsec_compiled_version())
    }
}
