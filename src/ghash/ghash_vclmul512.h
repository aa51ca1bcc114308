/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH on VPCLMULQDQ with 512-bit registers, four blocks per register:
 * the zmm vocabulary ghash_vclmul.h asks for, then its key layout, fold
 * and update, and the partial groups a run ends on. Included once by
 * ghash_vpclmul512.c (the GHASH backend) and by aes_vaes_gcm512.c (AES-GCM
 * with the same key material, AES and GHASH in one pass); both are built
 * with -mvpclmulqdq -mpclmul -mavx512f -mavx512bw -mavx512vl or more.
 */
#ifndef KUAI_GHASH_VCLMUL512_H
#define KUAI_GHASH_VCLMUL512_H

#include "ghash.h"
#include "ghash_clmul.h"

#include <immintrin.h>

typedef __m512i gv;
#define GV_LANES 4
#define GV_FN(name) vpclmul512_##name
#define gv_loadu(p) _mm512_loadu_si512((const void *)(p))
#define gv_storeu(p, x) _mm512_storeu_si512((void *)(p), x)
#define gv_zero() _mm512_setzero_si512()
#define gv_xor(a, b) _mm512_xor_si512(a, b)
#define gv_xor3(a, b, c) _mm512_ternarylogic_epi64(a, b, c, 0x96)
#define gv_zext(x) _mm512_zextsi128_si512(x)
#define gv_clmul(a, b, imm) _mm512_clmulepi64_epi128(a, b, imm)
#define gv_swap64(x) _mm512_shuffle_epi32(x, _MM_PERM_BADC)
#define gv_unpacklo64(a, b) _mm512_unpacklo_epi64(a, b)
#define gv_unpackhi64(a, b) _mm512_unpackhi_epi64(a, b)
#define gv_bcast128(x) _mm512_broadcast_i32x4(x)

static inline __m512i gv_bswap(__m512i x)
{
    /* vpshufb works per 128-bit lane: each block is reversed in place. */
    const __m512i rev =
        _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    return _mm512_shuffle_epi8(x, rev);
}

static inline __m128i gv_sum(__m512i v)
{
    __m256i s = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

#include "ghash_vclmul.h"

/* Groups of four; the last group's missing blocks and powers load as zeros
 * (masked loads do not touch the memory they skip), so their products
 * vanish. */
static inline __m128i fold_tail(const vclmul_key *k, __m128i acc, const uint8_t *in, size_t n)
{
    const __m128i *pw = k->pow + (AGG - n);
    gv lo = gv_zero(), hi = lo, mid = lo;
    gv carry = gv_zext(acc); /* joins block 0 */
    for (size_t g = 0; g < n; g += 4) {
        size_t cnt = n - g < 4 ? n - g : 4;
        __mmask8 m = (__mmask8)((1u << (2 * cnt)) - 1);
        gv x = gv_bswap(_mm512_maskz_loadu_epi64(m, in + 16 * g));
        gv h = _mm512_maskz_loadu_epi64(m, pw + g);
        x = gv_xor(x, carry);
        carry = gv_zero();
        lo = gv_xor(lo, gv_clmul(x, h, 0x00));
        hi = gv_xor(hi, gv_clmul(x, h, 0x11));
        mid = gv_xor3(mid, gv_clmul(x, h, 0x01), gv_clmul(x, h, 0x10));
    }
    return reduce(gv_sum(lo), gv_sum(mid), gv_sum(hi));
}

#endif
