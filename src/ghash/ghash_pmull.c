/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with the ARMv8 PMULL instruction (built with -mcpu=generic+aes:
 * PMULL belongs to the AES extension). The PCLMULQDQ backend
 * (ghash_pclmul.c) on NEON: eight blocks per reduction, the products
 * X_i * H^(8-i) summed unreduced (Karatsuba, three multiplications each)
 * and reduced once, in the reflected Montgomery form of ghash_ref.c. A
 * block byte-reversed is a 128-bit integer with its low 64 bits in lane 0,
 * as in an xmm register, so the x86 steps carry over one for one.
 */
#include "ghash.h"

#include <arm_neon.h>
#include <string.h>

#define AGG 8

typedef uint64x2_t pm_v;

static inline pm_v pm_load_rev(const uint8_t *p)
{
    uint8x16_t x = vrev64q_u8(vld1q_u8(p));
    return vreinterpretq_u64_u8(vextq_u8(x, x, 8));
}

static inline void pm_store_rev(uint8_t *p, pm_v v)
{
    uint8x16_t x = vrev64q_u8(vreinterpretq_u8_u64(v));
    vst1q_u8(p, vextq_u8(x, x, 8));
}

static inline pm_v pm_clmul_lo(pm_v a, pm_v b) /* a.lo * b.lo */
{
    return vreinterpretq_u64_p128(vmull_p64(vgetq_lane_u64(a, 0), vgetq_lane_u64(b, 0)));
}

static inline pm_v pm_clmul_hi(pm_v a, pm_v b) /* a.hi * b.hi */
{
    return vreinterpretq_u64_p128(
        vmull_high_p64(vreinterpretq_p64_u64(a), vreinterpretq_p64_u64(b)));
}

static inline pm_v pm_swap(pm_v x)
{
    return vextq_u64(x, x, 1);
}

/* lo, mid, hi: the 256-bit product as lo + mid y^64 + hi y^128; returns it
 * times y^-128 mod P* (ghash_clmul.h's reduce, step for step). */
static inline pm_v pm_reduce(pm_v lo, pm_v mid, pm_v hi)
{
    const pm_v zero = vdupq_n_u64(0), poly = vsetq_lane_u64(0xC200000000000000ull, zero, 0);
    lo = veorq_u64(lo, vextq_u64(zero, mid, 1)); /* mid << 64 */
    hi = veorq_u64(hi, vextq_u64(mid, zero, 1)); /* mid >> 64 */
    pm_v t = pm_clmul_lo(lo, poly);
    lo = veorq_u64(pm_swap(lo), t);
    t = pm_clmul_lo(lo, poly);
    lo = veorq_u64(pm_swap(lo), t);
    return veorq_u64(hi, lo);
}

static inline pm_v pm_mul(pm_v a, pm_v b)
{
    pm_v lo = pm_clmul_lo(a, b), hi = pm_clmul_hi(a, b);
    pm_v mid = veorq_u64(pm_clmul_lo(pm_swap(a), b), pm_clmul_lo(a, pm_swap(b)));
    return pm_reduce(lo, mid, hi);
}

static inline pm_v pm_karatsuba_word(pm_v h)
{
    return veorq_u64(h, pm_swap(h));
}

/* hkey: pow[i] = H^(AGG-i), kar[i] = lo ^ hi of pow[i] (ghash_pclmul.c). */
typedef struct pmull_key {
    pm_v pow[AGG];
    pm_v kar[AGG];
} pmull_key;
_Static_assert(sizeof(pmull_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

static void pmull_init(unsigned char *hkey, const uint8_t h[16])
{
    pmull_key *k = (pmull_key *)(void *)hkey;
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    k->pow[AGG - 1] = pm_load_rev(hr);
    GHASH_POWERS(k->pow, AGG, pm_mul);
    for (int i = 0; i < AGG; i++)
        k->kar[i] = pm_karatsuba_word(k->pow[i]);
    kuai_wipe(hr, sizeof hr);
}

static inline pm_v pm_fold(const pmull_key *k, pm_v acc, const uint8_t *in, size_t n)
{
    pm_v lo = vdupq_n_u64(0), hi = lo, mid = lo;
    size_t base = AGG - n;
    for (size_t i = 0; i < n; i++) {
        pm_v x = pm_load_rev(in + 16 * i);
        if (i == 0)
            x = veorq_u64(x, acc);
        pm_v h = k->pow[base + i];
        lo = veorq_u64(lo, pm_clmul_lo(x, h));
        hi = veorq_u64(hi, pm_clmul_hi(x, h));
        mid = veorq_u64(mid, pm_clmul_lo(pm_karatsuba_word(x), k->kar[base + i]));
    }
    mid = veorq_u64(mid, veorq_u64(lo, hi));
    return pm_reduce(lo, mid, hi);
}

static void pmull_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in,
                         size_t nblocks)
{
    const pmull_key *k = (const pmull_key *)(const void *)hkey;
    pm_v acc = pm_load_rev(y);
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        acc = pm_fold(k, acc, in, AGG);
    if (nblocks)
        acc = pm_fold(k, acc, in, nblocks);
    pm_store_rev(y, acc);
}

static int pmull_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_ARM_PMULL) != 0;
}

/* Above ref. */
KUAI_REGISTER_GHASH(ghash_pmull);
const ghash_impl ghash_pmull = {
    .priority = 100,
    .name = "pmull",
    .available = pmull_available,
    .powers = AGG,
    .init = pmull_init,
    .update = pmull_update,
};
