// XML Encryption for SAML (EncryptedAssertion, EncryptedAttribute, EncryptedID) with libxmlsec1, without a
// keys manager: the SP private key is preset on the context that decrypts the EncryptedKey, and the
// session key so obtained is preset on the context that decrypts the EncryptedData. ds:KeyInfo is never
// used to find a key. Each context gets an allow-list of its transforms.
#include "CSAMLShim.h"

#include <string.h>

static int saml_enable(xmlSecEncCtxPtr ctx, xmlSecTransformId id) {
    return xmlSecPtrListAdd(&(ctx->transformCtx.enabledTransforms), (void *)id);
}

xmlSecKeyPtr saml_shim_private_key_load_memory(const unsigned char *data, size_t size) {
    if (size > 0xFFFFFFFFu) {
        return NULL;
    }
    return xmlSecOpenSSLAppKeyLoadMemory(data, (xmlSecSize)size, xmlSecKeyDataFormatPem, NULL, NULL, NULL);
}

saml_shim_decrypt_result saml_shim_decrypt_key(xmlNodePtr encryptedKey, xmlSecKeyPtr privateKey, int allowLegacy,
                                               unsigned char *output, size_t capacity, size_t *length) {
    *length = 0;
    xmlSecEncCtxPtr ctx = xmlSecEncCtxCreate(NULL);
    if (ctx == NULL) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    saml_shim_decrypt_result result = SAML_SHIM_DECRYPT_FAILED;
    ctx->mode = xmlEncCtxModeEncryptedKey;
    if (saml_enable(ctx, xmlSecOpenSSLTransformRsaOaepId) < 0
        || (allowLegacy && saml_enable(ctx, xmlSecOpenSSLTransformRsaPkcs1Id) < 0)) {
        goto done;
    }
    ctx->encKey = xmlSecKeyDuplicate(privateKey);
    if (ctx->encKey == NULL) {
        goto done;
    }
    xmlSecBufferPtr buffer = xmlSecEncCtxDecryptToBuffer(ctx, encryptedKey);
    if (buffer == NULL) {
        goto done;
    }
    size_t size = xmlSecBufferGetSize(buffer);
    if (size == 0 || size > capacity) {
        goto done;
    }
    memcpy(output, xmlSecBufferGetData(buffer), size);
    *length = size;
    result = SAML_SHIM_DECRYPT_OK;
done:
    xmlSecEncCtxDestroy(ctx);
    return result;
}

saml_shim_decrypt_result saml_shim_decrypt_data(xmlNodePtr encryptedData, const unsigned char *key, size_t keyLength,
                                                int des, int allowLegacy, size_t maximumBytes) {
    if (keyLength == 0 || keyLength > 64) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    xmlSecEncCtxPtr ctx = xmlSecEncCtxCreate(NULL);
    if (ctx == NULL) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    saml_shim_decrypt_result result = SAML_SHIM_DECRYPT_FAILED;
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
    if (xmlSecEncCtxDecrypt(ctx, encryptedData) < 0 || ctx->result == NULL) {
        goto done;
    }
    if (xmlSecBufferGetSize(ctx->result) > maximumBytes) {
        result = SAML_SHIM_DECRYPT_TOO_LARGE;
        goto done;
    }
    result = ctx->resultReplaced ? SAML_SHIM_DECRYPT_OK : SAML_SHIM_DECRYPT_NOT_REPLACED;
    if (!ctx->resultReplaced) {
        // No Type="#Element" on the EncryptedData: put the plaintext in place ourselves, parsed in the
        // context of the parent, as xmlsec does for typed data.
        xmlSecByte *data = xmlSecBufferGetData(ctx->result);
        xmlSecSize size = xmlSecBufferGetSize(ctx->result);
        if (data != NULL && size > 0 && xmlSecReplaceNodeBuffer(encryptedData, data, size) >= 0) {
            result = SAML_SHIM_DECRYPT_OK;
        } else {
            result = SAML_SHIM_DECRYPT_FAILED;
        }
    }
done:
    xmlSecEncCtxDestroy(ctx);
    return result;
}

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <xmlsec/base64.h>

