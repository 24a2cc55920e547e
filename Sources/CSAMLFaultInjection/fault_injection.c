#include "CSAMLFaultInjection.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlmemory.h>
#include <openssl/crypto.h>

// Single-threaded by design: the fault injection executable runs one verification at a time.
static long counted = 0;
static long armed = 0;
static int fired = 0;
static long spared = 0;

// libxml2 2.9.14's parser (Debian 12) does not survive an allocation failure of its own: it dereferences
// NULL or frees what it did not allocate (fixed upstream from 2.11 on). An allocation made under one of
// its parse entry points is therefore spared, and the next allocation fails in its place.
static const char *const parser_entry_points[] = {
    "xmlParseInNodeContext", "xmlCtxtReadMemory", "xmlReadMemory", "xmlParseDocument", "xmlParseChunk",
    "xmlCreatePushParserCtxt", "xmlCreateMemoryParserCtxt", "xmlNewParserCtxt", "xmlFreeParserCtxt", NULL,
};

static int inside_parser(void) {
    void *frames[96];
    int count = backtrace(frames, 96);
    for (int i = 0; i < count; ++i) {
        Dl_info info;
        if (dladdr(frames[i], &info) == 0 || info.dli_sname == NULL) {
            continue;
        }
        for (const char *const *name = parser_entry_points; *name != NULL; ++name) {
            if (strcmp(info.dli_sname, *name) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

static int fail_now(void) {
    counted += 1;
    if (armed > 0 && counted == armed && !fired) {
        if (inside_parser()) {
            armed += 1;
            spared += 1;
            return 0;
        }
        fired = 1;
        return 1;
    }
    return 0;
}

static void *xml_malloc(size_t size) { return fail_now() ? NULL : malloc(size); }
static void *xml_realloc(void *pointer, size_t size) { return fail_now() ? NULL : realloc(pointer, size); }
static void xml_free(void *pointer) { free(pointer); }
static char *xml_strdup(const char *string) {
    if (fail_now()) {
        return NULL;
    }
    size_t length = strlen(string) + 1;
    char *copy = malloc(length);
    if (copy != NULL) {
        memcpy(copy, string, length);
    }
    return copy;
}

static void *ssl_malloc(size_t size, const char *file, int line) {
    (void)file;
    (void)line;
    return fail_now() ? NULL : malloc(size);
}
static void *ssl_realloc(void *pointer, size_t size, const char *file, int line) {
    (void)file;
    (void)line;
    return fail_now() ? NULL : realloc(pointer, size);
}
static void ssl_free(void *pointer, const char *file, int line) {
    (void)file;
    (void)line;
    free(pointer);
}

int saml_fault_install(void) {
    int ssl = CRYPTO_set_mem_functions(ssl_malloc, ssl_realloc, ssl_free);
    xmlMemSetup(xml_free, xml_malloc, xml_realloc, (xmlStrdupFunc)xml_strdup);
    return ssl == 1 ? 0 : -1;
}

void saml_fault_arm(long n) {
    counted = 0;
    armed = n;
    fired = 0;
    spared = 0;
}

long saml_fault_spared(void) { return spared; }

long saml_fault_allocations(void) { return counted; }

static void quiet(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

void saml_fault_silence_libxml2(void) { xmlSetGenericErrorFunc(NULL, quiet); }

int saml_fault_fired(void) { return fired; }
