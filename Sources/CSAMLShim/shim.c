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

const char *saml_shim_restated_defines(void) { return SAML_SHIM_RESTATED_DEFINES; }

size_t saml_shim_sizeof_dsig_ctx(void) { return sizeof(xmlSecDSigCtx); }
size_t saml_shim_sizeof_dsig_reference_ctx(void) { return sizeof(xmlSecDSigReferenceCtx); }
size_t saml_shim_sizeof_key_info_ctx(void) { return sizeof(xmlSecKeyInfoCtx); }
size_t saml_shim_sizeof_transform_ctx(void) { return sizeof(xmlSecTransformCtx); }
size_t saml_shim_sizeof_enc_ctx(void) { return sizeof(xmlSecEncCtx); }

// xmlsec reports errors through one process-wide callback. This one prints nothing (the default prints
// attacker-derived text to stderr from any thread) and keeps, per thread, the reasons of the current call
// for `saml_shim_errors_take`: the function that failed and xmlsec's fixed text for the reason code, both
// constants of the library, never the free-form message (which can quote the document).
#define SAML_SHIM_ERRORS_CAPACITY 512
static _Thread_local char saml_shim_errors[SAML_SHIM_ERRORS_CAPACITY];
static _Thread_local size_t saml_shim_errors_length = 0;
static _Thread_local int saml_shim_errors_count = 0;

static void saml_shim_errors_append(const char *text) {
    // At most 4 reasons and the capacity; printable ASCII only.
    if (text == NULL || saml_shim_errors_count >= 4) {
        return;
    }
    if (saml_shim_errors_length > 0 && saml_shim_errors_length + 2 < SAML_SHIM_ERRORS_CAPACITY) {
        saml_shim_errors[saml_shim_errors_length++] = ';';
        saml_shim_errors[saml_shim_errors_length++] = ' ';
    }
    for (const char *c = text; *c != 0 && saml_shim_errors_length + 1 < SAML_SHIM_ERRORS_CAPACITY; ++c) {
        saml_shim_errors[saml_shim_errors_length++] = (*c >= 0x20 && *c < 0x7F) ? *c : '?';
    }
    saml_shim_errors[saml_shim_errors_length] = 0;
    saml_shim_errors_count += 1;
}

static void saml_shim_collect_xmlsec_error(const char *file, int line, const char *func, const char *errorObject,
                                           const char *errorSubject, int reason, const char *msg) {
    (void)file; (void)line; (void)errorObject; (void)errorSubject; (void)msg;
    char text[160];
    const char *reasonText = NULL;
    for (xmlSecSize i = 0; i < XMLSEC_ERRORS_MAX_NUMBER; ++i) {
        if (xmlSecErrorsGetMsg(i) == NULL) {
            break;
        }
        if (xmlSecErrorsGetCode(i) == reason) {
            reasonText = xmlSecErrorsGetMsg(i);
            break;
        }
    }
    snprintf(text, sizeof(text), "%s: %s", func != NULL ? func : "xmlsec", reasonText != NULL ? reasonText : "error");
    saml_shim_errors_append(text);
}

void saml_shim_errors_begin(void) {
    saml_shim_errors_length = 0;
    saml_shim_errors_count = 0;
    saml_shim_errors[0] = 0;
    ERR_clear_error();
}

size_t saml_shim_errors_take(char *output, size_t capacity) {
    // OpenSSL's queue is per thread too: its reasons are fixed strings of the library.
    unsigned long code;
    while ((code = ERR_get_error()) != 0) {
        const char *reason = ERR_reason_error_string(code);
        const char *library = ERR_lib_error_string(code);
        char text[160];
        snprintf(text, sizeof(text), "OpenSSL %s: %s", library != NULL ? library : "?", reason != NULL ? reason : "error");
        saml_shim_errors_append(text);
    }
    size_t length = saml_shim_errors_length < capacity ? saml_shim_errors_length : (capacity > 0 ? capacity - 1 : 0);
    if (capacity > 0) {
        memcpy(output, saml_shim_errors, length);
        output[length] = 0;
    }
    saml_shim_errors_begin();
    return length;
}

