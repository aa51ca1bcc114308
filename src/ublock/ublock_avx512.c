/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, AVX-512 backend: the bitsliced algorithm of ublock_bs.h on zmm
 * registers (F/BW for the rounds, VBMI for the cross-lane byte permutes).
 * Every 128-bit lane is an xmm of the SSSE3 layout, so the uBlock-128
 * template runs unchanged on four lanes: 32 blocks per pass, lane l, bit b
 * being block 4b + l. uBlock-256: each 256-bit half is a ymm of the AVX2
 * layout L (group 0 = low half, group 1 = high half, bit b of group g =
 * block 2b + g), 16 blocks per pass; PL256/PR256, their compositions with
 * R5 and the load/store gathers are one vpermb/vpermt2b each.
 * 32 registers hold three passes side by side (UBM_NS 3: 96 blocks of
 * uBlock-128, 48 of uBlock-256), which the round's dependency chain needs
 * to keep the pipes busy. gcc folds the template's two-operation logic
 * (x ^ (y & z), x ^ y ^ z, the swapmove steps) into vpternlogd, so an
 * S-box costs 4 instructions and no source here names vpternlog.
 *
 * Single-key round keys are the AVX2 ext rows (32 bytes per plane-half,
 * both lane pairs alike), broadcast to 512 bits on load, and are built
 * without a transposition (ub512_transposed_same). Multi-key keys differ
 * per lane and are stored at full width in kuai_mk (second template
 * instantiation, *_mkw_*; mk_lanes = one pass: 32 resp. 16).
 * Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vbmi for this file
 * only; chosen at run time.
 */
#include "ublock.h"

#include <immintrin.h>
#include <string.h>

#include "../simd/avx512.h" /* the four-key setup (ub_ksz) */
#include "../simd/sse.h"    /* the nibble key setup (VEX-encoded here) */
/* uBlock-128/256's key setup loop unrolled (ublock_expand_nib_w.h): on
 * the Xeon (Emerald Rapids) its key setup alone 88 -> 77 TSC cycles, two
 * keys in one call 134 -> 122. Only here: unrolled on Zen 1 (avx2,
 * 2026-11-25) the 24-round setups were slower alone and the call after a
 * setup waited longer (docs/performance.md). */
#define UB_KS_UNROLL
#include "ublock_expand_nib.h"

typedef __m512i ub_v;
#define UB_V_BYTES 64
/* A 16-byte shuffle row serves all four lanes. */
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__                                         \
    }

#define ub_xor(a, b) _mm512_xor_si512(a, b)
#define ub_and(a, b) _mm512_and_si512(a, b)
#define ub_or(a, b) _mm512_or_si512(a, b)
#define ub_andn(a, b) _mm512_andnot_si512(a, b)
#define ub_srl64(x, n) _mm512_srli_epi64(x, n)
#define ub_sll64(x, n) _mm512_slli_epi64(x, n)
#define ub_set1_8(c) _mm512_set1_epi8((char)(c))
#define ub_unpacklo64(a, b) _mm512_unpacklo_epi64(a, b)
#define ub_unpackhi64(a, b) _mm512_unpackhi_epi64(a, b)
#define ub_loadu(p) _mm512_loadu_si512((const void *)(p))
#define ub_storeu(p, x) _mm512_storeu_si512((void *)(p), x)
#define ub_row(p) _mm512_load_si512((const void *)(p))
#define ub_ones() _mm512_set1_epi32(-1)

/* The nibble key setup compiled for this file's ISA (VEX/EVEX: three-operand
 * forms; the SSE copy it ran before took 96 TSC cycles for a uBlock-128/256
 * key where this one takes 87, Xeon Emerald Rapids). Its own static copy:
 * exporting avx2's changed how gcc built avx2's own key setup. */
static void ublock_expand_nib_avx512(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    ub_expand_nib_any(s, c, key);
}
#define UB_KEY_SETUP ublock_expand_nib_avx512
/* two keys side by side, one per ymm lane (kuai_key_init_multi) */
static void ublock_expand_nib2_avx512(ublock_sched *s0, ublock_sched *s1, kuai_cipher c,
                                      const uint8_t *key0, const uint8_t *key1)
{
    ub_expand_nib2_any(s0, s1, c, key0, key1);
}
#define UB_KEY_SETUP2 ublock_expand_nib2_avx512
/* four keys side by side, one per zmm lane (kuai_key_init_multi); where
 * zmm is split (cpu.h), two per ymm for uBlock-128, avx2's: Zen 4 (EPYC
 * family 25 model 17), scripts/paper-side-by-side, lowest of 15, TSC
 * cycles, kuai_key_init_multi of 4 keys 206 (zmm) against 147 (avx2's)
 * for 128/128, 275 against 216 for 128/256; 151 against 146 for 256/256
 * (two pairs there either way: left on zmm) */
