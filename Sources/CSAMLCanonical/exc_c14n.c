// Exclusive XML Canonicalization for the node sets of a SAML signature, byte for byte libxml2's.
//
// fast_c14n.c hands libxml2's xmlC14NExecute a cheap visibility test, but xmlC14NExecute still walks
// the whole document, keeps each element's namespaces and attributes in an xmlList (a malloc per
// entry), copies every attribute value twice and escapes every string into a fresh 1000-byte buffer.
// For the two node-set shapes fast_c14n.c recognises (the subtree of one element, minus at most one
// excluded subtree) this file produces the same bytes from the same tree without any of that, into one
// buffer handed to the output buffer at the end. That buffer never grows past the canonicalisation's
// budget (c14n_budget.c: a small multiple of the document's size): past it, the walk stops and fails.
//
// Identity with libxml2 2.9-2.14 (c14n.c) is by construction and by test:
// - the same algorithm, step by step: the rendered-namespace stack with libxml2's two search rules
//   (xmlC14NVisibleNsStackFind for the InclusiveNamespaces prefixes, xmlExcC14NVisibleNsStackFind for
//   the rest), the same xmlSearchNs lookups, the same comparison functions (xmlStrcmp) and the same
//   ordered insertion as xmlListInsert (an entry goes before the first one not smaller than it), the
//   same xmlns="" rules, the same escaping tables;
// - whatever libxml2 would refuse or write differently is not handled here: a node type other than
//   element, text, CDATA, comment, PI or the ignored DTD kinds anywhere in the document, a namespace
//   URI libxml2 might call relative, an attribute value that is not plain text, a namespace URI with a
//   double quote, an output buffer with an encoder. The caller then runs xmlC14NExecute as before;
// - Tests/SAMLVerifierTests/FastCanonicalizationTests.swift compares the bytes with xmlC14NExecute's
//   for every element of every bundled vector and third-party response as the apex, with and without
//   an excluded subtree, prefix lists and comments; FuzzCanonicalization compares whole verifications.
#include "CSAMLCanonical.h"

#include <stdlib.h>
#include <string.h>
#include <libxml/uri.h>

// MARK: - Output

typedef struct {
    unsigned char *data;
    size_t length;
    size_t capacity;
    size_t limit;    // the canonicalisation's output budget (c14n_budget.c)
    int onHeap;
    int failed;
    int overBudget;
} saml_c14n_out;

static int saml_out_reserve(saml_c14n_out *out, size_t more) {
    if (out->failed) {
        return 0;
    }
    // The whole output is held until the sink: never past the budget (length <= limit holds throughout).
    if (more > out->limit - out->length) {
        out->failed = 1;
        out->overBudget = 1;
        return 0;
    }
    if (out->length + more <= out->capacity) {
        return 1;
    }
    size_t capacity = out->capacity * 2;
    while (capacity < out->length + more) {
        capacity *= 2;
    }
    unsigned char *grown = out->onHeap ? realloc(out->data, capacity) : malloc(capacity);
    if (grown == NULL) {
        out->failed = 1;
        return 0;
    }
    if (!out->onHeap) {
        memcpy(grown, out->data, out->length);
    }
    out->data = grown;
    out->capacity = capacity;
    out->onHeap = 1;
    return 1;
}

static void saml_out_bytes(saml_c14n_out *out, const void *bytes, size_t count) {
    if (saml_out_reserve(out, count)) {
        memcpy(out->data + out->length, bytes, count);
        out->length += count;
    }
}

static void saml_out_string(saml_c14n_out *out, const xmlChar *string) {
    if (string != NULL) {
        saml_out_bytes(out, string, strlen((const char *)string));
    }
}

#define SAML_OUT_LITERAL(out, literal) saml_out_bytes((out), (literal), sizeof(literal) - 1)

enum { SAML_ESCAPE_TEXT, SAML_ESCAPE_ATTRIBUTE, SAML_ESCAPE_COMMENT_OR_PI };

// xmlC11NNormalizeString: text escapes & < > CR; attribute values & < " TAB LF CR; comments and PIs CR.
// Per mode, the bytes that end a run copied as is: those escaped, and the terminating NUL.
static const unsigned char saml_escape_stops[3][256] = {
    [SAML_ESCAPE_TEXT] = {[0] = 1, ['&'] = 1, ['<'] = 1, ['>'] = 1, ['\r'] = 1},
    [SAML_ESCAPE_ATTRIBUTE] = {[0] = 1, ['&'] = 1, ['<'] = 1, ['"'] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1},
    [SAML_ESCAPE_COMMENT_OR_PI] = {[0] = 1, ['\r'] = 1},
};

