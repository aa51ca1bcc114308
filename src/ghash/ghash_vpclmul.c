/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with VPCLMULQDQ on 256-bit registers (built with -mvpclmulqdq
 * -mavx2 -mpclmul): two blocks per register, sixteen blocks per reduction.
 * Each block is multiplied by its own power of H (X_i * H^(16-i)), the
 * 256-bit products are summed unreduced, the two lanes are added, and one
 * Montgomery reduction (ghash_ref.c) finishes the sixteen. 256-bit rather
 * than 512-bit registers so that the CPUs with VPCLMULQDQ but no AVX-512
 * get it too.
 */
#include "ghash.h"
#include "ghash_clmul.h"

#include <immintrin.h>

#define AGG 16

/* pow[i] = H^(AGG-i): descending, so that blocks i and i+1 of a run of n
 * meet their powers in one unaligned 256-bit load at pow[AGG-n+i]. */
/* kar: Karatsuba words (lo ^ hi of a power) for the 16-block steady state,
 * two per lane: kar[q] lane i holds that of pow[4q+i] in its low word and
 * of pow[4q+2+i] in its high word; the clmul immediate picks the word.
 * Three products per block instead of four: VPCLMULQDQ throughput is
 * the bound. */
typedef struct vpclmul_key {
    __m128i pow[AGG];
    __m256i kar[AGG / 4];
} vpclmul_key;
_Static_assert(sizeof(vpclmul_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

static inline __m256i bswap256(__m256i x)
{
    /* vpshufb works per 128-bit lane: each block is reversed in place. */
    const __m256i rev = _mm256_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1,
                                        2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm256_shuffle_epi8(x, rev);
}

static void vpclmul_init(unsigned char *hkey, const uint8_t h[16])
{
    vpclmul_key *k = (vpclmul_key *)(void *)hkey;
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    __m128i h1 = bswap128(_mm_loadu_si128((const __m128i *)hr)), p = h1;
    for (int i = AGG - 1; i >= 0; i--) {
        k->pow[i] = p;
        p = mul(p, h1);
    }
    for (int q = 0; q < AGG / 4; q++) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(k->pow + 4 * q));
        __m256i b = _mm256_loadu_si256((const __m256i *)(k->pow + 4 * q + 2));
        a = _mm256_xor_si256(a, _mm256_shuffle_epi32(a, 0x4E));
        b = _mm256_xor_si256(b, _mm256_shuffle_epi32(b, 0x4E));
        k->kar[q] = _mm256_unpacklo_epi64(a, b);
    }
    kuai_wipe(hr, sizeof hr);
}

/* Unreduced products of two blocks with two powers, added in. */
#define MUL_ACC(x, h)                                                                              \
    do {                                                                                           \
        lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(x, h, 0x00));                           \
        hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(x, h, 0x11));                           \
        mid = _mm256_xor_si256(mid, _mm256_xor_si256(_mm256_clmulepi64_epi128(x, h, 0x01),         \
                                                     _mm256_clmulepi64_epi128(x, h, 0x10)));       \
    } while (0)

static inline __m128i lanes_sum(__m256i v)
{
    return _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

/* n (1..AGG) blocks folded into acc with one reduction. */
static inline __m128i fold(const vpclmul_key *k, __m128i acc, const uint8_t *in, size_t n)
{
    __m256i lo = _mm256_setzero_si256(), hi = lo, mid = lo;
    const __m128i *pw = k->pow + (AGG - n);
    size_t pairs = n / 2;
    /* The accumulator joins the first block (lane 0 of the first load). */
    __m256i carry = _mm256_zextsi128_si256(acc);
    for (size_t j = 0; j < pairs; j++) {
        __m256i x = bswap256(_mm256_loadu_si256((const __m256i *)(in + 32 * j)));
        __m256i h = _mm256_loadu_si256((const __m256i *)(pw + 2 * j));
        x = _mm256_xor_si256(x, carry);
        carry = _mm256_setzero_si256();
        MUL_ACC(x, h);
    }
    __m128i lo1 = lanes_sum(lo), hi1 = lanes_sum(hi), mid1 = lanes_sum(mid);
    if (n & 1) {
        __m128i x = bswap128(_mm_loadu_si128((const __m128i *)(in + 32 * pairs)));
        __m128i h = pw[2 * pairs];
        x = _mm_xor_si128(x, _mm256_castsi256_si128(carry));
        lo1 = _mm_xor_si128(lo1, _mm_clmulepi64_si128(x, h, 0x00));
        hi1 = _mm_xor_si128(hi1, _mm_clmulepi64_si128(x, h, 0x11));
        mid1 = _mm_xor_si128(mid1, _mm_xor_si128(_mm_clmulepi64_si128(x, h, 0x01),
                                                 _mm_clmulepi64_si128(x, h, 0x10)));
    }
    return reduce(lo1, mid1, hi1);
}

/* The steady state: sixteen blocks, eight loads, Karatsuba:
 * mid = (x.lo ^ x.hi)(h.lo ^ h.hi) ^ lo ^ hi, corrected once on the sums. */
static inline __m128i fold16(const vpclmul_key *k, __m128i acc, const uint8_t *in)
{
    const __m256i *p = (const __m256i *)(const void *)k->pow;
    __m256i lo = _mm256_setzero_si256(), hi = lo, mid = lo;
    for (int j = 0; j < AGG / 2; j++) {
        __m256i x = bswap256(_mm256_loadu_si256((const __m256i *)(in + 32 * j)));
        if (j == 0)
            x = _mm256_xor_si256(x, _mm256_zextsi128_si256(acc));
        __m256i h = _mm256_loadu_si256(p + j);
        __m256i xk = _mm256_xor_si256(x, _mm256_shuffle_epi32(x, 0x4E));
        lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(x, h, 0x00));
        hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(x, h, 0x11));
        /* pair j's Karatsuba words: low words of kar[j/2] for even j, high
         * words for odd j (immediate bit 4 picks h's word) */
        if (j & 1)
            mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128(xk, k->kar[j / 2], 0x10));
        else
            mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128(xk, k->kar[j / 2], 0x00));
    }
    mid = _mm256_xor_si256(mid, _mm256_xor_si256(lo, hi));
    return reduce(lanes_sum(lo), lanes_sum(mid), lanes_sum(hi));
}

static void vpclmul_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in,
                           size_t nblocks)
{
    const vpclmul_key *k = (const vpclmul_key *)(const void *)hkey;
    __m128i acc = bswap128(_mm_loadu_si128((const __m128i *)y));
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        acc = fold16(k, acc, in);
    if (nblocks)
        acc = fold(k, acc, in, nblocks);
    _mm_storeu_si128((__m128i *)y, bswap128(acc));
}

static int vpclmul_available(void)
{
    unsigned need = KUAI_CPU_VPCLMUL | KUAI_CPU_AVX2 | KUAI_CPU_PCLMUL;
    return (kuai_cpu_features() & need) == need;
}

/* Above PCLMULQDQ, below the 512-bit one. */
KUAI_REGISTER_GHASH(ghash_vpclmul);
const ghash_impl ghash_vpclmul = {
    .priority = 200,
    .name = "vpclmul",
    .available = vpclmul_available,
    .init = vpclmul_init,
    .update = vpclmul_update,
};
