// Signature verification: one xmlsec run per signature and pinned key, with the algorithms, the
// canonicalisation and the references restricted, and what was digested on demand.
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
    // the memo asks for xmlsec's own (fast_c14n.c); an RSA SignatureMethod verified with OpenSSL's context
    // prepared once per key and thread (fast_signature.c).
    ctx->referencePreExecuteCallback = saml_shim_fast_c14n_pre_execute;
    ctx->transformCtx.preExecCallback = saml_shim_signed_info_pre_execute;
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
            || xmlSecDSigCtxEnableReferenceTransform(ctx, xmlSecOpenSSLTransformSha224Id) < 0
            || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformRsaSha1Id) < 0
            || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformRsaSha224Id) < 0
            || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformEcdsaSha1Id) < 0
            || xmlSecDSigCtxEnableSignatureTransform(ctx, xmlSecOpenSSLTransformEcdsaSha224Id) < 0)) {
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
int saml_shim_plain_name(const xmlChar *name) {
    return name[0] != 0 && strpbrk((const char *)name, " \t\n\r'\"()[]^|/*=:@,#") == NULL;
}

// Whether the document holds nothing but its document element and comments. An empty Reference URI is
// the whole document (XMLDSig 4.3.3.2): libxmlsec1 builds its node set from every child of the document
// but comments, with a linear duplicate check per child (xmlXPathNodeSetAdd), and a set of more than one
// node is none of the shapes fast_c14n.c recognises, so that every node canonicalised scans it at every
// ancestor. With only the document element in it, the set is that element's tree, which fast_c14n.c
// recognises. (The pre-scan refuses processing instructions there and caps comments.)
static int saml_shim_document_is_one_tree(xmlDocPtr doc) {
    if (doc == NULL) {
        return 0;
    }
    for (xmlNodePtr child = doc->children; child != NULL; child = child->next) {
        if (child->type != XML_COMMENT_NODE && child != xmlDocGetRootElement(doc)) {
            return 0;
        }
    }
    return 1;
}

// Whether every Reference URI of the signature is absent, "" or `#` + a plain name: no character an
// XPointer or XPath expression needs (blank, quote, parenthesis, bracket, caret, `|`, `/`, `*`, `=`, `:`,
// `@`, `,`); and an absent or empty one only in a document that is one element's tree. The Swift side has
// already required IDs to be xs:NCNames and each URI to name its signed element; this check stands on its
// own so that no caller can hand xmlsec an expression from a document, or a node set it scans per node.
static int saml_shim_plain_references(xmlNodePtr signature) {
    xmlNodePtr signedInfo = xmlSecFindChild(signature, xmlSecNodeSignedInfo, xmlSecDSigNs);
    if (signedInfo == NULL) {
        return 1;  // nothing to resolve: xmlsec refuses the signature itself
    }
    for (xmlNodePtr reference = signedInfo->children; reference != NULL; reference = reference->next) {
        if (!xmlSecCheckNodeName(reference, xmlSecNodeReference, xmlSecDSigNs)) {
            continue;
        }
        if (xmlHasProp(reference, xmlSecAttrURI) == NULL) {
            if (!saml_shim_document_is_one_tree(signature->doc)) {
                return 0;
            }
            continue;
        }
        xmlChar *uri = xmlGetProp(reference, xmlSecAttrURI);  // the attribute xmlsec reads
        if (uri == NULL) {
            return 0;  // out of memory: refuse rather than let xmlsec read what was not checked
        }
        int plain = uri[0] == 0 ? saml_shim_document_is_one_tree(signature->doc)
                                : uri[0] == '#' && saml_shim_plain_name(uri + 1);
        xmlFree(uri);
        if (!plain) {
            return 0;
        }
    }
    return 1;
}

static __thread saml_shim_c14n_budget_reason saml_shim_last_budget_reason = SAML_SHIM_C14N_WITHIN_BUDGET;

static __thread saml_shim_c14n_refusal saml_shim_last_refusal = SAML_SHIM_C14N_NOT_REFUSED;

saml_shim_c14n_budget_reason saml_shim_dsig_budget_reason(void) {
    return saml_shim_last_budget_reason;
}

saml_shim_c14n_refusal saml_shim_dsig_refusal(void) {
    return saml_shim_last_refusal;
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
    // The document does not change during the verification: the engine checks it once, and the budget
    // is computed once, for the reference and SignedInfo alike (xmlsec copies `userData` into each
    // reference's context).
    saml_shim_c14n_memo memo = { .magic = SAML_SHIM_C14N_MEMO_MAGIC, .supported = -1, .stock = !fastC14N };
    ctx->userData = &memo;
    ctx->transformCtx.userData = &memo;
    ctx->keyInfoReadCtx.userData = pinnedKey;
    saml_shim_last_budget_reason = SAML_SHIM_C14N_WITHIN_BUDGET;
    saml_shim_last_refusal = SAML_SHIM_C14N_NOT_REFUSED;
    int ids = signature->doc != NULL && signature->doc->ids != NULL ? xmlHashSize((xmlHashTablePtr)signature->doc->ids) : 0;
    saml_shim_fast_signature_running(ctx);
    int verified = xmlSecDSigCtxVerify(ctx, signature);
    saml_shim_fast_signature_running(NULL);
    // xmlsec registers every `Id` of the signature's subtree; the structure checks registered them first.
    // Should xmlsec have added one, the document's ID table is not the one the checks saw: fail.
    if ((signature->doc != NULL && signature->doc->ids != NULL ? xmlHashSize((xmlHashTablePtr)signature->doc->ids) : 0) != ids) {
        result = SAML_SHIM_DSIG_IDS_CHANGED;
        goto done;
    }
    if (memo.exceeded != SAML_SHIM_C14N_WITHIN_BUDGET) {
        saml_shim_last_budget_reason = (saml_shim_c14n_budget_reason)memo.exceeded;
        result = SAML_SHIM_DSIG_BUDGET_EXCEEDED;
        goto done;
    }
    if (memo.refused != SAML_SHIM_C14N_NOT_REFUSED) {
        saml_shim_last_refusal = (saml_shim_c14n_refusal)memo.refused;
        result = SAML_SHIM_DSIG_C14N_REFUSED;
        goto done;
    }
    if (verified < 0) {
        goto done;
    }
    // The first reference's canonical bytes, once its transforms ran to the end: a canonicalisation that
    // failed half-way (libxml2's refuses a relative namespace URI after writing what precedes it) leaves
    // a partial buffer that no digest was computed over.
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
