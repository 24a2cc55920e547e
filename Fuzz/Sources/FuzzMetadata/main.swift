import FuzzSupport
import SAML

// The SAML metadata reader (EntityDescriptor / EntitiesDescriptor, keys, endpoints) on arbitrary bytes.
Fuzz.run { data, count in
    _ = try? IdentityProviderMetadata.read(
        Array(Fuzz.bytes(data, count)), options: .init(now: Fuzz.now))
    return 0
}
