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
/* the 24-round members' key setup with the shorter chain
 * (ublock_ks_step.h's short_kx), measured on a Zen 4 (key setup alone
 * 0.90-0.94x). Only here and in the one-key setup of uBlock-128/256 that
 * ublock_avx2_keys4.c holds for this file: ssse3's SSE encoding measured
 * 0.95-1.03x, the several-key setups of ublock_avx2_keys4.c (no
 * UB_KS_SHORT_KX there; four 128/256 keys in two ymm states 1.03-1.04x
 * slower) are bound by their count, and NEON and LSX have yet to be timed
 * on hardware. */
#define UB_KS_SHORT_KX
#include "ublock_expand_nib.h"

#define UB_V_ISA v256
#define UB_V_BYTES 32
/* A 16-byte shuffle row serves both lanes. */
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__                                                                   \
    }

/* ublock_expand_nib_ssse3's key setup, VEX-encoded; uBlock-128/256's
 * unrolled (ublock_avx2_keys4.c). The members spelled out, not
 * ub_expand_nib_any, whose 128/256 loop would be built here too. */
static void ublock_expand_nib_avx2(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    if (c == KUAI_UBLOCK_128_128)
        ub_expand_nib(s, KUAI_UBLOCK_128_128, key);
    else if (c == KUAI_UBLOCK_128_256)
        ublock_avx2_expand1_128_256(s, key);
    else
        ub_expand_nib(s, KUAI_UBLOCK_256_256, key);
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

/* ---- the wide kernels (ublock_w256.h) ------------------------------------ */

#define UB_W256_ISA avx2
#define UB_W256_NS128 2
#define UB_W256_NS256 2
#define UB_W256_MEMBER 128
#include "ublock_w256.h"

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

#define UB_W256_MEMBER 256
#include "ublock_w256.h"

UB_AVX2_MASKS_CALLS(ublock256_avx2_)

/* ---- the low-latency kernel in front (xmm, VEX-encoded) ------------------ */

#define UL_FN(name) ublock_ll_avx2_##name
/* the one-shot kernels' stack overwritten: what their spills need here
 * (ublock_ll_oneshot.h); after one key's blocks in several groups, and
 * where ymm is split, 512: the suite's search, once it knew
 * uBlock-256/256's one-shot forms (2026-12-07), found 8 pieces of them
 * after encryption of 3-32 blocks with 128 or 256, and 1-3 after 2 blocks
 * with KUAI_YMM_SPLIT=1 (Zen 4, gcc 12); none with 512. 512 for every
 * call had cost the short one-shot rows 1.02-1.08x the TSC cycles. */
#define UL_ONESHOT_WIPE 128
#define UL_ONESHOT_WIPE_DEEP 512
/* kuai_impl.stack_bytes: the wide calls reached 4-8 KiB below the generic
 * one-shot path's frame (Zen 4, gcc 12, 2026-12-07); avx512's, 8-12 KiB,
 * take ublock_ll_front.h's 16 KiB */
#define UL_KERNEL_STACK 12288
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
