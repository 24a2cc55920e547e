// The one C view of libxml2 and libxmlsec1 (OpenSSL backend) that the Swift code imports.
//
// SwiftPM drops the -D flags of `pkg-config --cflags xmlsec1-openssl` ("prohibited flags"). Without
// them the headers describe different structs than the library was built with (XMLSEC_NO_SIZE_T alone
// makes xmlSecDSigCtx 1104 bytes instead of 1032): silent memory corruption. So the defines are restated
// here, before any xmlsec header, and `SAMLShimRestatedDefines` lists them so that a test can compare
// them with what pkg-config reports on the machine that builds. Every symbol defined here is prefixed
// `saml_shim_`.
#ifndef CSAMLSHIM_H
#define CSAMLSHIM_H

#ifndef __XMLSEC_FUNCTION__
#define __XMLSEC_FUNCTION__ __func__
#endif
#ifndef XMLSEC_NO_SIZE_T
#define XMLSEC_NO_SIZE_T 1
#endif
#ifndef XMLSEC_OPENSSL3_ENGINES
#define XMLSEC_OPENSSL3_ENGINES 1
#endif
#ifndef XMLSEC_NO_GOST
#define XMLSEC_NO_GOST 1
#endif
#ifndef XMLSEC_NO_GOST2012
#define XMLSEC_NO_GOST2012 1
#endif
#ifndef XMLSEC_NO_CRYPTO_DYNAMIC_LOADING
#define XMLSEC_NO_CRYPTO_DYNAMIC_LOADING 1
#endif
#ifndef XMLSEC_CRYPTO_OPENSSL
#define XMLSEC_CRYPTO_OPENSSL 1
#endif

/// The defines restated above, space separated, in pkg-config's spelling (`NAME` or `NAME=VALUE`).
#define SAML_SHIM_RESTATED_DEFINES "__XMLSEC_FUNCTION__=__func__ XMLSEC_NO_SIZE_T XMLSEC_OPENSSL3_ENGINES=1 " \
    "XMLSEC_NO_GOST=1 XMLSEC_NO_GOST2012=1 XMLSEC_NO_CRYPTO_DYNAMIC_LOADING=1 XMLSEC_CRYPTO_OPENSSL=1"

#include <stddef.h>
#include <libxml/xmlversion.h>
// libxml2's encoding.h pulls in the system ICU headers when LIBXML_ICU_ENABLED, and those clash with
// Foundation's own ICU module in any Swift module that sees both (test targets see internal imports).
// The only declaration it changes is the tail of struct _xmlCharEncodingHandler (two pointers), a struct
// libxml2 allocates and this package never reads, embeds or allocates; hiding it is therefore safe.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>
#include <libxml/c14n.h>
#include "CSAMLCanonical.h"
#include <xmlsec/xmlsec.h>
#include <xmlsec/xmltree.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmlenc.h>
#include <xmlsec/keys.h>
#include <xmlsec/keysmngr.h>
#include <xmlsec/transforms.h>
#include <xmlsec/errors.h>
#include <xmlsec/crypto.h>
#include <xmlsec/openssl/app.h>
#include <xmlsec/openssl/crypto.h>

// The layout the Swift side relies on, as measured against libxmlsec1 1.2.37 built with the defines above
// (LP64). A header/library pair that disagrees fails here at build time; the test suite additionally
// compares these sizes with a C program compiled with pkg-config's own flags.
#if defined(__LP64__) && XMLSEC_VERSION_MAJOR == 1 && XMLSEC_VERSION_MINOR == 2
_Static_assert(sizeof(xmlSecDSigCtx) == 1032, "xmlSecDSigCtx layout differs from libxmlsec1 1.2 (XMLSEC_NO_SIZE_T?)");
_Static_assert(sizeof(xmlSecDSigReferenceCtx) == 224, "xmlSecDSigReferenceCtx layout differs");
_Static_assert(sizeof(xmlSecKeyInfoCtx) == 344, "xmlSecKeyInfoCtx layout differs");
_Static_assert(sizeof(xmlSecTransformCtx) == 128, "xmlSecTransformCtx layout differs");
_Static_assert(sizeof(xmlSecEncCtx) == 984, "xmlSecEncCtx layout differs");
#endif

/// The restated defines (see `SAML_SHIM_RESTATED_DEFINES`).
const char *saml_shim_restated_defines(void);

/// Sizes of the xmlsec structs as this translation unit sees them, for the ABI test.
size_t saml_shim_sizeof_dsig_ctx(void);
size_t saml_shim_sizeof_dsig_reference_ctx(void);
size_t saml_shim_sizeof_key_info_ctx(void);
size_t saml_shim_sizeof_transform_ctx(void);
size_t saml_shim_sizeof_enc_ctx(void);

