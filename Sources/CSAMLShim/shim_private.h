// What the shim's own C files share and Swift never sees (the public declarations are in
// include/CSAMLShim.h).
#ifndef SAML_SHIM_PRIVATE_H
#define SAML_SHIM_PRIVATE_H

#include "CSAMLShim.h"

// errors.c: the callback runtime.c installs for xmlsec's errors.
void saml_shim_collect_xmlsec_error(const char *file, int line, const char *func, const char *errorObject,
                                    const char *errorSubject, int reason, const char *msg);

// verification.c: a non-empty name without any character an XPointer or XPath expression needs (also
// required of the IDs signing.c registers).
int saml_shim_plain_name(const xmlChar *name);

// replaced_klass.c: a klass standing in for one of libxmlsec1's on the verifier's chains, a copy of the
// original with some functions replaced; `saml_replaced_klass_make` copies the original, registers the
// replacement and makes initialize, finalize and readNode run the original's (the caller then replaces
// what it changes); `saml_replaced_klass_of` finds the replacement a transform runs as (NULL: none).
// A replacement embeds it as its first member.
typedef struct {
    xmlSecTransformId original;
    struct _xmlSecTransformKlass klass;  // xmlSecTransformKlass is const-qualified
} saml_replaced_klass;
int saml_replaced_klass_make(saml_replaced_klass *replaced, xmlSecTransformId original);
saml_replaced_klass *saml_replaced_klass_of(xmlSecTransformId id);
void saml_replaced_klass_finalize(xmlSecTransformPtr transform);
// Runs `call` on `transform` as the original klass would see it, its result in `ret`.
#define SAML_AS_ORIGINAL(transform, replaced, call) \
    do { (transform)->id = (replaced)->original; ret = (call); (transform)->id = &(replaced)->klass; } while (0)

// fast_signature.c: the RSA signature klasses (installed once by saml_shim_initialize); the SignedInfo
// pre-execute callback that switches the chain's canonicalisation (fast_c14n.c) and RSA signature
// transforms to them; the verification running on this thread, whose `signKey` they verify with (NULL
// when none runs).
int saml_shim_install_fast_signatures(void);
int saml_shim_signed_info_pre_execute(xmlSecTransformCtxPtr ctx);
void saml_shim_fast_signature_running(xmlSecDSigCtxPtr ctx);

#endif
