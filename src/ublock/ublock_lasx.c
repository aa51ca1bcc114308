/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, LoongArch LASX backend: the bitsliced algorithm of ublock_bs.h on
 * 256-bit registers as the AVX2 backend runs it (ublock_avx2.c: uBlock-128
 * 16 blocks a pass, two lanes of 8; uBlock-256 8 blocks a pass, one
 * register a plane-half), with LASX's lane and word permutes for AVX2's;
 * in front of it the LSX backend's low-latency kernel and key setup
 * (ublock_ll.h and ublock_expand_nib.h over lsx.h), so short calls cost
 * what they cost on `lsx`. Compiled with -mlasx (which includes LSX) for
 * this file only; chosen from HWCAP_LOONGARCH_LASX.
 */
#include "ublock.h"

#include <string.h>

#include "../simd/lasx.h" /* the wide kernels */
#include "../simd/lsx.h"  /* the low-latency kernel and the key setup */
#include "ublock_expand_nib.h"

#define UB_V_ISA v256
#define UB_V_BYTES 32
/* A 16-byte shuffle row serves both lanes. */
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__                                                                   \
    }

/* key setup: the nibble key schedule, with the low-latency kernel's
 * round-key forms stored (LSX's) */
static void ublock_expand_nib_lasx(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    ub_expand_nib_any(s, c, key);
}
#define UB_KEY_SETUP ublock_expand_nib_lasx
#include "ublock_bs.h"

static int ublock_lasx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LASX) != 0;
}

/* ---- uBlock-128: 16 blocks per pass, drifting layouts ------------------ */

/* ublock_avx2.c's: what ub128_load makes of a pass whose 16 blocks all
 * equal blk, for the single-key round-key masks */
static inline void ublock128_lasx_load_same(ub_v x[8], const uint8_t *blk)
{
    ub_v b = v256_row16(blk), r[8];
    for (int t = 0; t < 8; t++) {
        ub_v m = ub_set1_8(1u << t);
        r[t] = v256_cmpeq8(ub_and(b, m), m);
    }
    ub128_planes_from_transposed(x, r);
}

static inline void ublock128_lasx_key_layout(ub_v x[8], unsigned i)
{
    ub_v p = ub_row(ub128_tab[i & 7][UB128_KEY]);
    for (int j = 0; j < 8; j++)
        x[j] = v256_shuf8(x[j], p);
}

#define UBM_FN(name) ublock128_lasx_##name
#define UBM_H v256
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) v256_shuf8(x, ub_row(ub128_tab[l][row]))
#define UBM_ROT1 UB128_ROT1
#define UBM_ROT2 UB128_ROT2
#define UBM_ROT5 UB128_ROT5
#define UBM_PERM_L(x, l) (x)
#define UBM_PERM_R(x, l) v256_shuf8(x, ub_row(ub128_tab[l][UB128_FIX]))
#define UBM_PERM_L_INV(x, l) (x)
#define UBM_PERM_R_INV(x, l) v256_shuf8(x, ub_row(ub128_tab[l][UB128_FIX_INV]))
#define UBM_LAYOUT_MASK 7u
#define UBM_DRIFT 1
#define UBM_BLOCK 16
#define UBM_PASS 16
/* One pass at a time, as on LSX (ublock_lsx.c: two spilled there) */
#define UBM_NS 1
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_LOAD_SAME(x, blk) ublock128_lasx_load_same(x, blk)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ublock128_lasx_key_layout(x, i)
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ---- uBlock-256: 8 blocks per pass, layout L --------------------------- */

/* ublock_avx2.c's load and store: block b is one register (lane 0 = half
 * X0, lane 1 = X1), transposed, unpacked into pairs 0..7 and 8..15 of each
 * half, the lanes exchanged to gather each half. */
static inline void ublock256_lasx_load(ub_v x[8], const uint8_t *in)
{
    ub_v r[8];
    ub_v to_l = ub_row(ub256_tab[UB256_TO_L]);
    for (int b = 0; b < 8; b++)
        r[b] = ub_loadu(in + 32 * b);
    ub_transpose8(r);
    for (int j = 0; j < 4; j++) {
        ub_v lo = ub_unpacklo64(r[j + 4], r[j]), hi = ub_unpackhi64(r[j + 4], r[j]);
        x[j] = v256_shuf8(v256_lanes(lo, hi, 0x20), to_l);
        x[4 + j] = v256_shuf8(v256_lanes(lo, hi, 0x31), to_l);
    }
}

