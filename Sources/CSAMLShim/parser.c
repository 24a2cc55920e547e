// Document parsing with a parser context kept per thread.
//
// A fresh libxml2 parser context costs about twenty allocations and a name dictionary (a 5 KB hash table
// and its string pools) before the first byte is read. With the forced encoding's copy (below), that was
// a tenth of the typical response's parse (a C harness, best of 15 x 2,000 parses: 40.6 -> 36.8 us). Here
// each thread keeps one context between documents, with two precautions:
//
// - Names. Every document gets a dictionary of its own, created as a child (`xmlDictCreateSub`) of one
//   process-wide dictionary that is filled once with the SAML, XML-DSig and XML-Enc vocabulary and never
//   written again. Lookups through a child only read the parent, so the parent is shared by every thread
//   without a lock, and a document's names stay in its own dictionary: a tree used after its thread
//   moved on to the next document (a task that resumed elsewhere) never shares a writable dictionary
//   with a parse in progress. The dictionary goes when both its document and the thread's context
//   (at the thread's next parse) have let it go.
// - Stale state. A context left in the middle of a document by an error holds that document's stacks
//   (elements, names, namespace bindings), and the 2.9.14 source of `xmlCtxtReset` does not rewind the
//   namespace stack (`nsNr`). A context is kept only after a parse that succeeded and left every
//   stack empty; otherwise it is freed and the next document gets a new one.
//
// - Nodes. A tree builder that finds nodes on its context's free lists (`freeElems`, `freeAttrs`: the
//   lists libxml2's own xmlreader fills) takes them instead of allocating. `saml_shim_free_document`
//   puts a finished document's element, text and attribute nodes there, on the freeing thread's context
//   (any thread's will do: they are plain memory), up to a bound, so that the next document's nodes cost
//   no allocation and freeing them no `free`: about 210 of each for a typical response
//   (160 nodes and 54 attributes). Kept memory would hide a use after free from AddressSanitizer (which
//   is why libxml2's fuzzing builds keep no free nodes); in an ASan build the waiting nodes are poisoned
//   between parses (all but their link to the next one), so that code reading a freed tree still fails.
//
// The bytes are read as UTF-8, as before (`xmlCtxtReadMemory(..., "UTF-8", ...)`), without the copy that
// forcing the encoding makes: the encoding declaration is ignored (`XML_PARSE_IGNORE_ENC`) and a document
// whose first bytes libxml2 would take for another encoding (UTF-16, UCS-4, EBCDIC: byte order marks and
// NUL bytes) is refused before parsing. Texts shorter than two pointers are kept inside their nodes
// (`XML_PARSE_COMPACT`, which every libxml2 function that frees or replaces a node's content knows).
#include "CSAMLShim.h"

#include <libxml/dict.h>
#include <libxml/encoding.h>
#include <libxml/parserInternals.h>
#include <libxml/valid.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

// AddressSanitizer: nodes waiting on a context are poisoned except while libxml2 (not instrumented)
// parses with it.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAML_PARSER_ASAN 1
#endif
#endif
#if !defined(SAML_PARSER_ASAN) && defined(__SANITIZE_ADDRESS__)
#define SAML_PARSER_ASAN 1
#endif
// Everything but the link to the next waiting node, which LeakSanitizer must follow (it ignores pointers
// held in poisoned memory) and which sits at the same offset in xmlNode and xmlAttr.
#ifdef SAML_PARSER_ASAN
#include <sanitizer/asan_interface.h>
#include <stddef.h>
#define SAML_PARSER_POISON(pointer, type)                                                                      \
    do {                                                                                                       \
        ASAN_POISON_MEMORY_REGION((pointer), offsetof(type, next));                                            \
        ASAN_POISON_MEMORY_REGION((char *)(pointer) + offsetof(type, next) + sizeof(void *),                   \
                                  sizeof(type) - offsetof(type, next) - sizeof(void *));                      \
    } while (0)
#define SAML_PARSER_UNPOISON(pointer, type) ASAN_UNPOISON_MEMORY_REGION((pointer), sizeof(type))
#else
#define SAML_PARSER_POISON(pointer, type) ((void)(pointer))
#define SAML_PARSER_UNPOISON(pointer, type) ((void)(pointer))
#endif

