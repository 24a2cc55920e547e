// See CFuzzCost.h. libFuzzer on Linux reads every byte of the `__libfuzzer_extra_counters` section after
// each input as an 8-bit coverage counter (compiler-rt's FuzzerExtraCounters.cpp); a counter that turns
// non-zero for the first time is a new feature. Two families of buckets, each a counter:
// - fuel per input byte, on a scale of eighths of a doubling (1 unit a byte, 1.09, 1.19, ... up to 2^16);
// - the share of the document's tank spent, in 64ths (a run that empties the tank marks the last).
#include "CFuzzCost.h"

#include <math.h>

enum { SAML_FUZZ_PER_BYTE_BUCKETS = 128, SAML_FUZZ_TANK_BUCKETS = 65 };

__attribute__((used, section("__libfuzzer_extra_counters")))
static uint8_t saml_fuzz_cost_counters[SAML_FUZZ_PER_BYTE_BUCKETS + SAML_FUZZ_TANK_BUCKETS];

void saml_fuzz_cost_record(uint64_t spent, uint64_t limit, size_t bytes) {
    double perByte = (double)spent / (double)(bytes > 0 ? bytes : 1);
    int bucket = perByte < 1 ? 0 : (int)(8 * log2(perByte)) + 1;
    if (bucket >= SAML_FUZZ_PER_BYTE_BUCKETS) {
        bucket = SAML_FUZZ_PER_BYTE_BUCKETS - 1;
    }
    saml_fuzz_cost_counters[bucket] = 1;
    uint64_t share = limit > 0 ? (spent >= limit ? 64 : spent * 64 / limit) : 0;
    saml_fuzz_cost_counters[SAML_FUZZ_PER_BYTE_BUCKETS + share] = 1;
}