saml_shim_init_result saml_shim_initialize(void) {
    xmlInitParser();
    if (xmlSecInit() < 0) {
        return SAML_SHIM_INIT_XMLSEC_FAILED;
    }
    // Nothing xmlsec does may open a file or a connection: its URI resolvers (file, http, ftp) are
    // removed, and the parser options it would use (by default NOENT|DTDLOAD|DTDATTR|HUGE) are ours. The
    // verifier never lets xmlsec parse anything; this is the second line.
    xmlSecIOCleanupCallbacks();
    xmlSecParserSetDefaultOptions(XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (xmlSecCheckVersionExt(XMLSEC_VERSION_MAJOR, XMLSEC_VERSION_MINOR, XMLSEC_VERSION_SUBMINOR,
                              xmlSecCheckVersionABICompatible) != 1) {
        return SAML_SHIM_INIT_VERSION_MISMATCH;
    }
    if (xmlSecOpenSSLAppInit(NULL) < 0) {
        return SAML_SHIM_INIT_CRYPTO_APP_FAILED;
    }
    if (xmlSecOpenSSLInit() < 0) {
        return SAML_SHIM_INIT_CRYPTO_FAILED;
    }
    if (saml_shim_install_fast_c14n() < 0) {
        return SAML_SHIM_INIT_C14N_FAILED;
    }
    // Last: the backend's start-up may install its own callback.
    xmlSecErrorsSetCallback(saml_shim_collect_xmlsec_error);
    saml_shim_silence_libxml2();
    return SAML_SHIM_INIT_OK;
}

static void saml_shim_ignore_generic_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

// libxml2 reports what has no parser context of its own (canonicalisation: "Relative namespace UR is
// invalid here", tree functions) through its generic error function, which prints to stderr by default:
// several lines per request that anyone can trigger, echoing document bytes into the service's logs.
// Silenced like xmlsec's, process-wide: for this thread, for threads whose libxml2 state is made later
// (xmlThrDef...), and again on each thread's first parse (saml_parser_context), which covers threads whose
// state existed before the start-up. Verdicts carry their own codes; nothing is lost.
void saml_shim_silence_libxml2(void) {
    xmlSetGenericErrorFunc(NULL, saml_shim_ignore_generic_error);
    xmlThrDefSetGenericErrorFunc(NULL, saml_shim_ignore_generic_error);
}

const char *saml_shim_xmlsec_compiled_version(void) { return XMLSEC_VERSION; }


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

static int saml_shim_enable_c14n(xmlSecDSigCtxPtr ctx, int (*enable)(xmlSecDSigCtxPtr, xmlSecTransformId)) {
    return enable(ctx, xmlSecTransformExclC14NId) < 0
        || enable(ctx, xmlSecTransformExclC14NWithCommentsId) < 0
        || enable(ctx, xmlSecTransformInclC14NId) < 0
        || enable(ctx, xmlSecTransformInclC14NWithCommentsId) < 0
        || enable(ctx, xmlSecTransformInclC14N11Id) < 0
        || enable(ctx, xmlSecTransformInclC14N11WithCommentsId) < 0 ? -1 : 0;
}

static int saml_shim_configure(xmlSecDSigCtxPtr ctx, int allowSHA1) {
    ctx->enabledReferenceUris = xmlSecTransformUriTypeEmpty | xmlSecTransformUriTypeSameDocument;
    // The key comes from the pinned-key lookup, which does not read KeyInfo; should anything read it, no
    // RetrievalMethod may name anything.
    ctx->keyInfoReadCtx.retrievalMethodCtx.enabledUris = xmlSecTransformUriTypeNone;
    ctx->keyInfoReadCtx.maxRetrievalMethodLevel = 0;
    // References and SignedInfo canonicalised within their budget, with the cheap visibility test unless
    // the memo asks for xmlsec's own (fast_c14n.c).
    ctx->referencePreExecuteCallback = saml_shim_fast_c14n_pre_execute;
    ctx->transformCtx.preExecCallback = saml_shim_fast_c14n_pre_execute;
    // `#ID` resolved by a direct `xmlGetID` (the element as a tree without comments, the node set of
    // `xpointer(id('ID'))`), never by building and evaluating an XPointer expression: only plain names
    // get this far (saml_shim_plain_references).
    ctx->flags |= XMLSEC_DSIG_FLAGS_USE_VISA3D_HACK;
    ctx->flags |= XMLSEC_DSIG_FLAGS_IGNORE_MANIFESTS;
    if (xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecTransformEnvelopedId) < 0
        || saml_shim_enable_c14n(ctx, xmlSecDSigCtxEnableReferenceTransform) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecOpenSSLTransformSha256Id) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecOpenSSLTransformSha384Id) < 0
        || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecOpenSSLTransformSha512Id) < 0
        || saml_shim_enable_c14n(ctx, xmlSecDSigCtxEnableSignatureTransform) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformRsaSha256Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformRsaSha384Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformRsaSha512Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformEcdsaSha256Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformEcdsaSha384Id) < 0
        || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformEcdsaSha512Id) < 0) {
        return -1;
    }
    if (allowSHA1
        && (xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecOpenSSLTransformSha1Id) < 0
            || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformRsaSha1Id) < 0
            || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformEcdsaSha1Id) < 0)) {
        return -1;
    }
    return 0;
}

