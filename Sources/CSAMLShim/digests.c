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
#include <openssl/core_names.h>
#include "shim_private.h"

void saml_shim_free_buffer(unsigned char *buffer) {
    xmlFree(buffer);
}

int saml_shim_sha256(const unsigned char *data, size_t length, unsigned char output[32]) {
    unsigned int size = 0;
    return EVP_Digest(data, length, output, &size, EVP_sha256(), NULL) == 1 && size == 32 ? 0 : -1;
}

struct saml_hmac_key {
    EVP_MAC_CTX *ready;
};

saml_hmac_key *saml_shim_hmac_key_new(const unsigned char *key, size_t keyLength) {
    saml_hmac_key *result = calloc(1, sizeof(*result));
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (result == NULL || mac == NULL) {
        EVP_MAC_free(mac);
        free(result);
        return NULL;
    }
    result->ready = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac); // the context keeps its own reference
    char digest[] = "SHA256";
    OSSL_PARAM parameters[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
    if (result->ready == NULL || EVP_MAC_init(result->ready, key, keyLength, parameters) != 1) {
        saml_shim_hmac_key_free(result);
        return NULL;
    }
    return result;
}

void saml_shim_hmac_key_free(saml_hmac_key *key) {
    if (key == NULL) {
        return;
    }
    EVP_MAC_CTX_free(key->ready);
    free(key);
}

int saml_shim_hmac_sha256(const saml_hmac_key *key, const unsigned char *data, size_t length, unsigned char output[32]) {
    if (key == NULL) {
        return -1;
    }
    EVP_MAC_CTX *context = EVP_MAC_CTX_dup(key->ready);
    size_t size = 0;
    int ok = context != NULL && EVP_MAC_update(context, data, length) == 1 && EVP_MAC_final(context, output, &size, 32) == 1 &&
             size == 32;
    EVP_MAC_CTX_free(context);
    return ok ? 0 : -1;
}

int saml_shim_equal_constant_time(const unsigned char *a, const unsigned char *b, size_t length) {
    return CRYPTO_memcmp(a, b, length) == 0;
}
