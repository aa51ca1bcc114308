/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, AVX2 backend: the bitsliced algorithm of ublock_bs.h on ymm
 * registers. uBlock-128 runs 16 blocks per pass (two lanes of 8),
 * uBlock-256 runs 8 blocks per pass with one ymm per plane-half.
 * Compiled with -mavx2 for this file only; chosen at run time.
 */
#include "ublock.h"
#include "ublock_ks_x86.h"

#include <immintrin.h>
#include <string.h>

typedef __m256i ub_v;
#define UB_V_BYTES 32
/* A 16-byte shuffle row serves both lanes. */
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__                                                                   \
    }

#define ub_xor(a, b) _mm256_xor_si256(a, b)
#define ub_and(a, b) _mm256_and_si256(a, b)
#define ub_or(a, b) _mm256_or_si256(a, b)
#define ub_andn(a, b) _mm256_andnot_si256(a, b)
#define ub_srl64(x, n) _mm256_srli_epi64(x, n)
#define ub_sll64(x, n) _mm256_slli_epi64(x, n)
#define ub_set1_8(c) _mm256_set1_epi8((char)(c))
#define ub_unpacklo64(a, b) _mm256_unpacklo_epi64(a, b)
#define ub_unpackhi64(a, b) _mm256_unpackhi_epi64(a, b)
#define ub_loadu(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ub_storeu(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
#define ub_row(p) _mm256_load_si256((const __m256i *)(const void *)(p))
#define ub_ones() _mm256_set1_epi32(-1)

/* every x86-64 CPU with this ISA has SSSE3 */
#define UB_EXPAND_RAW ublock_expand_raw_ssse3
#include "ublock_bs.h"

static int ublock_avx2_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_AVX2) != 0;
}

/* ---- uBlock-128: 16 blocks per pass, drifting layouts ------------------ */

/* What ub128_load makes of a pass whose 16 blocks all equal blk: byte k of
 * r[t] (after the transposition) is 0xff where bit t of byte k of the
 * block is set. Single-key round keys take this instead of 16 copies and a
 * transposition (avx512 does the same with a mask register). */
static inline void ublock128_avx2_load_same(ub_v x[8], const uint8_t *blk)
{
    ub_v b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)blk)), r[8];
    for (int t = 0; t < 8; t++) {
        ub_v m = ub_set1_8(1u << t);
        r[t] = _mm256_cmpeq_epi8(ub_and(b, m), m);
    }
    ub128_planes_from_transposed(x, r);
}

static inline void ublock128_avx2_key_layout(ub_v x[8], unsigned i)
{
    ub_v p = ub_row(ub128_tab[i & 7][UB128_KEY]);
    for (int j = 0; j < 8; j++)
        x[j] = _mm256_shuffle_epi8(x[j], p);
}

#define UBM_FN(name) ublock128_avx2_##name
#define UBM_H __m256i
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) _mm256_shuffle_epi8(x, ub_row(ub128_tab[l][row]))
#define UBM_ROT1 UB128_ROT1
#define UBM_ROT2 UB128_ROT2
#define UBM_ROT5 UB128_ROT5
#define UBM_PERM_L(x, l) (x)
#define UBM_PERM_R(x, l) _mm256_shuffle_epi8(x, ub_row(ub128_tab[l][UB128_FIX]))
#define UBM_PERM_L_INV(x, l) (x)
#define UBM_PERM_R_INV(x, l) _mm256_shuffle_epi8(x, ub_row(ub128_tab[l][UB128_FIX_INV]))
#define UBM_LAYOUT_MASK 7u
#define UBM_DRIFT 1
#define UBM_BLOCK 16
#define UBM_PASS 16
#define UBM_NS 2
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_LOAD_SAME(x, blk) ublock128_avx2_load_same(x, blk)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ublock128_avx2_key_layout(x, i)
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ---- uBlock-256: 8 blocks per pass, layout L --------------------------- */

/* Block b is one ymm (lane 0 = half X0, lane 1 = X1). After the
 * transposition the unpacks give, per lane/half, pairs 0..7 ("lo") and
 * 8..15 ("hi") in split layout; the lane exchange gathers each half. */
static inline void ublock256_avx2_load(ub_v x[8], const uint8_t *in)
{
    ub_v r[8];
    ub_v to_l = ub_row(ub256_tab[UB256_TO_L]);
    for (int b = 0; b < 8; b++)
        r[b] = ub_loadu(in + 32 * b);
    ub_transpose8(r);
    for (int j = 0; j < 4; j++) {
        ub_v lo = ub_unpacklo64(r[j + 4], r[j]), hi = ub_unpackhi64(r[j + 4], r[j]);
        x[j] = _mm256_shuffle_epi8(_mm256_permute2x128_si256(lo, hi, 0x20), to_l);
        x[4 + j] = _mm256_shuffle_epi8(_mm256_permute2x128_si256(lo, hi, 0x31), to_l);
    }
}

