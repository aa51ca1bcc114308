/* SPDX-License-Identifier: Apache-2.0 */
/* 128-bit carry-less arithmetic shared by the PCLMULQDQ GHASH backends
 * (ghash_pclmul.c, ghash_vpclmul.c, ghash_vpclmul512.c); each of them is
 * built with -mpclmul -mssse3 or more. */
#ifndef KUAI_GHASH_CLMUL_H
#define KUAI_GHASH_CLMUL_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

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

/* ghash_pclmul's key material, here because the AES-NI backend's fused
 * GCM kernel (aes_aesni.c) hashes with it too. pow[i] = H^(AGG-i) for
 * i < AGG (descending, so a run of n blocks starts at pow[AGG-n]), then
 * kar[i] = lo ^ hi of pow[i] in the low word, for the Karatsuba middle
 * product. */
#define GHASH_PCLMUL_AGG 8
typedef struct pclmul_key {
    __m128i pow[GHASH_PCLMUL_AGG];
    __m128i kar[GHASH_PCLMUL_AGG];
} pclmul_key;

/* Products summed unreduced: lo + mid y^64 + hi y^128 before the middle
 * Karatsuba correction. */
typedef struct clmul_sum {
    __m128i lo, mid, hi;
} clmul_sum;

/* s += x * pow[j], x a block as loaded (wire order). */
static inline void pclmul_sum_block(clmul_sum *s, const pclmul_key *k, size_t j, __m128i x)
{
    x = bswap128(x);
    __m128i h = k->pow[j];
    s->lo = _mm_xor_si128(s->lo, _mm_clmulepi64_si128(x, h, 0x00));
    s->hi = _mm_xor_si128(s->hi, _mm_clmulepi64_si128(x, h, 0x11));
    s->mid = _mm_xor_si128(s->mid, _mm_clmulepi64_si128(karatsuba_word(x), k->kar[j], 0x00));
}

static inline __m128i pclmul_sum_reduce(clmul_sum s)
{
    return reduce(s.lo, _mm_xor_si128(s.mid, _mm_xor_si128(s.lo, s.hi)), s.hi);
}

/* n (1..AGG) blocks folded into the accumulator acc (reflected form) with
 * one reduction: the products X_i * H^(n-i) are summed unreduced
 * (Karatsuba, three multiplications each), which takes the two dependent
 * reduction multiplications off the per-block critical path. */
static inline __m128i pclmul_fold(const pclmul_key *k, __m128i acc, const uint8_t *in, size_t n)
{
    clmul_sum s = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    size_t base = GHASH_PCLMUL_AGG - n;
    for (size_t i = 0; i < n; i++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(in + 16 * i));
        if (i == 0)
            x = _mm_xor_si128(x, bswap128(acc));
        pclmul_sum_block(&s, k, base + i, x);
    }
    return pclmul_sum_reduce(s);
}

#endif
