// The floor of primitives of the benchmarks (issue 62): the work no verifier of a signed SAML response can
// skip, each piece done by the system libraries and nothing else. Per response: libxml2's parse of the
// XML bytes (`xmlReadMemory`), libxml2's exclusive C14N of the signed element without its enveloped
// signature (`xmlC14NExecute` with a visibility callback, as xmlsec drives it), SHA-256 of those bytes
// (the digest compared with the DigestValue), and the one public-key verification of the signature over
// SignedInfo's canonical bytes (OpenSSL's EVP_DigestVerify, the algorithm and key fetched once).
//
// Left out, so that the floor stays a floor: Base64, the SignedInfo's own canonicalisation (done once at
// creation), every structure and profile check, reading the fields. With two signatures, the assertion's
// is the one verified.
#ifndef CSAMLPRIMITIVES_H
#define CSAMLPRIMITIVES_H

#include <stddef.h>

typedef struct saml_primitives saml_primitives;

/// Prepares the floor of the XML document `xml` signed with the key of `certificatePEM`: finds the
/// signature, canonicalises its SignedInfo, decodes its value, loads the key, and checks once that the
/// digest and the signature verify. NULL when any of this fails (the floor measures verifications that
/// succeed). The caller must have initialised the libraries (`saml_shim_initialize`).
saml_primitives *saml_primitives_create(const unsigned char *certificatePEM, size_t pemLength, const char *xml, size_t length);
void saml_primitives_destroy(saml_primitives *primitives);

/// Runs the primitives on `xml` (the document given at creation): returns the canonical length (> 0)
/// when the digest matches and the signature verifies, -1 otherwise.
long saml_primitives_run(const saml_primitives *primitives, const char *xml, size_t length);

#endif
