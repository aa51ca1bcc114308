/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH on LoongArch LSX, which has no carry-less multiplication: ghash_ref's
 * products with holes (the top of ghash_ref.c), two at a time in vmul.d's
 * two 64-bit lanes, one lane a word and the other its bit reversal (the
 * arithmetic: ghash_holes.h). Built with -mlsx.
 *
 * The residue sums of AGG blocks' products (each block times its own power
 * of H, Karatsuba's three 64x64 products a block) are XORed into twelve
 * accumulators, and masked, reversed back, corrected and reduced once per
 * fold. The key's residues are split once, at init; a block costs its
 * loads and bit reversal, 12 ANDs for its residues, 48 multiplications and
 * 48 XORs.
 *
 * Constant time: integer multiplications, shifts, logic and vshuf.b (a
 * register permutation; the per-byte bit reversal looks nibbles up in a
 * register, not in memory). No branch or address depends on data or key.
 */
#include "ghash.h"

#include <lsxintrin.h>
#include <string.h>

#include "../bytes.h"

#define GH_V __m128i
#define GH_AND(a, b) __lsx_vand_v(a, b)
#define GH_OR(a, b) __lsx_vor_v(a, b)
#define GH_XOR(a, b) __lsx_vxor_v(a, b)
#define GH_MUL64(a, b) __lsx_vmul_d(a, b)
#define GH_SPLAT64(c) __lsx_vreplgr2vr_d((long)(c))
#include "ghash_holes.h"

/* Blocks per reduction in lsx (lsx-1 takes one): the key's 4 powers of H,
 * split, fill the key area (4 x 3 x 4 vectors of 16 bytes). */
#define AGG 4
_Static_assert(AGG <= GHASH_LSX_MAX_POWERS, "kuai_ghash_lsx_powers makes at most that many");

/* pow[i] = H^(AGG - i), descending as in the other backends: a run of n
 * blocks starts at pow[AGG - n]. */
