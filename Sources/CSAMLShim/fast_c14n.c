// Canonicalisation transforms that keep libxmlsec1's own behaviour around the package's engine.
//
// libxmlsec1 canonicalises a reference or SignedInfo through libxml2's xmlC14NExecute with
// xmlSecNodeSetContains as the visibility test: unmetered work over the whole document, with a node-set
// scan per node. These replacement klasses recognise the two node-set shapes of a SAML signature (the
// subtree of the signed element or of SignedInfo, minus the subtree of the enveloped signature) and
// canonicalise them with the engine (canonicalizer.c), metered against the document's tank of fuel
// (c14n_budget.c), in every mode the profile allows (exclusive, inclusive 1.0 and 1.1). Any other node
// set, and any document the engine refuses, fails the verification: no unverified document reaches
// libxml2's canonicaliser. Only the verifier's stock mode (differential tests) runs xmlC14NExecute, with
// xmlsec's own visibility test. Everything else (reading the transform, the InclusiveNamespaces prefix
// list, buffers, the chain, the digest and the signature) stays xmlsec's: the replacement klasses
// delegate to the originals, presenting the original klass id while they run.
//
// Nothing global changes: xmlsec resolves and allow-lists transforms with its own klasses; only the
// reference chains of the verifier's own contexts are switched to these klasses, by a pre-execute
// callback, just before they run.
#include "CSAMLShim.h"
#include "shim_private.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <libxml/xpath.h>

typedef struct {
    saml_replaced_klass base;  // first: a saml_replaced_klass * is one of these (replaced_klass.c)
    int mode;                  // XML_C14N_1_0, XML_C14N_1_1 or XML_C14N_EXCLUSIVE_1_0
    int withComments;
} saml_fast_c14n;

enum { SAML_FAST_C14N_COUNT = 6 };
static saml_fast_c14n saml_fast_klasses[SAML_FAST_C14N_COUNT];

static saml_fast_c14n *saml_fast_lookup(xmlSecTransformId id) {
    return (saml_fast_c14n *)saml_replaced_klass_of(id);
}

// The recognised shapes, a ring of intersections (so the order of the sets does not matter):
// - any number of neutral sets (Normal, no node list: every node);
// - exactly one Tree or TreeWithoutComments set holding one element, the apex (the referenced element,
//   or SignedInfo);
// - at most one TreeInvert set holding one element, the excluded subtree (the enveloped signature).
typedef struct {
    xmlNodePtr apex;
    xmlNodePtr excluded;
    int withoutComments;
} saml_fast_shape;

static xmlNodePtr saml_single_element(xmlSecNodeSetPtr set) {
    if (set->nodes == NULL || set->nodes->nodeNr != 1 || set->nodes->nodeTab == NULL) {
        return NULL;
    }
    xmlNodePtr node = set->nodes->nodeTab[0];
    return node != NULL && node->type == XML_ELEMENT_NODE ? node : NULL;
}

static int saml_fast_shape_of(xmlSecNodeSetPtr nodes, saml_fast_shape *shape) {
    shape->apex = NULL;
    shape->excluded = NULL;
    shape->withoutComments = 0;
    xmlSecNodeSetPtr set = nodes;
    int count = 0;
    do {
        if (set == NULL || set->op != xmlSecNodeSetIntersection || ++count > 8) {
            return 0;
        }
        switch (set->type) {
        case xmlSecNodeSetNormal:
            if (set->nodes != NULL) {
                return 0;
            }
            break;
        case xmlSecNodeSetTree:
        case xmlSecNodeSetTreeWithoutComments:
            if (shape->apex != NULL || (shape->apex = saml_single_element(set)) == NULL) {
                return 0;
            }
            shape->withoutComments = set->type == xmlSecNodeSetTreeWithoutComments;
            break;
        case xmlSecNodeSetTreeInvert:
            if (shape->excluded != NULL || (shape->excluded = saml_single_element(set)) == NULL) {
                return 0;
            }
            break;
        default:
            return 0;
        }
        set = set->next;
    } while (set != nodes);
    return shape->apex != NULL;
}

// xmlSecNodeSetOneContains for a tree set holding one element: the node itself (namespace nodes never
// equal an element) or any element ancestor, following the parent libxml2's c14n passes.
static int saml_in_tree(xmlNodePtr node, xmlNodePtr parent, xmlNodePtr root) {
    if (node->type != XML_NAMESPACE_DECL && node == root) {
        return 1;
    }
    for (xmlNodePtr p = parent; p != NULL && p->type == XML_ELEMENT_NODE; p = p->parent) {
        if (p == root) {
            return 1;
        }
    }
    return 0;
}