static void saml_out_escaped(saml_c14n_out *out, const xmlChar *string, int mode) {
    if (string == NULL) {
        return;
    }
    const unsigned char *stops = saml_escape_stops[mode];
    const xmlChar *run = string;
    for (;;) {
        const xmlChar *cur = run;
        while (!stops[*cur]) {
            ++cur;
        }
        saml_out_bytes(out, run, (size_t)(cur - run));
        const char *replacement;
        switch (*cur) {
        case 0: return;
        case '<': replacement = "&lt;"; break;
        case '>': replacement = "&gt;"; break;
        case '&': replacement = "&amp;"; break;
        case '"': replacement = "&quot;"; break;
        case '\t': replacement = "&#x9;"; break;
        case '\n': replacement = "&#xA;"; break;
        default: replacement = "&#xD;"; break;  // '\r', the one byte left
        }
        saml_out_bytes(out, replacement, strlen(replacement));
        run = cur + 1;
    }
}

// MARK: - What libxml2 would refuse or write differently

// Namespace URIs that xmlParseURI certainly parses with a scheme: `urn:` and `http(s)://host/path#frag`
// over a narrow alphabet. Anything else is asked of xmlParseURI itself, as libxml2 does.
static int saml_plain_uri_char(xmlChar c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'
        || c == '_';
}

static int saml_certainly_absolute(const xmlChar *href) {
    const char *s = (const char *)href;
    if (strncmp(s, "urn:", 4) == 0) {
        s += 4;
        if (!saml_plain_uri_char((xmlChar)*s)) {
            return 0;
        }
        for (; *s != 0; ++s) {
            if (!saml_plain_uri_char((xmlChar)*s) && *s != ':') {
                return 0;
            }
        }
        return 1;
    }
    if (strncmp(s, "http://", 7) == 0) {
        s += 7;
    } else if (strncmp(s, "https://", 8) == 0) {
        s += 8;
    } else {
        return 0;
    }
    if (!saml_plain_uri_char((xmlChar)*s)) {
        return 0;
    }
    while (saml_plain_uri_char((xmlChar)*s)) {  // host
        ++s;
    }
    while (*s == '/' || saml_plain_uri_char((xmlChar)*s)) {  // path
        ++s;
    }
    if (*s == '#') {  // fragment
        ++s;
        while (saml_plain_uri_char((xmlChar)*s)) {
            ++s;
        }
    }
    return *s == 0;
}

// xmlC14NCheckForRelativeNamespaces, which libxml2 runs on every element of the document.
// Also declines, before any work, a namespace URI holding a double quote (which xmlBufWriteQuotedString
// would write between single quotes), rather than on reaching it half-way through the walk.
static int saml_namespaces_absolute(xmlNodePtr element) {
    for (xmlNsPtr ns = element->nsDef; ns != NULL; ns = ns->next) {
        if (ns->href == NULL || ns->href[0] == 0) {
            continue;
        }
        if (saml_certainly_absolute(ns->href)) {
            continue;  // its alphabet has no double quote
        }
        if (strchr((const char *)ns->href, '"') != NULL) {
            return 0;
        }
        xmlURIPtr uri = xmlParseURI((const char *)ns->href);
        if (uri == NULL) {
            return 0;
        }
        int absolute = uri->scheme != NULL && uri->scheme[0] != 0;
        xmlFreeURI(uri);
        if (!absolute) {
            return 0;
        }
    }
    return 1;
}

// The node kinds xmlC14NProcessNode skips without output ("should be ignored according to W3C Canonical
// XML").
static int saml_c14n_ignored(xmlElementType type) {
    switch (type) {
    case XML_DOCUMENT_TYPE_NODE:
    case XML_NOTATION_NODE:
    case XML_DTD_NODE:
    case XML_ELEMENT_DECL:
    case XML_ATTRIBUTE_DECL:
    case XML_ENTITY_DECL:
    case XML_XINCLUDE_START:
    case XML_XINCLUDE_END:
        return 1;
    default:
        return 0;
    }
}