/// Why `saml_shim_parse_document` returned no document: libxml2's error code, line, column and message.
typedef struct {
    int code;
    int line;
    int column;
    char message[256];
} saml_shim_parse_error;

/// Parses a whole document read as UTF-8 with `options` (plus `XML_PARSE_IGNORE_ENC` and
/// `XML_PARSE_COMPACT`), with the calling thread's parser context and a dictionary of the document's own
/// (parser.c says why both are safe). NULL with `error` filled when libxml2 refuses the bytes, or when
/// they start like another encoding.
xmlDocPtr saml_shim_parse_document(const char *bytes, int length, int options, saml_shim_parse_error *error);

/// Frees any document, as `xmlFreeDoc` does. When the calling thread has a parser context, its element,
/// text and attribute nodes go to that context's free lists (bounded), from which libxml2's tree builder
/// takes the nodes of the thread's next document instead of allocating them.
void saml_shim_free_document(xmlDocPtr document);

/// How many nodes and attributes wait on the calling thread's parser context (0 and 0 without one).
void saml_shim_parser_kept(int *nodes, int *attributes);

/// In an AddressSanitizer build, 1 when the first waiting node and attribute are poisoned (0 otherwise);
/// -1 in any other build.
int saml_shim_parser_kept_poisoned(void);

/// Decodes whole blocks of 16 Base64 symbols (`A-Z a-z 0-9 + /` only) from `in` while at least 16 bytes
/// of `out` are writable and at least 12 more may be written (`allowed`); stops before the first block
/// holding any other byte. Returns the input bytes consumed (a multiple of 16; 3/4 of them were written).
/// 0 on a processor without SSSE3 or another architecture (base64.c).
size_t saml_shim_base64_decode_blocks(const unsigned char *in, size_t length, unsigned char *out, size_t writable,
                                      size_t allowed);

/// Result of the process-wide initialisation.
typedef enum {
    SAML_SHIM_INIT_OK = 0,
    SAML_SHIM_INIT_XMLSEC_FAILED = 1,
    SAML_SHIM_INIT_VERSION_MISMATCH = 2,
    SAML_SHIM_INIT_CRYPTO_APP_FAILED = 3,
    SAML_SHIM_INIT_CRYPTO_FAILED = 4,
    SAML_SHIM_INIT_C14N_FAILED = 5,
} saml_shim_init_result;

/// Initialises libxml2, xmlsec and its OpenSSL backend, checks the ABI version of the loaded library
/// and silences the global error printers (errors are read per call from the contexts instead).
/// Not thread-safe by itself: the Swift side calls it exactly once (a lazily initialised global).
/// Never undone: xmlSecShutdown cannot be reversed, so a library must not call it.
saml_shim_init_result saml_shim_initialize(void);

/// The version of libxmlsec1 found at run time and the one compiled against.
const char *saml_shim_xmlsec_compiled_version(void);


/// A new key holding only the public key value of `key` (no certificates, so that duplicating it per
/// verification does not copy X.509 data). NULL on failure.
xmlSecKeyPtr saml_shim_key_public_only(xmlSecKeyPtr key);

/// Outcome of `saml_shim_dsig_verify`.
typedef enum {
    SAML_SHIM_DSIG_VALID = 0,
    SAML_SHIM_DSIG_DIGEST_MISMATCH = 1,
    SAML_SHIM_DSIG_SIGNATURE_INVALID = 2,
    SAML_SHIM_DSIG_PROCESSING_FAILED = 3,
    SAML_SHIM_DSIG_IDS_CHANGED = 4,
    /// A Reference URI other than "" or `#` + a plain name (no XPointer, no XPath): refused unresolved.
    SAML_SHIM_DSIG_REFERENCE_REFUSED = 5,
    /// A canonicalisation passed its budget (c14n_budget.c); `saml_shim_dsig_budget_reason` says which.
    SAML_SHIM_DSIG_BUDGET_EXCEEDED = 6,
    /// The canonicaliser refused the document or the node set (`saml_shim_dsig_refusal` says why): it
    /// holds something canonical XML cannot be written for as libxml2 would write it.
    SAML_SHIM_DSIG_C14N_REFUSED = 7,
} saml_shim_dsig_result;

/// Replaces libxml2's generic error function (which prints to stderr) with one that prints nothing, for
/// the calling thread and for threads whose libxml2 state is made later. Part of `saml_shim_initialize`.
void saml_shim_silence_libxml2(void);

