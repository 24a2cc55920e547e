// RSA PKCS#1 v1.5 signature transforms that keep libxmlsec1's flow and prepare OpenSSL's context once.
//
// libxmlsec1-openssl's signature transform verifies with EVP_VerifyFinal_ex, which on OpenSSL 3 copies
// the digest context and builds a new EVP_PKEY_CTX for every signature: a provider context for the key,
// the RSA signature method fetched, the digest set by name (OpenSSL 3.0 then walks its whole name map to
// find the digest's NID), then freed: about 2.5% of a typical verification's instructions but, with
// its locks and hash lookups, about a tenth of its time (docs/benchmarks-history.md, issue 62).
//
// These replacement klasses change two functions of the RSA transforms and nothing else:
// - execute: the SHA digest of the canonical SignedInfo, with the digest fetched once for the process;
// - verify: EVP_PKEY_verify of that digest with a context prepared once per key and digest on each
//   thread (verify_init, PKCS#1 v1.5 padding, the signature's digest), kept for the next signature.
// libxmlsec1 still does everything else and decides: it reads SignedInfo and allow-lists the
// SignatureMethod (verification.c), sets the key requirements and the key (the pinned key, matched to
// the transform's RSA key type by xmlsec), canonicalises SignedInfo through the chain (fast_c14n.c),
// decodes SignatureValue, and turns the transform's status into the signature's. The key verified with
// is the one xmlsec set (`signKey` of the context that runs, checked to be this transform's) and must be
// an RSA key. ECDSA transforms stay xmlsec's own.
//
// The prepared contexts are per thread (an EVP_PKEY_CTX is not to be shared), at most
// SAML_FAST_SIGNATURE_PREPARED of them (enough for the MVPDs that carry most logins, a key each, to stay
// prepared on every thread; past it a key costs what it did before), replaced in turn. Each holds a
// reference to its key, so a key cannot be freed and another allocated at its address while it is cached
// (a retired key is released when its entry is replaced or the thread ends). Only the verifier's own
// contexts use these klasses: the SignedInfo pre-execute callback below switches the chain's RSA
// transform just before it runs, except in the verifier's stock mode, which keeps xmlsec's transforms for
// differential tests (FastCanonicalizationTests compare the two on every vector, the corpus and seeded
// mutations).
#include "CSAMLShim.h"
#include "shim_private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <xmlsec/openssl/crypto.h>
#include <xmlsec/openssl/evp.h>

typedef struct {
    saml_replaced_klass base;  // first: a saml_replaced_klass * is one of these (replaced_klass.c)
    EVP_MD *digest;            // fetched once, at installation
} saml_fast_signature;

enum { SAML_FAST_SIGNATURE_COUNT = 5, SAML_FAST_SIGNATURE_PREPARED = 16 };
static saml_fast_signature saml_fast_signatures[SAML_FAST_SIGNATURE_COUNT];
static int saml_fast_signatures_installed = 0;

static saml_fast_signature *saml_fast_signature_lookup(xmlSecTransformId id) {
    return (saml_fast_signature *)saml_replaced_klass_of(id);
}

// What a thread keeps between signatures: the digest context and, while a signature transform runs,
// which transform owns it and the digest it produced; the prepared verification contexts.
typedef struct {
    EVP_MD_CTX *digestCtx;
    xmlSecTransformPtr owner;  // the transform whose digest `digestCtx` or `digest` holds
    int digested;              // `digest` holds the owner's finished digest
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digestLength;
    struct {
        EVP_PKEY *key;  // identity only: the context holds the reference
        const EVP_MD *md;
        EVP_PKEY_CTX *ctx;
    } prepared[SAML_FAST_SIGNATURE_PREPARED];
    unsigned next;
} saml_signature_thread;

static pthread_key_t saml_signature_thread_key;
static pthread_once_t saml_signature_thread_once = PTHREAD_ONCE_INIT;
static int saml_signature_thread_ready = 0;

// Set when the process exits: a thread that ends after OpenSSL's own exit-time cleanup (registered
// before this, so run after) must not free contexts whose provider is gone; the process is ending.
static volatile int saml_signature_exiting = 0;

static void saml_signature_exit(void) {
    saml_signature_exiting = 1;
}

static void saml_signature_thread_free(void *value) {
    saml_signature_thread *state = (saml_signature_thread *)value;
    if (state == NULL || saml_signature_exiting) {
        return;
    }
    for (int i = 0; i < SAML_FAST_SIGNATURE_PREPARED; ++i) {
        EVP_PKEY_CTX_free(state->prepared[i].ctx);
    }
    EVP_MD_CTX_free(state->digestCtx);
    free(state);
}

static void saml_signature_thread_key_create(void) {
    saml_signature_thread_ready = pthread_key_create(&saml_signature_thread_key, saml_signature_thread_free) == 0;
}

