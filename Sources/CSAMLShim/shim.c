#include "CSAMLShim.h"

const char *saml_shim_restated_defines(void) { return SAML_SHIM_RESTATED_DEFINES; }

size_t saml_shim_sizeof_dsig_ctx(void) { return sizeof(xmlSecDSigCtx); }
size_t saml_shim_sizeof_dsig_reference_ctx(void) { return sizeof(xmlSecDSigReferenceCtx); }
size_t saml_shim_sizeof_key_info_ctx(void) { return sizeof(xmlSecKeyInfoCtx); }
size_t saml_shim_sizeof_transform_ctx(void) { return sizeof(xmlSecTransformCtx); }
size_t saml_shim_sizeof_enc_ctx(void) { return sizeof(xmlSecEncCtx); }

// Errors are read from the per-call contexts; the library's default callback would print attacker
// derived text to stderr from any thread.
static void saml_shim_quiet_xmlsec_errors(const char *file, int line, const char *func, const char *errorObject,
                                          const char *errorSubject, int reason, const char *msg) {
    (void)file; (void)line; (void)func; (void)errorObject; (void)errorSubject; (void)reason; (void)msg;
}

saml_shim_init_result saml_shim_initialize(void) {
    xmlInitParser();
    if (xmlSecInit() < 0) {
        return SAML_SHIM_INIT_XMLSEC_FAILED;
    }
    if (xmlSecCheckVersionExt(XMLSEC_VERSION_MAJOR, XMLSEC_VERSION_MINOR, XMLSEC_VERSION_SUBMINOR,
                              xmlSecCheckVersionABICompatible) != 1) {
        return SAML_SHIM_INIT_VERSION_MISMATCH;
    }
    xmlSecErrorsSetCallback(saml_shim_quiet_xmlsec_errors);
    if (xmlSecOpenSSLAppInit(NULL) < 0) {
        return SAML_SHIM_INIT_CRYPTO_APP_FAILED;
    }
    if (xmlSecOpenSSLInit() < 0) {
        return SAML_SHIM_INIT_CRYPTO_FAILED;
    }
    return SAML_SHIM_INIT_OK;
}

const char *saml_shim_xmlsec_compiled_version(void) { return XMLSEC_VERSION; }

xmlSecTransformId saml_shim_transform_enveloped(void) { return xmlSecTransformEnvelopedId; }
xmlSecTransformId saml_shim_transform_exc_c14n(void) { return xmlSecTransformExclC14NId; }
xmlSecTransformId saml_shim_transform_exc_c14n_with_comments(void) { return xmlSecTransformExclC14NWithCommentsId; }
xmlSecTransformId saml_shim_transform_rsa_sha1(void) { return xmlSecOpenSSLTransformRsaSha1Id; }
xmlSecTransformId saml_shim_transform_rsa_sha256(void) { return xmlSecOpenSSLTransformRsaSha256Id; }
xmlSecTransformId saml_shim_transform_rsa_sha384(void) { return xmlSecOpenSSLTransformRsaSha384Id; }
xmlSecTransformId saml_shim_transform_rsa_sha512(void) { return xmlSecOpenSSLTransformRsaSha512Id; }
xmlSecTransformId saml_shim_transform_ecdsa_sha256(void) { return xmlSecOpenSSLTransformEcdsaSha256Id; }
xmlSecTransformId saml_shim_transform_ecdsa_sha384(void) { return xmlSecOpenSSLTransformEcdsaSha384Id; }
xmlSecTransformId saml_shim_transform_ecdsa_sha512(void) { return xmlSecOpenSSLTransformEcdsaSha512Id; }
xmlSecTransformId saml_shim_transform_sha1(void) { return xmlSecOpenSSLTransformSha1Id; }
xmlSecTransformId saml_shim_transform_sha256(void) { return xmlSecOpenSSLTransformSha256Id; }
xmlSecTransformId saml_shim_transform_sha384(void) { return xmlSecOpenSSLTransformSha384Id; }
xmlSecTransformId saml_shim_transform_sha512(void) { return xmlSecOpenSSLTransformSha512Id; }

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
