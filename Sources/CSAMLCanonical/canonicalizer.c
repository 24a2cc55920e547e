// The canonicaliser of every signature the verifier checks: exclusive C14N 1.0 and inclusive C14N 1.0
// and 1.1 of the node sets of a SAML signature, byte for byte libxml2's, metered as it works.
//
// Why not libxml2's xmlC14NExecute: it walks the whole document (signed or not), keeps each element's
// namespaces and attributes in an xmlList (a malloc per entry), copies every attribute value twice and
// escapes every string into a fresh buffer; and nothing bounds what it does before it returns. Every
// byte before a good signature is an attacker's, and an estimate of the work made before the work
// misses shapes nobody thought of (three review rounds in a row found one: long URIs in the attribute
// sort, long prefixes in the namespace searches, declarations compared with declarations). So this
// engine charges *fuel* for the work it actually does, as it does it, and stops when the document's
// tank is empty (c14n_budget.c sizes it: a fixed multiple of the document's size, shared by every
// canonicalisation of one document):
// - every string comparison: one unit per byte compared, plus one (`saml_c14n_equal`, `saml_c14n_order`);
// - every namespace search (xmlSearchNs): one unit per element and per declaration looked at, plus the
//   comparison of the prefixes;
// - every scan of the rendered-namespace stack: one unit per entry, plus the comparison;
// - every sorted insertion: the comparisons, and one unit per entry moved;
// - every node and attribute visited, and every byte written.
// A unit is about a nanosecond of work on this machine's measurements (docs/security.md). The check is
// in the loops themselves, so a shape nobody has thought of runs out of fuel like the known ones.
//
// The two node-set shapes of a SAML signature (fast_c14n.c recognises them): the subtree of one element,
// minus at most one excluded subtree (the enveloped signature). Identity with libxml2 2.9-2.14
// (c14n.c) is by construction and by test:
// - the same algorithm, step by step: the rendered-namespace stack with libxml2's two search rules
//   (xmlC14NVisibleNsStackFind for inclusive C14N and the InclusiveNamespaces prefixes,
//   xmlExcC14NVisibleNsStackFind for the rest), xmlSearchNs's lookup rules, the same comparison
//   functions (xmlStrcmp) and the same ordered insertion as xmlListInsert (an entry goes before the first
//   one not smaller than it), the same xmlns="" rules, the same escaping tables, inclusive C14N's
//   inheritance of xml:* attributes by the apex (1.0: every one; 1.1: xml:lang and xml:space, xml:base
//   as libxml2 fixes it up when nothing above the apex sets it);
// - what libxml2 would refuse or write differently is refused, never guessed (`saml_shim_c14n_refusal`):
//   a node kind other than element, text, CDATA, comment, PI or the ignored DTD kinds anywhere in the
//   document, a document with a DTD, a namespace URI that is not absolute (libxml2 refuses it too), a
//   namespace URI with a double quote, an attribute value that is not plain text, an xml:base that
//   inclusive C14N 1.1 would resolve against an ancestor's;
// - Tests/SAMLVerifierTests/FastCanonicalizationTests.swift compares the bytes with xmlC14NExecute's in
//   every mode for every element of every bundled vector and third-party response as the apex, with and
//   without an excluded subtree, prefix lists and comments; FuzzCanonicalization compares whole
//   verifications and bytes.
// Written for this package from the W3C recommendations and libxml2's documented behaviour.
#include "CSAMLCanonical.h"

#include <stdlib.h>
#include <string.h>
#include <libxml/c14n.h>
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

// MARK: - The rendered-namespace stack (xmlC14NVisibleNsStack)

enum { SAML_C14N_INLINE_NS = 32, SAML_C14N_INLINE_LIST = 64 };

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

// MARK: - The walk's state and its fuel

typedef struct {
    int mode;       // XML_C14N_EXCLUSIVE_1_0, XML_C14N_1_0 or XML_C14N_1_1
    xmlDocPtr doc;
    xmlNodePtr apex;
    xmlNodePtr excluded;
    xmlChar **prefixes;
    int comments;   // visible (the node set keeps them) and asked for (the transform's WithComments)
    int refused;    // a saml_shim_c14n_refusal
    saml_c14n_fuel *fuel;
    unsigned long long spent;  // the fuel's, kept here during the walk (one load fewer per charge)
    unsigned long long limit;
    int stopped;    // out of fuel, refused, or a failed output or stack: every loop ends
    saml_c14n_out out;
    saml_ns_stack stack;
} saml_c14n;

// Charges `units` of fuel; 0 (and the walk stops) once the tank is empty.
// Also 0 once the walk stopped for any other reason, so that a loop conditioned on it ends.
static inline int saml_burn(saml_c14n *c, size_t units) {
    c->spent += units;
    if (c->spent > c->limit) {
        c->fuel->exhausted = 1;
        c->stopped = 1;
    }
    return !c->stopped;
}

