/* SPDX-License-Identifier: Apache-2.0 */
/* sm4_simd.h's vocabulary on 128-bit SSE registers with AES-NI, shared by
 * sm4_aesni.c (legacy SSE encoding) and sm4_aesni_avx.c (the same code in
 * VEX encoding); each includes it, then sm4_aes_sbox.h and sm4_simd.h. */
#ifndef KUAI_SM4_XMM_VOCAB_H
#define KUAI_SM4_XMM_VOCAB_H

#include <immintrin.h>

typedef __m128i sm4v;
#define SM4V_W 4
#define SM4S_G 8 /* 32 blocks in flight: 4 groups leave the rounds latency-bound */
#define SM4S_MK_G 8

#define sm4v_loadu(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define sm4v_storeu(p, x) _mm_storeu_si128((__m128i *)(void *)(p), x)
#define sm4v_row(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define sm4v_xor(a, b) _mm_xor_si128(a, b)
#define sm4v_and(a, b) _mm_and_si128(a, b)
#define sm4v_or(a, b) _mm_or_si128(a, b)
#define sm4v_set1(w) _mm_set1_epi32((int)(w))
#define sm4v_zero() _mm_setzero_si128()
#define sm4v_add32(a, b) _mm_add_epi32(a, b)
#define sm4v_sub32(a, b) _mm_sub_epi32(a, b)
#define sm4v_srli32(x, n) _mm_srli_epi32(x, n)
#define sm4v_slli32(x, n) _mm_slli_epi32(x, n)
#define sm4v_cmpeq32(a, b) _mm_cmpeq_epi32(a, b)
#define sm4v_cmpgt32(a, b) _mm_cmpgt_epi32(a, b)
#define sm4v_shuffle8(x, idx) _mm_shuffle_epi8(x, idx)
#define sm4v_aesenclast(x, k) _mm_aesenclast_si128(x, k)
#define sm4v_unpacklo32(a, b) _mm_unpacklo_epi32(a, b)
#define sm4v_unpackhi32(a, b) _mm_unpackhi_epi32(a, b)
#define sm4v_unpacklo64(a, b) _mm_unpacklo_epi64(a, b)
#define sm4v_unpackhi64(a, b) _mm_unpackhi_epi64(a, b)

/* See sm4_simd.h: with one 128-bit lane, position p holds block p. */
static inline sm4v sm4v_lane_blocks(void)
{
    return _mm_setr_epi32(0, 1, 2, 3);
}

#endif
