// Transform klasses that stand in for libxmlsec1's own on the verifier's chains (fast_c14n.c,
// fast_signature.c): a copy of the original klass with some functions replaced. The functions kept run
// as the original klass would see them (the transform presents the original id while they run: xmlsec's
// implementations check it). A transform is switched to its replacement only just before its chain
// runs, by the verifier's pre-execute callbacks, so xmlsec resolves and allow-lists transforms with its
// own klasses and nothing global changes.
#include "shim_private.h"

enum { SAML_REPLACED_KLASS_MAX = 16 };
static saml_replaced_klass *saml_replaced_klasses[SAML_REPLACED_KLASS_MAX];
static int saml_replaced_klass_count = 0;

saml_replaced_klass *saml_replaced_klass_of(xmlSecTransformId id) {
    for (int i = 0; i < saml_replaced_klass_count; ++i) {
        if (&saml_replaced_klasses[i]->klass == id) {
            return saml_replaced_klasses[i];
        }
    }
    return NULL;
}

static int saml_replaced_initialize(xmlSecTransformPtr transform) {
    saml_replaced_klass *replaced = saml_replaced_klass_of(transform->id);
    int ret;
    SAML_AS_ORIGINAL(transform, replaced, replaced->original->initialize(transform));
    return ret;
}

void saml_replaced_klass_finalize(xmlSecTransformPtr transform) {
    saml_replaced_klass *replaced = saml_replaced_klass_of(transform->id);
    transform->id = replaced->original;
    replaced->original->finalize(transform);
    transform->id = &replaced->klass;
}

static int saml_replaced_read_node(xmlSecTransformPtr transform, xmlNodePtr node, xmlSecTransformCtxPtr ctx) {
    saml_replaced_klass *replaced = saml_replaced_klass_of(transform->id);
    int ret;
    SAML_AS_ORIGINAL(transform, replaced, replaced->original->readNode(transform, node, ctx));
    return ret;
}

int saml_replaced_klass_make(saml_replaced_klass *replaced, xmlSecTransformId original) {
    if (saml_replaced_klass_of(&replaced->klass) == NULL) {
        if (saml_replaced_klass_count == SAML_REPLACED_KLASS_MAX) {
            return -1;
        }
        saml_replaced_klasses[saml_replaced_klass_count++] = replaced;
    }
    replaced->original = original;
    replaced->klass = *original;
    replaced->klass.initialize = saml_replaced_initialize;
    replaced->klass.finalize = saml_replaced_klass_finalize;
    replaced->klass.readNode = original->readNode != NULL ? saml_replaced_read_node : NULL;
    return 0;
}
