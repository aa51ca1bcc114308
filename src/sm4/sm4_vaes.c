/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, VAES + AVX2 backend: the AES-NI method (sm4_aes_sbox.h) on ymm
 * registers, vaesenclast doing two 128-bit lanes at once; 8 blocks per ymm
 * group (sm4_simd.h), several groups in flight. Compiled with -mavx2 -mvaes
 * for this file only; chosen at run time.
 */
#include "sm4.h"

#include <immintrin.h>

typedef __m256i sm4v;
#define SM4V_W 8
#define SM4S_G 8 /* 64 blocks in flight; 4 groups lose 20 %, 16 gain nothing */
#define SM4S_MK_G 4

#define sm4v_loadu(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define sm4v_storeu(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
#define sm4v_row(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define sm4v_xor(a, b) _mm256_xor_si256(a, b)
#define sm4v_and(a, b) _mm256_and_si256(a, b)
#define sm4v_or(a, b) _mm256_or_si256(a, b)
#define sm4v_set1(w) _mm256_set1_epi32((int)(w))
#define sm4v_zero() _mm256_setzero_si256()
#define sm4v_add32(a, b) _mm256_add_epi32(a, b)
#define sm4v_sub32(a, b) _mm256_sub_epi32(a, b)
#define sm4v_srli32(x, n) _mm256_srli_epi32(x, n)
#define sm4v_slli32(x, n) _mm256_slli_epi32(x, n)
#define sm4v_cmpeq32(a, b) _mm256_cmpeq_epi32(a, b)
#define sm4v_cmpgt32(a, b) _mm256_cmpgt_epi32(a, b)
#define sm4v_shuffle8(x, idx) _mm256_shuffle_epi8(x, idx)
#define sm4v_aesenclast(x, k) _mm256_aesenclast_epi128(x, k)
#define sm4v_unpacklo32(a, b) _mm256_unpacklo_epi32(a, b)
#define sm4v_unpackhi32(a, b) _mm256_unpackhi_epi32(a, b)
#define sm4v_unpacklo64(a, b) _mm256_unpacklo_epi64(a, b)
#define sm4v_unpackhi64(a, b) _mm256_unpackhi_epi64(a, b)

/* See sm4_simd.h: position p holds block (p % 4) * 2 + p / 4 of its group. */
static inline sm4v sm4v_lane_blocks(void)
{
    return _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
}

#include "sm4_aes_sbox.h"
#include "sm4_simd.h"

static int sm4_vaes_available(void)
{
    /* built with -maes too: the compiler may use 128-bit aesenclast */
    unsigned need = KUAI_CPU_VAES | KUAI_CPU_AVX2 | KUAI_CPU_AESNI;
    return (kuai_cpu_features() & need) == need;
}

/* Above AES-NI, below GFNI. */
KUAI_REGISTER(sm4_vaes);
SM4S_IMPLS(sm4_vaes, "vaes", 200, sm4_vaes_available);
