// XML Encryption for SAML (EncryptedAssertion, EncryptedAttribute, EncryptedID).
//
// Key transport (RSA-OAEP with any DigestMethod and MGF1 digest, RSA PKCS#1 v1.5) is done with OpenSSL
// directly on the SP's private key: the Swift side reads the EncryptedKey's parameters and CipherValue.
// The data is decrypted by libxmlsec1 into a buffer (never into the tree, never parsed by xmlsec), with the
// session key preset, a transform allow-list, no URI of any kind enabled, and xmlsec's ID registration
// checked to add nothing. The Swift side checks and parses the plaintext itself.
#include "CSAMLShim.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <libxml/hash.h>

xmlSecKeyPtr saml_shim_private_key_load_memory(const unsigned char *data, size_t size) {
    if (size > 0xFFFFFFFFu) {
        return NULL;
    }
    return xmlSecOpenSSLAppKeyLoadMemory(data, (xmlSecSize)size, xmlSecKeyDataFormatPem, NULL, NULL, NULL);
}

saml_shim_decrypt_result saml_shim_rsa_decrypt_key(xmlSecKeyPtr privateKey, int oaep, saml_shim_digest digest,
                                                   saml_shim_digest mgf, const unsigned char *label, size_t labelLength,
                                                   const unsigned char *cipher, size_t cipherLength,
                                                   unsigned char *output, size_t capacity, size_t *length) {
    *length = 0;
    xmlSecKeyDataPtr value = xmlSecKeyGetValue(privateKey);
    if (value == NULL || !xmlSecKeyDataCheckId(value, xmlSecOpenSSLKeyDataRsaId) || cipherLength == 0) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    EVP_PKEY *pkey = xmlSecOpenSSLKeyDataRsaGetEvp(value);
    EVP_PKEY_CTX *ctx = pkey != NULL ? EVP_PKEY_CTX_new(pkey, NULL) : NULL;
    if (ctx == NULL) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    saml_shim_decrypt_result result = SAML_SHIM_DECRYPT_FAILED;
    size_t outLength = capacity;
    int ready = EVP_PKEY_decrypt_init(ctx) > 0;
    if (ready && oaep) {
        const EVP_MD *md = saml_shim_evp_md(digest);
        const EVP_MD *mgfMD = saml_shim_evp_md(mgf);
        ready = md != NULL && mgfMD != NULL
            && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0
            && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) > 0
            && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, mgfMD) > 0;
        if (ready && labelLength > 0) {
            // OpenSSL takes ownership of the label on success.
            unsigned char *copy = OPENSSL_malloc(labelLength);
            ready = copy != NULL;
            if (ready) {
                memcpy(copy, label, labelLength);
                ready = EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, copy, (int)labelLength) > 0;
                if (!ready) {
                    OPENSSL_free(copy);
                }
            }
        }
    } else if (ready) {
        ready = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0;
    }
    if (ready && EVP_PKEY_decrypt(ctx, output, &outLength, cipher, cipherLength) > 0 && outLength > 0 && outLength <= capacity) {
        *length = outLength;
        result = SAML_SHIM_DECRYPT_OK;
    }
    EVP_PKEY_CTX_free(ctx);
    return result;
}

static int saml_enable(xmlSecEncCtxPtr ctx, xmlSecTransformId id) {
    return xmlSecPtrListAdd(&(ctx->transformCtx.enabledTransforms), (void *)id);
}

static int saml_id_count(xmlDocPtr doc) {
    return doc != NULL && doc->ids != NULL ? xmlHashSize((xmlHashTablePtr)doc->ids) : 0;
}

saml_shim_decrypt_result saml_shim_decrypt_data(xmlNodePtr encryptedData, const unsigned char *key, size_t keyLength,
                                                int des, int allowLegacy, size_t maximumBytes,
                                                unsigned char **output, size_t *length) {
    *output = NULL;
    *length = 0;
    if (keyLength == 0 || keyLength > 64) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    xmlSecEncCtxPtr ctx = xmlSecEncCtxCreate(NULL);
    if (ctx == NULL) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    saml_shim_decrypt_result result = SAML_SHIM_DECRYPT_FAILED;
    int ids = saml_id_count(encryptedData->doc);
    // No URI of any kind: a CipherReference (refused before this point anyway) or a RetrievalMethod can
    // name nothing, not even a same-document node.
    ctx->transformCtx.enabledUris = xmlSecTransformUriTypeNone;
    ctx->keyInfoReadCtx.retrievalMethodCtx.enabledUris = xmlSecTransformUriTypeNone;
    ctx->keyInfoReadCtx.maxRetrievalMethodLevel = 0;
    ctx->keyInfoReadCtx.maxEncryptedKeyLevel = 0;
    if (saml_enable(ctx, xmlSecOpenSSLTransformAes128GcmId) < 0
        || saml_enable(ctx, xmlSecOpenSSLTransformAes192GcmId) < 0
        || saml_enable(ctx, xmlSecOpenSSLTransformAes256GcmId) < 0) {
        goto done;
    }
    if (allowLegacy
        && (saml_enable(ctx, xmlSecOpenSSLTransformAes128CbcId) < 0
            || saml_enable(ctx, xmlSecOpenSSLTransformAes192CbcId) < 0
            || saml_enable(ctx, xmlSecOpenSSLTransformAes256CbcId) < 0
            || saml_enable(ctx, xmlSecOpenSSLTransformDes3CbcId) < 0)) {
        goto done;
    }
    ctx->encKey = xmlSecKeyReadMemory(des ? xmlSecOpenSSLKeyDataDesId : xmlSecOpenSSLKeyDataAesId, key, (xmlSecSize)keyLength);
    if (ctx->encKey == NULL) {
        goto done;
    }
    xmlSecBufferPtr buffer = xmlSecEncCtxDecryptToBuffer(ctx, encryptedData);
    if (saml_id_count(encryptedData->doc) != ids) {
        result = SAML_SHIM_DECRYPT_IDS_CHANGED;
        goto done;
    }
    if (buffer == NULL) {
        goto done;
    }
    size_t size = xmlSecBufferGetSize(buffer);
    if (size > maximumBytes) {
        result = SAML_SHIM_DECRYPT_TOO_LARGE;
        goto done;
    }
    if (size == 0) {
        goto done;
    }
    *output = malloc(size);
    if (*output == NULL) {
        goto done;
    }
    memcpy(*output, xmlSecBufferGetData(buffer), size);
    *length = size;
    result = SAML_SHIM_DECRYPT_OK;
done:
    xmlSecEncCtxDestroy(ctx);
    return result;
}

void saml_shim_free_plaintext(unsigned char *buffer) {
    free(buffer);
}