// Set up on first use under a lock, and retried after a failure (an allocation failing at start-up must
// not disable parsing for the life of the process). Published with release semantics once complete.
static pthread_mutex_t saml_parser_lock = PTHREAD_MUTEX_INITIALIZER;
static int saml_parser_key_created = 0;  // under the lock
static pthread_key_t saml_parser_key;
static _Atomic(xmlDictPtr) saml_parser_vocabulary = NULL;

// Names that SAML 2.0 responses use (SAML core, XML-DSig, XML-Enc, XML Schema instance) and the
// prefixes they are usually written with. A name missing here is simply added to the document's own
// dictionary.
static const char *const saml_parser_names[] = {
    // libxml2's own (the context compares with these by pointer)
    "xml", "xmlns", "http://www.w3.org/XML/1998/namespace",
    // prefixes
    "saml", "samlp", "saml2", "saml2p", "ds", "dsig", "xenc", "xenc11", "xs", "xsd", "xsi", "ec", "md",
    // SAML protocol and assertion
    "Response", "Status", "StatusCode", "StatusMessage", "StatusDetail", "Extensions", "Assertion",
    "EncryptedAssertion", "Issuer", "Subject", "NameID", "EncryptedID", "BaseID", "SubjectConfirmation",
    "SubjectConfirmationData", "Conditions", "AudienceRestriction", "Audience", "OneTimeUse",
    "ProxyRestriction", "Advice", "AuthnStatement", "AuthnContext", "AuthnContextClassRef",
    "AuthnContextDeclRef", "AuthenticatingAuthority", "SubjectLocality", "AttributeStatement", "Attribute",
    "AttributeValue", "EncryptedAttribute", "AuthzDecisionStatement", "Action", "Evidence",
    // XML-DSig
    "Signature", "SignedInfo", "CanonicalizationMethod", "SignatureMethod", "Reference", "Transforms",
    "Transform", "DigestMethod", "DigestValue", "SignatureValue", "KeyInfo", "KeyName", "KeyValue",
    "RSAKeyValue", "Modulus", "Exponent", "ECKeyValue", "NamedCurve", "PublicKey", "X509Data",
    "X509Certificate", "X509IssuerSerial", "X509IssuerName", "X509SerialNumber", "X509SubjectName", "X509SKI",
    "RetrievalMethod", "Object", "InclusiveNamespaces", "HMACOutputLength",
    // XML-Enc
    "EncryptedData", "EncryptedKey", "EncryptionMethod", "CipherData", "CipherValue", "CipherReference",
    "ReferenceList", "DataReference", "KeyReference", "CarriedKeyName", "OAEPparams", "MGF",
    // attributes
    "ID", "Id", "Version", "IssueInstant", "Destination", "InResponseTo", "Consent", "Format",
    "NameQualifier", "SPNameQualifier", "SPProvidedID", "Method", "Recipient", "NotBefore", "NotOnOrAfter",
    "Address", "AuthnInstant", "SessionIndex", "SessionNotOnOrAfter", "Name", "NameFormat", "FriendlyName",
    "Value", "Algorithm", "URI", "PrefixList", "Type", "MimeType", "Encoding", "type", "nil",
    "lang", "space", "id",
    // namespace URIs (the parser interns the URIs of the prefixes it resolves)
    "urn:oasis:names:tc:SAML:2.0:protocol", "urn:oasis:names:tc:SAML:2.0:assertion",
    "http://www.w3.org/2000/09/xmldsig#", "http://www.w3.org/2001/04/xmlenc#", "http://www.w3.org/2009/xmlenc11#",
    "http://www.w3.org/2001/XMLSchema", "http://www.w3.org/2001/XMLSchema-instance",
    "http://www.w3.org/2001/10/xml-exc-c14n#", "http://www.w3.org/2000/xmlns/",
};

static void saml_parser_expose_kept(xmlParserCtxtPtr context, int visible);

static void saml_parser_free_context(void *context) {
    saml_parser_expose_kept((xmlParserCtxtPtr)context, 1);
    xmlFreeParserCtxt((xmlParserCtxtPtr)context);
}

