// The budget of every canonicalisation of a document, before and while it runs.
//
// Canonical XML can be far larger and far costlier than the document it comes from: exclusive C14N
// writes a namespace declaration again on every element that uses it (a 100 KB namespace URI used by
// 10,000 children is 1 GB of output), inclusive C14N compares every in-scope declaration with every
// other one on every element, an InclusiveNamespaces PrefixList is searched on every element, and every
// comparison of two namespace URIs or prefixes costs their length. Every byte before a good signature is
// an attacker's, so each document gets:
// - a tank of fuel (the bound that holds by construction): SAML_C14N_FUEL_FACTOR units per unit of
//   the document's weight (about its serialised size) plus SAML_C14N_FUEL_SLACK, shared by every
//   canonicalisation of the document (every signature, every pinned key tried, every recovery trial).
//   The engine (canonicalizer.c) charges it for the work it does as it does it: bytes compared, bytes
//   written, nodes, attributes, declarations and stack entries visited. A unit is about a nanosecond,
//   so the largest document the parser accepts (1 MiB) may spend at most about 35 ms of canonicalisation
//   whatever its shape; a real response spends 3-6 units per byte (docs/security.md);
// - output: at most SAML_C14N_OUTPUT_FACTOR times the weight plus SAML_C14N_OUTPUT_SLACK bytes a
//   canonicalisation (the engine holds its output until the end), enforced while writing;
// - an early estimate of the namespace work over the apex's subtree (per element, each namespace
//   search walks the ancestors' declarations and exclusive C14N's rendered-namespace stack), at most
//   SAML_C14N_WORK_FACTOR steps per unit of weight plus SAML_C14N_WORK_SLACK, computed in one walk before
//   canonicalising: a fast refusal of the shapes it knows (nothing relies on it being complete: the tank
//   stops the rest);
// - at most SAML_C14N_MAX_PREFIXES entries in a PrefixList, each of at most SAML_C14N_MAX_PREFIX_BYTES.
// A canonicalisation over budget fails; the memo of the verification records why, so that the caller
// reports `signature.budget-exceeded` rather than a malformed signature.
#include "CSAMLCanonical.h"

#include <stdint.h>
#include <string.h>

enum {
    SAML_C14N_FUEL_FACTOR = 16,
    SAML_C14N_FUEL_SLACK = 1000 * 1000,
    SAML_C14N_OUTPUT_FACTOR = 4,
    SAML_C14N_OUTPUT_SLACK = 64 * 1024,
    SAML_C14N_WORK_FACTOR = 8,
    SAML_C14N_WORK_SLACK = 1000 * 1000,
    SAML_C14N_MAX_PREFIXES = 32,
    SAML_C14N_MAX_PREFIX_BYTES = 64,  // XMLParserLimits.maximumPrefixBytes's default
};

static size_t saml_length(const xmlChar *string) {
    return string != NULL ? strlen((const char *)string) : 0;
}

// About the serialised size of the document: names, namespace declarations, attribute values, texts.
static size_t saml_document_weight(xmlDocPtr doc) {
    size_t weight = 0;
    xmlNodePtr node = doc->children;
    while (node != NULL) {
        switch (node->type) {
        case XML_ELEMENT_NODE:
            weight += 2 * saml_length(node->name) + 5;
            for (xmlNsPtr ns = node->nsDef; ns != NULL; ns = ns->next) {
                weight += saml_length(ns->prefix) + saml_length(ns->href) + 9;
            }
            for (xmlAttrPtr attr = node->properties; attr != NULL; attr = attr->next) {
                weight += saml_length(attr->name) + 4;
                for (xmlNodePtr value = attr->children; value != NULL; value = value->next) {
                    weight += saml_length(value->content);
                }
            }
            break;
        default:
            weight += saml_length(node->content) + 1;
            break;
        }
        if (node->type == XML_ELEMENT_NODE && node->children != NULL) {
            node = node->children;
            continue;
        }
        while (node != NULL && node->next == NULL) {
            node = node->parent;
            if (node == NULL || node == (xmlNodePtr)doc) {
                return weight;
            }
        }
        node = node != NULL ? node->next : NULL;
    }
    return weight;
}

static int saml_count_ns(const xmlNs *ns) {
    int count = 0;
    for (; ns != NULL; ns = ns->next) {
        ++count;
    }
    return count;
}

// Whether the PrefixList entry names the prefix of `ns` ("" and "#default" name the default namespace).
static int saml_entry_names(const xmlChar *entry, const xmlNs *ns) {
    if (entry[0] == 0 || strcmp((const char *)entry, "#default") == 0) {
        return ns->prefix == NULL || ns->prefix[0] == 0;
    }
    return ns->prefix != NULL && strcmp((const char *)entry, (const char *)ns->prefix) == 0;
}

