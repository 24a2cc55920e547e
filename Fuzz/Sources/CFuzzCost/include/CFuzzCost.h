// Cost as coverage for libFuzzer: FuzzCanonicalizationCost reports the canonicalisation fuel each input
// spent, and this turns it into features (libFuzzer's "extra counters"), so that an input reaching a
// higher cost bucket than any before is kept in the corpus and mutated further, as new coverage would be.
#ifndef CFUZZCOST_H
#define CFUZZCOST_H

#include <stddef.h>
#include <stdint.h>

/// Marks the buckets of one input's cost: `spent` fuel over `bytes` input bytes, against the tank's `limit`.
void saml_fuzz_cost_record(uint64_t spent, uint64_t limit, size_t bytes);

#endif