// The pinned key reaches xmlsec through a keys manager whose only lookup returns it (the key travels in
// the context's `userData`, which xmlsec leaves to applications). Set this way rather than as
// `ctx->signKey`, the lookup runs after xmlsec has set the key requirements, and can drop the one
// requirement that costs: whether the key is public or private, which xmlsec asks OpenSSL 3 by exporting
// the key's parameters (`xmlSecKeyReqMatchKey` -> `EVP_PKEY_get_bn_param`, about a tenth of a
// verification). Pinned keys are public keys built by `saml_shim_key_public_only`; the key's algorithm
// (RSA for an RSA SignatureMethod, EC for ECDSA) and usage are still matched by xmlsec. KeyInfo is never
// read: the lookup ignores it.
static xmlSecKeyPtr saml_shim_pinned_key_lookup(xmlNodePtr keyInfoNode, xmlSecKeyInfoCtxPtr keyInfoCtx) {
    (void)keyInfoNode;
    xmlSecKeyPtr pinned = (xmlSecKeyPtr)keyInfoCtx->userData;
    if (pinned == NULL) {
        return NULL;
    }
    keyInfoCtx->keyReq.keyType = xmlSecKeyDataTypeUnknown;
    return xmlSecKeyDuplicate(pinned);
}

static xmlSecKeysMngrPtr saml_shim_pinned_keys_manager = NULL;
static pthread_once_t saml_shim_pinned_keys_manager_once = PTHREAD_ONCE_INIT;

static void saml_shim_pinned_keys_manager_create(void) {
    xmlSecKeysMngrPtr manager = xmlSecKeysMngrCreate();
    if (manager != NULL) {
        manager->getKey = saml_shim_pinned_key_lookup;
    }
    saml_shim_pinned_keys_manager = manager;
}

// A non-empty name without any character an XPointer or XPath expression needs.
static int saml_shim_plain_name(const xmlChar *name) {
    return name[0] != 0 && strpbrk((const char *)name, " \t\n\r'\"()[]^|/*=:@,#") == NULL;
}

// Whether every Reference URI of the signature is absent, "" or `#` + a plain name: no character an
// XPointer or XPath expression needs (blank, quote, parenthesis, bracket, caret, `|`, `/`, `*`, `=`, `:`,
// `@`, `,`). The Swift side has already required IDs to be xs:NCNames and each URI to name its signed
// element; this check stands on its own so that no caller can hand xmlsec an expression from a document.
static int saml_shim_plain_references(xmlNodePtr signature) {
    xmlNodePtr signedInfo = xmlSecFindChild(signature, xmlSecNodeSignedInfo, xmlSecDSigNs);
    if (signedInfo == NULL) {
        return 1;  // nothing to resolve: xmlsec refuses the signature itself
    }
    for (xmlNodePtr reference = signedInfo->children; reference != NULL; reference = reference->next) {
        if (!xmlSecCheckNodeName(reference, xmlSecNodeReference, xmlSecDSigNs) || xmlHasProp(reference, xmlSecAttrURI) == NULL) {
            continue;
        }
        xmlChar *uri = xmlGetProp(reference, xmlSecAttrURI);  // the attribute xmlsec reads
        if (uri == NULL) {
            return 0;  // out of memory: refuse rather than let xmlsec read what was not checked
        }
        int plain = uri[0] == 0 || (uri[0] == '#' && saml_shim_plain_name(uri + 1));
        xmlFree(uri);
        if (!plain) {
            return 0;
        }
    }
    return 1;
}

