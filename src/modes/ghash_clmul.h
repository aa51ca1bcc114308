/* 128-bit carry-less arithmetic shared by the PCLMULQDQ GHASH backends
 * (ghash_pclmul.c, ghash_vpclmul.c, ghash_vpclmul512.c); each of them is
 * built with -mpclmul -mssse3 or more. */
#ifndef KUAI_GHASH_CLMUL_H
#define KUAI_GHASH_CLMUL_H

#include <immintrin.h>

static inline __m128i bswap128(__m128i x)
{
    const __m128i rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_shuffle_epi8(x, rev);
}

/* lo, mid, hi: the 256-bit product as lo + mid y^64 + hi y^128. Returns it
 * times y^-128 mod P*, the two-step Montgomery reduction of ghash_ref.c. */
static inline __m128i reduce(__m128i lo, __m128i mid, __m128i hi)
{
    const __m128i poly = _mm_set_epi64x(0, (long long)0xC200000000000000ull);
    lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
    hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
    /* Clear the low word: its product with the constant lands one word up,
     * and the word itself (times y^128) two words up, which the swap does. */
    __m128i t = _mm_clmulepi64_si128(lo, poly, 0x00);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    t = _mm_clmulepi64_si128(lo, poly, 0x00);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    return _mm_xor_si128(hi, lo);
}

static inline __m128i mul(__m128i a, __m128i b)
{
    __m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
    __m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
    return reduce(lo, mid, hi);
}

static inline __m128i karatsuba_word(__m128i h)
{
    return _mm_xor_si128(h, _mm_shuffle_epi32(h, 0x4E));
}

#endif