static void ublock_expand_nib4_avx512(ublock_sched *const s[4], kuai_cipher c,
                                      const uint8_t *const key[4])
{
    if (kuai_cpu_zmm_split() && c != KUAI_UBLOCK_256_256)
        ublock_avx2_expand4y(s, c, key);
    else
        ub_expand_nib4_any(s, c, key);
}
#define UB_KEY_SETUP4 ublock_expand_nib4_avx512
#include "ublock_bs.h"

static int ublock_avx512_available(void)
{
    unsigned f = kuai_cpu_features();
    return (f & KUAI_CPU_AVX512) && (f & KUAI_CPU_AVX512VBMI);
}

/* Single-key round-key planes: one 32-byte AVX2 row, broadcast. */
#define UB512_KGET(p) _mm512_broadcast_i64x4(_mm256_loadu_si256(p))
#define UB512_KPUT(p, x) _mm256_storeu_si256(p, _mm512_castsi512_si256(x))

/*
 * What ub_transpose8 makes of a pass whose blocks are all equal to the
 * block blk (broadcast to every block slot of the zmm): byte k of r[t]
 * is 0xff where bit t of byte k of the block is set. Single-key masks take
 * this instead of a transposition.
 */
static inline void ub512_transposed_same(ub_v r[8], ub_v blk)
{
    for (int t = 0; t < 8; t++)
        r[t] = _mm512_movm_epi8(_mm512_test_epi8_mask(blk, ub_set1_8(1u << t)));
}

/* ---- uBlock-128: 32 blocks per pass, drifting layouts ------------------ */

static inline void ublock128_avx512_load_same(ub_v x[8], const uint8_t *blk)
{
    ub_v r[8];
    ub512_transposed_same(
        r, _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)blk)));
    ub128_planes_from_transposed(x, r);
}

static inline void ublock128_avx512_key_layout(ub_v x[8], unsigned i)
{
    ub_v p = ub_row(ub128_tab[i & 7][UB128_KEY]);
    for (int j = 0; j < 8; j++)
        x[j] = _mm512_shuffle_epi8(x[j], p);
}

#define UBM_FN(name) ublock128_avx512_##name
#define UBM_LAZY_MASKS /* built on first bulk use: short calls never pay for them */
#define UBM_H __m512i
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) _mm512_shuffle_epi8(x, ub_row(ub128_tab[l][row]))
#define UBM_ROT1 UB128_ROT1
#define UBM_ROT2 UB128_ROT2
#define UBM_ROT5 UB128_ROT5
#define UBM_PERM_L(x, l) (x)
#define UBM_PERM_R(x, l) _mm512_shuffle_epi8(x, ub_row(ub128_tab[l][UB128_FIX]))
#define UBM_PERM_L_INV(x, l) (x)
#define UBM_PERM_R_INV(x, l) _mm512_shuffle_epi8(x, ub_row(ub128_tab[l][UB128_FIX_INV]))
#define UBM_LAYOUT_MASK 7u
#define UBM_DRIFT 1
#define UBM_BLOCK 16
#define UBM_PASS 32
#define UBM_NS 3
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ublock128_avx512_key_layout(x, i)
#define UBM_LOAD_SAME(x, blk) ublock128_avx512_load_same(x, blk)
#define UBM_K __m256i
#define UBM_KGET UB512_KGET
#define UBM_KPUT UB512_KPUT
#define UBM_EMIT_MK 0
#define UBM_KEEP_PARAMS
#include "ublock_bs.h"

/* Multi-key: full-width key planes (the lanes carry different keys). */
#define UBM_FN(name) ublock128_avx512_mkw_##name
#define UBM_EMIT_SINGLE 0
#include "ublock_bs.h"

/* ---- uBlock-256: 16 blocks per pass, layout L per 256-bit half ---------- */

