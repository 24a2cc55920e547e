// Key loading: pinned public keys (certificates or SubjectPublicKeyInfo), signing keys, and a key's DER.
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

xmlSecKeyPtr saml_shim_key_load_memory(const unsigned char *data, size_t size, int isPEM, int isCertificate) {
    xmlSecKeyDataFormat format;
    if (isCertificate) {
        format = isPEM ? xmlSecKeyDataFormatCertPem : xmlSecKeyDataFormatCertDer;
    } else {
        format = isPEM ? xmlSecKeyDataFormatPem : xmlSecKeyDataFormatDer;
    }
    if (size > 0xFFFFFFFFu) {
        return NULL;
    }
    return xmlSecOpenSSLAppKeyLoadMemory(data, (xmlSecSize)size, format, NULL, NULL, NULL);
}

xmlSecKeyPtr saml_shim_key_public_only(xmlSecKeyPtr key) {
    xmlSecKeyDataPtr value = xmlSecKeyGetValue(key);
    if (value == NULL) {
        return NULL;
    }
    xmlSecKeyDataPtr copy = xmlSecKeyDataDuplicate(value);
    if (copy == NULL) {
        return NULL;
    }
    xmlSecKeyPtr bare = xmlSecKeyCreate();
    if (bare == NULL) {
        xmlSecKeyDataDestroy(copy);
        return NULL;
    }
    if (xmlSecKeySetValue(bare, copy) < 0) {
        xmlSecKeyDataDestroy(copy);
        xmlSecKeyDestroy(bare);
        return NULL;
    }
    return bare;
}

xmlSecKeyPtr saml_shim_signing_key_load(const unsigned char *keyPEM, size_t keyLength,
                                        const unsigned char *certificatePEM, size_t certificateLength) {
    if (keyLength > 0xFFFFFFFFu || certificateLength > 0xFFFFFFFFu) {
        return NULL;
    }
    xmlSecKeyPtr key = xmlSecOpenSSLAppKeyLoadMemory(keyPEM, (xmlSecSize)keyLength, xmlSecKeyDataFormatPem, NULL, NULL, NULL);
    if (key == NULL) {
        return NULL;
    }
    if (certificatePEM != NULL && certificateLength > 0
        && xmlSecOpenSSLAppKeyCertLoadMemory(key, certificatePEM, (xmlSecSize)certificateLength, xmlSecKeyDataFormatPem) < 0) {
        xmlSecKeyDestroy(key);
        return NULL;
    }
    return key;
}

int saml_shim_public_key_der(xmlSecKeyPtr key, unsigned char **output, size_t *length) {
    *output = NULL;
    *length = 0;
    xmlSecKeyDataPtr value = xmlSecKeyGetValue(key);
    EVP_PKEY *pkey = value != NULL ? xmlSecOpenSSLEvpKeyDataGetEvp(value) : NULL;
    if (pkey == NULL) {
        return -1;
    }
    unsigned char *der = NULL;
    int size = i2d_PUBKEY(pkey, &der);
    if (size <= 0 || der == NULL) {
        return -1;
    }
    *output = der;
    *length = (size_t)size;
    return 0;
}

void saml_shim_openssl_free(unsigned char *buffer) {
    OPENSSL_free(buffer);
}