static void saml_refuse(saml_c14n *c, saml_shim_c14n_refusal why) {
    if (c->refused == SAML_SHIM_C14N_NOT_REFUSED) {
        c->refused = why;
    }
    c->stopped = 1;
}

// Charged and written in one step; the common case (fuel left, room in the buffer) is a few instructions.
static inline void saml_out_bytes(saml_c14n *c, const void *bytes, size_t count) {
    if (!saml_burn(c, count)) {
        return;
    }
    if ((c->out.capacity - c->out.length < count || c->out.limit - c->out.length < count) && !saml_out_reserve(&c->out, count)) {
        c->stopped = 1;
        return;
    }
    memcpy(c->out.data + c->out.length, bytes, count);
    c->out.length += count;
}

static void saml_out_string(saml_c14n *c, const xmlChar *string) {
    if (string != NULL) {
        saml_out_bytes(c, string, strlen((const char *)string));
    }
}

#define SAML_OUT_LITERAL(c, literal) saml_out_bytes((c), (literal), sizeof(literal) - 1)

enum { SAML_ESCAPE_TEXT, SAML_ESCAPE_ATTRIBUTE, SAML_ESCAPE_COMMENT_OR_PI };

// xmlC11NNormalizeString: text escapes & < > CR; attribute values & < " TAB LF CR; comments and PIs CR.
// Per mode, the bytes that end a run copied as is: those escaped, and the terminating NUL.
static const unsigned char saml_escape_stops[3][256] = {
    [SAML_ESCAPE_TEXT] = {[0] = 1, ['&'] = 1, ['<'] = 1, ['>'] = 1, ['\r'] = 1},
    [SAML_ESCAPE_ATTRIBUTE] = {[0] = 1, ['&'] = 1, ['<'] = 1, ['"'] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1},
    [SAML_ESCAPE_COMMENT_OR_PI] = {[0] = 1, ['\r'] = 1},
};

static void saml_out_escaped(saml_c14n *c, const xmlChar *string, int mode) {
    if (string == NULL) {
        return;
    }
    const unsigned char *stops = saml_escape_stops[mode];
    const xmlChar *run = string;
    while (!c->stopped) {
        const xmlChar *cur = run;
        while (!stops[*cur]) {
            ++cur;
        }
        saml_out_bytes(c, run, (size_t)(cur - run));
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
        saml_out_bytes(c, replacement, strlen(replacement));
        run = cur + 1;
    }
}

// MARK: - Metered strings

static int saml_empty(const xmlChar *string) {
    return string == NULL || *string == 0;
}

// xmlC14NStrEqual: NULL equals the empty string. Equal pointers (names interned in the document's
// dictionary, the same declaration) cost one unit; otherwise one per byte compared.
static int saml_c14n_equal(saml_c14n *c, const xmlChar *a, const xmlChar *b) {
    if (a == b) {
        saml_burn(c, 1);
        return 1;
    }
    if (a == NULL) {
        a = BAD_CAST "";
    }
    if (b == NULL) {
        b = BAD_CAST "";
    }
    size_t i = 0;
    while (a[i] != 0 && a[i] == b[i]) {
        ++i;
    }
    saml_burn(c, i + 1);
    return a[i] == b[i];
}

// xmlStrEqual for two strings that are not NULL.
static int saml_c14n_same(saml_c14n *c, const xmlChar *a, const xmlChar *b) {
    return saml_c14n_equal(c, a, b);
}

// xmlStrcmp's order (NULL first), metered.
static int saml_c14n_order(saml_c14n *c, const xmlChar *a, const xmlChar *b) {
    if (a == b) {
        saml_burn(c, 1);
        return 0;
    }
    if (a == NULL) {
        return -1;
    }
    if (b == NULL) {
        return 1;
    }
    size_t i = 0;
    while (a[i] != 0 && a[i] == b[i]) {
        ++i;
    }
    saml_burn(c, i + 1);
    return (int)a[i] - (int)b[i];
}

// xmlC14NIsXmlNs (the first byte tested first: most prefixes are not "xml")
static int saml_is_xml_ns(saml_c14n *c, const xmlNs *ns) {
    return ns != NULL && ns->prefix != NULL && ns->prefix[0] == 'x' && saml_c14n_same(c, ns->prefix, BAD_CAST "xml")
        && ns->href != NULL && saml_c14n_same(c, ns->href, XML_XML_NAMESPACE);
}

