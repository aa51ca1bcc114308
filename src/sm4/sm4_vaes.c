/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, VAES + AVX2 backend: the AES-NI method (sm4_aes_sbox.h) on ymm
 * registers, vaesenclast doing two 128-bit lanes at once; 8 blocks per ymm
 * group (sm4_simd.h), several groups in flight. Compiled with -mavx2 -mvaes
 * for this file only; chosen at run time.
 */
#include "sm4.h"

#include "../simd/avx2.h"

#define SM4V_ISA v256
#include "sm4_vocab.h"

#define SM4V_W 8
#define SM4S_G 8 /* 64 blocks in flight; 4 groups lose 20 %, 16 gain nothing */
#define SM4S_MK_G 4

#define sm4v_aesenclast(x, k) _mm256_aesenclast_epi128(x, k)
/* the first k (1..2) of the 2 blocks at p, zeros after (sm4_simd.h's
 * partial groups) */
static inline sm4v sm4v_load_blocks(const uint8_t *p, size_t k)
{
    return k > 1 ? _mm256_loadu_si256((const __m256i *)(const void *)p)
                 : _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* See sm4_simd.h: position p holds block (p % 4) * 2 + p / 4 of its group. */
static inline sm4v sm4v_lane_blocks(void)
{
    return _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
}

#include "sm4_aes_sbox.h"
/* Short calls and key setup on xmm (sm4.h): one key's schedule is a chain
 * of 32 rounds that a wider register does not shorten, and a short call
 * under 4 keys fills 4 words, not a pass of 8 blocks per key. */
#define SM4S_SHORT_FROM sm4_aesni_avx
#define SM4S_EXPAND_FROM sm4_aesni_avx
/* One-shot calls of more blocks than this take key setup and this
 * backend's ymm kernel (src/modes/oneshot.c's generic path): one key's 8
 * blocks 1,216 -> 1,050 TSC cycles, 32 2,053 -> 1,438 (Zen 4,
 * scripts/bench-ab, KUAI_AB_LEN; docs/performance.md) */
#define SM4S_ONESHOT_BLOCKS 4
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