static int saml_fast_visible(void *data, xmlNodePtr node, xmlNodePtr parent) {
    const saml_fast_shape *shape = (const saml_fast_shape *)data;
    if (node->type == XML_COMMENT_NODE && shape->withoutComments) {
        return 0;
    }
    if (!saml_in_tree(node, parent, shape->apex)) {
        return 0;
    }
    return shape->excluded == NULL || !saml_in_tree(node, parent, shape->excluded);
}

// The engine's bytes go where xmlsec's output buffer would have taken them (xmlSecTransformIOBufferWrite:
// pushed to the next transform; xmlSecBufferIOWrite: appended to the transform's own output), without the
// output buffer's allocation and copy.
typedef struct {
    xmlSecTransformPtr transform;
    xmlSecTransformCtxPtr ctx;
} saml_fast_sink_target;

static int saml_fast_sink(void *context, const unsigned char *bytes, size_t length) {
    saml_fast_sink_target *target = (saml_fast_sink_target *)context;
    if (length == 0) {
        return 0;
    }
    if (length > (size_t)XMLSEC_SIZE_MAX) {
        return -1;
    }
    if (target->transform->next != NULL) {
        return xmlSecTransformPushBin(target->transform->next, bytes, (xmlSecSize)length, 0, target->ctx);
    }
    return xmlSecBufferAppend(&(target->transform->outBuf), bytes, (xmlSecSize)length);
}

static int saml_fast_pop_bin(xmlSecTransformPtr transform, xmlSecByte *data, xmlSecSize maxDataSize,
                             xmlSecSize *dataSize, xmlSecTransformCtxPtr ctx) {
    saml_fast_c14n *fast = saml_fast_lookup(transform->id);
    int ret;
    SAML_AS_ORIGINAL(transform, &fast->base, fast->base.original->popBin(transform, data, maxDataSize, dataSize, ctx));
    return ret;
}

// libxml2's xmlC14NExecute writes through an output buffer; this one counts what passes and fails the
// canonicalisation once the budget is spent (c14n_budget.c), before the bytes reach the digest.
typedef struct {
    xmlOutputBufferPtr next;
    size_t written;
    size_t limit;
    saml_shim_c14n_memo *memo;
} saml_counting_output;

static int saml_counting_write(void *context, const char *bytes, int length) {
    saml_counting_output *output = (saml_counting_output *)context;
    if (length < 0 || (size_t)length > output->limit - output->written) {
        if (output->memo != NULL) {
            output->memo->exceeded = SAML_SHIM_C14N_OVER_OUTPUT;
        }
        return -1;
    }
    output->written += (size_t)length;
    return xmlOutputBufferWrite(output->next, length, bytes) < 0 ? -1 : length;
}

// libxml2's canonicalisation of the node set into `buffer` (consumed), counted against `limit`.
static int saml_c14n_execute(xmlDocPtr doc, xmlC14NIsVisibleCallback visible, void *data, int mode, xmlChar **prefixes,
                             int withComments, xmlOutputBufferPtr buffer, size_t limit, saml_shim_c14n_memo *memo) {
    saml_counting_output counting = { buffer, 0, limit, memo };
    xmlOutputBufferPtr counted = xmlOutputBufferCreateIO(saml_counting_write, NULL, &counting, NULL);
    if (counted == NULL) {
        xmlOutputBufferClose(buffer);
        return -1;
    }
    int ret = xmlC14NExecute(doc, visible, data, mode, prefixes, withComments, counted);
    int flushed = xmlOutputBufferClose(counted);  // flushes what it holds into `buffer`
    int closed = xmlOutputBufferClose(buffer);
    return ret < 0 || flushed < 0 || closed < 0 ? -1 : 0;
}