static xmlDictPtr saml_parser_vocabulary_create(void) {
    xmlDictPtr vocabulary = xmlDictCreate();
    if (vocabulary == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(saml_parser_names) / sizeof(saml_parser_names[0]); ++i) {
        if (xmlDictLookup(vocabulary, (const xmlChar *)saml_parser_names[i], -1) == NULL) {
            xmlDictFree(vocabulary);
            return NULL;
        }
    }
    return vocabulary;
}

// The shared vocabulary (and the thread key), or NULL when they cannot be set up now.
static xmlDictPtr saml_parser_setup(void) {
    xmlDictPtr vocabulary = atomic_load_explicit(&saml_parser_vocabulary, memory_order_acquire);
    if (vocabulary != NULL) {
        return vocabulary;
    }
    pthread_mutex_lock(&saml_parser_lock);
    if (!saml_parser_key_created && pthread_key_create(&saml_parser_key, saml_parser_free_context) == 0) {
        saml_parser_key_created = 1;
    }
    vocabulary = atomic_load_explicit(&saml_parser_vocabulary, memory_order_relaxed);
    if (vocabulary == NULL && saml_parser_key_created) {
        vocabulary = saml_parser_vocabulary_create();
        atomic_store_explicit(&saml_parser_vocabulary, vocabulary, memory_order_release);  // never written again
    }
    pthread_mutex_unlock(&saml_parser_lock);
    return vocabulary;
}

static void saml_parser_error(saml_shim_parse_error *error, int code, int line, int column, const char *message) {
    if (error == NULL) {
        return;
    }
    error->code = code;
    error->line = line;
    error->column = column;
    error->message[0] = 0;
    if (message != NULL) {
        strncpy(error->message, message, sizeof(error->message) - 1);
        error->message[sizeof(error->message) - 1] = 0;
    }
}

// The thread's context with a new dictionary for the next document, or NULL (out of memory).
static xmlParserCtxtPtr saml_parser_context(xmlDictPtr vocabulary) {
    xmlParserCtxtPtr context = (xmlParserCtxtPtr)pthread_getspecific(saml_parser_key);
    if (context == NULL) {
        context = xmlNewParserCtxt();
        if (context == NULL) {
            return NULL;
        }
        if (pthread_setspecific(saml_parser_key, context) != 0) {
            xmlFreeParserCtxt(context);
            return NULL;
        }
        saml_shim_silence_libxml2();  // this thread's libxml2 state may predate the start-up
    }
    // Reset first, with the old dictionary still in place (the context's strings are freed against it).
    xmlCtxtReset(context);
    // Options are applied by each read on top of what the last one left: libxml2 sets the fields of the
    // options given and leaves others (the SAX callbacks NOERROR, NOWARNING and NOCDATA clear, the
    // `options` bits NSCLEAN, HUGE, ...). Back to a fresh context's state, so that a read gets exactly
    // its own options.
    if (xmlSAXVersion(context->sax, 2) < 0) {
        return NULL;
    }
    context->options = 0;
    context->recovery = 0;
    context->replaceEntities = 0;
    context->loadsubset = 0;
    context->validate = 0;
    context->pedantic = 0;
    context->keepBlanks = 1;
    context->dictNames = 1;
    xmlDictPtr names = xmlDictCreateSub(vocabulary);
    if (names == NULL) {
        return NULL;
    }
    xmlDictFree(context->dict);
    context->dict = names;
    context->str_xml = xmlDictLookup(names, BAD_CAST "xml", 3);
    context->str_xmlns = xmlDictLookup(names, BAD_CAST "xmlns", 5);
    context->str_xml_ns = xmlDictLookup(names, XML_XML_NAMESPACE, 36);
    if (context->str_xml == NULL || context->str_xmlns == NULL || context->str_xml_ns == NULL) {
        return NULL;
    }
    return context;
}

// Makes the nodes waiting on `context` readable (`visible`) for a parse, or poisons them again after it.
// Nothing in a build without AddressSanitizer.
static void saml_parser_expose_kept(xmlParserCtxtPtr context, int visible) {
#ifdef SAML_PARSER_ASAN
    for (xmlNodePtr node = context->freeElems; node != NULL; node = node->next) {
        if (visible) {
            SAML_PARSER_UNPOISON(node, xmlNode);
        } else {
            SAML_PARSER_POISON(node, xmlNode);
        }
    }
    for (xmlAttrPtr attribute = context->freeAttrs; attribute != NULL; attribute = attribute->next) {
        if (visible) {
            SAML_PARSER_UNPOISON(attribute, xmlAttr);
        } else {
            SAML_PARSER_POISON(attribute, xmlAttr);
        }
    }
#else
    (void)context;
    (void)visible;
#endif
}

