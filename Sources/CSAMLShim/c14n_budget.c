// The work budget of a canonicalisation, checked before any byte is digested.
//
// Canonical XML can be far larger and far costlier than the document it comes from: exclusive C14N
// writes a namespace declaration again on every element that uses it (a 100 KB namespace URI used by
// 10,000 children is 1 GB of output), libxml2's inclusive C14N compares every in-scope declaration with
// every other one on every element, and an InclusiveNamespaces PrefixList is searched on every element.
// Every byte before a good signature is an attacker's, so each canonicalisation gets a budget tied to
// the document it reads:
// - output: at most SAML_C14N_OUTPUT_FACTOR times the document's weight (about its serialised size) plus
//   SAML_C14N_OUTPUT_SLACK bytes, enforced while writing (exc_c14n.c, and a counting output buffer
//   around libxml2's xmlC14NExecute in fast_c14n.c);
// - namespace work: an estimate of the steps the canonicaliser takes, over what it walks (the apex's
//   subtree for exc_c14n.c; the whole document for libxml2's xmlC14NExecute, which does the namespace
//   work of every element, visible or not), per element: each namespace
//   search (one per PrefixList entry, for the element's namespace and for each namespaced attribute in
//   exclusive C14N; one per in-scope declaration in the inclusive modes) walks the element's ancestors
//   and their declarations (depth + in-scope declarations). At most SAML_C14N_WORK_FACTOR times the
//   weight plus SAML_C14N_WORK_SLACK, computed in one walk before canonicalising; a step costs libxml2
//   about 15 ns, so a 170 KB document may spend at most about 35 ms on it (a typical SAML response
//   uses about 0.2 steps per byte);
// - at most SAML_C14N_MAX_PREFIXES entries in a PrefixList.
// A canonicalisation over budget fails; the memo of the verification records why, so that the caller
// reports `signature.budget-exceeded` rather than a malformed signature.
#include "CSAMLShim.h"

#include <string.h>

enum {
    SAML_C14N_OUTPUT_FACTOR = 4,
    SAML_C14N_OUTPUT_SLACK = 64 * 1024,
    SAML_C14N_WORK_FACTOR = 8,
    SAML_C14N_WORK_SLACK = 1000 * 1000,
    SAML_C14N_MAX_PREFIXES = 32,
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

// The estimate of namespace work over `top`'s subtree (the whole document when NULL): per element,
// exclusive C14N searches the in-scope declarations for each PrefixList entry, the element's namespace
// and each namespaced attribute; the inclusive modes compare each in-scope declaration with the others.
// Stops counting as soon as `limit` is passed.
static unsigned long long saml_namespace_work(xmlDocPtr doc, xmlNodePtr top, int prefixCount, int exclusive,
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
    xmlNodePtr node = start;
    while (node != NULL) {
        if (node->type == XML_ELEMENT_NODE) {
            inScope += (unsigned long long)saml_count_ns(node->nsDef);
            if (exclusive) {
                unsigned long long searched = (unsigned long long)prefixCount + 1;
                for (xmlAttrPtr attr = node->properties; attr != NULL; attr = attr->next) {
                    searched += attr->ns != NULL;
                }
                work += searched * (inScope + depth);
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
        }
        // Up to the next sibling, leaving the scope of every element closed on the way.
        while (node != start && node->next == NULL) {
            node = node->parent;
            depth -= 1;
            inScope -= (unsigned long long)saml_count_ns(node->nsDef);
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
        if (prefixCount == SAML_C14N_MAX_PREFIXES) {
            if (memo != NULL) {
                memo->exceeded = SAML_SHIM_C14N_OVER_PREFIXES;
            }
            return -1;
        }
    }
    unsigned long long limit = (unsigned long long)saml_c14n_weight(doc, memo) * workFactor + workSlack;
    if (saml_namespace_work(doc, apex, prefixCount, exclusive, limit) > limit) {
        if (memo != NULL) {
            memo->exceeded = SAML_SHIM_C14N_OVER_WORK;
        }
        return -1;
    }
    return 0;
}
