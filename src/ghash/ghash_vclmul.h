/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH on VPCLMULQDQ, the part that is the same at every register width:
 * the key layout and its setup, the steady-state fold of AGG blocks with
 * one reduction, and update. ghash_vpclmul.c (256-bit) and
 * ghash_vpclmul512.c (512-bit) include it once; the arithmetic is the
 * reflected Montgomery form of ghash_ref.c, the 128-bit steps are
 * ghash_clmul.h's.
 *
 * Each block is multiplied by its own power of H (X_i * H^(AGG-i)), the
 * products are summed unreduced in GV_LANES lanes, the lanes are added, and
 * one reduction finishes the AGG blocks. The steady state makes eight
 * independent loads of GV_LANES blocks (AGG = 8 GV_LANES), so the
 * reduction that the next group waits for is paid once per AGG blocks.
 *
 * The includer has included ghash.h and ghash_clmul.h and defines, for its
 * vector type gv of GV_LANES 128-bit lanes (all per lane where it says so):
 *   GV_LANES                 2 (ymm) or 4 (zmm)
 *   GV_FN(name)              its names for the functions below
 *   gv_loadu(p), gv_storeu(p, x), gv_zero(), gv_xor(a, b)
 *   gv_xor3(a, b, c)         a ^ (b ^ c)
 *   gv_zext(x)               the __m128i x in lane 0, the other lanes zero
 *   gv_clmul(a, b, imm)      VPCLMULQDQ, per lane
 *   gv_swap64(x)             the two 64-bit words of each lane swapped
 *   gv_unpacklo64(a, b)      per lane {a.lo, b.lo}
 *   gv_unpackhi64(a, b)      per lane {a.hi, b.hi}
 *   gv_bcast128(x)           the __m128i x in every lane
 *   gv_bswap(x)              each 16-byte block byte-reversed
 *   gv_sum(x)                the xor of the lanes, an __m128i
 * and, after the include, fold_tail (declared below): a run of 1..AGG
 * blocks is where the widths differ in kind, not just in type (the 512-bit
 * one loads partial groups under a mask, the 256-bit one ends on a single
 * 128-bit block).
 *
 * Constant time: no branch or memory index depends on H or the data.
 */

#define AGG (8 * GV_LANES)

/* pow[i] = H^(AGG-i), descending: blocks i..i+GV_LANES-1 of a run of n meet
 * their powers in one vector load at pow[AGG-n+i].
 * kar: Karatsuba words (lo ^ hi of a power) for the steady state, two per
 * lane: kar[q] lane i holds that of pow[2 GV_LANES q + i] in its low word
 * and of pow[2 GV_LANES q + GV_LANES + i] in its high word, so the clmul
 * immediate picks the word. Three products per block instead of four:
 * VPCLMULQDQ's throughput is the bound. */