static void saml_parser_discard_context(xmlParserCtxtPtr context) {
    pthread_setspecific(saml_parser_key, NULL);
    xmlFreeParserCtxt(context);
}

xmlDocPtr saml_shim_parse_document(const char *bytes, int length, int options, saml_shim_parse_error *error) {
    saml_parser_error(error, 0, 0, 0, NULL);
    xmlDictPtr vocabulary = saml_parser_setup();
    if (vocabulary == NULL) {
        saml_parser_error(error, XML_ERR_NO_MEMORY, 0, 0, "no parser dictionary (out of memory)");
        return NULL;
    }
    if (bytes == NULL || length <= 0) {
        saml_parser_error(error, XML_ERR_DOCUMENT_EMPTY, 0, 0, "empty document");
        return NULL;
    }
    if (length >= 4) {
        xmlCharEncoding encoding = xmlDetectCharEncoding((const unsigned char *)bytes, 4);
        if (encoding != XML_CHAR_ENCODING_NONE && encoding != XML_CHAR_ENCODING_UTF8) {
            saml_parser_error(error, XML_ERR_UNSUPPORTED_ENCODING, 1, 1,
                              "Document starts like another encoding than UTF-8 (byte order mark or NUL bytes)");
            return NULL;
        }
    }
    xmlParserCtxtPtr context = saml_parser_context(vocabulary);
    if (context == NULL) {
        saml_parser_error(error, XML_ERR_NO_MEMORY, 0, 0, "no parser context (out of memory)");
        return NULL;
    }
    saml_parser_expose_kept(context, 1);
    xmlDocPtr document = xmlCtxtReadMemory(context, bytes, length, NULL, NULL,
                                           options | XML_PARSE_IGNORE_ENC | XML_PARSE_COMPACT);
    if (document == NULL) {
        xmlErrorPtr last = xmlCtxtGetLastError(context);
        if (last != NULL && last->code != XML_ERR_OK) {
            saml_parser_error(error, last->code, last->line, last->int2, last->message);
        }
        saml_parser_discard_context(context);
        return NULL;
    }
    if (context->nsNr != 0 || context->nodeNr != 0 || context->nameNr != 0 || context->inputNr > 1) {
        saml_parser_discard_context(context);
    } else {
        saml_parser_expose_kept(context, 0);
    }
    return document;
}

// At most this many nodes (elements and texts, 120 bytes each) and attributes (96 bytes) wait on a
// thread's context: about 150 KB, enough for a response with a few hundred attribute values.
enum { SAML_PARSER_KEPT_NODES = 1024, SAML_PARSER_KEPT_ATTRIBUTES = 256 };

// Frees a string of the tree unless its document's dictionary holds it.
static void saml_parser_free_string(xmlDictPtr names, const xmlChar *string) {
    if (string != NULL && (names == NULL || xmlDictOwns(names, string) != 1)) {
        xmlFree((void *)string);
    }
}

static void saml_parser_keep_node(xmlParserCtxtPtr context, xmlNodePtr node) {
    if (context->freeElemsNr >= SAML_PARSER_KEPT_NODES) {
        xmlFree(node);
        return;
    }
    node->next = context->freeElems;
    context->freeElems = node;
    context->freeElemsNr++;
    SAML_PARSER_POISON(node, xmlNode);
}

// A text node's content lives in the node itself when it is short (XML_PARSE_COMPACT).
static void saml_parser_release_text(xmlParserCtxtPtr context, xmlDictPtr names, xmlNodePtr text) {
    if (text->content != (xmlChar *)&text->properties) {
        saml_parser_free_string(names, text->content);
    }
    saml_parser_keep_node(context, text);
}