static inline void ublock256_avx2_to_blocks(ub_v r[8], const ub_v x[8])
{
    ub_v from_l = ub_row(ub256_tab[UB256_FROM_L]);
    for (int j = 0; j < 4; j++) {
        ub_v a = _mm256_shuffle_epi8(x[j], from_l), b = _mm256_shuffle_epi8(x[4 + j], from_l);
        ub_v lo = _mm256_permute2x128_si256(a, b, 0x20), hi = _mm256_permute2x128_si256(a, b, 0x31);
        r[j + 4] = ub_unpacklo64(lo, hi);
        r[j] = ub_unpackhi64(lo, hi);
    }
    ub_transpose8(r);
}

static inline void ublock256_avx2_store(uint8_t *out, const ub_v x[8])
{
    ub_v r[8];
    ublock256_avx2_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 32 * b, r[b]);
}

static inline void ublock256_avx2_store_xor(uint8_t *out, const uint8_t *in, const ub_v x[8])
{
    ub_v r[8];
    ublock256_avx2_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 32 * b, ub_xor(r[b], ub_loadu(in + 32 * b)));
}

/* PR's dword gather (see ublock_bs.h, layout L) and its inverse. */
#define UB256_PR_DWORDS _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)
#define UB256_PR_DWORDS_INV _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)

#define UBM_FN(name) ublock256_avx2_##name
#define UBM_H __m256i
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) _mm256_shuffle_epi8(x, ub_row(ub256_tab[row]))
#define UBM_ROT1 UB256_ROT1
#define UBM_ROT2 UB256_ROT2
#define UBM_ROT5 UB256_ROT5
#define UBM_PERM_L(x, l)                                                                           \
    _mm256_shuffle_epi8(_mm256_permute4x64_epi64(x, 0xd8), ub_row(ub256_tab[UB256_PL]))
#define UBM_PERM_R(x, l)                                                                           \
    _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(x, UB256_PR_DWORDS),                           \
                        ub_row(ub256_tab[UB256_PR]))
#define UBM_PERM_L_INV(x, l)                                                                       \
    _mm256_permute4x64_epi64(_mm256_shuffle_epi8(x, ub_row(ub256_tab[UB256_PL_INV])), 0xd8)
#define UBM_PERM_R_INV(x, l)                                                                       \
    _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(x, ub_row(ub256_tab[UB256_PR_INV])),           \
                                UB256_PR_DWORDS_INV)
#define UBM_LAYOUT_MASK 0u
#define UBM_DRIFT 0
#define UBM_BLOCK 32
#define UBM_PASS 8
#define UBM_NS 2
#define UBM_LOAD(x, in) ublock256_avx2_load(x, in)
#define UBM_STORE(out, x) ublock256_avx2_store(out, x)
#define UBM_STORE_XOR(out, in, x) ublock256_avx2_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ((void)(x), (void)(i))
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ---- the low-latency kernel in front (xmm, VEX-encoded) ------------------ */

#define ul_v __m128i
#define ul_xor _mm_xor_si128
#define ul_and _mm_and_si128
#define ul_or _mm_or_si128
#define ul_shuf _mm_shuffle_epi8
#define ul_srl64 _mm_srli_epi64
#define ul_sll64 _mm_slli_epi64
#define ul_set1_8(c) _mm_set1_epi8((char)(c))
#define ul_unpacklo64 _mm_unpacklo_epi64
#define ul_unpackhi64 _mm_unpackhi_epi64
#define ul_unpacklo32 _mm_unpacklo_epi32
#define ul_unpackhi32 _mm_unpackhi_epi32
#define ul_even32(a, b)                                                                            \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(2, 0, 2, 0)))
#define ul_odd32(a, b)                                                                             \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(3, 1, 3, 1)))
#define ul_loadu(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ul_storeu(p, x) _mm_storeu_si128((__m128i *)(void *)(p), x)
#define ul_row(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define UL_FN(name) ublock_ll_avx2_##name
#define UL_KS /* one-shot keys from ublock_ks_x86.h */
#include "ublock_ll.h"

/* Crossovers (blocks), from kuai_bench --mode paper's crossover rows on a
 * Zen 1 EPYC (docs/performance.md): uBlock-128 below 9 (a wide pass is 16
 * blocks; 128/256 measured 8, one setting serves both), uBlock-256/256
 * below 5 (a pass is 8). */
UL_FRONT(ublock128_avx2_, 9, 16)
UL_FRONT(ublock256_avx2_, 5, 8)
UL_NARROW_IMPL(ublock128_avx2_ll, "avx2", KUAI_FAMILY_UBLOCK128, ublock_avx2_available);
UL_NARROW_IMPL(ublock256_avx2_ll, "avx2", KUAI_FAMILY_UBLOCK256, ublock_avx2_available);

/* ---- backend tables ------------------------------------------------------ */

/* Above SSSE3, below AVX-512. */
KUAI_REGISTER(ublock128_avx2);
UL_IMPL(ublock128_avx2, "avx2", KUAI_FAMILY_UBLOCK128, 200, ublock_avx2_available, ublock128_avx2_,
        16, &ublock128_avx2_ll);
KUAI_REGISTER(ublock256_avx2);
UL_IMPL(ublock256_avx2, "avx2", KUAI_FAMILY_UBLOCK256, 200, ublock_avx2_available, ublock256_avx2_,
        8, &ublock256_avx2_ll);
