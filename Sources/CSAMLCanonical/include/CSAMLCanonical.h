// The canonicalisation engine: exclusive C14N 1.0 and inclusive C14N 1.0/1.1 for the node sets of a
// SAML signature, byte for byte libxml2's (canonicalizer.c), metered as it works against a tank of fuel
// sized by the document (c14n_budget.c). libxml2 only: no libxmlsec1, no OpenSSL, nothing of the binding
// (CSAMLShim installs the engine into xmlsec's transforms, fast_c14n.c, and runs the signature
// verifications that use it).
//
// What it mirrors of libxml2 (c14n.c, 2.9-2.14), so that a reader checks one against the other:
// - the rendered-namespace stack and libxml2's two search rules, xmlSearchNs's lookup, xmlStrcmp
//   ordering and xmlListInsert's insertion (before the first entry not smaller);
// - the xmlns="" rules, inclusive C14N's xml:* inheritance at the apex, the escaping tables;
// - what libxml2 would refuse or write differently is refused (`saml_shim_c14n_refusal`), never handed
//   to libxml2: every canonicalisation of an unverified document runs here, metered.
// Written for this package from the W3C recommendations and libxml2's documented behaviour (no libxml2
// code is copied); Tests/SAMLVerifierTests/FastCanonicalizationTests.swift compares the bytes with
// xmlC14NExecute's in every mode for every element of every bundled vector and third-party response;
// FuzzCanonicalization compares whole verifications, FuzzCanonicalizationCost seeks inputs that burn
// the most fuel per byte.
#ifndef CSAMLCANONICAL_H
#define CSAMLCANONICAL_H

#include <stddef.h>
#include <libxml/xmlversion.h>
// As in CSAMLShim.h: libxml2's encoding.h would pull in the system ICU headers, which clash with
// Foundation's; the one declaration that changes is a struct this package never reads or allocates.
#undef LIBXML_ICU_ENABLED
#include <libxml/tree.h>

/// Where `saml_c14n_write` hands its bytes: called once with all of them; negative on failure.
typedef int (*saml_shim_c14n_sink)(void *context, const unsigned char *bytes, size_t length);

/// Why the engine refused a document it cannot write as libxml2 would (nothing written).
typedef enum {
    SAML_SHIM_C14N_NOT_REFUSED = 0,
    SAML_SHIM_C14N_REFUSED_RELATIVE_NAMESPACE = 1,  // a namespace URI without a scheme (libxml2 refuses it too)
    SAML_SHIM_C14N_REFUSED_QUOTED_NAMESPACE = 2,    // a namespace URI holding a double quote
    SAML_SHIM_C14N_REFUSED_NODE_KIND = 3,           // an entity reference, a DTD, a node kind C14N does not write
    SAML_SHIM_C14N_REFUSED_ATTRIBUTE_CONTENT = 4,   // an attribute value that is not plain text
    SAML_SHIM_C14N_REFUSED_XML_BASE = 5,            // an xml:base inclusive C14N 1.1 would resolve against an ancestor's
    SAML_SHIM_C14N_REFUSED_SHAPE = 6,               // a node set other than an element's tree minus at most one subtree
} saml_shim_c14n_refusal;

/// What one verification knows of the document it canonicalises (the reference and SignedInfo of one
/// signature): whether the engine can write it at all, its weight, and why a canonicalisation was refused.
typedef struct {
    unsigned magic;  // SAML_SHIM_C14N_MEMO_MAGIC
    xmlDocPtr doc;
    int supported;   // -1: not yet known; otherwise a saml_shim_c14n_refusal (0: the engine writes it)
    size_t weight;   // about the document's serialised size; 0: not yet known
    int exceeded;    // a saml_shim_c14n_budget_reason, 0 while within budget
    int refused;     // a saml_shim_c14n_refusal, 0 unless the last canonicalisation was refused
    int stock;       // non-zero: libxml2's xmlC14NExecute with xmlsec's own visibility test, never the engine
                     // (differential testing only: unmetered, never for unverified input)
} saml_shim_c14n_memo;
#define SAML_SHIM_C14N_MEMO_MAGIC 0x53414d4cu

/// Why a canonicalisation was refused before or while writing.
typedef enum {
    SAML_SHIM_C14N_WITHIN_BUDGET = 0,
    SAML_SHIM_C14N_OVER_OUTPUT = 1,    // more canonical bytes than the document's weight allows
    SAML_SHIM_C14N_OVER_WORK = 2,      // more work than the document's tank of fuel (or the early estimate) allows
    SAML_SHIM_C14N_OVER_PREFIXES = 3,  // an InclusiveNamespaces PrefixList over the cap
} saml_shim_c14n_budget_reason;

/// Fuel: units of work (about a nanosecond each) the engine may still spend on one document. `spent`
/// grows as the engine works; past `limit` the walk stops and `exhausted` is set.
typedef struct {
    unsigned long long spent;
    unsigned long long limit;
    int exhausted;
} saml_c14n_fuel;

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

/// The tank of `doc`: what every canonicalisation of the document has spent so far (kept in the
/// document's `_private`, which libxml2 and libxmlsec1 leave to applications and this package uses for
/// nothing else) and its limit, SAML_C14N_FUEL_FACTOR units per unit of the document's weight plus
/// SAML_C14N_FUEL_SLACK. One tank per document, whatever the number of signatures, keys and trials.
saml_c14n_fuel saml_c14n_tank_open(xmlDocPtr doc, saml_shim_c14n_memo *memo);

/// Records what `fuel` has spent as the document's.
void saml_c14n_tank_close(xmlDocPtr doc, const saml_c14n_fuel *fuel);

/// The fuel spent on `doc` so far.
unsigned long long saml_c14n_tank_spent(xmlDocPtr doc);

/// The fuel `doc` may spend in all (its tank's limit).
unsigned long long saml_c14n_tank_limit(xmlDocPtr doc);

/// The canonical form of `apex`'s subtree without `excluded`'s (NULL: none), byte for byte libxml2's,
/// handed to `sink`. `mode`: XML_C14N_EXCLUSIVE_1_0, XML_C14N_1_0 or XML_C14N_1_1. `prefixes`: the
/// InclusiveNamespaces PrefixList (exclusive only), NULL-terminated, or NULL. `memo`: NULL, or what an
/// earlier call found of the same unchanged document. Work is charged to `fuel`; at most `outputLimit`
/// bytes are written. 1 when written; 0 when refused (nothing written; `memo->refused` says why); -1 on
/// failure (out of fuel or past the output limit: `memo->exceeded` says which; or of the sink).
int saml_c14n_write(xmlDocPtr doc, xmlNodePtr apex, xmlNodePtr excluded, int mode, xmlChar **prefixes, int comments,
                    saml_shim_c14n_memo *memo, saml_c14n_fuel *fuel, size_t outputLimit, saml_shim_c14n_sink sink, void *context);

#endif