static const EVP_MD *saml_digest(const xmlChar *uri, const EVP_MD *fallback) {
    if (uri == NULL) {
        return fallback;
    }
    static const struct { const char *uri; int nid; } digests[] = {
        {"http://www.w3.org/2000/09/xmldsig#sha1", NID_sha1},
        {"http://www.w3.org/2001/04/xmlenc#sha256", NID_sha256},
        {"http://www.w3.org/2001/04/xmldsig-more#sha384", NID_sha384},
        {"http://www.w3.org/2001/04/xmlenc#sha512", NID_sha512},
        {"http://www.w3.org/2009/xmlenc11#mgf1sha1", NID_sha1},
        {"http://www.w3.org/2009/xmlenc11#mgf1sha224", NID_sha224},
        {"http://www.w3.org/2009/xmlenc11#mgf1sha256", NID_sha256},
        {"http://www.w3.org/2009/xmlenc11#mgf1sha384", NID_sha384},
        {"http://www.w3.org/2009/xmlenc11#mgf1sha512", NID_sha512},
    };
    for (size_t i = 0; i < sizeof(digests) / sizeof(digests[0]); ++i) {
        if (xmlStrEqual(uri, (const xmlChar *)digests[i].uri)) {
            return EVP_get_digestbynid(digests[i].nid);
        }
    }
    return NULL;
}

// xmlenc 1.1 rsa-oaep (http://www.w3.org/2009/xmlenc11#rsa-oaep), with its DigestMethod and MGF
// parameters, which libxmlsec1 1.2 does not implement: OpenSSL's OAEP directly, on the preset key.
saml_shim_decrypt_result saml_shim_decrypt_key_oaep11(xmlNodePtr encryptedKey, xmlSecKeyPtr privateKey,
                                                      unsigned char *output, size_t capacity, size_t *length) {
    static const xmlChar xenc[] = "http://www.w3.org/2001/04/xmlenc#";
    static const xmlChar xenc11[] = "http://www.w3.org/2009/xmlenc11#";
    *length = 0;
    xmlNodePtr method = xmlSecFindChild(encryptedKey, (const xmlChar *)"EncryptionMethod", xenc);
    xmlNodePtr cipherData = xmlSecFindChild(encryptedKey, (const xmlChar *)"CipherData", xenc);
    xmlNodePtr cipherValue = cipherData != NULL ? xmlSecFindChild(cipherData, (const xmlChar *)"CipherValue", xenc) : NULL;
    if (method == NULL || cipherValue == NULL) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    xmlNodePtr digestNode = xmlSecFindChild(method, (const xmlChar *)"DigestMethod", xmlSecDSigNs);
    xmlNodePtr mgfNode = xmlSecFindChild(method, (const xmlChar *)"MGF", xenc11);
    xmlChar *digestURI = digestNode != NULL ? xmlGetProp(digestNode, (const xmlChar *)"Algorithm") : NULL;
    xmlChar *mgfURI = mgfNode != NULL ? xmlGetProp(mgfNode, (const xmlChar *)"Algorithm") : NULL;
    const EVP_MD *digest = saml_digest(digestURI, EVP_sha1());
    const EVP_MD *mgf = saml_digest(mgfURI, EVP_sha1());
    xmlFree(digestURI);
    xmlFree(mgfURI);
    if (digest == NULL || mgf == NULL || xmlSecFindChild(method, (const xmlChar *)"OAEPparams", xenc) != NULL) {
        return SAML_SHIM_DECRYPT_FAILED;  // unknown digest, or a label: not supported
    }
    xmlChar *text = xmlNodeGetContent(cipherValue);
    if (text == NULL) {
        return SAML_SHIM_DECRYPT_FAILED;
    }
    xmlSecSize decodedLength = 0;
    int cipherLength = xmlSecBase64Decode_ex(text, (xmlSecByte *)text, (xmlSecSize)xmlStrlen(text), &decodedLength) >= 0
        ? (int)decodedLength : -1;
    saml_shim_decrypt_result result = SAML_SHIM_DECRYPT_FAILED;
    EVP_PKEY *pkey = xmlSecKeyGetValue(privateKey) != NULL ? xmlSecOpenSSLKeyDataRsaGetEvp(xmlSecKeyGetValue(privateKey)) : NULL;
    EVP_PKEY_CTX *ctx = pkey != NULL && cipherLength > 0 ? EVP_PKEY_CTX_new(pkey, NULL) : NULL;
    size_t outLength = capacity;
    if (ctx != NULL && EVP_PKEY_decrypt_init(ctx) > 0
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0
        && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, digest) > 0
        && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, mgf) > 0
        && EVP_PKEY_decrypt(ctx, output, &outLength, (const unsigned char *)text, (size_t)cipherLength) > 0
        && outLength > 0) {
        *length = outLength;
        result = SAML_SHIM_DECRYPT_OK;
    }
    EVP_PKEY_CTX_free(ctx);
    xmlFree(text);
    return result;
}
