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
