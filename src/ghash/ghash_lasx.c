/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH on LoongArch LASX: ghash_lsx.c's products with holes (ghash_holes.h)
 * on 256-bit registers, two blocks a product, one per 128-bit lane, each
 * lane {w, reverse(w)} as on LSX. A fold of 4 blocks is two such products:
 * the key's pairs of powers are (H^4, H^3) and (H^2, H^1), so a fold of n
 * blocks puts its last two in the second pair and the two before them in
 * the first, a missing block's lane zero (its products are then zero). The
 * accumulators' two lanes are added at the end of a fold, before
 * ghash_lsx.c's masking, reversal and reduction. Short messages keep lsx-1
 * (one power, no products at init: kuai_ghash_short takes the fewest
 * powers). Built with -mlasx. Constant time as ghash_lsx.c.
 */
#include "ghash.h"

#include <lasxintrin.h>
#include <string.h>

#include "../bytes.h"

#define GH_V __m256i
#define GH_AND(a, b) __lasx_xvand_v(a, b)
#define GH_OR(a, b) __lasx_xvor_v(a, b)
#define GH_XOR(a, b) __lasx_xvxor_v(a, b)
#define GH_MUL64(a, b) __lasx_xvmul_d(a, b)
#define GH_SPLAT64(c) __lasx_xvreplgr2vr_d((long)(c))
#include "ghash_holes.h"

#define AGG 4
_Static_assert(AGG <= GHASH_LSX_MAX_POWERS, "kuai_ghash_lsx_powers makes at most that many");

