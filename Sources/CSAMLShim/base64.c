// Base64 (RFC 4648 alphabet, `+` and `/`) decoding of whole 16-symbol blocks with SSSE3.
//
// The Swift decoder (Sources/SAML/Decoding/Base64Decoding_shim.swift) owns every rule: line breaks, spaces read
// as `+`, padding, sizes, errors. It hands this function the bytes ahead of it; this function decodes as
// many blocks of 16 symbols of the alphabet as it can and stops before the first block holding anything
// else, which the Swift code then reads symbol by symbol. So this is only ever a faster way to the same
// bytes, and a block it declines costs one comparison.
//
// Per block: each byte's high and low nibbles index two 16-entry tables whose AND is non-zero exactly
// for the bytes outside the alphabet; the value of a symbol is the byte plus an offset chosen by its high
// nibble (`/`, the one symbol whose nibble it shares with `+` at another offset, is moved one entry
// down); `pmaddubsw` and `pmaddwd` join four 6-bit values into each 24-bit group, and a shuffle packs the
// twelve bytes.
#include "CSAMLShim.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <stdatomic.h>
#include <tmmintrin.h>

__attribute__((target("ssse3"))) static size_t saml_base64_blocks_ssse3(const unsigned char *in, size_t length,
                                                                        unsigned char *out, size_t writable,
                                                                        size_t allowed) {
    // Invalid-byte classes: bit 0 for high nibbles 0, 1 and 8-15 (every low nibble), bit 1 for high
    // nibble 2 (all but `+` and `/`), bit 2 for 3 (`:` to `?`), bit 3 for 4 and 6 (`@`, `` ` ``),
    // bit 4 for 5 and 7 (`[` to `_`, `{` to DEL).
    const __m128i invalidByLow = _mm_setr_epi8(0x0B, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07,
                                               0x15, 0x17, 0x17, 0x17, 0x15);
    const __m128i invalidByHigh = _mm_setr_epi8(0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x10, 0x01, 0x01, 0x01,
                                                0x01, 0x01, 0x01, 0x01, 0x01);
    // Offsets by high nibble; entry 1 is `/` (high nibble 2, moved down by one).
    const __m128i offsets = _mm_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i slash = _mm_set1_epi8('/');
    const __m128i pairs = _mm_set1_epi32(0x01400140);
    const __m128i quads = _mm_set1_epi32(0x00011000);
    const __m128i pack = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);

    size_t consumed = 0;
    size_t written = 0;
    while (length - consumed >= 16 && writable - written >= 16 && allowed - written >= 12) {
        __m128i symbols = _mm_loadu_si128((const __m128i *)(in + consumed));
        __m128i high = _mm_and_si128(_mm_srli_epi32(symbols, 4), nibble);
        __m128i low = _mm_and_si128(symbols, nibble);
        __m128i invalid = _mm_and_si128(_mm_shuffle_epi8(invalidByLow, low), _mm_shuffle_epi8(invalidByHigh, high));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(invalid, _mm_setzero_si128())) != 0xFFFF) {
            break;
        }
        __m128i index = _mm_add_epi8(high, _mm_cmpeq_epi8(symbols, slash));
        __m128i values = _mm_add_epi8(symbols, _mm_shuffle_epi8(offsets, index));
        __m128i groups = _mm_madd_epi16(_mm_maddubs_epi16(values, pairs), quads);
        _mm_storeu_si128((__m128i *)(out + written), _mm_shuffle_epi8(groups, pack));
        consumed += 16;
        written += 12;
    }
    return consumed;
}

// 1 with SSSE3, 0 without, -1 not yet asked.
static _Atomic int saml_base64_ssse3 = -1;

static int saml_base64_has_ssse3(void) {
    int known = atomic_load_explicit(&saml_base64_ssse3, memory_order_relaxed);
    if (known < 0) {
        unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
        known = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSSE3) != 0;
        atomic_store_explicit(&saml_base64_ssse3, known, memory_order_relaxed);
    }
    return known;
}
#endif

size_t saml_shim_base64_decode_blocks(const unsigned char *in, size_t length, unsigned char *out, size_t writable,
                                      size_t allowed) {
#if defined(__x86_64__) || defined(__i386__)
    if (in != NULL && out != NULL && saml_base64_has_ssse3()) {
        return saml_base64_blocks_ssse3(in, length, out, writable, allowed);
    }
#endif
    (void)in;
    (void)length;
    (void)out;
    (void)writable;
    (void)allowed;
    return 0;
}