// xmlSearchNs(doc, node, prefix) of libxml2 2.9.14, metered: the nearest declaration of `prefix` (NULL:
// the default namespace) on `node` and its ancestors, and the namespace of each ancestor itself. "xml"
// answers the document's XML namespace as xmlSearchNs does, without creating it where it is missing
// (every caller then skips it, as it skips the XML namespace).
static xmlNsPtr saml_search_ns(saml_c14n *c, xmlNodePtr node, const xmlChar *prefix) {
    if (prefix != NULL && prefix[0] == 'x' && saml_c14n_same(c, prefix, BAD_CAST "xml")) {
        return c->doc->oldNs;
    }
    for (xmlNodePtr n = node; n != NULL && !c->stopped; n = n->parent) {
        if (n->type == XML_ENTITY_REF_NODE || n->type == XML_ENTITY_NODE || n->type == XML_ENTITY_DECL) {
            return NULL;
        }
        if (n->type != XML_ELEMENT_NODE) {
            continue;
        }
        saml_burn(c, 1);
        for (xmlNsPtr ns = n->nsDef; ns != NULL && saml_burn(c, 1); ns = ns->next) {
            if (ns->href == NULL) {
                continue;
            }
            if (prefix == NULL ? ns->prefix == NULL : ns->prefix != NULL && saml_c14n_same(c, ns->prefix, prefix)) {
                return ns;
            }
        }
        xmlNsPtr own = n->ns;
        if (n != node && own != NULL && own->href != NULL
            && (prefix == NULL ? own->prefix == NULL : own->prefix != NULL && saml_c14n_same(c, own->prefix, prefix))) {
            return own;
        }
    }
    return NULL;
}

// MARK: - What libxml2 would refuse or write differently

// Namespace URIs that xmlParseURI certainly parses with a scheme: `urn:` and `http(s)://host/path#frag`
// over a narrow alphabet. Anything else is asked of xmlParseURI itself, as libxml2 does.
static int saml_plain_uri_char(xmlChar ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-'
        || ch == '_';
}

// `*length`: the URI's length when it is one of them.
static int saml_certainly_absolute(const xmlChar *href, size_t *length) {
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
        *length = (size_t)(s - (const char *)href);
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
    *length = (size_t)(s - (const char *)href);
    return *s == 0;
}

