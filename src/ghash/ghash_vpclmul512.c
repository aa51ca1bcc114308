/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with VPCLMULQDQ on 512-bit registers (built with -mvpclmulqdq
 * -mpclmul -mavx512f -mavx512bw -mavx512vl): four blocks per register,
 * thirty-two blocks per reduction. The 32 registers of AVX-512 hold eight
 * data registers, their products and the accumulators without spilling,
 * and a long aggregation hides the latency of the one reduction that the
 * next group waits for. The arithmetic is the reflected Montgomery form of
 * ghash_ref.c; this file differs from ghash_vpclmul.c only in width.
 */
#include "ghash.h"
#include "ghash_clmul.h"

#include <immintrin.h>

#define AGG 32

/* pow[i] = H^(AGG-i), descending: blocks i..i+3 of a run of n meet their
 * powers in one 512-bit load at pow[AGG-n+i].
 * kar: Karatsuba words (lo ^ hi of a power) for the 32-block steady state,
 * two per lane: kar[q] lane i holds that of pow[8q+i] in its low word and
 * of pow[8q+4+i] in its high word, so the clmul immediate picks the word
 * and 32 of them take 256 bytes. Karatsuba matters here: VPCLMULQDQ's
 * throughput is the bound, and it needs three products per block, not 4. */
typedef struct vpclmul512_key {
    __m128i pow[AGG];
    __m512i kar[AGG / 8];
} vpclmul512_key;
_Static_assert(sizeof(vpclmul512_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

static inline __m512i bswap512(__m512i x)
{
    /* vpshufb works per 128-bit lane: each block is reversed in place. */
    const __m512i rev =
        _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    return _mm512_shuffle_epi8(x, rev);
}

static void vpclmul512_init(unsigned char *hkey, const uint8_t h[16])
{
    vpclmul512_key *k = (vpclmul512_key *)(void *)hkey;
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    __m128i h1 = bswap128(_mm_loadu_si128((const __m128i *)hr)), p = h1;
    for (int i = AGG - 1; i >= 0; i--) {
        k->pow[i] = p;
        p = mul(p, h1);
    }
    for (int q = 0; q < AGG / 8; q++) {
        __m512i a = _mm512_loadu_si512((const void *)(k->pow + 8 * q));
        __m512i b = _mm512_loadu_si512((const void *)(k->pow + 8 * q + 4));
        /* lo ^ hi of each power, in both words of its lane */
        a = _mm512_xor_si512(a, _mm512_shuffle_epi32(a, _MM_PERM_BADC));
        b = _mm512_xor_si512(b, _mm512_shuffle_epi32(b, _MM_PERM_BADC));
        k->kar[q] = _mm512_unpacklo_epi64(a, b);
    }
    kuai_wipe(hr, sizeof hr);
}

static inline __m128i lanes_sum(__m512i v)
{
    __m256i s = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

#define XOR3(a, b, c) _mm512_ternarylogic_epi64(a, b, c, 0x96)

/* n (1..AGG) blocks folded into acc with one reduction. Groups of four;
 * the last group's missing blocks and powers load as zeros (masked loads
 * do not touch the memory they skip), so their products vanish. */
static inline __m128i fold(const vpclmul512_key *k, __m128i acc, const uint8_t *in, size_t n)
{
    const __m128i *pw = k->pow + (AGG - n);
    __m512i lo = _mm512_setzero_si512(), hi = lo, mid = lo;
    __m512i carry = _mm512_zextsi128_si512(acc); /* joins block 0 */
    for (size_t g = 0; g < n; g += 4) {
        size_t cnt = n - g < 4 ? n - g : 4;
        __mmask8 m = (__mmask8)((1u << (2 * cnt)) - 1);
        __m512i x = bswap512(_mm512_maskz_loadu_epi64(m, in + 16 * g));
        __m512i h = _mm512_maskz_loadu_epi64(m, pw + g);
        x = _mm512_xor_si512(x, carry);
        carry = _mm512_setzero_si512();
        lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x, h, 0x00));
        hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x, h, 0x11));
        mid = XOR3(mid, _mm512_clmulepi64_epi128(x, h, 0x01), _mm512_clmulepi64_epi128(x, h, 0x10));
    }
    return reduce(lanes_sum(lo), lanes_sum(mid), lanes_sum(hi));
}

/* The steady state: 32 blocks, eight independent loads, Karatsuba:
 * mid = (x.lo ^ x.hi)(h.lo ^ h.hi) ^ lo ^ hi, the correction made once on
 * the sums. */
static inline __m128i fold32(const vpclmul512_key *k, __m128i acc, const uint8_t *in)
{
    const __m512i *p = (const __m512i *)(const void *)k->pow;
    __m512i lo = _mm512_setzero_si512(), hi = lo, mid = lo;
    for (int j = 0; j < 8; j++) {
        __m512i x = bswap512(_mm512_loadu_si512((const void *)(in + 64 * j)));
        if (j == 0)
            x = _mm512_xor_si512(x, _mm512_zextsi128_si512(acc));
        __m512i h = _mm512_loadu_si512(p + j);
        __m512i xk = _mm512_xor_si512(x, _mm512_shuffle_epi32(x, _MM_PERM_BADC));
        lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x, h, 0x00));
        hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x, h, 0x11));
        /* group j's Karatsuba words: low words of kar[j/2] for even j,
         * high words for odd j (immediate bit 4 picks h's word) */
        if (j & 1)
            mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(xk, k->kar[j / 2], 0x10));
        else
            mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(xk, k->kar[j / 2], 0x00));
    }
    mid = XOR3(mid, lo, hi);
    return reduce(lanes_sum(lo), lanes_sum(mid), lanes_sum(hi));
}

static void vpclmul512_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in,
                              size_t nblocks)
{
    const vpclmul512_key *k = (const vpclmul512_key *)(const void *)hkey;
    __m128i acc = bswap128(_mm_loadu_si128((const __m128i *)y));
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        acc = fold32(k, acc, in);
    if (nblocks)
        acc = fold(k, acc, in, nblocks);
    _mm_storeu_si128((__m128i *)y, bswap128(acc));
}

static int vpclmul512_available(void)
{
    unsigned need = KUAI_CPU_VPCLMUL | KUAI_CPU_AVX512 | KUAI_CPU_PCLMUL;
    return (kuai_cpu_features() & need) == need;
}

/* Above the 256-bit one. */
KUAI_REGISTER_GHASH(ghash_vpclmul512);
const ghash_impl ghash_vpclmul512 = {
    .priority = 300,
    .name = "vpclmul512",
    .available = vpclmul512_available,
    .init = vpclmul512_init,
    .update = vpclmul512_update,
};