static int saml_fast_push_xml(xmlSecTransformPtr transform, xmlSecNodeSetPtr nodes, xmlSecTransformCtxPtr ctx) {
    saml_fast_c14n *fast = saml_fast_lookup(transform->id);
    int ret;
    if (nodes == NULL || nodes->doc == NULL) {
        SAML_AS_ORIGINAL(transform, &fast->base, fast->base.original->pushXml(transform, nodes, ctx));
        return ret;
    }
    switch (transform->status) {
    case xmlSecTransformStatusNone:
        transform->status = xmlSecTransformStatusWorking;
        break;
    case xmlSecTransformStatusWorking:
    case xmlSecTransformStatusFinished:
        return 0;
    default:
        return -1;
    }
    // The verifier's contexts carry a memo of the document (shim.c); others carry anything.
    saml_shim_c14n_memo *memo = (saml_shim_c14n_memo *)ctx->userData;
    if (memo != NULL && memo->magic != SAML_SHIM_C14N_MEMO_MAGIC) {
        memo = NULL;
    }
    saml_fast_shape shape;
    int shaped = saml_fast_shape_of(nodes, &shape);
    // The InclusiveNamespaces prefix list that the original readNode stored right after the transform,
    // NULL-terminated (only exclusive C14N has one).
    xmlChar **prefixes = NULL;
    if (fast->mode == XML_C14N_EXCLUSIVE_1_0) {
        xmlSecPtrListPtr list = (xmlSecPtrListPtr)(((xmlSecByte *)transform) + sizeof(xmlSecTransform));
        prefixes = (xmlChar **)list->data;
    }
    int exclusive = fast->mode == XML_C14N_EXCLUSIVE_1_0;
    size_t limit = saml_c14n_output_limit(nodes->doc, memo);
    if (memo != NULL && memo->stock) {
        // Differential testing only: libxml2's own canonicalisation, with xmlsec's visibility test, under
        // the early estimate (of the whole document, which libxml2 walks) and the output limit only.
        if (saml_c14n_budget_check(nodes->doc, NULL, prefixes, exclusive, memo) < 0) {
            return -1;
        }
        xmlOutputBufferPtr buffer = transform->next != NULL ? xmlSecTransformCreateOutputBuffer(transform->next, ctx)
                                                            : xmlSecBufferCreateOutputBuffer(&(transform->outBuf));
        if (buffer == NULL
            || saml_c14n_execute(nodes->doc, (xmlC14NIsVisibleCallback)xmlSecNodeSetContains, nodes, fast->mode, prefixes,
                                 fast->withComments, buffer, limit, memo) < 0) {
            return -1;
        }
        transform->status = xmlSecTransformStatusFinished;
        return 0;
    }
    // Every other canonicalisation runs in the engine, metered against the document's tank; a node set
    // of another shape, or a document the engine refuses, fails the verification (never libxml2).
    if (!shaped) {
        if (memo != NULL) {
            memo->refused = SAML_SHIM_C14N_REFUSED_SHAPE;
        }
        return -1;
    }
    // The early estimate first: a shape it already knows to be too costly is refused before any work.
    if (saml_c14n_budget_check(nodes->doc, shape.apex, prefixes, exclusive, memo) < 0) {
        return -1;
    }
    saml_fast_sink_target target = { transform, ctx };
    saml_c14n_fuel fuel = saml_c14n_tank_open(nodes->doc, memo);
    int handled = saml_c14n_write(nodes->doc, shape.apex, shape.excluded, fast->mode, prefixes,
                                  fast->withComments && !shape.withoutComments, memo, &fuel, limit, saml_fast_sink, &target);
    saml_c14n_tank_close(nodes->doc, &fuel);
    // Then the end of the data, as closing xmlsec's output buffer signals it (a final push to the next
    // transform; nothing for the transform's own buffer).
    if (handled <= 0 || (transform->next != NULL && xmlSecTransformPushBin(transform->next, NULL, 0, 1, ctx) < 0)) {
        return -1;
    }
    transform->status = xmlSecTransformStatusFinished;
    return 0;
}

static int saml_fast_make(saml_fast_c14n *fast, xmlSecTransformId original, int mode, int withComments) {
    if (saml_replaced_klass_make(&fast->base, original) < 0) {
        return -1;
    }
    fast->mode = mode;
    fast->withComments = withComments;
    fast->base.klass.popBin = saml_fast_pop_bin;
    fast->base.klass.pushXml = saml_fast_push_xml;
    return 0;
}