static __thread saml_shim_c14n_budget_reason saml_shim_last_budget_reason = SAML_SHIM_C14N_WITHIN_BUDGET;

saml_shim_c14n_budget_reason saml_shim_dsig_budget_reason(void) {
    return saml_shim_last_budget_reason;
}

// One verification; with `referenceBytes`, also a copy of what xmlsec digested for the first Reference.
static saml_shim_dsig_result saml_shim_dsig_run(xmlNodePtr signature, xmlSecKeyPtr pinnedKey, int allowSHA1, int fastC14N,
                                                unsigned char **referenceBytes, size_t *referenceLength) {
    pthread_once(&saml_shim_pinned_keys_manager_once, saml_shim_pinned_keys_manager_create);
    if (saml_shim_pinned_keys_manager == NULL || pinnedKey == NULL) {
        return SAML_SHIM_DSIG_PROCESSING_FAILED;
    }
    xmlSecDSigCtxPtr ctx = xmlSecDSigCtxCreate(saml_shim_pinned_keys_manager);
    if (ctx == NULL) {
        return SAML_SHIM_DSIG_PROCESSING_FAILED;
    }
    saml_shim_dsig_result result = SAML_SHIM_DSIG_PROCESSING_FAILED;
    if (!saml_shim_plain_references(signature)) {
        result = SAML_SHIM_DSIG_REFERENCE_REFUSED;
        goto done;
    }
    if (saml_shim_configure(ctx, allowSHA1) < 0) {
        goto done;
    }
    if (referenceBytes != NULL) {
        ctx->flags |= XMLSEC_DSIG_FLAGS_STORE_SIGNEDINFO_REFERENCES;
    }
    // The document does not change during the verification: exc_c14n.c checks it once, and the budget
    // is computed once, for the reference and SignedInfo alike (xmlsec copies `userData` into each
    // reference's context).
    saml_shim_c14n_memo memo = { .magic = SAML_SHIM_C14N_MEMO_MAGIC, .supported = -1, .stock = !fastC14N };
    ctx->userData = &memo;
    ctx->transformCtx.userData = &memo;
    ctx->keyInfoReadCtx.userData = pinnedKey;
    saml_shim_last_budget_reason = SAML_SHIM_C14N_WITHIN_BUDGET;
    int ids = signature->doc != NULL && signature->doc->ids != NULL ? xmlHashSize((xmlHashTablePtr)signature->doc->ids) : 0;
    int verified = xmlSecDSigCtxVerify(ctx, signature);
    // xmlsec registers every `Id` of the signature's subtree; the structure checks registered them first.
    // Should xmlsec have added one, the document's ID table is not the one the checks saw: fail.
    if ((signature->doc != NULL && signature->doc->ids != NULL ? xmlHashSize((xmlHashTablePtr)signature->doc->ids) : 0) != ids) {
        result = SAML_SHIM_DSIG_IDS_CHANGED;
        goto done;
    }
    if (referenceBytes != NULL && xmlSecPtrListGetSize(&(ctx->signedInfoReferences)) > 0) {
        xmlSecDSigReferenceCtxPtr reference = (xmlSecDSigReferenceCtxPtr)xmlSecPtrListGetItem(&(ctx->signedInfoReferences), 0);
        xmlSecBufferPtr buffer = reference != NULL ? xmlSecDSigReferenceCtxGetPreDigestBuffer(reference) : NULL;
        if (buffer != NULL && xmlSecBufferGetSize(buffer) > 0) {
            *referenceLength = xmlSecBufferGetSize(buffer);
            *referenceBytes = xmlMalloc(*referenceLength);
            if (*referenceBytes != NULL) {
                memcpy(*referenceBytes, xmlSecBufferGetData(buffer), *referenceLength);
            }
        }
    }
    if (memo.exceeded != SAML_SHIM_C14N_WITHIN_BUDGET) {
        saml_shim_last_budget_reason = (saml_shim_c14n_budget_reason)memo.exceeded;
        result = SAML_SHIM_DSIG_BUDGET_EXCEEDED;
        goto done;
    }
    if (verified < 0) {
        goto done;
    }
    if (ctx->status == xmlSecDSigStatusSucceeded) {
        result = SAML_SHIM_DSIG_VALID;
        goto done;
    }
    result = SAML_SHIM_DSIG_SIGNATURE_INVALID;
    // In verification, xmlsec checks every reference's digest first and stops at the first mismatch
    // without checking the signature value; a failed reference therefore means altered content.
    xmlSecSize count = xmlSecPtrListGetSize(&(ctx->signedInfoReferences));
    for (xmlSecSize i = 0; i < count; ++i) {
        xmlSecDSigReferenceCtxPtr reference = (xmlSecDSigReferenceCtxPtr)xmlSecPtrListGetItem(&(ctx->signedInfoReferences), i);
        if (reference != NULL && reference->status != xmlSecDSigStatusSucceeded) {
            result = SAML_SHIM_DSIG_DIGEST_MISMATCH;
        }
    }
done:
    xmlSecDSigCtxDestroy(ctx);
    return result;
}