typedef struct lsx_key {
    gh_power pow[AGG];
} lsx_key;
_Static_assert(sizeof(lsx_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

/* {w, reverse(w)} from a word in a general register. */
static inline __m128i operand(uint64_t w)
{
    return __lsx_vinsgr2vr_d(__lsx_vreplgr2vr_d((long)w), (long)gh_bitrev64(w), 1);
}

static void power_init(gh_power *p, uint64_t hi, uint64_t lo)
{
    gh_parts(p->res, operand(lo), operand(hi));
}

/* The sum's lanes into gh_finish: lane 0 the low word, lane 1 reversed. */
static void sum_reduce(uint64_t *hi, uint64_t *lo, const gh_sum *s)
{
    uint64_t l[3], rev[3];
    for (int part = 0; part < 3; part++) {
        __m128i c = gh_sum_part(s, part);
        l[part] = (uint64_t)__lsx_vpickve2gr_d(c, 0);
        rev[part] = (uint64_t)__lsx_vpickve2gr_d(c, 1);
    }
    gh_finish(hi, lo, l, rev);
}

typedef struct lsx_u128 {
    uint64_t hi, lo;
} lsx_u128;

/* a * b in the key form (the Montgomery product), for the powers of H. */
static lsx_u128 lsx_mul(lsx_u128 a, lsx_u128 b)
{
    gh_power pb;
    gh_sum s;
    lsx_u128 r;
    power_init(&pb, b.hi, b.lo);
    gh_sum_zero(&s);
    gh_sum_product(&s, &pb, operand(a.lo), operand(a.hi));
    sum_reduce(&r.hi, &r.lo, &s);
    kuai_wipe(&pb, sizeof pb);
    return r;
}

/* hi[agg - k], lo[agg - k] = H^k in the key form, k = 1..agg (agg at most
 * GHASH_LSX_MAX_POWERS): this file's keys, and ghash_lasx.c's. */
void kuai_ghash_lsx_powers(uint64_t *hi, uint64_t *lo, const uint8_t h[16], int agg)
{
    uint8_t hr[16];
    lsx_u128 pw[GHASH_LSX_MAX_POWERS];
    kuai_ghash_key_reflect(hr, h);
    pw[agg - 1].hi = load_be64(hr);
    pw[agg - 1].lo = load_be64(hr + 8);
    GHASH_POWERS(pw, agg, lsx_mul);
    for (int i = 0; i < agg; i++) {
        hi[i] = pw[i].hi;
        lo[i] = pw[i].lo;
    }
    kuai_wipe(hr, sizeof hr);
    kuai_wipe(pw, sizeof pw);
}

/* The key for agg blocks a reduction: pow[agg - k] = H^k, k = 1..agg. */
static inline __attribute__((always_inline)) void lsx_init_agg(unsigned char *hkey,
                                                               const uint8_t h[16], int agg)
{
    lsx_key *k = (lsx_key *)(void *)hkey;
    if (agg == 1) { /* H alone: no products, nothing to gather */
        uint8_t hr[16];
        kuai_ghash_key_reflect(hr, h);
        power_init(&k->pow[0], load_be64(hr), load_be64(hr + 8));
        kuai_wipe(hr, sizeof hr);
        return;
    }
    uint64_t hi[AGG], lo[AGG];
    kuai_ghash_lsx_powers(hi, lo, h, agg);
    for (int i = 0; i < agg; i++)
        power_init(&k->pow[i], hi[i], lo[i]);
    kuai_wipe(hi, sizeof hi);
    kuai_wipe(lo, sizeof lo);
}

/* A block as on the wire to its two operands. Read as a big-endian integer
 * the block is the reflected element x: the bytes reversed put x.lo in
 * lane 0 and x.hi in lane 1, and each byte's bits reversed in place give
 * reverse(x.hi) in lane 0 and reverse(x.lo) in lane 1 (the big-endian word
 * of bytes b0..b7 reversed is the little-endian word of their reversals). */
static inline void block_operands(__m128i *lo, __m128i *hi, const uint8_t *p)
{
    const __m128i rev_bytes =
        (__m128i)(v16i8){15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    /* a nibble's bits reversed, in the high nibble and in the low one */
    const __m128i rev_nib_hi = (__m128i)(v16u8){0x00, 0x80, 0x40, 0xC0, 0x20, 0xA0, 0x60, 0xE0,
                                                0x10, 0x90, 0x50, 0xD0, 0x30, 0xB0, 0x70, 0xF0};
    const __m128i rev_nib_lo = __lsx_vsrli_b(rev_nib_hi, 4);
    __m128i w = __lsx_vld((const void *)p, 0);
    __m128i v = __lsx_vshuf_b(w, w, rev_bytes);
    __m128i r = __lsx_vor_v(__lsx_vshuf_b(rev_nib_hi, rev_nib_hi, __lsx_vandi_b(w, 15)),
                            __lsx_vshuf_b(rev_nib_lo, rev_nib_lo, __lsx_vsrli_b(w, 4)));
    *lo = __lsx_vextrins_d(v, r, 0x11);                        /* {v.d0, r.d1} */
    *hi = __lsx_vextrins_d(__lsx_vshuf4i_w(r, 0x4e), v, 0x01); /* {v.d1, r.d0} */
}

/* n (1..agg) blocks folded into acc with one reduction: X_i * H^(n - i),
 * acc added to the first block. */
static inline __attribute__((always_inline)) lsx_u128
lsx_fold(const lsx_key *k, int agg, lsx_u128 acc, const uint8_t *in, size_t n)
{
    gh_sum s;
    gh_sum_zero(&s);
    const gh_power *p = &k->pow[(size_t)agg - n];
    for (size_t i = 0; i < n; i++) {
        __m128i lo, hi;
        block_operands(&lo, &hi, in + 16 * i);
        if (i == 0) {
            lo = __lsx_vxor_v(lo, operand(acc.lo));
            hi = __lsx_vxor_v(hi, operand(acc.hi));
        }
        gh_sum_product(&s, &p[i], lo, hi);
    }
    sum_reduce(&acc.hi, &acc.lo, &s);
    return acc;
}

static inline __attribute__((always_inline)) void
lsx_update_agg(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks, int agg)
{
    const lsx_key *k = (const lsx_key *)(const void *)hkey;
    lsx_u128 acc = {load_be64(y), load_be64(y + 8)};
    for (; nblocks >= (size_t)agg; nblocks -= (size_t)agg, in += 16 * (size_t)agg)
        acc = lsx_fold(k, agg, acc, in, (size_t)agg);
    if (nblocks)
        acc = lsx_fold(k, agg, acc, in, nblocks);
    store_be64(y, acc.hi);
    store_be64(y + 8, acc.lo);
}

static void lsx_init(unsigned char *hkey, const uint8_t h[16])
{
    lsx_init_agg(hkey, h, AGG);
}

static void lsx_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks)
{
    lsx_update_agg(hkey, y, in, nblocks, AGG);
}

/* One power, one block a reduction: init is H's residues alone, where the
 * three products for H^2..H^4 cost more than a few blocks save with them
 * (AES-128-GCM of 16 bytes under QEMU: docs/performance.md). */
static void lsx1_init(unsigned char *hkey, const uint8_t h[16])
{
    lsx_init_agg(hkey, h, 1);
}

static void lsx1_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks)
{
    lsx_update_agg(hkey, y, in, nblocks, 1);
}

static int lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

/* Above ref; lsx-1 below lsx, so that lsx serves messages of many blocks
 * and lsx-1 (fewest powers) short ones (kuai_ghash_short). */
KUAI_REGISTER_GHASH(ghash_lsx);
const ghash_impl ghash_lsx = {
    .priority = 100,
    .name = "lsx",
    .available = lsx_available,
    .powers = AGG,
    .init = lsx_init,
    .update = lsx_update,
};

KUAI_REGISTER_GHASH(ghash_lsx1);
const ghash_impl ghash_lsx1 = {
    .priority = 90,
    .name = "lsx-1",
    .available = lsx_available,
    .powers = 1,
    .init = lsx1_init,
    .update = lsx1_update,
};