int saml_shim_install_fast_c14n(void) {
    return saml_fast_make(&saml_fast_klasses[0], xmlSecTransformExclC14NId, XML_C14N_EXCLUSIVE_1_0, 0) < 0
        || saml_fast_make(&saml_fast_klasses[1], xmlSecTransformExclC14NWithCommentsId, XML_C14N_EXCLUSIVE_1_0, 1) < 0
        || saml_fast_make(&saml_fast_klasses[2], xmlSecTransformInclC14NId, XML_C14N_1_0, 0) < 0
        || saml_fast_make(&saml_fast_klasses[3], xmlSecTransformInclC14NWithCommentsId, XML_C14N_1_0, 1) < 0
        || saml_fast_make(&saml_fast_klasses[4], xmlSecTransformInclC14N11Id, XML_C14N_1_1, 0) < 0
        || saml_fast_make(&saml_fast_klasses[5], xmlSecTransformInclC14N11WithCommentsId, XML_C14N_1_1, 1) < 0
        ? -1 : 0;
}

int saml_shim_fast_c14n_pre_execute(xmlSecTransformCtxPtr ctx) {
    for (xmlSecTransformPtr transform = ctx->first; transform != NULL; transform = transform->next) {
        for (int k = 0; k < SAML_FAST_C14N_COUNT; ++k) {
            if (transform->id == saml_fast_klasses[k].base.original && transform->status == xmlSecTransformStatusNone) {
                transform->id = &saml_fast_klasses[k].base.klass;
            }
        }
    }
    return 0;
}

// An InclusiveNamespaces PrefixList split as libxmlsec1 1.2's xmlSecTransformC14NNodeRead splits it, in
// place: at every single space, keeping empty entries ("a  b" is "a", "", "b"; an empty entry, like
// "#default", names the default namespace), with nothing after a final space. Tabs and line breaks are
// part of a prefix (the parser has already turned literal ones in the attribute value into spaces). At
// most `capacity` entries are stored; returns how many.
static int saml_split_prefix_list(xmlChar *list, xmlChar **store, int capacity) {
    int count = 0;
    for (xmlChar *p = list, *n; p != NULL && *p != 0 && count < capacity; p = n) {
        n = (xmlChar *)strchr((char *)p, ' ');
        if (n != NULL) {
            *(n++) = 0;
        }
        store[count++] = p;
    }
    return count;
}

static int saml_buffer_sink(void *context, const unsigned char *bytes, size_t length) {
    // xmlBufferAdd returns 0, or an error code (positive for an allocation failure).
    return length <= INT_MAX && xmlBufferAdd((xmlBufferPtr)context, bytes, (int)length) == 0 ? 0 : -1;
}

static int saml_libxml2_mode(saml_shim_c14n_mode mode) {
    return mode == SAML_SHIM_C14N_EXCLUSIVE ? XML_C14N_EXCLUSIVE_1_0 : mode == SAML_SHIM_C14N_INCLUSIVE_1_1 ? XML_C14N_1_1 : XML_C14N_1_0;
}

// The engine and libxml2 on one shape, compared (see CSAMLShim.h).
saml_shim_c14n_comparison saml_shim_c14n_compare(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, saml_shim_c14n_mode mode,
                                                 const char *prefixList, int withComments) {
    xmlChar *prefixStore[16];
    int count = 0;
    xmlChar *copy = prefixList != NULL ? xmlStrdup(BAD_CAST prefixList) : NULL;
    if (copy != NULL) {
        count = saml_split_prefix_list(copy, prefixStore, 15);
    }
    prefixStore[count] = NULL;
    xmlChar **prefixes = prefixList != NULL && mode == SAML_SHIM_C14N_EXCLUSIVE ? prefixStore : NULL;
    saml_fast_shape shape = { apex, excluded, !withComments };

    xmlBufferPtr ours = xmlBufferCreate();
    xmlBufferPtr theirs = xmlBufferCreate();
    xmlOutputBufferPtr theirsOut = theirs != NULL ? xmlOutputBufferCreateBuffer(theirs, NULL) : NULL;
    saml_shim_c14n_comparison result = SAML_SHIM_C14N_FAILED;
    if (ours != NULL && theirsOut != NULL) {
        saml_c14n_fuel unmetered = { 0, ~0ull, 0 };
        int handled = saml_c14n_write(doc, apex, excluded, saml_libxml2_mode(mode), prefixes, withComments, NULL, &unmetered, SIZE_MAX,
                                      saml_buffer_sink, ours);
        int stock = xmlC14NExecute(doc, saml_fast_visible, &shape, saml_libxml2_mode(mode), prefixes, withComments, theirsOut);
        int theirsClosed = xmlOutputBufferClose(theirsOut);
        theirsOut = NULL;
        if (handled == 0) {
            result = SAML_SHIM_C14N_DECLINED;
        } else if (handled < 0) {
            result = SAML_SHIM_C14N_FAILED;
        } else if (stock < 0 || theirsClosed < 0) {
            result = SAML_SHIM_C14N_DIFFERENT;  // libxml2 refused what the engine wrote
        } else {
            int same = xmlBufferLength(ours) == xmlBufferLength(theirs)
                && memcmp(xmlBufferContent(ours), xmlBufferContent(theirs), (size_t)xmlBufferLength(ours)) == 0;
            result = same ? SAML_SHIM_C14N_SAME : SAML_SHIM_C14N_DIFFERENT;
        }
    }
    if (theirsOut != NULL) {
        xmlOutputBufferClose(theirsOut);
    }
    xmlBufferFree(ours);
    xmlBufferFree(theirs);
    xmlFree(copy);
    return result;
}

