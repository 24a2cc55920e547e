internal import CSAMLBuildInfo

/// The release of swift-saml this build is (semantic versioning: 0.x until the API is promised; each
/// release has its section in CHANGELOG.md and a `vX.Y.Z` tag made by scripts/ci/release), and the commit it
/// was built from when the build was told (`SAML_BUILD_COMMIT=<hash>` in its environment), else `unknown`.
public enum SAMLVersion {
    public static let version = "0.1.0"

    public static var commit: String { String(cString: saml_build_commit()) }

    /// `0.1.0 (commit 83d720d)`: what `saml --version` and `saml-server --version` print.
    public static var description: String { "\(version) (commit \(commit))" }
}