/*
 * vpermb/vpermt2b indices (output byte o takes input byte idx[o]; in the
 * two-source form 64..127 name the second source), each the composition of
 * the AVX2 member's operations on a 256-bit half (ublock_avx2.c), so every
 * half of a zmm goes exactly as one ymm there:
 *   PL = pshufb(vpermq 0xd8, UB256_PL row); PR = pshufb(vpermd 0,2,4,6,1,3,
 *   5,7, UB256_PR row); PL_INV/PR_INV the AVX2 inverses in their order.
 *   LOAD_X0/X1 (sources r[j+4], r[j] after the transposition): the 64-bit
 *   unpacks, the gathering of X0 resp. X1 of each group (r[b] holds blocks
 *   2b and 2b+1: lanes 0,1 = X0,X1 of group 0, lanes 2,3 of group 1) and
 *   UB256_TO_L.
 *   STORE_R4/R0 (sources x[j], x[4+j]): the inverse, r[j+4] and r[j].
 *   PL_ROT5, PR_ROT5: UB256_ROT5 then PL resp. PR; ROT5_PL_INV, ROT5_PR_INV:
 *   PL^-1 resp. PR^-1 then UB256_ROT5 (the fused rounds of ublock_bs.h).
 * Built by applying those operations to the identity (byte values 0..127).
 */
enum {
    UB512_256_PL,
    UB512_256_PR,
    UB512_256_PL_INV,
    UB512_256_PR_INV,
    UB512_256_LOAD_X0,
    UB512_256_LOAD_X1,
    UB512_256_STORE_R4,
    UB512_256_STORE_R0,
    UB512_256_PL_ROT5,
    UB512_256_PR_ROT5,
    UB512_256_ROT5_PL_INV,
    UB512_256_ROT5_PR_INV,
    UB512_256_ROWS
};