static saml_signature_thread *saml_signature_thread_state(void) {
    pthread_once(&saml_signature_thread_once, saml_signature_thread_key_create);
    if (!saml_signature_thread_ready) {
        return NULL;
    }
    saml_signature_thread *state = (saml_signature_thread *)pthread_getspecific(saml_signature_thread_key);
    if (state != NULL) {
        return state;
    }
    state = (saml_signature_thread *)calloc(1, sizeof(saml_signature_thread));
    if (state == NULL) {
        return NULL;
    }
    state->digestCtx = EVP_MD_CTX_new();
    if (state->digestCtx == NULL || pthread_setspecific(saml_signature_thread_key, state) != 0) {
        saml_signature_thread_free(state);
        return NULL;
    }
    return state;
}

// The thread's verification context for `key` and `md`, prepared on first use.
static EVP_PKEY_CTX *saml_prepared_context(saml_signature_thread *state, EVP_PKEY *key, const EVP_MD *md) {
    for (int i = 0; i < SAML_FAST_SIGNATURE_PREPARED; ++i) {
        if (state->prepared[i].ctx != NULL && state->prepared[i].key == key && state->prepared[i].md == md) {
            return state->prepared[i].ctx;
        }
    }
    // Checked when a context is prepared: a key found above was an RSA key then, and keys do not change.
    if (!EVP_PKEY_is_a(key, "RSA")) {
        return NULL;
    }
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(xmlSecOpenSSLGetLibCtx(), key, NULL);
    if (ctx == NULL || EVP_PKEY_verify_init(ctx) != 1 || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) != 1
        || EVP_PKEY_CTX_set_signature_md(ctx, md) != 1) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    unsigned slot = state->next++ % SAML_FAST_SIGNATURE_PREPARED;
    EVP_PKEY_CTX_free(state->prepared[slot].ctx);
    state->prepared[slot].key = key;
    state->prepared[slot].md = md;
    state->prepared[slot].ctx = ctx;
    return ctx;
}

// The verification running on this thread (set by verification.c around xmlSecDSigCtxVerify).
static __thread xmlSecDSigCtxPtr saml_fast_signature_running = NULL;

// The signature values this thread checked with a prepared context (for tests: that the path runs).
static __thread unsigned long long saml_fast_signature_checks = 0;

unsigned long long saml_shim_fast_signature_checks(void) {
    return saml_fast_signature_checks;
}

void saml_shim_fast_signature_running(xmlSecDSigCtxPtr ctx) {
    saml_fast_signature_running = ctx;
}

// A finished or abandoned signature leaves the thread's digest state to the next one.
static void saml_fast_signature_finalize(xmlSecTransformPtr transform) {
    saml_signature_thread *state = (saml_signature_thread *)(saml_signature_thread_ready
                                                                 ? pthread_getspecific(saml_signature_thread_key)
                                                                 : NULL);
    if (state != NULL && state->owner == transform) {
        state->owner = NULL;
        state->digested = 0;
    }
    saml_replaced_klass_finalize(transform);
}

static int saml_fast_signature_set_key_req(xmlSecTransformPtr transform, xmlSecKeyReqPtr keyReq) {
    saml_fast_signature *fast = saml_fast_signature_lookup(transform->id);
    int ret;
    SAML_AS_ORIGINAL(transform, &fast->base, fast->base.original->setKeyReq(transform, keyReq));
    return ret;
}

static int saml_fast_signature_set_key(xmlSecTransformPtr transform, xmlSecKeyPtr key) {
    saml_fast_signature *fast = saml_fast_signature_lookup(transform->id);
    int ret;
    SAML_AS_ORIGINAL(transform, &fast->base, fast->base.original->setKey(transform, key));
    return ret;
}

// The digest of everything pushed (the canonical SignedInfo), finished with the last push.
static int saml_fast_signature_execute(xmlSecTransformPtr transform, int last, xmlSecTransformCtxPtr ctx) {
    (void)ctx;
    saml_fast_signature *fast = saml_fast_signature_lookup(transform->id);
    saml_signature_thread *state = saml_signature_thread_state();
    if (fast == NULL || state == NULL || transform->operation != xmlSecTransformOperationVerify) {
        return -1;
    }
    xmlSecBufferPtr in = &(transform->inBuf);
    switch (transform->status) {
    case xmlSecTransformStatusNone:
        if (EVP_DigestInit_ex(state->digestCtx, fast->digest, NULL) != 1) {
            return -1;
        }
        state->owner = transform;
        state->digested = 0;
        transform->status = xmlSecTransformStatusWorking;
        __attribute__((fallthrough));
    case xmlSecTransformStatusWorking: {
        if (state->owner != transform || state->digested) {
            return -1;
        }
        xmlSecSize size = xmlSecBufferGetSize(in);
        if (size > 0
            && (EVP_DigestUpdate(state->digestCtx, xmlSecBufferGetData(in), size) != 1 || xmlSecBufferRemoveHead(in, size) < 0)) {
            return -1;
        }
        if (last) {
            if (EVP_DigestFinal_ex(state->digestCtx, state->digest, &state->digestLength) != 1) {
                return -1;
            }
            state->digested = 1;
            transform->status = xmlSecTransformStatusFinished;
        }
        return 0;
    }
    case xmlSecTransformStatusFinished:
        return xmlSecBufferGetSize(in) == 0 ? 0 : -1;
    default:
        return -1;
    }
}

