/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH's products with holes on vectors of 64-bit lanes (ghash_ref.c's
 * clmul64_lo, several at a time), for ISAs without a carry-less
 * multiplication: ghash_lsx.c (128-bit, one block a product) and
 * ghash_lasx.c (256-bit, two). An operand lane pair is {w, reverse(w)}: the
 * low word of a lane's product is the carry-less product's low word, and
 * the reversed lane's, reversed and shifted right by one, its high word
 * (ghash_ref.c). Each of Karatsuba's three parts (low words, high words,
 * their XOR) is split into the four residues of bit position mod 4; the
 * sixteen residue products of a part are XORed into four accumulators,
 * and everything after the multiplications is linear, so the masking, the
 * reversal back, Karatsuba's correction and the reduction wait for the end
 * of a fold of several blocks.
 *
 * The including file defines GH_V (the vector type), GH_AND, GH_OR,
 * GH_XOR, GH_MUL64 (lane-wise 64-bit product, low word) and GH_SPLAT64
 * (a 64-bit constant in every lane), then includes this once.
 */
#ifndef KUAI_GHASH_HOLES_H
#define KUAI_GHASH_HOLES_H

#include "ghash.h"

/* A key power's three parts, each split into its residues. */
typedef struct gh_power {
    GH_V res[3][4];
} gh_power;

/* Unreduced residue sums: z[part][k] collects the products landing on
 * residue k of Karatsuba's part (0 low, 1 high, 2 middle). */
typedef struct gh_sum {
    GH_V z[3][4];
} gh_sum;

/* The residues' masks: bits 0, 4, 8, ... shifted by r. */
static inline GH_V gh_residue_mask(int r)
{
    return GH_SPLAT64(0x1111111111111111ull << r);
}

static inline void gh_split(GH_V out[4], GH_V x)
{
    for (int r = 0; r < 4; r++)
        out[r] = GH_AND(x, gh_residue_mask(r));
}

/* Karatsuba's three parts from the low words' and high words' operands
 * (the middle one is their XOR: reversal is linear), split. */
static inline void gh_parts(GH_V x[3][4], GH_V lo, GH_V hi)
{
    gh_split(x[0], lo);
    gh_split(x[1], hi);
    gh_split(x[2], GH_XOR(lo, hi));
}

static inline void gh_sum_zero(gh_sum *s)
{
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < 4; k++)
            s->z[part][k] = GH_SPLAT64(0);
}

/* s += X * p, lane by lane, X given as its operands lo and hi. */
static inline void gh_sum_product(gh_sum *s, const gh_power *p, GH_V lo, GH_V hi)
{
    GH_V x[3][4];
    gh_parts(x, lo, hi);
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 4; i++)
                s->z[part][k] =
                    GH_XOR(s->z[part][k], GH_MUL64(x[part][i], p->res[part][(k - i) & 3]));
}

/* Part part's sums masked to their residues: per lane pair, the product's
 * low word and its reversed high word (gh_finish). */
static inline GH_V gh_sum_part(const gh_sum *s, int part)
{
    GH_V c = GH_AND(s->z[part][0], gh_residue_mask(0));
    for (int k = 1; k < 4; k++)
        c = GH_OR(c, GH_AND(s->z[part][k], gh_residue_mask(k)));
    return c;
}

static inline uint64_t gh_bitrev64(uint64_t x)
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

/* From each part's low word lo[part] and reversed high word rev[part] (the
 * lane pairs of gh_sum_part, XORed together where a vector has several):
 * the high words, Karatsuba's middle term corrected, the 256-bit sum
 * reduced into *hi, *lo. */
static inline void gh_finish(uint64_t *hi, uint64_t *lo, const uint64_t l[3], const uint64_t rev[3])
{
    uint64_t h[3];
    for (int part = 0; part < 3; part++)
        h[part] = gh_bitrev64(rev[part]) >> 1;
    uint64_t mid_lo = l[2] ^ l[0] ^ l[1], mid_hi = h[2] ^ h[0] ^ h[1];
    ghash_reduce_words(hi, lo, l[0], h[0] ^ mid_lo, l[1] ^ mid_hi, h[1]);
}

#endif
