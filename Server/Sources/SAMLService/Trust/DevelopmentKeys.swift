import AppleSSO
import SAML

/// The keys of this repository's `TestVectors/`, whose private halves are public: a service that trusts
/// one accepts responses anyone can sign. The service refuses to start with one in its trust file (and
/// refuses metadata that brings one later) unless ``ServiceConfiguration/allowDevelopmentKeys`` is set,
/// which only the command line (`--allow-development-keys`) or the environment
/// (`SAML_SERVICE_ALLOW_DEVELOPMENT_KEYS=true`) can do: a production configuration file cannot carry it.
///
/// Each key is listed twice, by its certificate's SHA-256 fingerprint and by its SubjectPublicKeyInfo's
/// (``SAML/TrustedKey/fingerprint`` is one or the other), so that the same key in a PEM public key block
/// is caught too. `DevelopmentKeysTests` recomputes both from every `*.cert.pem` under `TestVectors/`.
enum DevelopmentKeys {
    static let fingerprints: Set<String> = [
        // TestVectors/keys/attacker-rsa-2048.cert.pem
        "22c24ee08eed836abe6ea447bea9b83f69f6fc58d3f76e4d60a76349638d427b",
        "ed7a6f63533db35b291d8e12fdeb377d3522594e3243ddf2cb8387664d330071",
        // TestVectors/keys/ecdsa-p256.cert.pem
        "410c391e1e0a69d77d1aa9e85b15e5a5a8ceef027af02a64f9c75d7e470a2519",
        "fe8bc616207aa547cf45f0b6294065c0ad397db52200b03cdecc1a3b89f6a0f3",
        // TestVectors/keys/metadata-signer-rsa-2048.cert.pem
        "2f07c62b3c56bb337f72a760abb39d5f315c2820d646733bda948df78867a46f",
        "4b08716912f44a49e93eca8b008fc50cddebd0e7494862f33ac1f73cf9b351a2",
        // TestVectors/keys/rsa-2048.cert.pem
        "18bc64b7283d40050305c36561ca7e2e36a7ade46d5fc1b773b5eb360c48e6a8",
        "0152e2645250cc5b3493f7f0db58c08986c799e6aef56ab605a104a7965b96a5",
        // TestVectors/keys/rsa-4096.cert.pem
        "56e19d94472eace82af5765d317ba3a1d0ef88f28645d07dfcfde3b5c6235d78",
        "f99ecea18931cab6360ca5d6bea7fee4d789dd8a52fe6e2290545f541c7d2edd",
        // TestVectors/keys/sp-rsa-2048.cert.pem
        "22d0c352a24ab5f9a917f1f0c22a4fc5462361ba8eadf7dcd565a5b8727e3a64",
        "87a0caa3173936890511b77e45de4c98bac48893e11c80ca55f363d846c82446",
        // TestVectors/idp-layouts/keys/idp-ecdsa-p384.cert.pem
        "cfe347e16da9c9e068f223f08e0ca0c037174db62f291f0593c9af50e52e66f4",
        "1aa3a48c5bd066ad63ed37a74ede84e7f9fdeaf5cfbdf35fe475c26d0090f702",
        // TestVectors/idp-layouts/keys/idp-rsa-1024.cert.pem
        "7f0a439bd4af7a618f3e6ff377176f6ec14eb49024efce1814791b655fb88552",
        "f1108ae55cd4ba3cc8822cb96d5f4c5b100fcca8e1a4c55289e1b2d846ea2bcc",
        // TestVectors/idp-layouts/keys/idp-rsa-2048.cert.pem
        "338af898d5b2ceb253aacb9e45bfe2f31e911c6fe4fd79b51815bc6b8993362c",
        "03a2acd9f91eba9b531526b1dbb28632025fc9d340e79221850f6196727d1ad6",
        // TestVectors/idp-layouts/keys/idp-rsa-3072.cert.pem
        "2ddcef4114a83a70830cbbba6d085aa741dcfd0465c6d1d48454658ac52a478c",
        "2b366f149947ae90cc6c2a67974b097b21ce045e9bd0e206f6da304dbf79bab7",
        // TestVectors/idp-layouts/keys/sp-rsa-2048.cert.pem
        "f8b3221688294cfeccbe8cc6a340274d0e1b80f1b7aa494f9ee507dd16bca9dc",
        "66b275b4bda35521a0a799f2e67d91c8bc054e8487cf7a0df3341b254c5d1286",
    ]

    /// Refuses `keys` when one of them is a development key and `allowed` is false.
    ///
    /// - Throws: ``SAML/SAMLError/Code/configurationInvalidKey`` naming where the key is (`what`) and its
    ///   fingerprint.
    static func check(_ keys: [TrustedKey], _ what: @autoclosure () -> String, allowed: Bool) throws {
        guard !allowed, let key = keys.first(where: { fingerprints.contains($0.fingerprint) }) else { return }
        throw SAMLError(
            .configurationInvalidKey,
            "expected production keys in \(what()), found a key of the repository's TestVectors/ (SHA-256 \(key.fingerprint)), whose private key is public; for a development run only, pass --allow-development-keys"
        )
    }

    /// The MVPDs of `contents` that trust a development key (pinned, or as the metadata's signer), sorted.
    static func trusting(_ contents: TrustFile.Contents) -> [String] {
        let pinned = contents.pinned.filter { $0.value.keys.contains { fingerprints.contains($0.fingerprint) } }.map(\.key)
        let signed = contents.sources.filter { $0.value.signers.contains { fingerprints.contains($0.fingerprint) } }.map(\.key)
        return Set(pinned + signed).sorted()
    }

    /// ``check(_:_:allowed:)`` over every key a trust file names: pinned IdPs' keys and metadata signers.
    static func check(_ contents: TrustFile.Contents, allowed: Bool) throws {
        for (mvpd, identityProvider) in contents.pinned.sorted(by: { $0.key < $1.key }) {
            try check(identityProvider.keys, "the trust file's MVPD \"\(mvpd)\"", allowed: allowed)
        }
        for (mvpd, source) in contents.sources.sorted(by: { $0.key < $1.key }) {
            try check(source.signers, "the metadata signer of the trust file's MVPD \"\(mvpd)\"", allowed: allowed)
        }
    }
}
