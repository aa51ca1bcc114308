/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, AVX2 backend: the bitsliced algorithm of ublock_bs.h on ymm
 * registers. uBlock-128 runs 16 blocks per pass (two lanes of 8),
 * uBlock-256 runs 8 blocks per pass with one ymm per plane-half.
 * Compiled with -mavx2 for this file only; chosen at run time.
 */
#include "ublock.h"

#include <string.h>

#include "../simd/avx2.h" /* the wide kernels */
#include "../simd/sse.h"  /* the low-latency kernel (VEX-encoded here) */
#include "ublock_expand_nib.h"

#define UB_V_ISA v256
#define UB_V_BYTES 32
/* A 16-byte shuffle row serves both lanes. */
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__                                                                   \
    }

/* ublock_expand_nib_ssse3's key setup, VEX-encoded */
static void ublock_expand_nib_avx2(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    ub_expand_nib_any(s, c, key);
}
#define UB_KEY_SETUP ublock_expand_nib_avx2
/* two keys side by side (kuai_key_init_multi): one per ymm lane, or two
 * xmm schedules where ymm is split (ublock_avx2_keys4.c; not uBlock-256/256,
 * whose two xmm states spill: Zen 1, two keys 295 -> 322 cycles) */
static void ublock_expand_nib2_avx2(ublock_sched *s0, ublock_sched *s1, kuai_cipher c,
                                    const uint8_t *key0, const uint8_t *key1)
{
    if (kuai_cpu_ymm_split() && c != KUAI_UBLOCK_256_256) {
        ublock_avx2_expand2x(s0, s1, c, key0, key1);
        return;
    }
    ub_expand_nib2_any(s0, s1, c, key0, key1);
}
#define UB_KEY_SETUP2 ublock_expand_nib2_avx2
/* four keys: ublock_avx2_keys4.c */
#define UB_EXPAND4_EXT ublock_avx2_expand4
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
    ub_v b = v256_row16(blk), r[8];
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
        x[j] = v256_shuf8(x[j], p);
}

#define UBM_FN(name) ublock128_avx2_##name
#define UBM_H __m256i
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
#define UBM_NS 2
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_LOAD_SAME(x, blk) ublock128_avx2_load_same(x, blk)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ublock128_avx2_key_layout(x, i)
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ECB and CTR of the wide kernel W under masks the avx512 backend's key
 * built (the same AVX2 rows: ublock_avx512.c), and W's multi-key setup,
 * for the calls and batches one pass holds on a CPU that splits zmm
 * (ublock.h) */
#define UB_AVX2_MASKS_CALLS(W)                                                                     \
    void W##crypt_masks(const void *rk, unsigned rounds, const uint8_t *in, uint8_t *out,          \
                        size_t n, int enc)                                                         \
    {                                                                                              \
        W##crypt(rk, rounds, in, out, n, enc);                                                     \
    }                                                                                              \
    void W##ctr_masks(const void *rk, unsigned rounds, uint8_t *ctr, const uint8_t *in,            \
                      uint8_t *out, size_t n)                                                      \
    {                                                                                              \
        W##ctr_crypt(rk, rounds, ctr, in, out, n);                                                 \
    }                                                                                              \
    void W##mk_setup_masks(kuai_mk *m, const kuai_key *const *keys, size_t n)                      \
    {                                                                                              \
        W##mk_setup(m, keys, n);                                                                   \
    }
UB_AVX2_MASKS_CALLS(ublock128_avx2_)

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
        x[j] = v256_shuf8(_mm256_permute2x128_si256(lo, hi, 0x20), to_l);
        x[4 + j] = v256_shuf8(_mm256_permute2x128_si256(lo, hi, 0x31), to_l);
    }
}