static const _Alignas(64) uint8_t ub512_256_tab[UB512_256_ROWS][64] = {
    [UB512_256_PL] =
        {
            20, 21, 16, 17, 22, 23, 18, 19, 6,  7,  4,  5,  0,  1,  2,  3,  10, 11, 30, 31, 8,  9,
            24, 25, 28, 29, 12, 13, 26, 27, 14, 15, 52, 53, 48, 49, 54, 55, 50, 51, 38, 39, 36, 37,
            32, 33, 34, 35, 42, 43, 62, 63, 40, 41, 56, 57, 60, 61, 44, 45, 58, 59, 46, 47,
        },
    [UB512_256_PR] =
        {
            8,  9,  0,  1,  18, 19, 26, 27, 24, 25, 16, 17, 2,  3,  10, 11, 12, 13, 30, 31, 6,  7,
            4,  5,  28, 29, 14, 15, 22, 23, 20, 21, 40, 41, 32, 33, 50, 51, 58, 59, 56, 57, 48, 49,
            34, 35, 42, 43, 44, 45, 62, 63, 38, 39, 36, 37, 60, 61, 46, 47, 54, 55, 52, 53,
        },
    [UB512_256_PL_INV] =
        {
            12, 13, 14, 15, 10, 11, 8,  9,  20, 21, 16, 17, 26, 27, 30, 31, 2,  3,  6,  7,  0,  1,
            4,  5,  22, 23, 28, 29, 24, 25, 18, 19, 44, 45, 46, 47, 42, 43, 40, 41, 52, 53, 48, 49,
            58, 59, 62, 63, 34, 35, 38, 39, 32, 33, 36, 37, 54, 55, 60, 61, 56, 57, 50, 51,
        },
    [UB512_256_PR_INV] =
        {
            2,  3,  12, 13, 22, 23, 20, 21, 0,  1,  14, 15, 16, 17, 26, 27, 10, 11, 4,  5,  30, 31,
            28, 29, 8,  9,  6,  7,  24, 25, 18, 19, 34, 35, 44, 45, 54, 55, 52, 53, 32, 33, 46, 47,
            48, 49, 58, 59, 42, 43, 36, 37, 62, 63, 60, 61, 40, 41, 38, 39, 56, 57, 50, 51,
        },
    [UB512_256_LOAD_X0] =
        {
            2,  66,  6,  70,  3,  67,  7,  71,  1,  65,  4,  68,  0,  64,  5,  69,
            9,  73,  12, 76,  8,  72,  13, 77,  11, 75,  15, 79,  10, 74,  14, 78,
            34, 98,  38, 102, 35, 99,  39, 103, 33, 97,  36, 100, 32, 96,  37, 101,
            41, 105, 44, 108, 40, 104, 45, 109, 43, 107, 47, 111, 42, 106, 46, 110,
        },
    [UB512_256_LOAD_X1] =
        {
            18, 82,  22, 86,  19, 83,  23, 87,  17, 81,  20, 84,  16, 80,  21, 85,
            25, 89,  28, 92,  24, 88,  29, 93,  27, 91,  31, 95,  26, 90,  30, 94,
            50, 114, 54, 118, 51, 115, 55, 119, 49, 113, 52, 116, 48, 112, 53, 117,
            57, 121, 60, 124, 56, 120, 61, 125, 59, 123, 63, 127, 58, 122, 62, 126,
        },
    [UB512_256_STORE_R4] =
        {
            12,  8,   0,  4,   10,  14,  2,  6,   20,  16,  28,  24,  18,  22,  30,  26,
            76,  72,  64, 68,  74,  78,  66, 70,  84,  80,  92,  88,  82,  86,  94,  90,
            44,  40,  32, 36,  42,  46,  34, 38,  52,  48,  60,  56,  50,  54,  62,  58,
            108, 104, 96, 100, 106, 110, 98, 102, 116, 112, 124, 120, 114, 118, 126, 122,
        },
    [UB512_256_STORE_R0] =
        {
            13,  9,   1,  5,   11,  15,  3,  7,   21,  17,  29,  25,  19,  23,  31,  27,
            77,  73,  65, 69,  75,  79,  67, 71,  85,  81,  93,  89,  83,  87,  95,  91,
            45,  41,  33, 37,  43,  47,  35, 39,  53,  49,  61,  57,  51,  55,  63,  59,
            109, 105, 97, 101, 107, 111, 99, 103, 117, 113, 125, 121, 115, 119, 127, 123,
        },
    [UB512_256_PL_ROT5] =
        {
            29, 24, 25, 20, 27, 18, 31, 26, 15, 2,  9,  0,  13, 8,  11, 14, 3,  6,  19, 22, 5,  12,
            17, 28, 21, 16, 1,  4,  23, 30, 7,  10, 61, 56, 57, 52, 59, 50, 63, 58, 47, 34, 41, 32,
            45, 40, 43, 46, 35, 38, 51, 54, 37, 44, 49, 60, 53, 48, 33, 36, 55, 62, 39, 42,
        },
    [UB512_256_PR_ROT5] =
        {
            5,  12, 13, 8,  31, 26, 23, 30, 17, 28, 25, 20, 11, 14, 3,  6,  1,  4,  19, 22, 15, 2,
            9,  0,  21, 16, 7,  10, 27, 18, 29, 24, 37, 44, 45, 40, 63, 58, 55, 62, 49, 60, 57, 52,
            43, 46, 35, 38, 33, 36, 51, 54, 47, 34, 41, 32, 53, 48, 39, 42, 59, 50, 61, 56,
        },
    [UB512_256_ROT5_PL_INV] =
        {
            27, 20, 17, 30, 21, 12, 31, 14, 11, 26, 15, 8,  13, 10, 9,  16, 23, 0,  19, 28, 25, 22,
            29, 6,  3,  24, 5,  18, 1,  2,  7,  4,  59, 52, 49, 62, 53, 44, 63, 46, 43, 58, 47, 40,
            45, 42, 41, 48, 55, 32, 51, 60, 57, 54, 61, 38, 35, 56, 37, 50, 33, 34, 39, 36,
        },
    [UB512_256_ROT5_PR_INV] =
        {
            17, 0,  15, 26, 1,  2,  27, 12, 23, 16, 13, 20, 3,  22, 21, 14, 9,  30, 19, 6,  25, 8,
            7,  4,  11, 24, 29, 18, 31, 10, 5,  28, 49, 32, 47, 58, 33, 34, 59, 44, 55, 48, 45, 52,
            35, 54, 53, 46, 41, 62, 51, 38, 57, 40, 39, 36, 43, 56, 61, 50, 63, 42, 37, 60,
        },
};

#define ub512_256_row(i) ub_row(ub512_256_tab[i])

static inline void ublock256_avx512_planes_from_transposed(ub_v x[8], const ub_v r[8])
{
    for (int j = 0; j < 4; j++) {
        x[j] = _mm512_permutex2var_epi8(r[j + 4], ub512_256_row(UB512_256_LOAD_X0), r[j]);
        x[4 + j] = _mm512_permutex2var_epi8(r[j + 4], ub512_256_row(UB512_256_LOAD_X1), r[j]);
    }
}