saml_shim_dsig_result saml_shim_dsig_verify(xmlNodePtr signature, xmlSecKeyPtr pinnedKey, int allowSHA1, int fastC14N) {
    return saml_shim_dsig_run(signature, pinnedKey, allowSHA1, fastC14N, NULL, NULL);
}

saml_shim_dsig_result saml_shim_dsig_reference_bytes(xmlNodePtr signature, xmlSecKeyPtr pinnedKey, int allowSHA1, int fastC14N,
                                                     unsigned char **bytes, size_t *length) {
    *bytes = NULL;
    *length = 0;
    return saml_shim_dsig_run(signature, pinnedKey, allowSHA1, fastC14N, bytes, length);
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

static xmlNodePtr saml_shim_child(xmlNodePtr parent, const char *name, const char *ns) {
    return xmlSecFindChild(parent, (const xmlChar *)name, (const xmlChar *)ns);
}

// xmlsec's templates put "\n" text nodes between the elements of ds:Signature. Those would sit inside
// the signed SignedInfo, and the Adobe Pass cookbook's whitespace normalisation deletes newlines on the
// device: the signature would no longer verify after encoding. Generated signatures carry none.
static void saml_shim_strip_blank_text(xmlNodePtr node) {
    xmlNodePtr child = node->children;
    while (child != NULL) {
        xmlNodePtr next = child->next;
        if (child->type == XML_TEXT_NODE && xmlIsBlankNode(child)) {
            xmlUnlinkNode(child);
            xmlFreeNode(child);
        } else if (child->type == XML_ELEMENT_NODE) {
            saml_shim_strip_blank_text(child);
        }
        child = next;
    }
}

// xmlsec writes Base64 (SignatureValue, X509Certificate) in lines of 64 characters. Line breaks are
// insignificant to Base64 readers but not to a signature that covers them: a Response signature over a
// signed Assertion would break under the cookbook's normalisation. They are removed after signing.
static void saml_shim_unwrap_base64(xmlNodePtr node) {
    for (xmlNodePtr child = node->children; child != NULL; child = child->next) {
        if (child->type == XML_TEXT_NODE && child->content != NULL) {
            xmlChar *read = child->content;
            xmlChar *write = child->content;
            for (; *read != 0; ++read) {
                if (*read != '\n' && *read != '\r') {
                    *write++ = *read;
                }
            }
            *write = 0;
        } else if (child->type == XML_ELEMENT_NODE) {
            saml_shim_unwrap_base64(child);
        }
    }
}

void saml_shim_compact_for_transport(xmlNodePtr node) {
    saml_shim_strip_blank_text(node);
    saml_shim_unwrap_base64(node);
}

int saml_shim_sign_element(xmlDocPtr doc, xmlNodePtr element, xmlSecKeyPtr key, int ecdsa) {
    static const char *assertionNs = "urn:oasis:names:tc:SAML:2.0:assertion";
    static const char *metadataNs = "urn:oasis:names:tc:SAML:2.0:metadata";
    xmlAttrPtr id = xmlHasProp(element, (const xmlChar *)"ID");
    xmlNodePtr issuer = saml_shim_child(element, "Issuer", assertionNs);
    // Metadata elements have no Issuer: their schema puts ds:Signature first (SAML Metadata 2.3.1, 2.3.2).
    int metadata = element->ns != NULL && xmlStrEqual(element->ns->href, (const xmlChar *)metadataNs);
    if (id == NULL || id->children == NULL || id->children->content == NULL || (issuer == NULL && !metadata)) {
        return -1;
    }
    const xmlChar *value = id->children->content;
    if (!saml_shim_plain_name(value) || (xmlGetID(doc, value) == NULL && xmlAddID(NULL, doc, value, id) == NULL)) {
        return -1;
    }
    xmlNodePtr signature = xmlSecTmplSignatureCreateNsPref(doc, xmlSecTransformExclC14NId,
        ecdsa ? xmlSecOpenSSLTransformEcdsaSha256Id : xmlSecOpenSSLTransformRsaSha256Id, NULL, (const xmlChar *)"ds");
    if (signature == NULL) {
        return -1;
    }
    xmlNodePtr placed;
    if (issuer != NULL) {
        placed = xmlAddNextSibling(issuer, signature);
    } else if (element->children != NULL) {
        placed = xmlAddPrevSibling(element->children, signature);
    } else {
        placed = xmlAddChild(element, signature);
    }
    if (placed == NULL) {
        xmlFreeNode(signature);
        return -1;
    }
    size_t length = xmlStrlen(value);
    xmlChar *uri = (xmlChar *)malloc(length + 2);
    if (uri == NULL) {
        return -1;
    }
    uri[0] = '#';
    memcpy(uri + 1, value, length + 1);
    xmlNodePtr reference = xmlSecTmplSignatureAddReference(signature, xmlSecOpenSSLTransformSha256Id, NULL, uri, NULL);
    free(uri);
    if (reference == NULL
        || xmlSecTmplReferenceAddTransform(reference, xmlSecTransformEnvelopedId) == NULL
        || xmlSecTmplReferenceAddTransform(reference, xmlSecTransformExclC14NId) == NULL) {
        return -1;
    }
    xmlNodePtr keyInfo = xmlSecTmplSignatureEnsureKeyInfo(signature, NULL);
    if (keyInfo == NULL || xmlSecTmplKeyInfoAddX509Data(keyInfo) == NULL) {
        return -1;
    }
    saml_shim_strip_blank_text(signature);
    xmlSecDSigCtxPtr ctx = xmlSecDSigCtxCreate(NULL);
    if (ctx == NULL) {
        return -1;
    }
    ctx->signKey = xmlSecKeyDuplicate(key);
    ctx->flags |= XMLSEC_DSIG_FLAGS_USE_VISA3D_HACK;  // `#ID` by direct lookup when signing too: never XPointer
    int result = ctx->signKey != NULL && xmlSecDSigCtxSign(ctx, signature) >= 0 ? 0 : -1;
    xmlSecDSigCtxDestroy(ctx);
    if (result == 0) {
        saml_shim_unwrap_base64(signature);
    }
    return result;
}

void saml_shim_free_buffer(unsigned char *buffer) {
    xmlFree(buffer);
}

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <xmlsec/openssl/evp.h>

int saml_shim_sha256(const unsigned char *data, size_t length, unsigned char output[32]) {
    unsigned int size = 0;
    return EVP_Digest(data, length, output, &size, EVP_sha256(), NULL) == 1 && size == 32 ? 0 : -1;
}

#include <openssl/hmac.h>

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

int saml_shim_sign_root(const char *xml, int length, xmlSecKeyPtr key, unsigned char **output, int *outputLength) {
    *output = NULL;
    *outputLength = 0;
    xmlDocPtr doc = xmlReadMemory(xml, length, NULL, "UTF-8", XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc == NULL) {
        return -1;
    }
    int ecdsa = xmlSecKeyDataCheckId(xmlSecKeyGetValue(key), xmlSecOpenSSLKeyDataEcdsaId);
    int result = -1;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (root != NULL && saml_shim_sign_element(doc, root, key, ecdsa) == 0) {
        xmlChar *buffer = NULL;
        int size = 0;
        xmlDocDumpMemoryEnc(doc, &buffer, &size, "UTF-8");
        if (buffer != NULL) {
            *output = (unsigned char *)buffer;
            *outputLength = size;
            result = 0;
        }
    }
    xmlFreeDoc(doc);
    return result;
}