/// Starts collecting, on this thread, the reasons xmlsec and OpenSSL give for a failure (clears them).
void saml_shim_errors_begin(void);

/// Copies the reasons collected on this thread since `saml_shim_errors_begin` into `output` (at most
/// `capacity` bytes, NUL-terminated): up to four `function: reason` entries separated by "; ", each made
/// only of the libraries' fixed texts (never the document's bytes). Clears them. Returns the length.
size_t saml_shim_errors_take(char *output, size_t capacity);

/// Verifies one ds:Signature with a fresh xmlSecDSigCtx whose signing key is a duplicate of `pinnedKey`
/// (ds:KeyInfo is never consulted: no keys manager, key preset). Only same-document references; the
/// reference transforms are limited to enveloped-signature, the canonicalisations and the digests of
/// the allow-list, the SignedInfo transforms to the canonicalisations and the signature methods of the
/// allow-list. SHA-1 (digest and RSA-SHA1) only when `allowSHA1` is non-zero. Every Reference URI must be
/// "" or `#` + a plain name, resolved by xmlsec's direct ID lookup, never by an XPointer or XPath
/// expression (else `SAML_SHIM_DSIG_REFERENCE_REFUSED`, before xmlsec runs). Every canonicalisation runs
/// in the engine (canonicalizer.c), metered against the document's tank of fuel (c14n_budget.c; else
/// `SAML_SHIM_DSIG_BUDGET_EXCEEDED`), or is refused (`SAML_SHIM_DSIG_C14N_REFUSED`). Without `fastC14N`
/// (differential tests only: unmetered), libxml2's xmlC14NExecute with xmlsec's own visibility test.
saml_shim_dsig_result saml_shim_dsig_verify(xmlNodePtr signature, xmlSecKeyPtr pinnedKey, int allowSHA1, int fastC14N);

/// `saml_shim_dsig_verify`, also returning in `*bytes` (free with `saml_shim_free_buffer`) the canonical
/// bytes xmlsec digested for the first Reference, NULL when it did not get that far. For the differential
/// canonicalisation fuzz target and tests.
saml_shim_dsig_result saml_shim_dsig_reference_bytes(xmlNodePtr signature, xmlSecKeyPtr pinnedKey, int allowSHA1, int fastC14N,
                                                     unsigned char **bytes, size_t *length);


/// Loads a private key (PEM) and attaches its certificate (PEM, optional), for signing. NULL on failure.
xmlSecKeyPtr saml_shim_signing_key_load(const unsigned char *keyPEM, size_t keyLength,
                                        const unsigned char *certificatePEM, size_t certificateLength);

/// Frees a buffer returned by `saml_shim_sign_root`, `saml_shim_dsig_reference_bytes` or the mock shim.
void saml_shim_free_buffer(unsigned char *buffer);

/// Signs `element` (with an ID and a saml:Issuer child, or an element of the SAML metadata namespace) with
/// an enveloped signature placed after the Issuer, or first in a metadata element: exclusive C14N, SHA-256, RSA-SHA256 or ECDSA-SHA256 (`ecdsa` non-zero), the certificate in
/// KeyInfo; the signature is then compacted (`saml_shim_compact_for_transport`). The ID must be a plain
/// name (no XPointer or XPath syntax), resolved by direct lookup. 0 on success.
int saml_shim_sign_element(xmlDocPtr doc, xmlNodePtr element, xmlSecKeyPtr key, int ecdsa);

/// Removes the blank text xmlsec's templates put between elements and the line breaks of its Base64, in
/// `node`'s subtree: what the IdP signs then survives the cookbook's normalisation unchanged.
void saml_shim_compact_for_transport(xmlNodePtr node);

/// Parses `xml` (safe options) and signs its root element (an AuthnRequest or AttributeQuery with an ID
/// and an Issuer, or an md:EntityDescriptor with an ID) with an enveloped signature placed as
/// `saml_shim_sign_element` places it: exclusive C14N, SHA-256,
/// RSA-SHA256 or ECDSA-SHA256 after the key's type, the certificate in KeyInfo. Serialises into a buffer
/// freed with `saml_shim_free_buffer`. 0 on success.
int saml_shim_sign_root(const char *xml, int length, xmlSecKeyPtr key, unsigned char **output, int *outputLength);

/// Prepares canonicalisation klasses that test node visibility cheaply for the node sets of a SAML
/// signature (see fast_c14n.c). Called once by `saml_shim_initialize`.
int saml_shim_install_fast_c14n(void);