// Every node xmlC14NProcessNode would visit is of a kind it processes without error, and every element
// passes the relative-namespace check.
static int saml_document_supported(xmlDocPtr doc) {
    xmlNodePtr node = doc->children;
    while (node != NULL) {
        int descend = 0;
        switch (node->type) {
        case XML_ELEMENT_NODE:
            if (!saml_namespaces_absolute(node)) {
                return 0;
            }
            descend = node->children != NULL;
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
        case XML_PI_NODE:
        case XML_COMMENT_NODE:
            break;
        default:
            if (!saml_c14n_ignored(node->type)) {
                return 0;
            }
            break;
        }
        if (descend) {
            node = node->children;
            continue;
        }
        while (node != NULL && node->next == NULL) {
            node = node->parent;
            if (node == NULL || node == (xmlNodePtr)doc) {
                return 1;
            }
        }
        if (node != NULL) {
            node = node->next;
        }
    }
    return 1;
}

// MARK: - The rendered-namespace stack (xmlC14NVisibleNsStack)

// Every visible element pushes one entry per PrefixList entry, for its namespace and per namespaced
// attribute, and a prefix no ancestor rendered is searched through all of them: c14n_budget.c charges
// each search the whole stack, so that a document whose searches would cost more is refused before this
// walk starts.

enum { SAML_C14N_INLINE_NS = 32, SAML_C14N_MAX_LIST = 64 };

typedef struct {
    xmlNsPtr *ns;
    int end;       // nsCurEnd
    int prevStart; // nsPrevStart
    int prevEnd;   // nsPrevEnd
    int capacity;
    int onHeap;
    int failed;
    xmlNsPtr inlineNs[SAML_C14N_INLINE_NS];
} saml_ns_stack;

static void saml_stack_add(saml_ns_stack *stack, xmlNsPtr ns) {
    if (stack->failed) {
        return;
    }
    if (stack->end == stack->capacity) {
        int capacity = stack->capacity * 2;
        xmlNsPtr *grown = stack->onHeap ? realloc(stack->ns, (size_t)capacity * sizeof(xmlNsPtr))
                                        : malloc((size_t)capacity * sizeof(xmlNsPtr));
        if (grown == NULL) {
            stack->failed = 1;
            return;
        }
        if (!stack->onHeap) {
            memcpy(grown, stack->ns, (size_t)stack->end * sizeof(xmlNsPtr));
        }
        stack->ns = grown;
        stack->capacity = capacity;
        stack->onHeap = 1;
    }
    stack->ns[stack->end++] = ns;
}

