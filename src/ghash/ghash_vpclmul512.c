/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with VPCLMULQDQ on 512-bit registers (built with -mvpclmulqdq
 * -mpclmul -mavx512f -mavx512bw -mavx512vl): four blocks per register,
 * thirty-two blocks per reduction (ghash_vclmul.h, shared with the 256-bit
 * ghash_vpclmul.c). The 32 registers of AVX-512 hold eight data registers,
 * their products and the accumulators without spilling, and a long
 * aggregation hides the latency of the one reduction that the next group
 * waits for.
 */
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
    .powers = AGG,
    .init = vpclmul512_init,
    .update = vpclmul512_update,
};