// The PKCS#1 v1.5 check of `data` (the decoded SignatureValue) over the digest, with the key xmlsec set.
static int saml_fast_signature_verify(xmlSecTransformPtr transform, const xmlSecByte *data, xmlSecSize dataSize,
                                      xmlSecTransformCtxPtr ctx) {
    saml_fast_signature *fast = saml_fast_signature_lookup(transform->id);
    saml_signature_thread *state = saml_signature_thread_state();
    xmlSecDSigCtxPtr running = saml_fast_signature_running;
    if (fast == NULL || state == NULL || data == NULL || transform->operation != xmlSecTransformOperationVerify
        || transform->status != xmlSecTransformStatusFinished || state->owner != transform || !state->digested) {
        return -1;
    }
    state->owner = NULL;
    state->digested = 0;
    // The context running this transform, and the key it set on it.
    if (running == NULL || ctx != &(running->transformCtx) || running->signMethod != transform || running->signKey == NULL) {
        return -1;
    }
    xmlSecKeyDataPtr value = xmlSecKeyGetValue(running->signKey);
    EVP_PKEY *key = value != NULL ? xmlSecOpenSSLEvpKeyDataGetEvp(value) : NULL;
    if (key == NULL) {
        return -1;
    }
    EVP_PKEY_CTX *prepared = saml_prepared_context(state, key, fast->digest);
    if (prepared == NULL) {
        return -1;
    }
    saml_fast_signature_checks += 1;
    int verified = EVP_PKEY_verify(prepared, data, (size_t)dataSize, state->digest, state->digestLength);
    if (verified < 0) {
        return -1;
    }
    transform->status = verified == 1 ? xmlSecTransformStatusOk : xmlSecTransformStatusFail;
    return 0;
}

static int saml_fast_signature_make(saml_fast_signature *fast, xmlSecTransformId original, const char *digestName) {
    if (original->setKeyReq == NULL || original->setKey == NULL || saml_replaced_klass_make(&fast->base, original) < 0) {
        return -1;
    }
    fast->digest = EVP_MD_fetch(xmlSecOpenSSLGetLibCtx(), digestName, NULL);
    fast->base.klass.finalize = saml_fast_signature_finalize;
    fast->base.klass.setKeyReq = saml_fast_signature_set_key_req;
    fast->base.klass.setKey = saml_fast_signature_set_key;
    fast->base.klass.execute = saml_fast_signature_execute;
    fast->base.klass.verify = saml_fast_signature_verify;
    return fast->digest != NULL ? 0 : -1;
}

int saml_shim_install_fast_signatures(void) {
    if (saml_fast_signature_make(&saml_fast_signatures[0], xmlSecOpenSSLTransformRsaSha256Id, "SHA2-256") < 0
        || saml_fast_signature_make(&saml_fast_signatures[1], xmlSecOpenSSLTransformRsaSha384Id, "SHA2-384") < 0
        || saml_fast_signature_make(&saml_fast_signatures[2], xmlSecOpenSSLTransformRsaSha512Id, "SHA2-512") < 0
        || saml_fast_signature_make(&saml_fast_signatures[3], xmlSecOpenSSLTransformRsaSha1Id, "SHA1") < 0
        || saml_fast_signature_make(&saml_fast_signatures[4], xmlSecOpenSSLTransformRsaSha224Id, "SHA2-224") < 0) {
        return -1;
    }
    atexit(saml_signature_exit);
    saml_fast_signatures_installed = 1;
    return 0;
}

int saml_shim_signed_info_pre_execute(xmlSecTransformCtxPtr ctx) {
    if (saml_shim_fast_c14n_pre_execute(ctx) < 0) {
        return -1;
    }
    // The verifier's stock mode (differential tests) keeps xmlsec's own transforms throughout.
    saml_shim_c14n_memo *memo = (saml_shim_c14n_memo *)ctx->userData;
    if (!saml_fast_signatures_installed || memo == NULL || memo->magic != SAML_SHIM_C14N_MEMO_MAGIC || memo->stock) {
        return 0;
    }
    for (xmlSecTransformPtr transform = ctx->first; transform != NULL; transform = transform->next) {
        for (int k = 0; k < SAML_FAST_SIGNATURE_COUNT; ++k) {
            if (transform->id == saml_fast_signatures[k].base.original && transform->status == xmlSecTransformStatusNone
                && transform->operation == xmlSecTransformOperationVerify) {
                transform->id = &saml_fast_signatures[k].base.klass;
            }
        }
    }
    return 0;
}