// One canonicalisation of a shape outside any signature verification, into a buffer (see CSAMLShim.h).
int saml_shim_canonicalize(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, saml_shim_c14n_mode mode, int withComments,
                           const char *prefixList, unsigned workFactor, unsigned long long workSlack, unsigned char **output,
                           size_t *outputLength) {
    *output = NULL;
    *outputLength = 0;
    // The PrefixList, split as xmlsec splits it; one more than the cap is enough for the budget to refuse it.
    xmlChar *prefixStore[34];
    int count = 0;
    xmlChar *copy = prefixList != NULL && mode == SAML_SHIM_C14N_EXCLUSIVE ? xmlStrdup(BAD_CAST prefixList) : NULL;
    if (copy != NULL) {
        count = saml_split_prefix_list(copy, prefixStore, 33);
    }
    prefixStore[count] = NULL;
    xmlChar **prefixes = count > 0 ? prefixStore : NULL;
    saml_shim_c14n_memo memo = { .magic = SAML_SHIM_C14N_MEMO_MAGIC, .supported = -1 };
    int exclusive = mode == SAML_SHIM_C14N_EXCLUSIVE;
    size_t limit = saml_c14n_output_limit(doc, &memo);
    xmlBufferPtr buffer = xmlBufferCreate();
    int result = -1;
    if (buffer == NULL
        || saml_c14n_budget_check_within(doc, apex, prefixes, exclusive, &memo, workFactor, workSlack) < 0) {
        goto done;
    }
    saml_c14n_fuel fuel = saml_c14n_tank_open(doc, &memo);
    int handled = saml_c14n_write(doc, apex, excluded, saml_libxml2_mode(mode), prefixes, withComments, &memo, &fuel, limit,
                                  saml_buffer_sink, buffer);
    saml_c14n_tank_close(doc, &fuel);
    if (handled <= 0) {
        goto done;
    }
    size_t length = (size_t)xmlBufferLength(buffer);
    *output = xmlMalloc(length > 0 ? length : 1);
    if (*output == NULL) {
        goto done;
    }
    memcpy(*output, xmlBufferContent(buffer), length);
    *outputLength = length;
    result = 0;
done:
    xmlBufferFree(buffer);
    xmlFree(copy);
    return result;
}

// The exclusive canonical form (no comments, no PrefixList) of a verified element's subtree (see CSAMLShim.h).
int saml_shim_canonical_element(xmlNodePtr element, unsigned char **output, size_t *outputLength) {
    *output = NULL;
    *outputLength = 0;
    if (element == NULL || element->doc == NULL) {
        return -1;
    }
    xmlBufferPtr buffer = xmlBufferCreate();
    if (buffer == NULL) {
        return -1;
    }
    // Read after the signature verified: the work is the signed content's, bounded by the output limit only.
    saml_c14n_fuel unmetered = { 0, ~0ull, 0 };
    int result = -1;
    int handled = saml_c14n_write(element->doc, element, NULL, XML_C14N_EXCLUSIVE_1_0, NULL, 0, NULL, &unmetered,
                                  saml_c14n_output_limit(element->doc, NULL), saml_buffer_sink, buffer);
    size_t length = (size_t)xmlBufferLength(buffer);
    if (handled > 0 && (*output = xmlMalloc(length > 0 ? length : 1)) != NULL) {
        memcpy(*output, xmlBufferContent(buffer), length);
        *outputLength = length;
        result = 0;
    }
    xmlBufferFree(buffer);
    return result;
}