static inline void ublock256_lasx_to_blocks(ub_v r[8], const ub_v x[8])
{
    ub_v from_l = ub_row(ub256_tab[UB256_FROM_L]);
    for (int j = 0; j < 4; j++) {
        ub_v a = v256_shuf8(x[j], from_l), b = v256_shuf8(x[4 + j], from_l);
        ub_v lo = v256_lanes(a, b, 0x20), hi = v256_lanes(a, b, 0x31);
        r[j + 4] = ub_unpacklo64(lo, hi);
        r[j] = ub_unpackhi64(lo, hi);
    }
    ub_transpose8(r);
}

static inline void ublock256_lasx_store(uint8_t *out, const ub_v x[8])
{
    ub_v r[8];
    ublock256_lasx_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 32 * b, r[b]);
}

static inline void ublock256_lasx_store_xor(uint8_t *out, const uint8_t *in, const ub_v x[8])
{
    ub_v r[8];
    ublock256_lasx_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 32 * b, ub_xor(r[b], ub_loadu(in + 32 * b)));
}

/* PR's dword gather (see ublock_bs.h, layout L) and its inverse. */
static const _Alignas(32) int32_t ub256_lasx_pr_dwords[2][8] = {{0, 2, 4, 6, 1, 3, 5, 7},
                                                                {0, 4, 1, 5, 2, 6, 3, 7}};

#define UBM_FN(name) ublock256_lasx_##name
#define UBM_H v256
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) v256_shuf8(x, ub_row(ub256_tab[row]))
#define UBM_ROT1 UB256_ROT1
#define UBM_ROT2 UB256_ROT2
#define UBM_ROT5 UB256_ROT5
#define UBM_PERM_L(x, l) v256_shuf8(v256_perm64(x, 0xd8), ub_row(ub256_tab[UB256_PL]))
#define UBM_PERM_R(x, l)                                                                           \
    v256_shuf8(v256_perm32(x, v256_load(ub256_lasx_pr_dwords[0])), ub_row(ub256_tab[UB256_PR]))
#define UBM_PERM_L_INV(x, l) v256_perm64(v256_shuf8(x, ub_row(ub256_tab[UB256_PL_INV])), 0xd8)
#define UBM_PERM_R_INV(x, l)                                                                       \
    v256_perm32(v256_shuf8(x, ub_row(ub256_tab[UB256_PR_INV])), v256_load(ub256_lasx_pr_dwords[1]))
#define UBM_LAYOUT_MASK 0u
#define UBM_DRIFT 0
#define UBM_BLOCK 32
#define UBM_PASS 8
#define UBM_NS 1
#define UBM_LOAD(x, in) ublock256_lasx_load(x, in)
#define UBM_STORE(out, x) ublock256_lasx_store(out, x)
#define UBM_STORE_XOR(out, in, x) ublock256_lasx_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ((void)(x), (void)(i))
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ---- the low-latency kernel in front (LSX), and the backend tables ------ */

#define UL_FN(name) ublock_ll_lasx_##name
#include "ublock_ll.h"

/* Crossovers (blocks) and the multi-key CBC limits: LSX's (ublock_v128.h),
 * estimates from instruction counts, not timed on LoongArch hardware
 * (docs/performance.md); a LASX pass (16 uBlock-128 blocks, 8 uBlock-256)
 * takes about the instructions of an LSX one (8 and 8). */
UL_FRONT(ublock128_lasx_, 5, 16, 1, 5)
UL_FRONT(ublock256_lasx_, 5, 8, 1, 5)
UL_NARROW_IMPL(ublock128_lasx_ll, "lasx", KUAI_FAMILY_UBLOCK128, ublock_lasx_available);
UL_NARROW_IMPL(ublock256_lasx_ll, "lasx", KUAI_FAMILY_UBLOCK256, ublock_lasx_available);

/* Above lsx. */
KUAI_REGISTER(ublock128_lasx);
UL_IMPL(ublock128_lasx, "lasx", KUAI_FAMILY_UBLOCK128, 110, ublock_lasx_available, ublock128_lasx_,
        16, &ublock128_lasx_ll, 5, 64);
KUAI_REGISTER(ublock256_lasx);
UL_IMPL(ublock256_lasx, "lasx", KUAI_FAMILY_UBLOCK256, 110, ublock_lasx_available, ublock256_lasx_,
        8, &ublock256_lasx_ll, 4, 32);
