import Foundation
import Logging
import SAML
import X509

/// When the trusted keys' certificates end, and what an ended one may still do.
///
/// **The choice.** A key the operator pinned by its certificate in the trust file stops verifying once
/// the certificate's `notAfter` has passed, as Shibboleth SP's PKIX trust engine would have it: a
/// pinned certificate is a dated promise of the operator's, and an expired one is usually a rotation
/// someone forgot. ``ServiceConfiguration/allowExpiredCertificates`` keeps such keys (logged at every
/// start and reload). Keys that come from signed metadata follow the metadata (`validUntil`, the
/// signer), as SAML metadata interoperability (and Shibboleth's explicit-key engine) has it: their
/// certificates' dates are reported, not enforced. Either way every key's `notAfter` is a gauge
/// (`saml_trust_key_not_after_timestamp_seconds{mvpd, source, key}`), and one ended or within
/// ``warningWindow`` is a warning at start and at reload.
enum KeyExpiry {
    /// A key is warned of this long before its certificate ends.
    static let warningWindow: Duration = .seconds(14 * 86_400)

    /// The certificate's `notAfter`; nil for a bare public key (nothing ends it) or a certificate
    /// swift-certificates does not read.
    static func notAfter(_ key: TrustedKey) -> SAMLInstant? {
        guard let der = key.certificateDER, let certificate = try? Certificate(derEncoded: der) else { return nil }
        return SAMLInstant(millisecondsSinceEpoch: Int64((certificate.notValidAfter.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// A key's label: the first 16 hexadecimal digits of its fingerprint (as the swap logs name keys).
    static func label(_ key: TrustedKey) -> String {
        String(key.fingerprint.filter(\.isHexDigit).prefix(16)).lowercased()
    }

    /// `identityProvider` without the pinned keys whose certificate has ended at `now` (unless
    /// `allowExpired`), and those keys; nil when none is left (the MVPD is then refused,
    /// `trust.unavailable`).
    static func usable(_ identityProvider: IdentityProvider, now: SAMLInstant, allowExpired: Bool) -> (
        identityProvider: IdentityProvider?, expired: [TrustedKey]
    ) {
        let expired = identityProvider.keys.filter { key in notAfter(key).map { $0 <= now } ?? false }
        guard !allowExpired, !expired.isEmpty else { return (identityProvider, allowExpired ? [] : expired) }
        let kept = identityProvider.keys.filter { key in !expired.contains { $0.fingerprint == key.fingerprint } }
        guard var trimmed = try? IdentityProvider(entityID: identityProvider.entityID, keys: kept) else { return (nil, expired) }
        trimmed.algorithms = identityProvider.algorithms
        return (trimmed, expired)
    }

    /// Warns of every key of `identityProvider` whose certificate has ended or ends within
    /// ``warningWindow``; an ended pinned key that no longer verifies is an error.
    static func warn(
        _ identityProvider: IdentityProvider, mvpd: String, pinned: Bool, allowExpired: Bool, now: SAMLInstant, logger: Logger
    ) {
        for key in identityProvider.keys {
            guard let notAfter = notAfter(key) else {
                // A certificate whose dates this cannot read (OpenSSL took it): its end is not enforced.
                if pinned, key.certificateDER != nil {
                    logger.error(
                        "a pinned certificate's notAfter does not read: its expiry is neither enforced nor exported; pin a well-formed certificate",
                        metadata: ["mvpd": "\(mvpd)", "key": "\(label(key))"])
                }
                continue
            }
            guard notAfter <= now + warningWindow else { continue }
            let metadata: Logger.Metadata = [
                "mvpd": "\(mvpd)", "key": "\(label(key))", "not_after": "\(notAfter)", "source": "\(pinned ? "pinned" : "metadata")",
            ]
            if notAfter > now {
                logger.warning(
                    "a trusted key's certificate ends within 14 days: rotate it (or its IdP's metadata) before then", metadata: metadata)
            } else if pinned && !allowExpired {
                logger.error(
                    "a pinned key's certificate has ended: it no longer verifies (set allowExpiredCertificates to keep it)",
                    metadata: metadata)
            } else {
                logger.warning("a trusted key's certificate has ended: it still verifies", metadata: metadata)
            }
        }
    }
}