// xmlC14NStrEqual: NULL equals the empty string. Compared inline: the stack search calls it once per
// entry, and prefixes are short (a call to strcmp through the PLT cost more than the comparison).
static inline int saml_c14n_equal(const xmlChar *a, const xmlChar *b) {
    if (a == b) {
        return 1;
    }
    if (a == NULL) {
        return *b == 0;
    }
    if (b == NULL) {
        return *a == 0;
    }
    while (*a != 0 && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

static int saml_empty(const xmlChar *string) {
    return string == NULL || *string == 0;
}

// libxml2's two searches of the rendered namespaces, by prefix from the top of the stack, answering
// whether this prefix is rendered with this URI (NULL prefix and URI: the xmlns="" probe).
// - xmlC14NVisibleNsStackFind, for the InclusiveNamespaces prefixes (`fromParent`): searches only down
//   to nsPrevStart unless probing xmlns="";
// - xmlExcC14NVisibleNsStackFind, for the rest: searches the whole stack, and answers with the
//   visibility of the entry found, which is true here (every entry was added by a visible element).
static int saml_stack_find(const saml_ns_stack *stack, const xmlChar *prefix, const xmlChar *href, int fromParent) {
    int hasEmpty = saml_empty(prefix) && saml_empty(href);
    int start = fromParent && !hasEmpty ? stack->prevStart : 0;
    for (int i = stack->end - 1; i >= start; --i) {
        if (saml_c14n_equal(prefix, stack->ns[i]->prefix)) {
            return saml_c14n_equal(href, stack->ns[i]->href);
        }
    }
    return hasEmpty;
}

// xmlC14NIsXmlNs (the first byte tested inline: most prefixes are not "xml")
static int saml_is_xml_ns(xmlNsPtr ns) {
    return ns != NULL && ns->prefix != NULL && ns->prefix[0] == 'x' && strcmp((const char *)ns->prefix, "xml") == 0
        && ns->href != NULL && strcmp((const char *)ns->href, (const char *)XML_XML_NAMESPACE) == 0;
}

// MARK: - Ordered lists (xmlListInsert with libxml2's comparison functions)

// xmlC14NNsCompare
static int saml_ns_compare(const void *a, const void *b) {
    const xmlNs *ns1 = a;
    const xmlNs *ns2 = b;
    if (ns1 == ns2) {
        return 0;
    }
    return xmlStrcmp(ns1->prefix, ns2->prefix);
}

// xmlC14NAttrsCompare
static int saml_attr_compare(const void *a, const void *b) {
    const xmlAttr *attr1 = a;
    const xmlAttr *attr2 = b;
    if (attr1 == attr2) {
        return 0;
    }
    if (attr1->ns == attr2->ns) {
        return xmlStrcmp(attr1->name, attr2->name);
    }
    if (attr1->ns == NULL) {
        return -1;
    }
    if (attr2->ns == NULL) {
        return 1;
    }
    if (attr1->ns->prefix == NULL) {
        return -1;
    }
    if (attr2->ns->prefix == NULL) {
        return 1;
    }
    int ret = xmlStrcmp(attr1->ns->href, attr2->ns->href);
    return ret != 0 ? ret : xmlStrcmp(attr1->name, attr2->name);
}

typedef struct {
    const void *items[SAML_C14N_MAX_LIST];
    int count;
    int overflow;
} saml_sorted_list;

// xmlListInsert: before the first entry that does not compare smaller than the new one.
static void saml_list_insert(saml_sorted_list *list, const void *item, int (*compare)(const void *, const void *)) {
    if (list->count == SAML_C14N_MAX_LIST) {
        list->overflow = 1;
        return;
    }
    int at = 0;
    while (at < list->count && compare(list->items[at], item) < 0) {
        ++at;
    }
    memmove(&list->items[at + 1], &list->items[at], (size_t)(list->count - at) * sizeof(void *));
    list->items[at] = item;
    list->count += 1;
}

// MARK: - The walk

typedef struct {
    xmlNodePtr excluded;
    xmlChar **prefixes;
    int comments;   // visible (the node set keeps them) and asked for (the transform's WithComments)
    int unsupported;
    saml_c14n_out out;
    saml_ns_stack stack;
} saml_exc_c14n;

// xmlC14NPrintNamespaces
static void saml_print_namespace(saml_exc_c14n *c, const xmlNs *ns) {
    if (ns->prefix != NULL) {
        SAML_OUT_LITERAL(&c->out, " xmlns:");
        saml_out_string(&c->out, ns->prefix);
        SAML_OUT_LITERAL(&c->out, "=");
    } else {
        SAML_OUT_LITERAL(&c->out, " xmlns=");
    }
    if (ns->href == NULL) {
        SAML_OUT_LITERAL(&c->out, "\"\"");
        return;
    }
    if (strchr((const char *)ns->href, '"') != NULL) {  // xmlBufWriteQuotedString switches quotes
        c->unsupported = 1;
        return;
    }
    SAML_OUT_LITERAL(&c->out, "\"");
    saml_out_string(&c->out, ns->href);
    SAML_OUT_LITERAL(&c->out, "\"");
}

static const xmlNs saml_default_ns_probe;  // prefix NULL, href NULL: the xmlns="" of libxml2

// xmlExcC14NProcessNamespacesAxis for a visible element.
static void saml_namespaces_axis(saml_exc_c14n *c, xmlNodePtr cur) {
    saml_sorted_list list;
    list.count = 0;
    list.overflow = 0;
    int hasEmptyNs = 0;
    int hasVisiblyUtilizedEmptyNs = 0;
    int hasEmptyNsInInclusiveList = 0;

    if (c->prefixes != NULL) {
        for (int i = 0; c->prefixes[i] != NULL; ++i) {
            const xmlChar *prefix = c->prefixes[i];
            if (xmlStrEqual(prefix, BAD_CAST "#default") || xmlStrEqual(prefix, BAD_CAST "")) {
                prefix = NULL;
                hasEmptyNsInInclusiveList = 1;
            }
            xmlNsPtr ns = xmlSearchNs(cur->doc, cur, prefix);
            if (ns != NULL && !saml_is_xml_ns(ns)) {
                int alreadyRendered = saml_stack_find(&c->stack, ns->prefix, ns->href, 1);
                saml_stack_add(&c->stack, ns);
                if (!alreadyRendered) {
                    saml_list_insert(&list, ns, saml_ns_compare);
                }
                if (saml_empty(ns->prefix)) {
                    hasEmptyNs = 1;
                }
            }
        }
    }

    xmlNsPtr ns = cur->ns;
    if (ns == NULL) {
        ns = xmlSearchNs(cur->doc, cur, NULL);
        hasVisiblyUtilizedEmptyNs = 1;
    }
    if (ns != NULL && !saml_is_xml_ns(ns)) {
        if (!saml_stack_find(&c->stack, ns->prefix, ns->href, 0)) {
            saml_list_insert(&list, ns, saml_ns_compare);
        }
        saml_stack_add(&c->stack, ns);
        if (saml_empty(ns->prefix)) {
            hasEmptyNs = 1;
        }
    }

    for (xmlAttrPtr attr = cur->properties; attr != NULL; attr = attr->next) {
        if (attr->ns != NULL && !saml_is_xml_ns(attr->ns)) {
            int alreadyRendered = saml_stack_find(&c->stack, attr->ns->prefix, attr->ns->href, 0);
            saml_stack_add(&c->stack, attr->ns);
            if (!alreadyRendered) {
                saml_list_insert(&list, attr->ns, saml_ns_compare);
            }
            if (saml_empty(attr->ns->prefix)) {
                hasEmptyNs = 1;
            }
        } else if (attr->ns != NULL && saml_empty(attr->ns->prefix) && saml_empty(attr->ns->href)) {
            hasVisiblyUtilizedEmptyNs = 1;
        }
    }

    if (hasVisiblyUtilizedEmptyNs && !hasEmptyNs && !hasEmptyNsInInclusiveList) {
        if (!saml_stack_find(&c->stack, NULL, NULL, 0)) {
            saml_print_namespace(c, &saml_default_ns_probe);
        }
    } else if (!hasEmptyNs && hasEmptyNsInInclusiveList) {
        if (!saml_stack_find(&c->stack, NULL, NULL, 1)) {
            saml_print_namespace(c, &saml_default_ns_probe);
        }
    }

    if (list.overflow) {
        c->unsupported = 1;
        return;
    }
    for (int i = 0; i < list.count; ++i) {
        saml_print_namespace(c, list.items[i]);
    }
}

// The value xmlNodeListGetString(doc, attr->children, 1) returns, when it is a run of text nodes.
static void saml_print_attribute_value(saml_exc_c14n *c, const xmlAttr *attr) {
    for (xmlNodePtr child = attr->children; child != NULL; child = child->next) {
        if (child->type != XML_TEXT_NODE && child->type != XML_CDATA_SECTION_NODE) {
            c->unsupported = 1;
            return;
        }
        saml_out_escaped(&c->out, child->content, SAML_ESCAPE_ATTRIBUTE);
    }
}

// xmlC14NProcessAttrsAxis in exclusive mode, then xmlC14NPrintAttrs.
static void saml_attributes_axis(saml_exc_c14n *c, xmlNodePtr cur) {
    if (cur->properties == NULL) {
        return;
    }
    saml_sorted_list list;
    list.count = 0;
    list.overflow = 0;
    for (xmlAttrPtr attr = cur->properties; attr != NULL; attr = attr->next) {
        saml_list_insert(&list, attr, saml_attr_compare);
    }
    if (list.overflow) {
        c->unsupported = 1;
        return;
    }
    for (int i = 0; i < list.count; ++i) {
        const xmlAttr *attr = list.items[i];
        SAML_OUT_LITERAL(&c->out, " ");
        if (attr->ns != NULL && !saml_empty(attr->ns->prefix)) {
            saml_out_string(&c->out, attr->ns->prefix);
            SAML_OUT_LITERAL(&c->out, ":");
        }
        saml_out_string(&c->out, attr->name);
        SAML_OUT_LITERAL(&c->out, "=\"");
        saml_print_attribute_value(c, attr);
        SAML_OUT_LITERAL(&c->out, "\"");
    }
}

static void saml_qname(saml_exc_c14n *c, xmlNodePtr cur) {
    if (cur->ns != NULL && !saml_empty(cur->ns->prefix)) {
        saml_out_string(&c->out, cur->ns->prefix);
        SAML_OUT_LITERAL(&c->out, ":");
    }
    saml_out_string(&c->out, cur->name);
}

static void saml_element(saml_exc_c14n *c, xmlNodePtr cur);

// xmlC14NProcessNode for the children of a visible element (inside the document element, so comments
// and PIs get no line breaks).
static void saml_children(saml_exc_c14n *c, xmlNodePtr child) {
    for (; child != NULL && !c->unsupported && !c->out.failed; child = child->next) {
        switch (child->type) {
        case XML_ELEMENT_NODE:
            if (child != c->excluded) {
                saml_element(c, child);
            }
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            saml_out_escaped(&c->out, child->content, SAML_ESCAPE_TEXT);
            break;
        case XML_PI_NODE:
            SAML_OUT_LITERAL(&c->out, "<?");
            saml_out_string(&c->out, child->name);
            if (child->content != NULL && child->content[0] != 0) {
                SAML_OUT_LITERAL(&c->out, " ");
                saml_out_escaped(&c->out, child->content, SAML_ESCAPE_COMMENT_OR_PI);
            }
            SAML_OUT_LITERAL(&c->out, "?>");
            break;
        case XML_COMMENT_NODE:
            if (c->comments) {
                SAML_OUT_LITERAL(&c->out, "<!--");
                saml_out_escaped(&c->out, child->content, SAML_ESCAPE_COMMENT_OR_PI);
                SAML_OUT_LITERAL(&c->out, "-->");
            }
            break;
        default:
            if (!saml_c14n_ignored(child->type)) {
                c->unsupported = 1;
            }
            break;
        }
    }
}

// xmlC14NProcessElementNode for a visible element.
static void saml_element(saml_exc_c14n *c, xmlNodePtr cur) {
    int savedEnd = c->stack.end;
    int savedPrevStart = c->stack.prevStart;
    int savedPrevEnd = c->stack.prevEnd;

    SAML_OUT_LITERAL(&c->out, "<");
    saml_qname(c, cur);
    saml_namespaces_axis(c, cur);
    c->stack.prevStart = c->stack.prevEnd;
    c->stack.prevEnd = c->stack.end;
    saml_attributes_axis(c, cur);
    SAML_OUT_LITERAL(&c->out, ">");
    saml_children(c, cur->children);
    SAML_OUT_LITERAL(&c->out, "</");
    saml_qname(c, cur);
    SAML_OUT_LITERAL(&c->out, ">");

    c->stack.end = savedEnd;
    c->stack.prevStart = savedPrevStart;
    c->stack.prevEnd = savedPrevEnd;
}

static int saml_document_supported_memo(xmlDocPtr doc, saml_shim_c14n_memo *memo) {
    if (memo == NULL) {
        return saml_document_supported(doc);
    }
    saml_c14n_memo_for(memo, doc);
    if (memo->supported < 0) {
        memo->supported = saml_document_supported(doc);
    }
    return memo->supported;
}

int saml_shim_exc_c14n(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, xmlChar **prefixes, int comments,
                       saml_shim_c14n_memo *memo, size_t outputLimit, saml_shim_c14n_sink sink, void *context) {
    if (doc == NULL || apex == NULL || apex->type != XML_ELEMENT_NODE || apex->doc != doc || sink == NULL
        || !saml_document_supported_memo(doc, memo)) {
        return 0;
    }
    for (xmlNodePtr node = apex; node != NULL; node = node->parent) {
        if (node == excluded) {  // nothing visible: left to libxml2
            return 0;
        }
    }
    enum { INLINE_OUTPUT = 16384 };
    unsigned char inlineOutput[INLINE_OUTPUT];
    saml_exc_c14n c;
    c.excluded = excluded;
    c.prefixes = prefixes;
    c.comments = comments;
    c.unsupported = 0;
    c.out.data = inlineOutput;
    c.out.length = 0;
    c.out.capacity = INLINE_OUTPUT;
    c.out.limit = outputLimit;
    c.out.onHeap = 0;
    c.out.failed = 0;
    c.out.overBudget = 0;
    c.stack.ns = c.stack.inlineNs;
    c.stack.end = 0;
    c.stack.prevStart = 0;
    c.stack.prevEnd = 0;
    c.stack.capacity = SAML_C14N_INLINE_NS;
    c.stack.onHeap = 0;
    c.stack.failed = 0;

    saml_element(&c, apex);

    int result;
    if (c.out.overBudget) {
        if (memo != NULL) {
            memo->exceeded = SAML_SHIM_C14N_OVER_OUTPUT;
        }
        result = -1;
    } else if (c.out.failed || c.stack.failed) {
        result = -1;
    } else if (c.unsupported) {
        result = 0;
    } else {
        result = sink(context, c.out.data, c.out.length) < 0 ? -1 : 1;
    }
    if (c.out.onHeap) {
        free(c.out.data);
    }
    if (c.stack.onHeap) {
        free(c.stack.ns);
    }
    return result;
}