/// How many RSA signature values this thread has checked with an OpenSSL context prepared once per key
/// (fast_signature.c); for tests that the path runs.
unsigned long long saml_shim_fast_signature_checks(void);

/// A reference pre-execute callback (`xmlSecDSigCtx.referencePreExecuteCallback`) that switches the
/// canonicalisation transforms of the chain about to run to the prepared klasses.
int saml_shim_fast_c14n_pre_execute(xmlSecTransformCtxPtr ctx);

/// Why the last verification on this thread returned `SAML_SHIM_DSIG_BUDGET_EXCEEDED`.
saml_shim_c14n_budget_reason saml_shim_dsig_budget_reason(void);

/// Why the last verification on this thread returned `SAML_SHIM_DSIG_C14N_REFUSED`.
saml_shim_c14n_refusal saml_shim_dsig_refusal(void);

/// The canonicalisation modes of `saml_shim_canonicalize` and `saml_shim_c14n_compare`.
typedef enum {
    SAML_SHIM_C14N_EXCLUSIVE = 0,
    SAML_SHIM_C14N_INCLUSIVE_1_0 = 1,
    SAML_SHIM_C14N_INCLUSIVE_1_1 = 2,
} saml_shim_c14n_mode;

/// What `saml_shim_c14n_compare` found.
typedef enum {
    SAML_SHIM_C14N_SAME = 0,
    SAML_SHIM_C14N_DECLINED = 1,
    SAML_SHIM_C14N_DIFFERENT = 2,
    SAML_SHIM_C14N_FAILED = 3,
} saml_shim_c14n_comparison;

/// For the tests: canonicalises the shape with the engine (canonicalizer.c, unmetered) and with
/// libxml2's xmlC14NExecute (under fast_c14n.c's visibility test) in `mode` and compares the bytes.
/// `prefixList` (exclusive only): split as in `saml_shim_canonicalize`, or NULL.
saml_shim_c14n_comparison saml_shim_c14n_compare(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, saml_shim_c14n_mode mode,
                                                 const char *prefixList, int withComments);

/// Canonicalises `apex`'s subtree without `excluded`'s (NULL: none) as a signature verification would
/// (the engine, metered against the document's tank, c14n_budget.c), into `*output` (free with
/// `saml_shim_free_buffer`). `prefixList`: exclusive C14N's InclusiveNamespaces PrefixList as written
/// (split as libxmlsec1 1.2 splits it: at each single space, empty entries kept), or NULL. The namespace work is held to `workFactor` steps per unit of the
/// document's weight plus `workSlack` (the verification's own budget is larger). 0 on success; -1 on
/// failure or past the budget.
int saml_shim_canonicalize(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, saml_shim_c14n_mode mode, int withComments,
                           const char *prefixList, unsigned workFactor, unsigned long long workSlack, unsigned char **output,
                           size_t *outputLength);

/// The exclusive canonical form (XML-DSig's exc-c14n, no comments, no PrefixList) of `element`'s subtree,
/// into `*output` (free with `saml_shim_free_buffer`): the element content of a verified value as the
/// digest of any Reference covering it determines it (never a comment, never a declaration the element
/// does not visibly use). 0 on success, -1 on failure or refusal.
int saml_shim_canonical_element(xmlNodePtr element, unsigned char **output, size_t *outputLength);

/// Outcome of the decryption functions.
typedef enum {
    SAML_SHIM_DECRYPT_OK = 0,
    SAML_SHIM_DECRYPT_FAILED = 1,
    SAML_SHIM_DECRYPT_TOO_LARGE = 2,
    SAML_SHIM_DECRYPT_IDS_CHANGED = 3,
} saml_shim_decrypt_result;

/// The digests of OAEP and MGF1.
typedef enum {
    SAML_SHIM_DIGEST_SHA1 = 1,
    SAML_SHIM_DIGEST_SHA224 = 2,
    SAML_SHIM_DIGEST_SHA256 = 3,
    SAML_SHIM_DIGEST_SHA384 = 4,
    SAML_SHIM_DIGEST_SHA512 = 5,
} saml_shim_digest;

/// The OpenSSL digest of `digest` (NULL for none).
const struct evp_md_st *saml_shim_evp_md(saml_shim_digest digest);

/// The largest digest these functions write (SHA-512).
#define SAML_SHIM_MAX_DIGEST 64

/// `digest` of `data` into `output`, its length in `*outputLength`. 0 on success.
int saml_shim_digest_bytes(saml_shim_digest digest, const unsigned char *data, size_t length,
                           unsigned char output[SAML_SHIM_MAX_DIGEST], size_t *outputLength);

