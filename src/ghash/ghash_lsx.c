/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH on LoongArch LSX, which has no carry-less multiplication: ghash_ref's
 * products with holes (the top of ghash_ref.c), two at a time in vmul.d's
 * two 64-bit lanes. Built with -mlsx.
 *
 * A 64x64 carry-less product's low word is clmul64_lo(a, b) in ghash_ref.c:
 * each operand split into its four residues of bit position mod 4 (every
 * fourth bit), the sixteen residue products summed by XOR per residue of
 * the result, and each sum masked to its residue. Its high word is the low
 * word of the product of the bit-reversed operands, reversed and shifted
 * right by one. So an operand here is the vector {a, reverse(a)} and the key
 * {b, reverse(b)}: one vmul.d makes one residue product for both words.
 *
 * Everything after the multiplications is linear over XOR, so it waits for
 * the end of a fold: the residue sums of AGG blocks' products (each block
 * times its own power of H, Karatsuba's three 64x64 products a block) are
 * XORed into twelve accumulators, and only then masked, the reversed lanes
 * reversed back, Karatsuba's middle term corrected and the sum reduced
 * (ghash_reduce_words), once per fold. The key's residues are split once, at
 * init; a block costs its loads and bit reversal, 12 ANDs for its residues,
 * 48 multiplications and 48 XORs.
 *
 * Constant time: integer multiplications, shifts, logic and vshuf.b (a
 * register permutation; the per-byte bit reversal looks nibbles up in a
 * register, not in memory). No branch or address depends on data or key.
 */
#include "ghash.h"

#include "../bytes.h"

#include <lsxintrin.h>
#include <string.h>

/* Blocks per reduction in lsx (lsx-1 takes one): the key's 4 powers of H,
 * split, fill the key area (4 x 3 x 4 vectors of 16 bytes). */
#define AGG 4

typedef struct lsx_u128 {
    uint64_t hi, lo;
} lsx_u128;

/* One power of H: for each of Karatsuba's three operands (the low word,
 * the high word, their XOR) the vector {w, reverse(w)} split into its four
 * residues. */
typedef struct lsx_power {
    __m128i res[3][4];
} lsx_power;

/* pow[i] = H^(AGG - i), descending as in the other backends: a run of n
 * blocks starts at pow[AGG - n]. */
typedef struct lsx_key {
    lsx_power pow[AGG];
} lsx_key;
_Static_assert(sizeof(lsx_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

/* The residues' masks: bits 0, 4, 8, ... shifted by r. */
static inline __m128i residue_mask(int r)
{
    return __lsx_vreplgr2vr_d((long)(0x1111111111111111ull << r));
}

static inline void split_residues(__m128i out[4], __m128i x)
{
    for (int r = 0; r < 4; r++)
        out[r] = __lsx_vand_v(x, residue_mask(r));
}

static inline uint64_t bitrev64(uint64_t x)
{
#if defined(__has_builtin) && __has_builtin(__builtin_bitreverse64)
    return __builtin_bitreverse64(x);
#else
    x = (x >> 1 & 0x5555555555555555ull) | (x & 0x5555555555555555ull) << 1;
    x = (x >> 2 & 0x3333333333333333ull) | (x & 0x3333333333333333ull) << 2;
    x = (x >> 4 & 0x0F0F0F0F0F0F0F0Full) | (x & 0x0F0F0F0F0F0F0F0Full) << 4;
    return __builtin_bswap64(x);
#endif
}

/* {w, reverse(w)} from a word in a general register. */
static inline __m128i operand(uint64_t w)
{
    return __lsx_vinsgr2vr_d(__lsx_vreplgr2vr_d((long)w), (long)bitrev64(w), 1);
}

static void power_init(lsx_power *p, lsx_u128 h)
{
    split_residues(p->res[0], operand(h.lo));
    split_residues(p->res[1], operand(h.hi));
    split_residues(p->res[2], operand(h.lo ^ h.hi));
}

/* Unreduced residue sums: z[part][k] collects the products landing on
 * residue k of Karatsuba's part (0 low, 1 high, 2 middle). */
typedef struct lsx_sum {
    __m128i z[3][4];
} lsx_sum;

static inline void sum_zero(lsx_sum *s)
{
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < 4; k++)
            s->z[part][k] = __lsx_vreplgr2vr_d(0);
}

/* s += X * p, X given as its operands lo = {x.lo, reverse(x.lo)} and
 * hi = {x.hi, reverse(x.hi)}. */
static inline void sum_product(lsx_sum *s, const lsx_power *p, __m128i lo, __m128i hi)
{
    __m128i x[3][4];
    split_residues(x[0], lo);
    split_residues(x[1], hi);
    split_residues(x[2], __lsx_vxor_v(lo, hi));
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 4; i++)
                s->z[part][k] = __lsx_vxor_v(s->z[part][k],
                                             __lsx_vmul_d(x[part][i], p->res[part][(k - i) & 3]));
}

