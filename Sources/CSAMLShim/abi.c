// What the ABI test compares: the -D flags the shim restates and the sizes of the xmlsec structs Swift sees
// (docs/xmlsec-abi.md).
#include "CSAMLShim.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <xmlsec/templates.h>
#include <xmlsec/io.h>
#include <xmlsec/parser.h>
#include <libxml/hash.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdio.h>
#include <pthread.h>
#include <xmlsec/keysmngr.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <xmlsec/openssl/evp.h>
#include <openssl/hmac.h>
#include "shim_private.h"

const char *saml_shim_restated_defines(void) { return SAML_SHIM_RESTATED_DEFINES; }

size_t saml_shim_sizeof_dsig_ctx(void) { return sizeof(xmlSecDSigCtx); }
size_t saml_shim_sizeof_dsig_reference_ctx(void) { return sizeof(xmlSecDSigReferenceCtx); }
size_t saml_shim_sizeof_key_info_ctx(void) { return sizeof(xmlSecKeyInfoCtx); }
size_t saml_shim_sizeof_transform_ctx(void) { return sizeof(xmlSecTransformCtx); }
size_t saml_shim_sizeof_enc_ctx(void) { return sizeof(xmlSecEncCtx); }