/// The `digest` an RSA PKCS#1 v1.5 `signature` by `key` signs, recovered with the public key (the padding
/// and the DigestInfo of that digest checked): 0 with it in `output`; 1 when `key` is not an RSA key;
/// -1 when the value is no such signature under `key` (no layout of the signed bytes can make it verify).
int saml_shim_rsa_signed_digest(xmlSecKeyPtr key, saml_shim_digest digest, const unsigned char *signature,
                                size_t signatureLength, unsigned char output[SAML_SHIM_MAX_DIGEST], size_t *outputLength);

/// Whether `signature` (XML-DSig's form: raw r || s for ECDSA) by `key` signs `hash`, a `digest` value.
int saml_shim_verify_signed_digest(xmlSecKeyPtr key, saml_shim_digest digest, const unsigned char *hash, size_t hashLength,
                                   const unsigned char *signature, size_t signatureLength);

/// RSA key transport with OpenSSL on the SP's private key: OAEP (`oaep` non-zero) with `digest`, MGF1 with
/// `mgf` and an optional label, or PKCS#1 v1.5. Decrypts `cipher` into `output` (capacity `capacity`),
/// setting `*length`. No ds:KeyInfo is read: the caller passes the raw CipherValue.
saml_shim_decrypt_result saml_shim_rsa_decrypt_key(xmlSecKeyPtr privateKey, int oaep, saml_shim_digest digest,
                                                   saml_shim_digest mgf, const unsigned char *label, size_t labelLength,
                                                   const unsigned char *cipher, size_t cipherLength,
                                                   unsigned char *output, size_t capacity, size_t *length);

/// Decrypts an xenc:EncryptedData with the given session key (AES, or 3DES when `des`) into a buffer
/// the caller frees with `saml_shim_free_plaintext`; the tree is not changed and nothing is parsed. Data
/// encryption allowed: AES-128/192/256-GCM, and AES-CBC and 3DES-CBC only with `allowLegacy`. No URI is
/// enabled on the context. Refuses plaintext over `maximumBytes`, and fails with
/// `SAML_SHIM_DECRYPT_IDS_CHANGED` if xmlsec registered an ID the caller had not.
saml_shim_decrypt_result saml_shim_decrypt_data(xmlNodePtr encryptedData, const unsigned char *key, size_t keyLength,
                                                int des, int allowLegacy, size_t maximumBytes,
                                                unsigned char **output, size_t *length);

/// Frees a plaintext returned by `saml_shim_decrypt_data`.
void saml_shim_free_plaintext(unsigned char *buffer);

/// SHA-256 of `data` into `output`. 0 on success.
int saml_shim_sha256(const unsigned char *data, size_t length, unsigned char output[32]);

/// An HMAC-SHA-256 key made ready once (the key's inner and outer pads hashed, the algorithm looked up):
/// OpenSSL's one-shot `HMAC()` looks both up again on every call, 1.7 µs against 0.7 µs from a ready key.
typedef struct saml_hmac_key saml_hmac_key;

/// A ready HMAC-SHA-256 key, freed with `saml_shim_hmac_key_free`; NULL when OpenSSL fails (allocation).
saml_hmac_key *saml_shim_hmac_key_new(const unsigned char *key, size_t keyLength);

void saml_shim_hmac_key_free(saml_hmac_key *key);

/// HMAC-SHA-256 of `data` under `key` into `output`. 0 on success. Safe to call from several threads at
/// once on one key: each call works on its own copy of the ready state.
int saml_shim_hmac_sha256(const saml_hmac_key *key, const unsigned char *data, size_t length, unsigned char output[32]);

/// 1 when the `length` bytes at `a` and `b` are equal, compared in time that does not depend on where they differ.
int saml_shim_equal_constant_time(const unsigned char *a, const unsigned char *b, size_t length);

/// The DER SubjectPublicKeyInfo of `key` into a buffer freed with `saml_shim_openssl_free`. 0 on success.
int saml_shim_public_key_der(xmlSecKeyPtr key, unsigned char **output, size_t *length);

/// Frees a buffer OpenSSL allocated.
void saml_shim_openssl_free(unsigned char *buffer);

/// Loads a private key from memory (PEM). NULL on failure.
xmlSecKeyPtr saml_shim_private_key_load_memory(const unsigned char *data, size_t size);

/// Loads a key from memory (PEM or DER; a certificate or a bare public key). Returns NULL on failure.
xmlSecKeyPtr saml_shim_key_load_memory(const unsigned char *data, size_t size, int isPEM, int isCertificate);

#endif
