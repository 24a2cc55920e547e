// The C baseline of the benchmarks: what a minimal, careful C program over libxml2 + libxmlsec1 does to
// verify one SAML response, so that the Swift pipeline's throughput can be compared with it in the same
// run. Base64 in; parse from memory; register the Assertion's ID; verify its signature with a key loaded
// once (the bare public key, duplicated per context: the fastest plain use of the xmlsec API); read the
// NameID and every attribute value. Every signature on the Response or the Assertion is verified (the
// ID of each signed element registered), as the Swift pipeline does. It checks nothing else (no profile,
// no conditions, no limits): a floor for the cost of "libxml2 + xmlsec", not a verifier to use.
#ifndef CSAMLBASELINE_H
#define CSAMLBASELINE_H

#include <stddef.h>
// The floor of primitives, beside the baseline (one module for both).
#include "CSAMLPrimitives.h"

typedef struct saml_baseline saml_baseline;

/// Loads the key from a PEM certificate, once. NULL on failure. The caller must have initialised the
/// libraries (`saml_shim_initialize`, which the Swift side runs once through `XMLSecRuntime`).
saml_baseline *saml_baseline_create(const unsigned char *certificatePEM, size_t length);
void saml_baseline_destroy(saml_baseline *baseline);

/// Verifies one Base64-encoded response. Returns the number of attribute values read (>= 0) when at least
/// one signature is present, every signature verifies and a NameID was read; -1 otherwise.
int saml_baseline_verify(const saml_baseline *baseline, const char *base64, size_t length);

#endif
