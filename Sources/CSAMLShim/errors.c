// Error collection: xmlsec's process-wide error callback, kept per thread, and what the Swift side takes
// after a call.
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

void saml_shim_collect_xmlsec_error(const char *file, int line, const char *func, const char *errorObject,
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
    // Most calls find OpenSSL's queue empty: looking costs less than clearing its sixteen slots.
    if (ERR_peek_error() != 0) {
        ERR_clear_error();
    }
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