// How many PrefixList entries name a prefix declared on `top`'s ancestors or in its subtree (the whole
// document when NULL): only those resolve and push an entry on exclusive C14N's rendered-namespace stack
// (an entry that names nothing costs its search, charged apart).
static int saml_resolvable_prefixes(xmlDocPtr doc, xmlNodePtr top, xmlChar **prefixes, int prefixCount) {
    xmlNodePtr start = top != NULL ? top : xmlDocGetRootElement(doc);
    if (start == NULL || prefixCount == 0) {
        return 0;
    }
    char named[SAML_C14N_MAX_PREFIXES] = { 0 };
    int resolvable = 0;
    xmlNodePtr node = start->parent != NULL && start->parent->type == XML_ELEMENT_NODE ? start->parent : start;
    int ancestors = node != start;
    while (node != NULL && resolvable < prefixCount) {
        // Only an element's nsDef is one (libxml2 keeps a short text inline from `properties` on).
        for (xmlNsPtr ns = node->type == XML_ELEMENT_NODE ? node->nsDef : NULL; ns != NULL; ns = ns->next) {
            for (int i = 0; i < prefixCount; ++i) {
                if (!named[i] && saml_entry_names(prefixes[i], ns)) {
                    named[i] = 1;
                    resolvable += 1;
                }
            }
        }
        if (ancestors) {  // the ancestors of `start`, then `start`'s subtree
            node = node->parent != NULL && node->parent->type == XML_ELEMENT_NODE ? node->parent : start;
            ancestors = node != start;
            continue;
        }
        if (node->type == XML_ELEMENT_NODE && node->children != NULL) {
            node = node->children;
            continue;
        }
        while (node != start && node->next == NULL) {
            node = node->parent;
        }
        node = node == start ? NULL : node->next;
    }
    return resolvable;
}

// The entries an element adds to exclusive C14N's rendered-namespace stack, at most: one per PrefixList
// entry that resolves, one for its namespace, one per namespaced attribute (canonicalizer.c, libxml2's
// xmlExcC14NProcessNamespacesAxis).
static unsigned long long saml_rendered_entries(xmlNodePtr element, int resolvable) {
    unsigned long long entries = (unsigned long long)resolvable + 1;
    for (xmlAttrPtr attr = element->properties; attr != NULL; attr = attr->next) {
        entries += attr->ns != NULL;
    }
    return entries;
}

// The estimate of namespace work over `top`'s subtree (the whole document when NULL): per element,
// exclusive C14N searches the in-scope declarations and the rendered-namespace stack for each PrefixList
// entry, the element's namespace and each namespaced attribute; the inclusive modes compare each
// in-scope declaration with the others. Stops counting as soon as `limit` is passed.
static unsigned long long saml_namespace_work(xmlDocPtr doc, xmlNodePtr top, int prefixCount, int resolvable, int exclusive,
                                              unsigned long long limit) {
    xmlNodePtr start = top != NULL ? top : xmlDocGetRootElement(doc);
    if (start == NULL) {
        return 0;
    }
    unsigned long long inScope = 0;  // declarations on the ancestors of `start`
    unsigned long long depth = 1;    // elements from the root to `node`, each a step of a namespace search
    for (xmlNodePtr p = start->parent; p != NULL && p->type == XML_ELEMENT_NODE; p = p->parent) {
        inScope += (unsigned long long)saml_count_ns(p->nsDef);
        depth += 1;
    }
    unsigned long long work = 0;
    unsigned long long rendered = 0;  // exclusive C14N's stack: the entries of `node`'s ancestors from `start`
    xmlNodePtr node = start;
    while (node != NULL) {
        if (node->type == XML_ELEMENT_NODE) {
            inScope += (unsigned long long)saml_count_ns(node->nsDef);
            if (exclusive) {
                // Each search walks the ancestors' declarations and the stack, which then holds this
                // element's entries too.
                unsigned long long entries = saml_rendered_entries(node, resolvable);
                unsigned long long searched = entries + (unsigned long long)(prefixCount - resolvable);
                rendered += entries;
                work += searched * (inScope + depth + rendered);
            } else {
                work += (inScope + 1) * (inScope + depth);
            }
            if (work > limit) {
                return work;
            }
            if (node->children != NULL) {
                node = node->children;
                depth += 1;
                continue;
            }
            inScope -= (unsigned long long)saml_count_ns(node->nsDef);
            rendered -= exclusive ? saml_rendered_entries(node, resolvable) : 0;
        }
        // Up to the next sibling, leaving the scope of every element closed on the way.
        while (node != start && node->next == NULL) {
            node = node->parent;
            depth -= 1;
            inScope -= (unsigned long long)saml_count_ns(node->nsDef);
            rendered -= exclusive ? saml_rendered_entries(node, resolvable) : 0;
        }
        if (node == start) {
            break;
        }
        node = node->next;
    }
    return work;
}