typedef struct vclmul_key {
    __m128i pow[AGG];
    gv kar[AGG / (2 * GV_LANES)];
} vclmul_key;
_Static_assert(sizeof(vclmul_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

/* n (1..AGG) blocks folded into acc with one reduction (the includer's). */
static inline __m128i fold_tail(const vclmul_key *k, __m128i acc, const uint8_t *in, size_t n);

/* ghash_clmul.h's mul in every lane */
static inline gv GV_FN(mulv)(gv a, gv b)
{
    const gv poly = gv_bcast128(_mm_set_epi64x(0, (long long)0xC200000000000000ull));
    gv lo = gv_clmul(a, b, 0x00), hi = gv_clmul(a, b, 0x11);
    gv mid = gv_xor(gv_clmul(a, b, 0x01), gv_clmul(a, b, 0x10));
    lo = gv_xor(lo, gv_unpacklo64(gv_zero(), mid)); /* + mid y^64 */
    hi = gv_xor(hi, gv_unpackhi64(mid, gv_zero()));
    gv t = gv_clmul(lo, poly, 0x00);
    lo = gv_xor(gv_swap64(lo), t);
    t = gv_clmul(lo, poly, 0x00);
    lo = gv_xor(gv_swap64(lo), t);
    return gv_xor(hi, lo);
}

/* The powers: H^1..H^GV_LANES one by one (GHASH_POWERS), then a vector of
 * GV_LANES powers at a time, each the product of one already made and the
 * broadcast H^(GV_LANES m) (doubling again: the vectors' chain is log2 of
 * their count deep). The lowest vector is pow[AGG - GV_LANES], lanes
 * H^GV_LANES..H^1, and vector j (of AGG / GV_LANES) holds j GV_LANES more;
 * its lane 0, its highest power, is what the next doubling broadcasts.
 * AES-128-GCM of 64 bytes, 32 powers on zmm: 532 -> 462 TSC cycles against
 * GHASH_POWERS over all of them (Xeon, Sapphire Rapids). */
static inline void GV_FN(init)(unsigned char *hkey, const uint8_t h[16])
{
    vclmul_key *k = (vclmul_key *)(void *)hkey;
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    k->pow[AGG - 1] = bswap128(_mm_loadu_si128((const __m128i *)hr));
    GHASH_POWERS(k->pow + AGG - GV_LANES, GV_LANES, mul);
    /* vector j at pow + AGG - GV_LANES (j + 1), read back as stored. Vector
     * 0's powers were stored one at a time, so its first load waits for
     * them to reach the cache (no store forwards into a wider load); made
     * in registers instead, AES-128-GCM of 16-1,024 bytes measured level */
#define GV_POW(j) (k->pow + AGG - GV_LANES * ((j) + 1))
    for (int m = 1; m < AGG / GV_LANES; m *= 2) {
        const gv hm = gv_bcast128(k->pow[AGG - GV_LANES * m]); /* H^(GV_LANES m) */
        for (int j = 0; j < m; j++)
            gv_storeu(GV_POW(m + j), GV_FN(mulv)(gv_loadu(GV_POW(j)), hm));
    }
#undef GV_POW
    for (int q = 0; q < AGG / (2 * GV_LANES); q++) {
        gv a = gv_loadu(k->pow + 2 * GV_LANES * q);
        gv b = gv_loadu(k->pow + 2 * GV_LANES * q + GV_LANES);
        /* lo ^ hi of each power, in both words of its lane */
        a = gv_xor(a, gv_swap64(a));
        b = gv_xor(b, gv_swap64(b));
        k->kar[q] = gv_unpacklo64(a, b);
    }
    kuai_wipe(hr, sizeof hr);
}

/* The steady state: AGG blocks, eight independent loads, Karatsuba:
 * mid = (x.lo ^ x.hi)(h.lo ^ h.hi) ^ lo ^ hi, the correction made once on
 * the sums. A load at a time into sums that start at zero (fold_step, j =
 * 0 .. AGG / GV_LANES - 1 in any order, acc joining load 0) so that a fused
 * AES-GCM kernel can place each between two AES rounds, then fold_end's one
 * reduction. */
typedef struct vclmul_sums {
    gv lo, hi, mid;
} vclmul_sums;

static inline void fold_step(const vclmul_key *k, vclmul_sums *s, __m128i acc, const uint8_t *in,
                             int j)
{
    gv x = gv_bswap(gv_loadu(in + 16 * GV_LANES * j));
    if (j == 0)
        x = gv_xor(x, gv_zext(acc));
    gv h = gv_loadu((const gv *)(const void *)k->pow + j);
    gv xk = gv_xor(x, gv_swap64(x));
    gv lo = gv_clmul(x, h, 0x00), hi = gv_clmul(x, h, 0x11);
    /* load j's Karatsuba words: low words of kar[j/2] for even j, high
     * words for odd j (immediate bit 4 picks h's word) */
    gv mid = j & 1 ? gv_clmul(xk, k->kar[j / 2], 0x10) : gv_clmul(xk, k->kar[j / 2], 0x00);
    s->lo = gv_xor(s->lo, lo);
    s->hi = gv_xor(s->hi, hi);
    s->mid = gv_xor(s->mid, mid);
}

static inline __m128i fold_end(const vclmul_sums *s)
{
    gv mid = gv_xor3(s->mid, s->lo, s->hi);
    return reduce(gv_sum(s->lo), gv_sum(mid), gv_sum(s->hi));
}

static inline __m128i fold_agg(const vclmul_key *k, __m128i acc, const uint8_t *in)
{
    vclmul_sums s = {gv_zero(), gv_zero(), gv_zero()};
    for (int j = 0; j < AGG / GV_LANES; j++)
        fold_step(k, &s, acc, in, j);
    return fold_end(&s);
}

static inline void GV_FN(update)(const unsigned char *hkey, uint8_t y[16], const uint8_t *in,
                                 size_t nblocks)
{
    const vclmul_key *k = (const vclmul_key *)(const void *)hkey;
    __m128i acc = bswap128(_mm_loadu_si128((const __m128i *)y));
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        acc = fold_agg(k, acc, in);
    if (nblocks == 1) /* on xmm: no lanes to sum (a short GCM message's AAD, its lengths) */
        acc = mul(_mm_xor_si128(acc, bswap128(_mm_loadu_si128((const __m128i *)(const void *)in))),
                  k->pow[AGG - 1]);
    else if (nblocks)
        acc = fold_tail(k, acc, in, nblocks);
    _mm_storeu_si128((__m128i *)y, bswap128(acc));
}