static inline void ublock256_avx512_load(ub_v x[8], const uint8_t *in)
{
    ub_v r[8];
    for (int b = 0; b < 8; b++)
        r[b] = ub_loadu(in + 64 * b);
    ub_transpose8(r);
    ublock256_avx512_planes_from_transposed(x, r);
}

static inline void ublock256_avx512_load_same(ub_v x[8], const uint8_t *blk)
{
    ub_v r[8];
    ub512_transposed_same(
        r, _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(const void *)blk)));
    ublock256_avx512_planes_from_transposed(x, r);
}

static inline void ublock256_avx512_to_blocks(ub_v r[8], const ub_v x[8])
{
    for (int j = 0; j < 4; j++) {
        r[j + 4] = _mm512_permutex2var_epi8(x[j], ub512_256_row(UB512_256_STORE_R4), x[4 + j]);
        r[j] = _mm512_permutex2var_epi8(x[j], ub512_256_row(UB512_256_STORE_R0), x[4 + j]);
    }
    ub_transpose8(r);
}

static inline void ublock256_avx512_store(uint8_t *out, const ub_v x[8])
{
    ub_v r[8];
    ublock256_avx512_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 64 * b, r[b]);
}

static inline void ublock256_avx512_store_xor(uint8_t *out, const uint8_t *in, const ub_v x[8])
{
    ub_v r[8];
    ublock256_avx512_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 64 * b, ub_xor(r[b], ub_loadu(in + 64 * b)));
}

/* The AVX2 in-lane rows, one per 128-bit lane pair. */
#define ub512_256_rot(x, row)                                                                      \
    _mm512_shuffle_epi8(x, _mm512_broadcast_i64x4(                                                 \
                               _mm256_load_si256((const __m256i *)(const void *)ub256_tab[row])))

#define UBM_FN(name) ublock256_avx512_##name
#define UBM_LAZY_MASKS /* built on first bulk use: short calls never pay for them */
#define UBM_H __m512i
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) ub512_256_rot(x, row)
#define UBM_ROT1 UB256_ROT1
#define UBM_ROT2 UB256_ROT2
#define UBM_ROT5 UB256_ROT5
#define ub512_256_perm(x, row) _mm512_permutexvar_epi8(ub512_256_row(row), x)
#define UBM_PERM_L(x, l) ub512_256_perm(x, UB512_256_PL)
#define UBM_PERM_R(x, l) ub512_256_perm(x, UB512_256_PR)
#define UBM_PERM_L_INV(x, l) ub512_256_perm(x, UB512_256_PL_INV)
#define UBM_PERM_R_INV(x, l) ub512_256_perm(x, UB512_256_PR_INV)
#define UBM_LAYOUT_MASK 0u
#define UBM_DRIFT 0
/* vpermb moves any byte anywhere in a half, so the rounds can take the
 * fused form with composite moves (one vpermb each). Decryption gains (its
 * chain is the bound); encryption loses (vpermb's throughput is: the fused
 * round has four per plane pair, the plain one two) and stays plain. */
#define UBM_FUSED 0
#define UBM_FUSED_DEC 1
#define UBM_OUT_L(x, l) UBM_PERM_L(x, l)
#define UBM_OUT_L_ROT5(x, l) ub512_256_perm(x, UB512_256_PL_ROT5)
#define UBM_OUT_R(x, l) UBM_PERM_R(x, l)
#define UBM_OUT_R_ROT5(x, l) ub512_256_perm(x, UB512_256_PR_ROT5)
#define UBM_IN_L_INV(x, l) UBM_PERM_L_INV(x, l)
#define UBM_IN_L_INV_ROT5(x, l) ub512_256_perm(x, UB512_256_ROT5_PL_INV)
#define UBM_IN_R_INV(x, l) UBM_PERM_R_INV(x, l)
#define UBM_IN_R_INV_ROT5(x, l) ub512_256_perm(x, UB512_256_ROT5_PR_INV)
#define UBM_BLOCK 32
#define UBM_PASS 16
#define UBM_NS 3
#define UBM_LOAD(x, in) ublock256_avx512_load(x, in)
#define UBM_STORE(out, x) ublock256_avx512_store(out, x)
#define UBM_STORE_XOR(out, in, x) ublock256_avx512_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ((void)(x), (void)(i))
#define UBM_LOAD_SAME(x, blk) ublock256_avx512_load_same(x, blk)
#define UBM_K __m256i
#define UBM_KGET UB512_KGET
#define UBM_KPUT UB512_KPUT
#define UBM_EMIT_MK 0
#define UBM_KEEP_PARAMS
#include "ublock_bs.h"