static inline void ublock256_avx2_to_blocks(ub_v r[8], const ub_v x[8])
{
    ub_v from_l = ub_row(ub256_tab[UB256_FROM_L]);
    for (int j = 0; j < 4; j++) {
        ub_v a = v256_shuf8(x[j], from_l), b = v256_shuf8(x[4 + j], from_l);
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
#define UBM_ROT(x, l, row) v256_shuf8(x, ub_row(ub256_tab[row]))
#define UBM_ROT1 UB256_ROT1
#define UBM_ROT2 UB256_ROT2
#define UBM_ROT5 UB256_ROT5
#define UBM_PERM_L(x, l) v256_shuf8(_mm256_permute4x64_epi64(x, 0xd8), ub_row(ub256_tab[UB256_PL]))
#define UBM_PERM_R(x, l)                                                                           \
    v256_shuf8(_mm256_permutevar8x32_epi32(x, UB256_PR_DWORDS), ub_row(ub256_tab[UB256_PR]))
#define UBM_PERM_L_INV(x, l)                                                                       \
    _mm256_permute4x64_epi64(v256_shuf8(x, ub_row(ub256_tab[UB256_PL_INV])), 0xd8)
#define UBM_PERM_R_INV(x, l)                                                                       \
    _mm256_permutevar8x32_epi32(v256_shuf8(x, ub_row(ub256_tab[UB256_PR_INV])), UB256_PR_DWORDS_INV)
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

UB_AVX2_MASKS_CALLS(ublock256_avx2_)

/* ---- the low-latency kernel in front (xmm, VEX-encoded) ------------------ */

#define UL_FN(name) ublock_ll_avx2_##name
#define UL_Y /* and the ymm form: uBlock-128 groups of 2 and 4, uBlock-256 pairs */
/* Where ymm runs whole, 3-4 uBlock-256/256 blocks run as two pairs side
 * by side (ublock_ll.h's g2), and 5 blocks took 801 TSC cycles there
 * against a pass's ~671 (Xeon, Sapphire Rapids class, 2026-12-01): below
 * 5. Where it is split, the crossovers below. */
enum { ublock128_avx2_crossover_yfull = 9, ublock256_avx2_crossover_yfull = 5 };
#define UL_FRONT_X(W, X) (kuai_cpu_ymm_split() ? (X) : W##crossover_yfull)
#include "ublock_ll.h"

/* Crossovers (blocks), from kuai_bench --mode paper's crossover rows on a
 * Zen 1 EPYC (docs/performance.md): uBlock-128 below 9 (a wide pass is 16
 * blocks; 128/256 measured 8, one setting serves both; both again on
 * 2026-11-29), uBlock-256/256 below 6 (a pass is 8; 5 until 2026-11-29,
 * when 5 blocks encrypted in 1,367 TSC cycles against the pass's 1,535
 * and decrypted in 1,515 against 1,490). */
/* Tails that join a whole pass (a pass runs beside another; ublock_ll_front.h):
 * ECB of 16 + r blocks (8 + r for 256/256) on a Xeon (Sapphire Rapids
 * class, 2026-12-01), lowest of 31 x 1,000 calls, TSC cycles, the tail on
 * this kernel against in a pair of passes: uBlock-128/128 r = 6 643
 * against 670, 7 702 against 673; 128/256 6 925 against 958, 7 1,010
 * against 960 (with ublock_ll.h's groups of 8; 4 and 5 before them);
 * 256/256 2 979 against 1,168, 3 1,268 against 1,170. */

UL_FRONT(ublock128_avx2_, 9, 16, 2, 7)
UL_FRONT(ublock256_avx2_, 6, 8, 2, 3)
UL_NARROW_IMPL(ublock128_avx2_ll, "avx2", KUAI_FAMILY_UBLOCK128, ublock_avx2_available);
UL_NARROW_IMPL(ublock256_avx2_ll, "avx2", KUAI_FAMILY_UBLOCK256, ublock_avx2_available);

/* ---- backend tables ------------------------------------------------------ */

/* Above SSSE3, below AVX-512. The last argument: multi-key CBC encryption
 * of at most that many streams runs on the low-latency kernel (0: its 8
 * lanes), from kuai_cbc_encrypt_multi over n streams of 64 KiB on a Xeon
 * (AVX-512 class, 2026-12-01), TSC cycles per byte: uBlock-128 9 streams
 * 3.15 wide against 3.16 narrow; uBlock-256/256 4 streams 5.29 wide
 * against 4.85, 5 streams 4.35 against 5.83 (the narrow kernel holds 2
 * chains a pass, the wide one 8): at most 4. cbcw, kuai_cbc_encrypt_multi
 * of 33 streams of nb blocks, wide against narrow (Xeon, TSC cycles per
 * byte): uBlock-128/128 nb 32 3.68 against 3.07, 64 2.84 against 2.96;
 * 128/256 48 4.44 against 4.41; 256/256 32 5.82 against 5.24, 64 4.33
 * against 5.15: 48 and 40 blocks a stream. */
KUAI_REGISTER(ublock128_avx2);
UL_IMPL(ublock128_avx2, "avx2", KUAI_FAMILY_UBLOCK128, 200, ublock_avx2_available, ublock128_avx2_,
        16, &ublock128_avx2_ll, 0, 48);
KUAI_REGISTER(ublock256_avx2);
UL_IMPL(ublock256_avx2, "avx2", KUAI_FAMILY_UBLOCK256, 200, ublock_avx2_available, ublock256_avx2_,
        8, &ublock256_avx2_ll, 4, 40);