// xmlC14NCheckForRelativeNamespaces, which libxml2 runs on every element of the document; also refuses a
// namespace URI holding a double quote (which xmlBufWriteQuotedString would write between single quotes).
static saml_shim_c14n_refusal saml_namespaces_refusal(xmlNodePtr element, size_t *cost) {
    for (xmlNsPtr ns = element->nsDef; ns != NULL; ns = ns->next) {
        *cost += 1;
        if (ns->href == NULL || ns->href[0] == 0) {
            continue;
        }
        size_t length = 0;
        if (saml_certainly_absolute(ns->href, &length)) {
            *cost += length;
            continue;  // its alphabet has no double quote
        }
        length = strlen((const char *)ns->href);
        *cost += length;
        if (memchr(ns->href, '"', length) != NULL) {
            return SAML_SHIM_C14N_REFUSED_QUOTED_NAMESPACE;
        }
        *cost += 4 * length;  // xmlParseURI
        xmlURIPtr uri = xmlParseURI((const char *)ns->href);
        if (uri == NULL) {
            return SAML_SHIM_C14N_REFUSED_RELATIVE_NAMESPACE;
        }
        int absolute = uri->scheme != NULL && uri->scheme[0] != 0;
        xmlFreeURI(uri);
        if (!absolute) {
            return SAML_SHIM_C14N_REFUSED_RELATIVE_NAMESPACE;
        }
    }
    return SAML_SHIM_C14N_NOT_REFUSED;
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

// Whether every node xmlC14NProcessNode would visit is of a kind it processes without error, and every
// element passes the relative-namespace check; a document with a DTD is refused (its default attributes
// and the layout libxml2 reads past the document node would need more than this engine does). Charges
// its walk to `cost`.
static saml_shim_c14n_refusal saml_document_refusal(xmlDocPtr doc, size_t *cost) {
    if (doc->intSubset != NULL || doc->extSubset != NULL) {
        return SAML_SHIM_C14N_REFUSED_NODE_KIND;
    }
    xmlNodePtr node = doc->children;
    while (node != NULL) {
        *cost += 1;
        int descend = 0;
        switch (node->type) {
        case XML_ELEMENT_NODE: {
            saml_shim_c14n_refusal why = saml_namespaces_refusal(node, cost);
            if (why != SAML_SHIM_C14N_NOT_REFUSED) {
                return why;
            }
            descend = node->children != NULL;
            break;
        }
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
        case XML_PI_NODE:
        case XML_COMMENT_NODE:
            break;
        default:
            if (!saml_c14n_ignored(node->type)) {
                return SAML_SHIM_C14N_REFUSED_NODE_KIND;
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
                return SAML_SHIM_C14N_NOT_REFUSED;
            }
        }
        if (node != NULL) {
            node = node->next;
        }
    }
    return SAML_SHIM_C14N_NOT_REFUSED;
}

// MARK: - The rendered-namespace stack

static void saml_stack_add(saml_c14n *c, xmlNsPtr ns) {
    saml_ns_stack *stack = &c->stack;
    if (stack->failed) {
        return;
    }
    if (stack->end == stack->capacity) {
        int capacity = stack->capacity * 2;
        xmlNsPtr *grown = stack->onHeap ? realloc(stack->ns, (size_t)capacity * sizeof(xmlNsPtr))
                                        : malloc((size_t)capacity * sizeof(xmlNsPtr));
        if (grown == NULL) {
            stack->failed = 1;
            c->stopped = 1;
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
    saml_burn(c, 1);
}

// libxml2's two searches of the rendered namespaces, by prefix from the top of the stack, answering
// whether this prefix is rendered with this URI (NULL prefix and URI: the xmlns="" probe).
// - xmlC14NVisibleNsStackFind (`fromParent`): for inclusive C14N and the InclusiveNamespaces prefixes;
//   searches only down to nsPrevStart unless probing xmlns="";
// - xmlExcC14NVisibleNsStackFind, for the rest: searches the whole stack, and answers with the
//   visibility of the entry found, which is true here (every entry was added by a visible element).
static int saml_stack_find(saml_c14n *c, const xmlChar *prefix, const xmlChar *href, int fromParent) {
    const saml_ns_stack *stack = &c->stack;
    int hasEmpty = saml_empty(prefix) && saml_empty(href);
    int start = fromParent && !hasEmpty ? stack->prevStart : 0;
    for (int i = stack->end - 1; i >= start && saml_burn(c, 1); --i) {
        if (saml_c14n_equal(c, prefix, stack->ns[i]->prefix)) {
            return saml_c14n_equal(c, href, stack->ns[i]->href);
        }
    }
    return hasEmpty;
}

// MARK: - Ordered lists (xmlListInsert and xmlListSearch with libxml2's comparison functions)

typedef struct {
    const void **items;
    int count;
    int capacity;
    const void *inlineItems[SAML_C14N_INLINE_LIST];
} saml_sorted_list;

typedef int (*saml_compare)(saml_c14n *, const void *, const void *);

static void saml_list_init(saml_sorted_list *list) {
    list->items = list->inlineItems;
    list->count = 0;
    list->capacity = SAML_C14N_INLINE_LIST;
}

static void saml_list_free(saml_sorted_list *list) {
    if (list->items != list->inlineItems) {
        free(list->items);
    }
}

// xmlListLowerSearch: the first entry that does not compare smaller than `item`.
static int saml_list_lower(saml_c14n *c, const saml_sorted_list *list, const void *item, saml_compare compare) {
    int at = 0;
    while (at < list->count && !c->stopped && compare(c, list->items[at], item) < 0) {
        ++at;
    }
    return at;
}

// xmlListSearch: whether the lower bound of `item` compares equal to it.
static int saml_list_contains(saml_c14n *c, const saml_sorted_list *list, const void *item, saml_compare compare) {
    int at = saml_list_lower(c, list, item, compare);
    return at < list->count && compare(c, list->items[at], item) == 0;
}

// xmlListInsert: before the first entry that does not compare smaller than the new one.
static void saml_list_insert(saml_c14n *c, saml_sorted_list *list, const void *item, saml_compare compare) {
    if (c->stopped) {
        return;
    }
    if (list->count == list->capacity) {
        int capacity = list->capacity * 2;
        const void **grown = list->items == list->inlineItems ? malloc((size_t)capacity * sizeof(void *))
                                                              : realloc(list->items, (size_t)capacity * sizeof(void *));
        if (grown == NULL) {
            c->stack.failed = 1;
            c->stopped = 1;
            return;
        }
        if (list->items == list->inlineItems) {
            memcpy(grown, list->inlineItems, (size_t)list->count * sizeof(void *));
        }
        list->items = grown;
        list->capacity = capacity;
    }
    int at = saml_list_lower(c, list, item, compare);
    saml_burn(c, (size_t)(list->count - at) + 1);
    memmove(&list->items[at + 1], &list->items[at], (size_t)(list->count - at) * sizeof(void *));
    list->items[at] = item;
    list->count += 1;
}

// xmlC14NNsCompare
static int saml_ns_compare(saml_c14n *c, const void *a, const void *b) {
    const xmlNs *ns1 = a;
    const xmlNs *ns2 = b;
    if (ns1 == ns2) {
        return 0;
    }
    return saml_c14n_order(c, ns1->prefix, ns2->prefix);
}

// xmlC14NAttrsCompare
static int saml_attr_compare(saml_c14n *c, const void *a, const void *b) {
    const xmlAttr *attr1 = a;
    const xmlAttr *attr2 = b;
    if (attr1 == attr2) {
        return 0;
    }
    if (attr1->ns == attr2->ns) {
        return saml_c14n_order(c, attr1->name, attr2->name);
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
    int ret = saml_c14n_order(c, attr1->ns->href, attr2->ns->href);
    return ret != 0 ? ret : saml_c14n_order(c, attr1->name, attr2->name);
}

// MARK: - The namespace axis

// xmlC14NPrintNamespaces
static void saml_print_namespace(saml_c14n *c, const xmlNs *ns) {
    if (ns->prefix != NULL) {
        SAML_OUT_LITERAL(c, " xmlns:");
        saml_out_string(c, ns->prefix);
        SAML_OUT_LITERAL(c, "=");
    } else {
        SAML_OUT_LITERAL(c, " xmlns=");
    }
    if (ns->href == NULL) {
        SAML_OUT_LITERAL(c, "\"\"");
        return;
    }
    SAML_OUT_LITERAL(c, "\"");
    saml_out_string(c, ns->href);  // no double quote: refused with the document (saml_namespaces_refusal)
    SAML_OUT_LITERAL(c, "\"");
}

static const xmlNs saml_default_ns_probe;  // prefix NULL, href NULL: the xmlns="" of libxml2

static void saml_print_namespaces(saml_c14n *c, const saml_sorted_list *list) {
    for (int i = 0; i < list->count && !c->stopped; ++i) {
        saml_print_namespace(c, list->items[i]);
    }
}

// A declaration inclusive C14N (or an InclusiveNamespaces prefix) renders: pushed on the stack, and listed
// unless an output ancestor rendered it (xmlC14NVisibleNsStackFind's rule).
static void saml_render_in_scope(saml_c14n *c, saml_sorted_list *list, xmlNsPtr ns, int *hasEmptyNs) {
    int alreadyRendered = saml_stack_find(c, ns->prefix, ns->href, 1);
    saml_stack_add(c, ns);
    if (!alreadyRendered) {
        saml_list_insert(c, list, ns, saml_ns_compare);
    }
    if (saml_empty(ns->prefix)) {
        *hasEmptyNs = 1;
    }
}

// xmlExcC14NProcessNamespacesAxis for a visible element.
static void saml_exclusive_namespaces(saml_c14n *c, xmlNodePtr cur) {
    saml_sorted_list list;
    saml_list_init(&list);
    int hasEmptyNs = 0;
    int hasVisiblyUtilizedEmptyNs = 0;
    int hasEmptyNsInInclusiveList = 0;

    for (int i = 0; c->prefixes != NULL && c->prefixes[i] != NULL && !c->stopped; ++i) {
        const xmlChar *prefix = c->prefixes[i];
        if (prefix[0] == 0 || saml_c14n_same(c, prefix, BAD_CAST "#default")) {
            prefix = NULL;
            hasEmptyNsInInclusiveList = 1;
        }
        xmlNsPtr ns = saml_search_ns(c, cur, prefix);
        if (ns != NULL && !saml_is_xml_ns(c, ns)) {
            saml_render_in_scope(c, &list, ns, &hasEmptyNs);
        }
    }

    xmlNsPtr ns = cur->ns;
    if (ns == NULL) {
        ns = saml_search_ns(c, cur, NULL);
        hasVisiblyUtilizedEmptyNs = 1;
    }
    if (ns != NULL && !saml_is_xml_ns(c, ns)) {
        if (!saml_stack_find(c, ns->prefix, ns->href, 0)) {
            saml_list_insert(c, &list, ns, saml_ns_compare);
        }
        saml_stack_add(c, ns);
        if (saml_empty(ns->prefix)) {
            hasEmptyNs = 1;
        }
    }

    for (xmlAttrPtr attr = cur->properties; attr != NULL && saml_burn(c, 1); attr = attr->next) {
        if (attr->ns != NULL && !saml_is_xml_ns(c, attr->ns)) {
            int alreadyRendered = saml_stack_find(c, attr->ns->prefix, attr->ns->href, 0);
            saml_stack_add(c, attr->ns);
            if (!alreadyRendered) {
                saml_list_insert(c, &list, attr->ns, saml_ns_compare);
            }
            if (saml_empty(attr->ns->prefix)) {
                hasEmptyNs = 1;
            }
        } else if (attr->ns != NULL && saml_empty(attr->ns->prefix) && saml_empty(attr->ns->href)) {
            hasVisiblyUtilizedEmptyNs = 1;
        }
    }

    if (hasVisiblyUtilizedEmptyNs && !hasEmptyNs && !hasEmptyNsInInclusiveList) {
        if (!saml_stack_find(c, NULL, NULL, 0)) {
            saml_print_namespace(c, &saml_default_ns_probe);
        }
    } else if (!hasEmptyNs && hasEmptyNsInInclusiveList) {
        if (!saml_stack_find(c, NULL, NULL, 1)) {
            saml_print_namespace(c, &saml_default_ns_probe);
        }
    }
    saml_print_namespaces(c, &list);
    saml_list_free(&list);
}

// xmlC14NProcessNamespacesAxis for a visible element: every declaration in scope (on the element and
// its element ancestors) that is the nearest of its prefix, unless an output ancestor rendered it.
// (libxml2 also reads the document node's `oldNs`, which holds only the XML namespace: skipped.)
static void saml_inclusive_namespaces(saml_c14n *c, xmlNodePtr cur) {
    saml_sorted_list list;
    saml_list_init(&list);
    int hasEmptyNs = 0;
    for (xmlNodePtr n = cur; n != NULL && n->type == XML_ELEMENT_NODE && !c->stopped; n = n->parent) {
        for (xmlNsPtr ns = n->nsDef; ns != NULL && saml_burn(c, 1); ns = ns->next) {
            if (saml_search_ns(c, cur, ns->prefix) != ns || saml_is_xml_ns(c, ns)) {
                continue;
            }
            saml_render_in_scope(c, &list, ns, &hasEmptyNs);
        }
    }
    if (!hasEmptyNs && !saml_stack_find(c, NULL, NULL, 1)) {
        saml_print_namespace(c, &saml_default_ns_probe);
    }
    saml_print_namespaces(c, &list);
    saml_list_free(&list);
}

// MARK: - The attribute axis

// The value xmlNodeListGetString(doc, attr->children, 1) returns, when it is a run of text nodes.
static void saml_print_attribute_value(saml_c14n *c, const xmlAttr *attr) {
    for (xmlNodePtr child = attr->children; child != NULL && !c->stopped; child = child->next) {
        if (child->type != XML_TEXT_NODE && child->type != XML_CDATA_SECTION_NODE) {
            saml_refuse(c, SAML_SHIM_C14N_REFUSED_ATTRIBUTE_CONTENT);
            return;
        }
        saml_out_escaped(c, child->content, SAML_ESCAPE_ATTRIBUTE);
    }
}

static int saml_is_xml_attr(saml_c14n *c, const xmlAttr *attr) {
    return attr->ns != NULL && saml_is_xml_ns(c, attr->ns);
}

// xmlHasNsProp(node, name, XML namespace) on the element ancestors of the apex, nearest first
// (xmlC14NFindHiddenParentAttr: only invisible elements, which every ancestor of the apex is).
static xmlAttrPtr saml_hidden_parent_xml_attr(saml_c14n *c, const xmlChar *name) {
    for (xmlNodePtr n = c->apex->parent; n != NULL && n->type == XML_ELEMENT_NODE && !c->stopped; n = n->parent) {
        for (xmlAttrPtr attr = n->properties; attr != NULL && saml_burn(c, 1); attr = attr->next) {
            if (attr->ns != NULL && saml_c14n_same(c, attr->name, name)
                && (attr->ns->href == XML_XML_NAMESPACE || saml_c14n_same(c, attr->ns->href, XML_XML_NAMESPACE))) {
                return attr;
            }
        }
    }
    return NULL;
}

// Whether an attribute's value, as xmlNodeListGetString reads it, is empty.
static int saml_attribute_value_empty(const xmlAttr *attr) {
    for (xmlNodePtr child = attr->children; child != NULL; child = child->next) {
        if (child->type != XML_TEXT_NODE && child->type != XML_CDATA_SECTION_NODE) {
            return 0;  // refused when printed
        }
        if (!saml_empty(child->content)) {
            return 0;
        }
    }
    return 1;
}

// xmlC14NProcessAttrsAxis for a visible element, then xmlC14NPrintAttrs.
static void saml_attributes_axis(saml_c14n *c, xmlNodePtr cur) {
    saml_sorted_list list;
    saml_list_init(&list);
    int isApex = cur == c->apex;  // the one visible element whose parent is not visible
    switch (c->mode) {
    case XML_C14N_1_0:
        for (xmlAttrPtr attr = cur->properties; attr != NULL && saml_burn(c, 1); attr = attr->next) {
            saml_list_insert(c, &list, attr, saml_attr_compare);
        }
        // The apex inherits the nearest xml:* attribute of each name from its ancestors.
        for (xmlNodePtr n = isApex ? cur->parent : NULL; n != NULL && n->type == XML_ELEMENT_NODE && !c->stopped; n = n->parent) {
            for (xmlAttrPtr attr = n->properties; attr != NULL && saml_burn(c, 1); attr = attr->next) {
                if (saml_is_xml_attr(c, attr) && !saml_list_contains(c, &list, attr, saml_attr_compare)) {
                    saml_list_insert(c, &list, attr, saml_attr_compare);
                }
            }
        }
        break;
    case XML_C14N_1_1: {
        // xml:lang and xml:space are inherited by the apex unless it sets them; xml:base is written as
        // libxml2's xmlC14NFixupBaseAttr writes it (omitted when empty), and refused where that would
        // resolve it against an ancestor's.
        xmlAttrPtr lang = NULL;
        xmlAttrPtr space = NULL;
        xmlAttrPtr base = NULL;
        for (xmlAttrPtr attr = cur->properties; attr != NULL && saml_burn(c, 1); attr = attr->next) {
            if (!saml_is_xml_attr(c, attr)) {
                saml_list_insert(c, &list, attr, saml_attr_compare);
            } else if (lang == NULL && saml_c14n_same(c, attr->name, BAD_CAST "lang")) {
                lang = attr;
            } else if (space == NULL && saml_c14n_same(c, attr->name, BAD_CAST "space")) {
                space = attr;
            } else if (base == NULL && saml_c14n_same(c, attr->name, BAD_CAST "base")) {
                base = attr;
            } else {
                saml_list_insert(c, &list, attr, saml_attr_compare);
            }
        }
        if (lang == NULL && isApex) {
            lang = saml_hidden_parent_xml_attr(c, BAD_CAST "lang");
        }
        if (lang != NULL) {
            saml_list_insert(c, &list, lang, saml_attr_compare);
        }
        if (space == NULL && isApex) {
            space = saml_hidden_parent_xml_attr(c, BAD_CAST "space");
        }
        if (space != NULL) {
            saml_list_insert(c, &list, space, saml_attr_compare);
        }
        if (isApex && saml_hidden_parent_xml_attr(c, BAD_CAST "base") != NULL) {
            saml_refuse(c, SAML_SHIM_C14N_REFUSED_XML_BASE);
        } else if (base != NULL && !saml_attribute_value_empty(base)) {
            saml_list_insert(c, &list, base, saml_attr_compare);
        }
        break;
    }
    default:  // exclusive: no xml:* inheritance
        for (xmlAttrPtr attr = cur->properties; attr != NULL && saml_burn(c, 1); attr = attr->next) {
            saml_list_insert(c, &list, attr, saml_attr_compare);
        }
        break;
    }
    for (int i = 0; i < list.count && !c->stopped; ++i) {
        const xmlAttr *attr = list.items[i];
        SAML_OUT_LITERAL(c, " ");
        if (attr->ns != NULL && !saml_empty(attr->ns->prefix)) {
            saml_out_string(c, attr->ns->prefix);
            SAML_OUT_LITERAL(c, ":");
        }
        saml_out_string(c, attr->name);
        SAML_OUT_LITERAL(c, "=\"");
        saml_print_attribute_value(c, attr);
        SAML_OUT_LITERAL(c, "\"");
    }
    saml_list_free(&list);
}

// MARK: - The walk

static void saml_qname(saml_c14n *c, xmlNodePtr cur) {
    if (cur->ns != NULL && !saml_empty(cur->ns->prefix)) {
        saml_out_string(c, cur->ns->prefix);
        SAML_OUT_LITERAL(c, ":");
    }
    saml_out_string(c, cur->name);
}

static void saml_element(saml_c14n *c, xmlNodePtr cur);

// xmlC14NProcessNode for the children of a visible element (inside the document element, so comments
// and PIs get no line breaks).
static void saml_children(saml_c14n *c, xmlNodePtr child) {
    for (; child != NULL && saml_burn(c, 1); child = child->next) {
        switch (child->type) {
        case XML_ELEMENT_NODE:
            if (child != c->excluded) {
                saml_element(c, child);
            }
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            saml_out_escaped(c, child->content, SAML_ESCAPE_TEXT);
            break;
        case XML_PI_NODE:
            SAML_OUT_LITERAL(c, "<?");
            saml_out_string(c, child->name);
            if (child->content != NULL && child->content[0] != 0) {
                SAML_OUT_LITERAL(c, " ");
                saml_out_escaped(c, child->content, SAML_ESCAPE_COMMENT_OR_PI);
            }
            SAML_OUT_LITERAL(c, "?>");
            break;
        case XML_COMMENT_NODE:
            if (c->comments) {
                SAML_OUT_LITERAL(c, "<!--");
                saml_out_escaped(c, child->content, SAML_ESCAPE_COMMENT_OR_PI);
                SAML_OUT_LITERAL(c, "-->");
            }
            break;
        default:
            if (!saml_c14n_ignored(child->type)) {
                saml_refuse(c, SAML_SHIM_C14N_REFUSED_NODE_KIND);
            }
            break;
        }
    }
}

// xmlC14NProcessElementNode for a visible element.
static void saml_element(saml_c14n *c, xmlNodePtr cur) {
    int savedEnd = c->stack.end;
    int savedPrevStart = c->stack.prevStart;
    int savedPrevEnd = c->stack.prevEnd;

    SAML_OUT_LITERAL(c, "<");
    saml_qname(c, cur);
    if (c->mode == XML_C14N_EXCLUSIVE_1_0) {
        saml_exclusive_namespaces(c, cur);
    } else {
        saml_inclusive_namespaces(c, cur);
    }
    c->stack.prevStart = c->stack.prevEnd;
    c->stack.prevEnd = c->stack.end;
    saml_attributes_axis(c, cur);
    SAML_OUT_LITERAL(c, ">");
    saml_children(c, cur->children);
    SAML_OUT_LITERAL(c, "</");
    saml_qname(c, cur);
    SAML_OUT_LITERAL(c, ">");

    c->stack.end = savedEnd;
    c->stack.prevStart = savedPrevStart;
    c->stack.prevEnd = savedPrevEnd;
}

// Whether the document is one the engine writes, remembered in `memo` (the check walks the whole
// document, as libxml2's does, and is charged once per memo).
static saml_shim_c14n_refusal saml_document_refusal_memo(saml_c14n *c, saml_shim_c14n_memo *memo) {
    if (memo != NULL) {
        saml_c14n_memo_for(memo, c->doc);
        if (memo->supported >= 0) {
            return (saml_shim_c14n_refusal)memo->supported;
        }
    }
    size_t cost = 0;
    saml_shim_c14n_refusal why = saml_document_refusal(c->doc, &cost);
    saml_burn(c, cost);
    if (memo != NULL) {
        memo->supported = (int)why;
    }
    return why;
}

int saml_c14n_write(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, int mode, xmlChar **prefixes, int comments,
                    saml_shim_c14n_memo *memo, saml_c14n_fuel *fuel, size_t outputLimit, saml_shim_c14n_sink sink, void *context) {
    if (memo != NULL) {
        memo->refused = SAML_SHIM_C14N_NOT_REFUSED;
    }
    if (doc == NULL || apex == NULL || apex->type != XML_ELEMENT_NODE || apex->doc != doc || sink == NULL || fuel == NULL
        || (mode != XML_C14N_EXCLUSIVE_1_0 && mode != XML_C14N_1_0 && mode != XML_C14N_1_1)) {
        return -1;
    }
    enum { INLINE_OUTPUT = 16384 };
    unsigned char inlineOutput[INLINE_OUTPUT];
    saml_c14n c;
    c.mode = mode;
    c.doc = doc;
    c.apex = apex;
    c.excluded = excluded;
    c.prefixes = mode == XML_C14N_EXCLUSIVE_1_0 ? prefixes : NULL;
    c.comments = comments;
    c.refused = SAML_SHIM_C14N_NOT_REFUSED;
    c.fuel = fuel;
    c.spent = fuel->spent;
    c.limit = fuel->limit;
    c.stopped = fuel->exhausted || fuel->spent > fuel->limit;
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
    if (c.stopped) {
        fuel->exhausted = 1;
    }

    int nothingVisible = 0;
    for (xmlNodePtr node = apex; node != NULL; node = node->parent) {
        nothingVisible = nothingVisible || node == excluded;
    }
    saml_shim_c14n_refusal why = c.stopped ? SAML_SHIM_C14N_NOT_REFUSED : saml_document_refusal_memo(&c, memo);
    if (why != SAML_SHIM_C14N_NOT_REFUSED) {
        saml_refuse(&c, why);
    } else if (!c.stopped && !nothingVisible) {
        saml_element(&c, apex);
    }

    fuel->spent = c.spent;
    int result;
    if (fuel->exhausted) {
        if (memo != NULL) {
            memo->exceeded = SAML_SHIM_C14N_OVER_WORK;
        }
        result = -1;
    } else if (c.out.overBudget) {
        if (memo != NULL) {
            memo->exceeded = SAML_SHIM_C14N_OVER_OUTPUT;
        }
        result = -1;
    } else if (c.out.failed || c.stack.failed) {
        result = -1;
    } else if (c.refused != SAML_SHIM_C14N_NOT_REFUSED) {
        if (memo != NULL) {
            memo->refused = c.refused;
        }
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