/* The sums masked to their residues, the reversed lanes turned back into
 * high words, Karatsuba's middle term corrected, and the 256-bit total
 * reduced. */
static lsx_u128 sum_reduce(const lsx_sum *s)
{
    uint64_t lo[3], hi[3];
    for (int part = 0; part < 3; part++) {
        __m128i c = __lsx_vand_v(s->z[part][0], residue_mask(0));
        for (int k = 1; k < 4; k++)
            c = __lsx_vor_v(c, __lsx_vand_v(s->z[part][k], residue_mask(k)));
        lo[part] = (uint64_t)__lsx_vpickve2gr_d(c, 0);
        hi[part] = bitrev64((uint64_t)__lsx_vpickve2gr_d(c, 1)) >> 1;
    }
    uint64_t mid_lo = lo[2] ^ lo[0] ^ lo[1], mid_hi = hi[2] ^ hi[0] ^ hi[1];
    lsx_u128 r;
    ghash_reduce_words(&r.hi, &r.lo, lo[0], hi[0] ^ mid_lo, lo[1] ^ mid_hi, hi[1]);
    return r;
}

/* a * b in the key form (the Montgomery product), for the powers of H. */
static lsx_u128 lsx_mul(lsx_u128 a, lsx_u128 b)
{
    lsx_power pb;
    lsx_sum s;
    power_init(&pb, b);
    sum_zero(&s);
    sum_product(&s, &pb, operand(a.lo), operand(a.hi));
    lsx_u128 r = sum_reduce(&s);
    kuai_wipe(&pb, sizeof pb);
    return r;
}

/* The key for agg blocks a reduction: pow[agg - k] = H^k, k = 1..agg. */
static inline __attribute__((always_inline)) void lsx_init_agg(unsigned char *hkey,
                                                               const uint8_t h[16], int agg)
{
    lsx_key *k = (lsx_key *)(void *)hkey;
    uint8_t hr[16];
    lsx_u128 pw[AGG];
    kuai_ghash_key_reflect(hr, h);
    pw[agg - 1].hi = load_be64(hr);
    pw[agg - 1].lo = load_be64(hr + 8);
    GHASH_POWERS(pw, agg, lsx_mul);
    for (int i = 0; i < agg; i++)
        power_init(&k->pow[i], pw[i]);
    kuai_wipe(hr, sizeof hr);
    kuai_wipe(pw, sizeof pw);
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
    lsx_sum s;
    sum_zero(&s);
    const lsx_power *p = &k->pow[(size_t)agg - n];
    for (size_t i = 0; i < n; i++) {
        __m128i lo, hi;
        block_operands(&lo, &hi, in + 16 * i);
        if (i == 0) {
            lo = __lsx_vxor_v(lo, operand(acc.lo));
            hi = __lsx_vxor_v(hi, operand(acc.hi));
        }
        sum_product(&s, &p[i], lo, hi);
    }
    return sum_reduce(&s);
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