// Attributes, and their value when it is one text node (anything else, such as an entity reference,
// is freed by libxml2). The document's ID table is already gone, so no attribute needs removing from it.
static void saml_parser_release_attributes(xmlParserCtxtPtr context, xmlDictPtr names, xmlAttrPtr attribute) {
    while (attribute != NULL) {
        xmlAttrPtr next = attribute->next;
        xmlNodePtr value = attribute->children;
        if (value != NULL && value->type == XML_TEXT_NODE && value->next == NULL) {
            saml_parser_release_text(context, names, value);
        } else if (value != NULL) {
            xmlFreeNodeList(value);
        }
        saml_parser_free_string(names, attribute->name);
        if (context->freeAttrsNr < SAML_PARSER_KEPT_ATTRIBUTES) {
            attribute->next = context->freeAttrs;
            context->freeAttrs = attribute;
            context->freeAttrsNr++;
            SAML_PARSER_POISON(attribute, xmlAttr);
        } else {
            xmlFree(attribute);
        }
        attribute = next;
    }
}

// One node whose element children are already released.
static void saml_parser_release_node(xmlParserCtxtPtr context, xmlDictPtr names, xmlNodePtr node) {
    switch (node->type) {
    case XML_ELEMENT_NODE:
        saml_parser_release_attributes(context, names, node->properties);
        if (node->nsDef != NULL) {
            xmlFreeNsList(node->nsDef);
        }
        saml_parser_free_string(names, node->name);
        saml_parser_keep_node(context, node);
        break;
    case XML_TEXT_NODE:
        saml_parser_release_text(context, names, node);
        break;
    default:  // comments, CDATA, processing instructions, entity references: libxml2's own
        xmlFreeNode(node);
        break;
    }
}

// The calling thread's context, if it has one (it never creates one).
static xmlParserCtxtPtr saml_parser_current_context(void) {
    if (atomic_load_explicit(&saml_parser_vocabulary, memory_order_acquire) == NULL) {  // no key yet
        return NULL;
    }
    return (xmlParserCtxtPtr)pthread_getspecific(saml_parser_key);
}

void saml_shim_parser_kept(int *nodes, int *attributes) {
    xmlParserCtxtPtr context = saml_parser_current_context();
    *nodes = context != NULL ? context->freeElemsNr : 0;
    *attributes = context != NULL ? context->freeAttrsNr : 0;
}

int saml_shim_parser_kept_poisoned(void) {
#ifdef SAML_PARSER_ASAN
    xmlParserCtxtPtr context = saml_parser_current_context();
    if (context == NULL) {
        return 1;
    }
    return (context->freeElems == NULL || __asan_address_is_poisoned(context->freeElems))
        && (context->freeAttrs == NULL || __asan_address_is_poisoned(context->freeAttrs));
#else
    return -1;
#endif
}

void saml_shim_free_document(xmlDocPtr document) {
    if (document == NULL) {
        return;
    }
    xmlParserCtxtPtr context = saml_parser_current_context();
    // A node deregistration callback (xmlDeregisterNodeDefault) and DTDs are left to libxml2.
    if (context == NULL || xmlDeregisterNodeDefaultValue != NULL || document->intSubset != NULL
        || document->extSubset != NULL) {
        xmlFreeDoc(document);
        return;
    }
    xmlDictPtr names = document->dict;
    if (document->ids != NULL) {
        xmlFreeIDTable((xmlIDTablePtr)document->ids);
        document->ids = NULL;
    }
    if (document->refs != NULL) {
        xmlFreeRefTable((xmlRefTablePtr)document->refs);
        document->refs = NULL;
    }
    // Children before their parent, without recursion: down to the first leaf, then along the siblings,
    // up to the parent once the last sibling is gone.
    xmlNodePtr node = document->children;
    document->children = NULL;
    document->last = NULL;
    while (node != NULL) {
        while (node->type == XML_ELEMENT_NODE && node->children != NULL) {
            node = node->children;
        }
        xmlNodePtr next = node->next;
        xmlNodePtr parent = node->parent;
        saml_parser_release_node(context, names, node);
        if (next != NULL) {
            node = next;
        } else if (parent != NULL && parent != (xmlNodePtr)document && parent->type == XML_ELEMENT_NODE) {
            parent->children = NULL;
            parent->last = NULL;
            node = parent;
        } else {
            node = NULL;
        }
    }
    xmlFreeDoc(document);
}
