// Digests and comparisons: SHA-256, HMAC-SHA-256, a constant-time comparison, and freeing what the shim
// allocated.
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

void saml_shim_free_buffer(unsigned char *buffer) {
    xmlFree(buffer);
}

int saml_shim_sha256(const unsigned char *data, size_t length, unsigned char output[32]) {
    unsigned int size = 0;
    return EVP_Digest(data, length, output, &size, EVP_sha256(), NULL) == 1 && size == 32 ? 0 : -1;
}

int saml_shim_hmac_sha256(const unsigned char *key, size_t keyLength, const unsigned char *data, size_t length,
                          unsigned char output[32]) {
    unsigned int size = 0;
    if (keyLength > INT_MAX) {
        return -1;
    }
    return HMAC(EVP_sha256(), key, (int)keyLength, data, length, output, &size) != NULL && size == 32 ? 0 : -1;
}

int saml_shim_equal_constant_time(const unsigned char *a, const unsigned char *b, size_t length) {
    return CRYPTO_memcmp(a, b, length) == 0;
}