/* pair[0]: H^4 in lane 0, H^3 in lane 1; pair[1]: H^2, H^1. */
typedef struct lasx_key {
    gh_power pair[AGG / 2];
} lasx_key;
_Static_assert(sizeof(lasx_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

/* {a, reverse(a)} in lane 0, {b, reverse(b)} in lane 1. */
static inline __m256i operand2(uint64_t a, uint64_t b)
{
    __m256i x = __lasx_xvreplgr2vr_d((long)a);
    x = __lasx_xvinsgr2vr_d(x, (long)gh_bitrev64(a), 1);
    x = __lasx_xvinsgr2vr_d(x, (long)b, 2);
    return __lasx_xvinsgr2vr_d(x, (long)gh_bitrev64(b), 3);
}

static void lasx_init(unsigned char *hkey, const uint8_t h[16])
{
    lasx_key *k = (lasx_key *)(void *)hkey;
    uint64_t hi[AGG], lo[AGG];
    kuai_ghash_lsx_powers(hi, lo, h, AGG);
    for (int j = 0; j < AGG / 2; j++)
        gh_parts(k->pair[j].res, operand2(lo[2 * j], lo[2 * j + 1]),
                 operand2(hi[2 * j], hi[2 * j + 1]));
    kuai_wipe(hi, sizeof hi);
    kuai_wipe(lo, sizeof lo);
}

/* ghash_lsx.c's block_operands, per 128-bit lane: two blocks as on the
 * wire (lane 0 the first) to their operands. */
static inline void block_operands2(__m256i *lo, __m256i *hi, __m256i w)
{
    static const _Alignas(32)
        uint8_t rows[2][32] = {{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
                                15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
                               /* a nibble's bits reversed, in the high nibble */
                               {0x00, 0x80, 0x40, 0xC0, 0x20, 0xA0, 0x60, 0xE0, 0x10, 0x90, 0x50,
                                0xD0, 0x30, 0xB0, 0x70, 0xF0, 0x00, 0x80, 0x40, 0xC0, 0x20, 0xA0,
                                0x60, 0xE0, 0x10, 0x90, 0x50, 0xD0, 0x30, 0xB0, 0x70, 0xF0}};
    const __m256i rev_bytes = __lasx_xvld(rows[0], 0), rev_nib_hi = __lasx_xvld(rows[1], 0);
    const __m256i rev_nib_lo = __lasx_xvsrli_b(rev_nib_hi, 4);
    __m256i v = __lasx_xvshuf_b(w, w, rev_bytes);
    __m256i r = __lasx_xvor_v(__lasx_xvshuf_b(rev_nib_hi, rev_nib_hi, __lasx_xvandi_b(w, 15)),
                              __lasx_xvshuf_b(rev_nib_lo, rev_nib_lo, __lasx_xvsrli_b(w, 4)));
    *lo = __lasx_xvextrins_d(v, r, 0x11);
    *hi = __lasx_xvextrins_d(__lasx_xvshuf4i_w(r, 0x4e), v, 0x01);
}

/* One block into lane 1, lane 0 zero. */
static inline __m256i load_lane1(const uint8_t *p)
{
    uint64_t w[2];
    memcpy(w, p, 16);
    __m256i x = __lasx_xvinsgr2vr_d(__lasx_xvreplgr2vr_d(0), (long)w[0], 2);
    return __lasx_xvinsgr2vr_d(x, (long)w[1], 3);
}

/* {a, reverse(a)} in lane `lane` (public: where the fold's first block
 * is), zero in the other. */
static inline __m256i operand_in(uint64_t a, int lane)
{
    const __m256i z = __lasx_xvreplgr2vr_d(0);
    const long w = (long)a, r = (long)gh_bitrev64(a);
    return lane ? __lasx_xvinsgr2vr_d(__lasx_xvinsgr2vr_d(z, w, 2), r, 3)
                : __lasx_xvinsgr2vr_d(__lasx_xvinsgr2vr_d(z, w, 0), r, 1);
}

/* n (1..AGG) blocks folded into (*hi, *lo) with one reduction: X_i *
 * H^(n - i), the accumulator added to the first block. */
static inline __attribute__((always_inline)) void lasx_fold(const lasx_key *k, uint64_t *hi,
                                                            uint64_t *lo, const uint8_t *in, int n)
{
    gh_sum s;
    gh_sum_zero(&s);
    for (int p = 0; p < AGG / 2; p++) {
        const int i0 = n - AGG + 2 * p, i1 = i0 + 1; /* the blocks of lanes 0, 1 */
        if (i1 < 0)
            continue;
        __m256i xlo, xhi;
        block_operands2(&xlo, &xhi,
                        i0 >= 0 ? __lasx_xvld(in + 16 * i0, 0) : load_lane1(in + 16 * i1));
        if (i0 == 0 || i1 == 0) {
            xlo = __lasx_xvxor_v(xlo, operand_in(*lo, i1 == 0));
            xhi = __lasx_xvxor_v(xhi, operand_in(*hi, i1 == 0));
        }
        gh_sum_product(&s, &k->pair[p], xlo, xhi);
    }
    uint64_t l[3], rev[3];
    for (int part = 0; part < 3; part++) {
        __m256i c = gh_sum_part(&s, part);
        l[part] = (uint64_t)(__lasx_xvpickve2gr_d(c, 0) ^ __lasx_xvpickve2gr_d(c, 2));
        rev[part] = (uint64_t)(__lasx_xvpickve2gr_d(c, 1) ^ __lasx_xvpickve2gr_d(c, 3));
    }
    gh_finish(hi, lo, l, rev);
}

static void lasx_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks)
{
    const lasx_key *k = (const lasx_key *)(const void *)hkey;
    uint64_t hi = load_be64(y), lo = load_be64(y + 8);
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        lasx_fold(k, &hi, &lo, in, AGG);
    if (nblocks)
        lasx_fold(k, &hi, &lo, in, (int)nblocks);
    store_be64(y, hi);
    store_be64(y + 8, lo);
}

static int lasx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LASX) != 0;
}

/* Above lsx. */
KUAI_REGISTER_GHASH(ghash_lasx);
const ghash_impl ghash_lasx = {
    .priority = 110,
    .name = "lasx",
    .available = lasx_available,
    .powers = AGG,
    .init = lasx_init,
    .update = lasx_update,
};