#define UBM_FN(name) ublock256_avx512_mkw_##name
#define UBM_EMIT_SINGLE 0
#include "ublock_bs.h"

/* ---- the low-latency kernel in front: avx2's, EVEX-encoded ------------- */

/*
 * A pass here is 32 blocks of uBlock-128 (16 of uBlock-256/256) and costs
 * the same for one block, so calls and tails below the crossover, CBC
 * encryption, few-stream multi-key calls and the one-shot calls go to the
 * low-latency kernel on ymm (ublock_avx2.c's form, reading the round keys
 * the key setup above stored for it), compiled here: with AVX-512VL the
 * compiler folds its chains of XORs into vpternlogd and has 32 registers.
 * Xeon (Emerald Rapids), kuai_bench --mode paper, medians of 3, TSC
 * cycles, against the VEX copy ublock_avx2.c compiles: 4 blocks under a
 * stored key 220 -> 198 (128/128), 325 -> 291 (128/256), 396 -> 379
 * (256/256); one-shot 4 blocks 262 -> 232, 352 -> 316.
 * Crossovers from the same rows: uBlock-256/256 4 blocks 748 against ~907
 * for a 16-block pass: below 5, as on avx2; below 7 since the zmm pairs
 * and single blocks of round256_next (2026-11-28): 6 blocks 808 against
 * 903, 8 blocks ~1,090 (4 pairs) against 895-920. uBlock-128 below 17: with the
 * zmm groups (UL_Z) 12 blocks cost 397 cycles (128/128), 16 cost 511
 * against ~520-600 for a 32-block pass (128/256: 16 blocks 752 against
 * 746-823); below 9 before them.
 */
#include "../simd/avx2.h"
#include "../simd/avx512.h"

/*
 * Where the CPU splits zmm (kuai_cpu_zmm_split: AMD Zen 4), a 32-block
 * (16-block) zmm pass costs what two 16-block (8-block) ymm passes do, so
 * a remainder that one ymm pass holds runs as avx2's wide kernel under
 * this key's masks (the same AVX2 rows, see above), and the low-latency
 * kernel takes fewer blocks. Zen 4 (EPYC family 25 model 17, TSC 2.6 GHz),
 * kuai_bench --mode paper's crossover rows before this, TSC cycles:
 * uBlock-128/128 a zmm pass 564-582 for 24-32 blocks, avx2's ymm pass 491
 * for 16 and 520 for 12, the low-latency kernel 408 for 8 (ymm), 553 for
 * 12, 727 for 16; 128/256 zmm 794-862, ymm 731-765 for 12-16, low latency
 * 539 for 8, 813 for 12; 256/256 zmm 972-1,050 for 8-16, ymm 760-811 for
 * 3-8, low latency 398 for 2, 671 for 3, 747 for 4, 1,116 for 6.
 */
#define UB512_ZSPLIT(W, Y, P, YP)                                                                  \
    /* r blocks (at most YP) on avx2's kernel: its own function, so that the                       \
     * masks' stack copy is no part of the frames of the calls that do not                         \
     * come here (2-4% on CTR of 4 KiB when it was); op 0 decrypts, 1                              \
     * encrypts, 2 is CTR */                                                                       \
    static __attribute__((noinline)) void W##zsplit_rest(                                          \
        const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out, size_t r, int op)        \
    {                                                                                              \
        __m256i tmp[W##nmasks];                                                                    \
        const __m256i *rk = W##masks(k, tmp);                                                      \
        const unsigned rounds = ublock_sched_const(k)->rounds;                                     \
        if (op == 2)                                                                               \
            Y##ctr_masks(rk, rounds, ctr, in, out, r);                                             \
        else                                                                                       \
            Y##crypt_masks(rk, rounds, in, out, r, op);                                            \
        if (rk == tmp)                                                                             \
            kuai_wipe(tmp, sizeof tmp);                                                            \
    }                                                                                              \
    static inline __attribute__((always_inline)) void W##zsplit_crypt(                             \
        const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n, int enc)                     \
    {                                                                                              \
        void (*const whole)(const kuai_key *, const uint8_t *, uint8_t *, size_t) =                \
            enc ? W##enc_blocks : W##dec_blocks;                                                   \
        size_t r = n % (P), off = (n - r) * ublock_sched_const(k)->nbytes;                         \
        if (!kuai_cpu_zmm_split() || r == 0 || r > (YP)) {                                         \
            whole(k, in, out, n);                                                                  \
            return;                                                                                \
        }                                                                                          \
        if (n > r)                                                                                 \
            whole(k, in, out, n - r);                                                              \
        W##zsplit_rest(k, NULL, in + off, out + off, r, enc);                                      \
    }                                                                                              \
    static void W##zsplit_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n) \
    {                                                                                              \
        W##zsplit_crypt(k, in, out, n, 1);                                                         \
    }                                                                                              \
    static void W##zsplit_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n) \
    {                                                                                              \
        W##zsplit_crypt(k, in, out, n, 0);                                                         \
    }                                                                                              \
    static void W##zsplit_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in,           \
                                     uint8_t *out, size_t n)                                       \
    {                                                                                              \
        size_t r = n % (P), off = (n - r) * ublock_sched_const(k)->nbytes;                         \
        if (!kuai_cpu_zmm_split() || r == 0 || r > (YP)) {                                         \
            W##ctr_blocks(k, ctr, in, out, n);                                                     \
            return;                                                                                \
        }                                                                                          \
        if (n > r)                                                                                 \
            W##ctr_blocks(k, ctr, in, out, n - r);                                                 \
        W##zsplit_rest(k, ctr, in + off, out + off, r, 2);                                         \
    }
