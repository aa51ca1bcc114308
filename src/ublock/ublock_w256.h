/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock's wide kernels on 256-bit registers (ublock_bs.h's bitsliced
 * algorithm): uBlock-128 16 blocks a pass (two lanes of 8), uBlock-256 8
 * blocks a pass with one register a plane-half, written once for AVX2
 * (ublock_avx2.c) and LoongArch LASX (ublock_lasx.c) over the 256-bit
 * vocabulary (avx2.h, lasx.h: the in-lane operations of vocab.h and
 * v256_cmpeq8, v256_lanes, v256_perm64, v256_perm32, v256_set32).
 *
 * The including file has included ublock_bs.h's shared part with UB_V_ISA
 * v256, and defines
 *   UB_W256_ISA      the token in the names (avx2 -> ublock128_avx2_*)
 *   UB_W256_NS128,   passes side by side (ublock_bs.h's UBM_NS) per member
 *   UB_W256_NS256
 *   UB_W256_MEMBER   128 or 256: the member whose kernels this inclusion
 *                    makes (the file includes this once for each, and may
 *                    put its own code between them)
 */
#define UB_W256_PASTE(a, b, c) a##b##c
#define UB_W256_XPASTE(a, b, c) UB_W256_PASTE(a, b, c)
#define UB_W256_FN(member, name) UB_W256_XPASTE(member, UB_W256_ISA, _##name)

#if UB_W256_MEMBER == 128

/* ---- uBlock-128: 16 blocks per pass, drifting layouts ------------------ */

/* What ub128_load makes of a pass whose 16 blocks all equal blk: byte k of
 * r[t] (after the transposition) is 0xff where bit t of byte k of the
 * block is set. Single-key round keys take this instead of 16 copies and a
 * transposition (avx512 does the same with a mask register). */
static inline void UB_W256_FN(ublock128_, load_same)(ub_v x[8], const uint8_t *blk)
{
    ub_v b = v256_row16(blk), r[8];
    for (int t = 0; t < 8; t++) {
        ub_v m = ub_set1_8(1u << t);
        r[t] = v256_cmpeq8(ub_and(b, m), m);
    }
    ub128_planes_from_transposed(x, r);
}

static inline void UB_W256_FN(ublock128_, key_layout)(ub_v x[8], unsigned i)
{
    ub_v p = ub_row(ub128_tab[i & 7][UB128_KEY]);
    for (int j = 0; j < 8; j++)
        x[j] = v256_shuf8(x[j], p);
}

#define UBM_FN(name) UB_W256_FN(ublock128_, name)
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
#define UBM_NS UB_W256_NS128
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_LOAD_SAME(x, blk) UB_W256_FN(ublock128_, load_same)(x, blk)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) UB_W256_FN(ublock128_, key_layout)(x, i)
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

#elif UB_W256_MEMBER == 256

/* ---- uBlock-256: 8 blocks per pass, layout L --------------------------- */

/* Block b is one register (lane 0 = half X0, lane 1 = X1). After the
 * transposition the unpacks give, per lane/half, pairs 0..7 ("lo") and
 * 8..15 ("hi") in split layout; the lane exchange gathers each half. */
static inline void UB_W256_FN(ublock256_, load)(ub_v x[8], const uint8_t *in)
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

static inline void UB_W256_FN(ublock256_, to_blocks)(ub_v r[8], const ub_v x[8])
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

static inline void UB_W256_FN(ublock256_, store)(uint8_t *out, const ub_v x[8])
{
    ub_v r[8];
    UB_W256_FN(ublock256_, to_blocks)(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 32 * b, r[b]);
}

static inline void UB_W256_FN(ublock256_, store_xor)(uint8_t *out, const uint8_t *in,
                                                     const ub_v x[8])
{
    ub_v r[8];
    UB_W256_FN(ublock256_, to_blocks)(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + 32 * b, ub_xor(r[b], ub_loadu(in + 32 * b)));
}

/* PR's dword gather (see ublock_bs.h, layout L) and its inverse. */
#define UB256_PR_DWORDS v256_set32(0, 2, 4, 6, 1, 3, 5, 7)
#define UB256_PR_DWORDS_INV v256_set32(0, 4, 1, 5, 2, 6, 3, 7)

#define UBM_FN(name) UB_W256_FN(ublock256_, name)
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
#define UBM_PERM_R(x, l) v256_shuf8(v256_perm32(x, UB256_PR_DWORDS), ub_row(ub256_tab[UB256_PR]))
#define UBM_PERM_L_INV(x, l) v256_perm64(v256_shuf8(x, ub_row(ub256_tab[UB256_PL_INV])), 0xd8)
#define UBM_PERM_R_INV(x, l)                                                                       \
    v256_perm32(v256_shuf8(x, ub_row(ub256_tab[UB256_PR_INV])), UB256_PR_DWORDS_INV)
#define UBM_LAYOUT_MASK 0u
#define UBM_DRIFT 0
#define UBM_BLOCK 32
#define UBM_PASS 8
#define UBM_NS UB_W256_NS256
#define UBM_LOAD(x, in) UB_W256_FN(ublock256_, load)(x, in)
#define UBM_STORE(out, x) UB_W256_FN(ublock256_, store)(out, x)
#define UBM_STORE_XOR(out, in, x) UB_W256_FN(ublock256_, store_xor)(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ((void)(x), (void)(i))
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

#endif
#undef UB_W256_MEMBER
