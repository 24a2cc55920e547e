// The cheap trials of the recovery of the cookbook's damage (SignatureRecovery_libxml.swift): a candidate
// layout of signed content is first checked against the signature's own values (its Reference digest,
// or the digest the RSA signature value carries) by hashing bytes built from one canonicalisation, and
// only a candidate that matches goes to xmlsec, which decides. These functions digest bytes, recover the
// digest an RSA PKCS#1 v1.5 signature value signs, and verify an ECDSA or RSA signature over a digest;
// the canonicalisation is fast_c14n.c's `saml_shim_canonicalize`.
#include "CSAMLShim.h"

#include <string.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <xmlsec/openssl/evp.h>

const struct evp_md_st *saml_shim_evp_md(saml_shim_digest digest) {
    switch (digest) {
    case SAML_SHIM_DIGEST_SHA1: return EVP_sha1();
    case SAML_SHIM_DIGEST_SHA224: return EVP_sha224();
    case SAML_SHIM_DIGEST_SHA256: return EVP_sha256();
    case SAML_SHIM_DIGEST_SHA384: return EVP_sha384();
    case SAML_SHIM_DIGEST_SHA512: return EVP_sha512();
    }
    return NULL;
}

int saml_shim_digest_bytes(saml_shim_digest digest, const unsigned char *data, size_t length,
                           unsigned char output[SAML_SHIM_MAX_DIGEST], size_t *outputLength) {
    const EVP_MD *md = saml_shim_evp_md(digest);
    unsigned int size = 0;
    *outputLength = 0;
    if (md == NULL || EVP_Digest(data, length, output, &size, md, NULL) != 1) {
        return -1;
    }
    *outputLength = size;
    return 0;
}

static EVP_PKEY *saml_public_evp(xmlSecKeyPtr key) {
    xmlSecKeyDataPtr value = key != NULL ? xmlSecKeyGetValue(key) : NULL;
    return value != NULL ? xmlSecOpenSSLEvpKeyDataGetEvp(value) : NULL;
}

int saml_shim_rsa_signed_digest(xmlSecKeyPtr key, saml_shim_digest digest, const unsigned char *signature,
                                size_t signatureLength, unsigned char output[SAML_SHIM_MAX_DIGEST], size_t *outputLength) {
    *outputLength = 0;
    EVP_PKEY *pkey = saml_public_evp(key);
    const EVP_MD *md = saml_shim_evp_md(digest);
    if (pkey == NULL || md == NULL) {
        return -1;
    }
    if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
        return 1;
    }
    // A signature value is exactly the modulus' length (xmlsec refuses any other).
    if (signatureLength != (size_t)EVP_PKEY_get_size(pkey)) {
        return -1;
    }
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pkey, NULL);
    int result = -1;
    size_t size = SAML_SHIM_MAX_DIGEST;
    // With the digest set, OpenSSL checks the PKCS#1 v1.5 padding and the DigestInfo of that digest and
    // returns the digest alone.
    if (ctx != NULL && EVP_PKEY_verify_recover_init(ctx) == 1 && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1
        && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1
        && EVP_PKEY_verify_recover(ctx, output, &size, signature, signatureLength) == 1
        && size == (size_t)EVP_MD_get_size(md)) {
        *outputLength = size;
        result = 0;
    }
    EVP_PKEY_CTX_free(ctx);
    if (result != 0) {
        ERR_clear_error();  // a value that does not decode: expected here, not a reason to report later
    }
    return result;
}

int saml_shim_verify_signed_digest(xmlSecKeyPtr key, saml_shim_digest digest, const unsigned char *hash, size_t hashLength,
                                   const unsigned char *signature, size_t signatureLength) {
    EVP_PKEY *pkey = saml_public_evp(key);
    const EVP_MD *md = saml_shim_evp_md(digest);
    if (pkey == NULL || md == NULL || hashLength != (size_t)EVP_MD_get_size(md)) {
        return 0;
    }
    unsigned char *der = NULL;
    int derLength = 0;
    const unsigned char *value = signature;
    size_t valueLength = signatureLength;
    if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC) {
        // XML-DSig's ECDSA value is r || s, each the field's length (RFC 4050, RFC 6931): DER for OpenSSL.
        if (signatureLength == 0 || signatureLength % 2 != 0 || signatureLength > 2 * 66) {
            return 0;
        }
        ECDSA_SIG *sig = ECDSA_SIG_new();
        BIGNUM *r = BN_bin2bn(signature, (int)(signatureLength / 2), NULL);
        BIGNUM *s = BN_bin2bn(signature + signatureLength / 2, (int)(signatureLength / 2), NULL);
        if (sig == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(sig, r, s) != 1) {
            BN_free(r);
            BN_free(s);
            ECDSA_SIG_free(sig);
            return 0;
        }
        derLength = i2d_ECDSA_SIG(sig, &der);
        ECDSA_SIG_free(sig);
        if (derLength <= 0 || der == NULL) {
            return 0;
        }
        value = der;
        valueLength = (size_t)derLength;
    } else if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
        return 0;
    }
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pkey, NULL);
    int valid = ctx != NULL && EVP_PKEY_verify_init(ctx) == 1
        && (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1)
        && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1 && EVP_PKEY_verify(ctx, value, valueLength, hash, hashLength) == 1;
    EVP_PKEY_CTX_free(ctx);
    OPENSSL_free(der);
    if (!valid) {
        ERR_clear_error();
    }
    return valid;
}