UB512_ZSPLIT(ublock128_avx512_, ublock128_avx2_, 32, 16)
UB512_ZSPLIT(ublock256_avx512_, ublock256_avx2_, 16, 8)

/*
 * The multi-key table's functions (prefix Z) over M's full-width ones:
 * where zmm is split, a batch that one of avx2's passes holds (at most YP
 * blocks: the last batch of a multi-key ECB or CBC decryption; a CBC
 * encryption's 13-16 uBlock-128 streams, 7-8 of 256/256, above
 * kuai_impl.mk_cbc_narrow) gets avx2's lane masks and pass, at half the
 * cost of a zmm pass there (Zen 4, kuai_bench cbc-enc-mk16: 1,024 MB/s on
 * avx512's pass, 1,218 on avx2's). Byte 4 of the kuai_mk says which form
 * mk_setup built (public: the batch size and the CPU).
 */
#define UB512_ZSPLIT_MK(Z, M, Y, YP)                                                               \
    enum { Z##mk_bytes = M##mk_bytes };                                                            \
    static void Z##mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)                     \
    {                                                                                              \
        const int y = n <= (YP) && kuai_cpu_zmm_split();                                           \
        if (y)                                                                                     \
            Y##mk_setup_masks(m, keys, n);                                                         \
        else                                                                                       \
            M##mk_setup(m, keys, n);                                                               \
        m->b[4] = (uint8_t)y;                                                                      \
    }                                                                                              \
    static void Z##mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n, int enc)  \
    {                                                                                              \
        unsigned rounds;                                                                           \
        memcpy(&rounds, m->b, sizeof rounds);                                                      \
        if (m->b[4])                                                                               \
            Y##crypt_masks(m->b + 64, rounds, in, out, n, enc);                                    \
        else if (enc)                                                                              \
            M##mk_enc(m, in, out, n);                                                              \
        else                                                                                       \
            M##mk_dec(m, in, out, n);                                                              \
    }                                                                                              \
    static void Z##mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)             \
    {                                                                                              \
        Z##mk_crypt(m, in, out, n, 1);                                                             \
    }                                                                                              \
    static void Z##mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)             \
    {                                                                                              \
        Z##mk_crypt(m, in, out, n, 0);                                                             \
    }
UB512_ZSPLIT_MK(ublock128_avx512_mkz_, ublock128_avx512_mkw_, ublock128_avx2_, 16)
UB512_ZSPLIT_MK(ublock256_avx512_mkz_, ublock256_avx512_mkw_, ublock256_avx2_, 8)
/* Crossovers where zmm is split: ECB of n blocks, KUAI_ZMM_SPLIT=0 (low
 * latency) against 1 (ymm pass), lowest of three alternations of 2,000
 * batches, TSC cycles: uBlock-128/128 10 blocks 481 against 536, 11 520
 * against 539, 12 513 against 542, 13 650 against 546; 128/256 10 731
 * against 741, 11 786 against 744: below 11. uBlock-256/256 4 blocks 705
 * against 744 (the same kernel), 5 975 against 783: below 5. */
enum { ublock128_avx512_crossover_zsplit = 11, ublock256_avx512_crossover_zsplit = 5 };
#define UL_FRONT_X(W, X) (kuai_cpu_zmm_split() ? W##crossover_zsplit : (X))
#define UL_FRONT_XT(W, XT) (kuai_cpu_zmm_split() ? W##crossover_zsplit : (XT))
#define UL_WIDE(W, op) W##zsplit_##op

#define UL_FN(name) ublock_ll_avx512_##name
#define UL_Y
#define UL_Z /* and 4 uBlock-128 blocks as one zmm pair */
/* the one-shot kernels' stack overwritten (ublock_ll_oneshot.h): on Zen 4
 * (gcc 12, 2026-12-07) the search found nothing with none, in this
 * core's forms and, through KUAI_ZEN and KUAI_ZMM_SPLIT, Intel's and Zen
 * 5's; 128 bytes as avx2's, for the margin (512 had cost one key's
 * one-shot calls 1.01-1.06x the TSC cycles, scripts/bench-ab) */
#define UL_ONESHOT_WIPE 128
#define UL_VPERMB256(row) ub512_256_tab[UB512_256_##row] /* PL, PR as vpermb */
#include "ublock_ll.h"
/* Tails that join whole passes in a group of 3 (ublock_ll_front.h): ECB
 * of 32 + r (64 + r) blocks, 16 + r (32 + r) for 256/256, the same host
 * and harness as avx2's (Xeon, Sapphire Rapids class, 2026-12-01), TSC
 * cycles, the tail on this kernel against in the group: uBlock-128/128 r =
 * 12 768 against 814 (1,144 against 1,180), 13 838 against 817 (1,212
 * against 1,184); 128/256 12 1,097 against 1,168, 13 1,212 against 1,174;
 * 256/256 4 1,086 against 1,216 (1,602 against 1,811), 5 1,288 against
 * 1,216 (1,805 against 1,814). Where zmm is split, the split crossover
 * (UL_FRONT_XT above). */
UL_FRONT(ublock128_avx512_, 17, 32, 3, 13)
UL_FRONT(ublock256_avx512_, 7, 16, 3, 5)
UL_NARROW_IMPL(ublock128_avx512_ll, "avx512", KUAI_FAMILY_UBLOCK128, ublock_avx512_available);
UL_NARROW_IMPL(ublock256_avx512_ll, "avx512", KUAI_FAMILY_UBLOCK256, ublock_avx512_available);

/* ---- backend tables ------------------------------------------------------ */

/* Above AVX2. The last argument: multi-key CBC encryption of at most that
 * many streams runs on the low-latency kernel, in groups of 4 (uBlock-128)
 * or 2 (256/256), from kuai_cbc_encrypt_multi over n streams of 64 KiB on
 * a Xeon (2026-12-01), TSC cycles per byte, wide against narrow:
 * uBlock-128/128 9 streams 3.19 against 2.31, 12 2.43 against 1.74, 16
 * 1.88 against 1.75; 128/256 12 3.29 against 2.58, 13 3.10 against 3.14;
 * 256/256 6 3.85 against 3.13, 7 3.36 against 3.85. uBlock-128 stops at
 * 12, not 16: where zmm is split (Zen 4) the 4-chain groups run at 2.97
 * cycles per byte and 16 streams wide at ~2.54 (kuai_bench's
 * cbc-enc-mk16 and paper rows there), so 4 groups lose and 3 win. The
 * last argument (cbcw), 33 streams of nb blocks, wide against narrow:
 * uBlock-128/128 nb 64 1.94 against 1.83, 128 1.53 against 1.80; 128/256
 * 64 2.75 against 2.73, 96 2.36 against 2.72; 256/256 32 4.57 against
 * 3.46, 64 3.10 against 3.38: 80 and 48 blocks a stream. */
KUAI_REGISTER(ublock128_avx512);
UL_IMPL_MK(ublock128_avx512, "avx512", KUAI_FAMILY_UBLOCK128, 300, ublock_avx512_available,
           ublock128_avx512_, ublock128_avx512_mkz_, 32, &ublock128_avx512_ll, 12, 80);
KUAI_REGISTER(ublock256_avx512);
UL_IMPL_MK(ublock256_avx512, "avx512", KUAI_FAMILY_UBLOCK256, 300, ublock_avx512_available,
           ublock256_avx512_, ublock256_avx512_mkz_, 16, &ublock256_avx512_ll, 6, 48);
