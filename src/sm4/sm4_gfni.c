/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, AVX-512 + GFNI backend: the S-box is two instructions per 64 bytes
 * (sm4_gfni.h).
 *
 * Vector layout, rounds, CTR and multi-key: sm4_simd.h, 16 blocks per zmm
 * group, 8 groups (128 blocks) in flight. Compiled with AVX-512 and GFNI
 * flags for this file only; chosen at run time.
 */
#include "sm4_gfni.h"
#include "sm4.h"

#include <immintrin.h>

typedef __m512i sm4v;
#define SM4V_W 16
/* 128 blocks in flight: a round is ~11 cycles of latency for ~3 of
 * throughput per group; 4 groups run at 6.2 GB/s here, 8 at 7.8. */
#define SM4S_G 8
#define SM4S_MK_G 2

#define sm4v_loadu(p) _mm512_loadu_si512((const void *)(p))
/* the first k (1..4) of the 4 blocks at p, zeros after (sm4_simd.h's
 * partial groups): a masked load, which reads nothing past them (by
 * quadwords: the ISA shim's masked load, tests/shim) */
#define sm4v_load_blocks(p, k) _mm512_maskz_loadu_epi64((__mmask8)((1u << (2 * (k))) - 1), p)
#define sm4v_storeu(p, x) _mm512_storeu_si512((void *)(p), x)
#define sm4v_zero() _mm512_setzero_si512()
#define sm4v_xor(a, b) _mm512_xor_si512(a, b)
#define sm4v_set1(w) _mm512_set1_epi32((int)(w))
#define sm4v_add32(a, b) _mm512_add_epi32(a, b)
#define sm4v_unpacklo32(a, b) _mm512_unpacklo_epi32(a, b)
#define sm4v_unpackhi32(a, b) _mm512_unpackhi_epi32(a, b)
#define sm4v_unpacklo64(a, b) _mm512_unpacklo_epi64(a, b)
#define sm4v_unpackhi64(a, b) _mm512_unpackhi_epi64(a, b)
/* 0x96: three-input XOR. */
#define sm4v_xor3(a, b, c) _mm512_ternarylogic_epi32(a, b, c, 0x96)
/* a ^ b ^ c ^ d with d, the word the previous round just wrote, last. */
#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor3(a, b, c), d)

static inline sm4v sm4v_bswap32(sm4v x)
{
    const __m512i rev =
        _mm512_broadcast_i32x4(_mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12));
    return _mm512_shuffle_epi8(x, rev);
}

/* See sm4_simd.h: position p holds block (p % 4) * 4 + p / 4 of its group. */
static inline sm4v sm4v_lane_blocks(void)
{
    return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

/*
 * The blocks' rounds in the S-box's input form (sm4_gfni.h): y0 ^ N·v ^ c
 * for the S-box input t: two GFNI side by side, an XOR, three vprold and
 * two three-input XORs, of which one GFNI, one vprold and two or three
 * XORs are on the round's chain (one XOR and a GFNI fewer a round than
 * the two affine maps and L's four rotations: 10 operations against 11).
 */
#define SM4_GFNI_AFFINE(x, m, c) _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(m), c)
#define SM4_GFNI_INV(x, m, c) _mm512_gf2p8affineinv_epi64_epi8(x, _mm512_set1_epi64(m), c)

static inline sm4v sm4v_round(sm4v y0, sm4v t)
{
    sm4v c0 = SM4_GFNI_INV(t, SM4_GFNI_C0_MATRIX, 0);
    sm4v c1 = SM4_GFNI_INV(t, SM4_GFNI_C1_MATRIX, SM4_GFNI_C1_CONST);
    sm4v c2 = sm4v_xor(c0, c1);
    sm4v a = sm4v_xor3(y0, c0, _mm512_rol_epi32(c1, 8));
    return sm4v_xor3(a, _mm512_rol_epi32(c1, 16), _mm512_rol_epi32(c2, 24));
}

/*
 * x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane.
 * The carry out of word j is a mask: word 3 wrapped iff it ended below the
 * addend; a carry passes on through every word that became 0.
 */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    const sm4v one = _mm512_set1_epi32(1);
    x[3] = _mm512_add_epi32(_mm512_set1_epi32((int)w[3]), off);
    __mmask16 c = _mm512_cmplt_epu32_mask(x[3], off);
    for (int j = 2; j >= 0; j--) {
        sm4v wj = _mm512_set1_epi32((int)w[j]);
        x[j] = _mm512_mask_add_epi32(wj, c, wj, one);
        c = _mm512_mask_cmpeq_epi32_mask(c, x[j], _mm512_setzero_si512());
    }
}

/* Short calls (one-shot and multi-key) and key setup on xmm, gfni-avx's
 * (sm4.h): one key's schedule is a chain of 32 rounds that a wider
 * register does not shorten, and a short call under 4 keys fills 4 words,
 * not a pass of 16 blocks per key. Hence AVX2 below, which every CPU with
 * AVX-512 and GFNI has. */
#define SM4S_SHORT_FROM sm4_gfni_avx
#define SM4S_EXPAND_FROM sm4_gfni_avx
/* One-shot calls of more blocks than this take key setup and this
 * backend's 16-block kernel (src/modes/oneshot.c's generic path): one
 * key's 10 blocks 811 -> 695 TSC cycles, 16 785 -> 656, 32 1,093 -> 803,
 * where 8 took 615 on the 4-word hook and 672 the other way (Zen 4,
 * scripts/bench-ab, KUAI_AB_LEN; docs/performance.md) */
#define SM4S_ONESHOT_BLOCKS 8

#include "sm4_simd.h"

static int sm4_gfni_available(void)
{
    unsigned need = KUAI_CPU_AVX512 | KUAI_CPU_GFNI | KUAI_CPU_AVX2;
    return (kuai_cpu_features() & need) == need;
}

/* The best x86 S-box: above VAES. */
KUAI_REGISTER(sm4_gfni);
SM4S_IMPLS(sm4_gfni, "gfni", 300, sm4_gfni_available);
