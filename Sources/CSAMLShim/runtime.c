// Start-up: libxml2, xmlsec and its OpenSSL backend, once per process, with nothing that can reach a file
// or the network, and libxml2's generic errors silenced.
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

// xmlsec resolves each Algorithm URI a signature names (CanonicalizationMethod, SignatureMethod, every
// Transform and DigestMethod) by walking its registry of every transform it knows, about sixty, core
// before crypto, with a string comparison per entry: five walks and about a microsecond a verification
// (issue 62). The transforms the verifier enables move to the front, the most used first; the other
// entries keep their order. The registry holds the same klasses, and a lookup finds the same one: only a
// transform whose href no other entry has is moved.
static void saml_shim_registry_front(void) {
    const xmlSecTransformId front[] = {
        xmlSecTransformExclC14NId, xmlSecTransformEnvelopedId, xmlSecOpenSSLTransformSha256Id,
        xmlSecOpenSSLTransformRsaSha256Id, xmlSecTransformInclC14NId, xmlSecOpenSSLTransformSha1Id,
        xmlSecOpenSSLTransformRsaSha1Id, xmlSecOpenSSLTransformEcdsaSha256Id, xmlSecOpenSSLTransformSha384Id,
        xmlSecOpenSSLTransformSha512Id, xmlSecOpenSSLTransformRsaSha384Id, xmlSecOpenSSLTransformRsaSha512Id,
        xmlSecTransformExclC14NWithCommentsId, xmlSecTransformInclC14NWithCommentsId, xmlSecTransformInclC14N11Id,
        xmlSecTransformInclC14N11WithCommentsId,
    };
    enum { SAML_FRONT = sizeof(front) / sizeof(front[0]), SAML_REGISTRY_MAX = 512 };
    xmlSecPtrListPtr ids = xmlSecTransformIdsGet();
    xmlSecSize size = ids != NULL ? xmlSecPtrListGetSize(ids) : 0;
    if (size == 0 || size > SAML_REGISTRY_MAX || ids->id->destroyItem != NULL) {
        return;
    }
    xmlSecTransformId ordered[SAML_REGISTRY_MAX];
    int moved[SAML_REGISTRY_MAX] = {0};
    xmlSecSize count = 0;
    for (int f = 0; f < SAML_FRONT; ++f) {
        xmlSecSize at = size;
        int sharedHref = 0;
        for (xmlSecSize i = 0; i < size; ++i) {
            xmlSecTransformId id = (xmlSecTransformId)xmlSecPtrListGetItem(ids, i);
            if (id == front[f]) {
                at = i;
            } else if (id != NULL && id->href != NULL && front[f]->href != NULL && xmlStrEqual(id->href, front[f]->href)) {
                sharedHref = 1;
            }
        }
        if (at < size && !sharedHref && !moved[at]) {
            moved[at] = 1;
            ordered[count++] = front[f];
        }
    }
    for (xmlSecSize i = 0; i < size; ++i) {
        if (!moved[i]) {
            ordered[count++] = (xmlSecTransformId)xmlSecPtrListGetItem(ids, i);
        }
    }
    for (xmlSecSize i = 0; i < count; ++i) {
        xmlSecPtrListSet(ids, (xmlSecPtr)ordered[i], i);
    }
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
    saml_shim_registry_front();
    if (saml_shim_install_fast_c14n() < 0) {
        return SAML_SHIM_INIT_C14N_FAILED;
    }
    if (saml_shim_install_fast_signatures() < 0) {
        return SAML_SHIM_INIT_CRYPTO_FAILED;
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