void saml_c14n_memo_for(saml_shim_c14n_memo *memo, xmlDocPtr doc) {
    if (memo != NULL && memo->doc != doc) {
        memo->doc = doc;
        memo->supported = -1;
        memo->weight = 0;
    }
}

// The tank. The document's `_private` holds the fuel spent on it (as an integer, so that nothing is
// allocated or freed with the document); a new document starts at 0 (xmlNewDoc clears it).
static unsigned long long saml_tank_limit(size_t weight) {
    return (unsigned long long)weight * SAML_C14N_FUEL_FACTOR + SAML_C14N_FUEL_SLACK;
}

static size_t saml_c14n_weight(xmlDocPtr doc, saml_shim_c14n_memo *memo);

saml_c14n_fuel saml_c14n_tank_open(xmlDocPtr doc, saml_shim_c14n_memo *memo) {
    saml_c14n_fuel fuel = { (unsigned long long)(uintptr_t)doc->_private, saml_tank_limit(saml_c14n_weight(doc, memo)), 0 };
    fuel.exhausted = fuel.spent > fuel.limit;
    return fuel;
}

void saml_c14n_tank_close(xmlDocPtr doc, const saml_c14n_fuel *fuel) {
    unsigned long long spent = fuel->spent;
    if (spent > (unsigned long long)UINTPTR_MAX) {
        spent = UINTPTR_MAX;
    }
    doc->_private = (void *)(uintptr_t)spent;
}

unsigned long long saml_c14n_tank_spent(xmlDocPtr doc) {
    return (unsigned long long)(uintptr_t)doc->_private;
}

unsigned long long saml_c14n_tank_limit(xmlDocPtr doc) {
    return saml_tank_limit(saml_c14n_weight(doc, NULL));
}

// The document's weight, remembered in `memo` when given.
static size_t saml_c14n_weight(xmlDocPtr doc, saml_shim_c14n_memo *memo) {
    saml_c14n_memo_for(memo, doc);
    if (memo != NULL && memo->weight > 0) {
        return memo->weight;
    }
    size_t weight = saml_document_weight(doc) + 1;
    if (memo != NULL) {
        memo->weight = weight;
    }
    return weight;
}

size_t saml_c14n_output_limit(xmlDocPtr doc, saml_shim_c14n_memo *memo) {
    return saml_c14n_weight(doc, memo) * SAML_C14N_OUTPUT_FACTOR + SAML_C14N_OUTPUT_SLACK;
}

int saml_c14n_budget_check(xmlDocPtr doc, xmlNodePtr apex, xmlChar **prefixes, int exclusive, saml_shim_c14n_memo *memo) {
    return saml_c14n_budget_check_within(doc, apex, prefixes, exclusive, memo, SAML_C14N_WORK_FACTOR, SAML_C14N_WORK_SLACK);
}

int saml_c14n_budget_check_within(xmlDocPtr doc, xmlNodePtr apex, xmlChar **prefixes, int exclusive, saml_shim_c14n_memo *memo,
                                  unsigned workFactor, unsigned long long workSlack) {
    int prefixCount = 0;
    for (; prefixes != NULL && prefixes[prefixCount] != NULL; ++prefixCount) {
        if (prefixCount == SAML_C14N_MAX_PREFIXES || strlen((const char *)prefixes[prefixCount]) > SAML_C14N_MAX_PREFIX_BYTES) {
            if (memo != NULL) {
                memo->exceeded = SAML_SHIM_C14N_OVER_PREFIXES;
            }
            return -1;
        }
    }
    unsigned long long limit = (unsigned long long)saml_c14n_weight(doc, memo) * workFactor + workSlack;
    int resolvable = exclusive ? saml_resolvable_prefixes(doc, apex, prefixes, prefixCount) : 0;
    if (saml_namespace_work(doc, apex, prefixCount, resolvable, exclusive, limit) > limit) {
        if (memo != NULL) {
            memo->exceeded = SAML_SHIM_C14N_OVER_WORK;
        }
        return -1;
    }
    return 0;
}
