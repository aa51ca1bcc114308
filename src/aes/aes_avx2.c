/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, AVX2: the bitsliced cipher of aes_bs.h on
 * 256-bit vectors, 16 blocks per pass (two independent 8-block halves, one
 * per 128-bit lane: vpshufb never crosses lanes, and neither does the
 * cipher). Multi-key batches of up to 8 keys go to the SSSE3 kernel.
 */
#include <immintrin.h>
#include <stdint.h>

typedef __m256i aes_v;
#define AES_V_BYTES 32

static inline aes_v v_loadu(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}
static inline void v_storeu(void *p, aes_v x)
{
    _mm256_storeu_si256((__m256i *)p, x);
}
static inline aes_v v_xor(aes_v a, aes_v b)
{
    return _mm256_xor_si256(a, b);
}
static inline aes_v v_and(aes_v a, aes_v b)
{
    return _mm256_and_si256(a, b);
}
static inline aes_v v_bcast8(uint8_t c)
{
    return _mm256_set1_epi8((char)c);
}
static inline aes_v v_lane16(const uint8_t t[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t));
}
static inline aes_v v_shuf(aes_v x, aes_v idx)
{
    return _mm256_shuffle_epi8(x, idx);
}
#define v_srl64(x, n) _mm256_srli_epi64(x, n)
#define v_sll64(x, n) _mm256_slli_epi64(x, n)

#include "aes_bs.h"

static int aes_avx2_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_AVX2) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_avx2);
AES_BS_IMPL(aes_avx2, "avx2", 110, aes_avx2_available, &aes_ssse3);
