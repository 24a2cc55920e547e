// The canonicalisation engine: exclusive XML Canonicalization for the node sets of a SAML signature,
// byte for byte libxml2's, and the work budget every canonicalisation runs within. libxml2 only: no
// libxmlsec1, no OpenSSL, nothing of the binding (CSAMLShim installs the engine into xmlsec's
// transforms, fast_c14n.c, and runs the signature verifications that use it).
//
// What it mirrors of libxml2 (c14n.c, 2.9-2.14), so that a reader checks one against the other:
// - the rendered-namespace stack and libxml2's two search rules (xmlC14NVisibleNsStackFind for the
//   InclusiveNamespaces prefixes, xmlExcC14NVisibleNsStackFind for the rest), the same xmlSearchNs
//   lookups, xmlStrcmp ordering and xmlListInsert's insertion (before the first entry not smaller);
// - the xmlns="" rules and the escaping tables (attribute values, text, comments and PIs);
// - what libxml2 would refuse or write differently is declined, not guessed: a node kind other than
//   element, text, CDATA, comment, PI or the ignored DTD kinds, a namespace URI libxml2 might call
//   relative, an attribute value that is not plain text. The caller then runs libxml2's xmlC14NExecute.
// Written for this package from the W3C recommendation and libxml2's documented behaviour (no libxml2
// code is copied); Tests/SAMLVerifierTests/FastCanonicalizationTests.swift compares the bytes with xmlC14NExecute's for
// every element of every bundled vector and third-party response; FuzzCanonicalization compares whole
// verifications. Every byte before a good signature is an attacker's: c14n_budget.c bounds the output
// and the namespace work of each canonicalisation by the size of the document it reads.
#ifndef CSAMLCANONICAL_H
#define CSAMLCANONICAL_H

#include <stddef.h>
#include <libxml/xmlversion.h>
// As in CSAMLShim.h: libxml2's encoding.h would pull in the system ICU headers, which clash with
// Foundation's; the one declaration that changes is a struct this package never reads or allocates.
#undef LIBXML_ICU_ENABLED
#include <libxml/tree.h>

/// Where `saml_shim_exc_c14n` hands its bytes: called once with all of them; negative on failure.
typedef int (*saml_shim_c14n_sink)(void *context, const unsigned char *bytes, size_t length);

/// Whether exc_c14n.c can write a document at all (every node kind and namespace URI in it is one it
/// writes as libxml2 does), remembered by a caller that canonicalises the same, unchanged document
/// several times (one signature verification: its reference and its SignedInfo).
/// Also the budget of every canonicalisation of that document (c14n_budget.c) and why one was refused.
typedef struct {
    unsigned magic;  // SAML_SHIM_C14N_MEMO_MAGIC
    xmlDocPtr doc;
    int supported;   // -1: not yet known
    size_t weight;   // about the document's serialised size; 0: not yet known
    int exceeded;    // a saml_shim_c14n_budget_reason, 0 while within budget
    int stock;       // non-zero: libxml2's xmlC14NExecute with xmlsec's own visibility test, never exc_c14n.c
} saml_shim_c14n_memo;
#define SAML_SHIM_C14N_MEMO_MAGIC 0x53414d4cu

/// Why a canonicalisation was refused before or while writing.
typedef enum {
    SAML_SHIM_C14N_WITHIN_BUDGET = 0,
    SAML_SHIM_C14N_OVER_OUTPUT = 1,    // more canonical bytes than the document's weight allows
    SAML_SHIM_C14N_OVER_WORK = 2,      // more namespace work than the document's weight allows
    SAML_SHIM_C14N_OVER_PREFIXES = 3,  // an InclusiveNamespaces PrefixList over the cap
} saml_shim_c14n_budget_reason;

/// Points `memo` at `doc`, forgetting what it knew of another document (NULL: nothing to do).
void saml_c14n_memo_for(saml_shim_c14n_memo *memo, xmlDocPtr doc);

/// The most canonical bytes one canonicalisation of `doc` may write (remembered in `memo` when given).
size_t saml_c14n_output_limit(xmlDocPtr doc, saml_shim_c14n_memo *memo);

/// Whether canonicalising `apex`'s subtree (NULL: the whole document) with `prefixes` (NULL-terminated,
/// or NULL) stays within the namespace-work budget and the PrefixList cap: 0, or -1 with the reason in
/// `memo->exceeded` when a memo is given.
int saml_c14n_budget_check(xmlDocPtr doc, xmlNodePtr apex, xmlChar **prefixes, int exclusive, saml_shim_c14n_memo *memo);

/// `saml_c14n_budget_check` with a namespace-work limit of `workFactor` steps per unit of the document's
/// weight plus `workSlack` steps.
int saml_c14n_budget_check_within(xmlDocPtr doc, xmlNodePtr apex, xmlChar **prefixes, int exclusive, saml_shim_c14n_memo *memo,
                                  unsigned workFactor, unsigned long long workSlack);

/// Exclusive C14N of `apex`'s subtree without `excluded`'s (NULL: none), byte for byte libxml2's
/// (exc_c14n.c), handed to `sink`. `prefixes`: the InclusiveNamespaces PrefixList, NULL-terminated, or
/// NULL. `memo`: NULL, or what an earlier call found of the same unchanged document. At most
/// `outputLimit` bytes are written (past it: -1, and `memo->exceeded` says so). 1 when written, 0
/// when the document holds something left to libxml2 (nothing written), -1 on failure (of the
/// canonicalisation or of the sink).
int saml_shim_exc_c14n(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, xmlChar **prefixes, int comments,
                       saml_shim_c14n_memo *memo, size_t outputLimit, saml_shim_c14n_sink sink, void *context);

#endif
