/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, SSSE3: the bitsliced cipher of aes_bs.h on
 * 128-bit vectors, 8 blocks per pass, pshufb for the byte shuffles.
 */
#include <stdint.h>
#include <tmmintrin.h>

typedef __m128i aes_v;
#define AES_V_BYTES 16

static inline aes_v v_loadu(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}
static inline void v_storeu(void *p, aes_v x)
{
    _mm_storeu_si128((__m128i *)p, x);
}
static inline aes_v v_xor(aes_v a, aes_v b)
{
    return _mm_xor_si128(a, b);
}
static inline aes_v v_and(aes_v a, aes_v b)
{
    return _mm_and_si128(a, b);
}
static inline aes_v v_bcast8(uint8_t c)
{
    return _mm_set1_epi8((char)c);
}
static inline aes_v v_lane16(const uint8_t t[16])
{
    return _mm_loadu_si128((const __m128i *)t);
}
static inline aes_v v_shuf(aes_v x, aes_v idx)
{
    return _mm_shuffle_epi8(x, idx);
}
#define v_srl64(x, n) _mm_srli_epi64(x, n)
#define v_sll64(x, n) _mm_slli_epi64(x, n)

#include "aes_bs.h"

static int aes_ssse3_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_SSSE3) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_ssse3);
AES_BS_IMPL(aes_ssse3, "ssse3", 100, aes_ssse3_available, NULL);
