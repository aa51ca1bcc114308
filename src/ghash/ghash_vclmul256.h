/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH on VPCLMULQDQ with 256-bit registers, two blocks per register: the
 * ymm vocabulary ghash_vclmul.h asks for, then its key layout, fold and
 * update, and the odd block a run ends on. Included once by
 * ghash_vpclmul.c (the GHASH backend) and by aes_vaes_gcm256.c (AES-GCM
 * with the same key material, AES and GHASH in one pass); both are built
 * with -mvpclmulqdq -mpclmul -mavx2 or more.
 */
#ifndef KUAI_GHASH_VCLMUL256_H
#define KUAI_GHASH_VCLMUL256_H

#include "ghash.h"
#include "ghash_clmul.h"

#include <immintrin.h>

typedef __m256i gv;
#define GV_LANES 2
#define GV_FN(name) vpclmul_##name
#define gv_loadu(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define gv_storeu(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
#define gv_zero() _mm256_setzero_si256()
#define gv_xor(a, b) _mm256_xor_si256(a, b)
#define gv_xor3(a, b, c) _mm256_xor_si256(a, _mm256_xor_si256(b, c))
#define gv_zext(x) _mm256_zextsi128_si256(x)
#define gv_clmul(a, b, imm) _mm256_clmulepi64_epi128(a, b, imm)
#define gv_swap64(x) _mm256_shuffle_epi32(x, 0x4E)
#define gv_unpacklo64(a, b) _mm256_unpacklo_epi64(a, b)
#define gv_unpackhi64(a, b) _mm256_unpackhi_epi64(a, b)
#define gv_bcast128(x) _mm256_broadcastsi128_si256(x)

static inline __m256i gv_bswap(__m256i x)
{
    /* vpshufb works per 128-bit lane: each block is reversed in place. */
    const __m256i rev = _mm256_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1,
                                        2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm256_shuffle_epi8(x, rev);
}

static inline __m128i gv_sum(__m256i v)
{
    return _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

#include "ghash_vclmul.h"

/* Pairs of blocks, then the odd one out as a single 128-bit product. */
static inline __m128i fold_tail(const vclmul_key *k, __m128i acc, const uint8_t *in, size_t n)
{
    gv lo = gv_zero(), hi = lo, mid = lo;
    const __m128i *pw = k->pow + (AGG - n);
    size_t pairs = n / 2;
    /* The accumulator joins the first block (lane 0 of the first load). */
    gv carry = gv_zext(acc);
    for (size_t j = 0; j < pairs; j++) {
        gv x = gv_bswap(gv_loadu(in + 32 * j));
        gv h = gv_loadu(pw + 2 * j);
        x = gv_xor(x, carry);
        carry = gv_zero();
        lo = gv_xor(lo, gv_clmul(x, h, 0x00));
        hi = gv_xor(hi, gv_clmul(x, h, 0x11));
        mid = gv_xor3(mid, gv_clmul(x, h, 0x01), gv_clmul(x, h, 0x10));
    }
    __m128i lo1 = gv_sum(lo), hi1 = gv_sum(hi), mid1 = gv_sum(mid);
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

#endif
