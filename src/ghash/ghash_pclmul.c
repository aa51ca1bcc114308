/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with PCLMULQDQ (built with -mpclmul -mssse3): eight blocks per
 * reduction (pclmul_fold in ghash_clmul.h), in the reflected Montgomery
 * form of ghash_ref.c.
 */
#include "ghash.h"
#include "ghash_clmul.h"

#include <immintrin.h>
#include <string.h>

#define AGG GHASH_PCLMUL_AGG
_Static_assert(sizeof(pclmul_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

static void pclmul_init(unsigned char *hkey, const uint8_t h[16])
{
    pclmul_key *k = (pclmul_key *)(void *)hkey;
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    k->pow[AGG - 1] = bswap128(_mm_loadu_si128((const __m128i *)hr));
    GHASH_POWERS(k->pow, AGG, mul);
    for (int i = 0; i < AGG; i++)
        k->kar[i] = karatsuba_word(k->pow[i]);
    kuai_wipe(hr, sizeof hr);
}

static void pclmul_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in,
                          size_t nblocks)
{
    const pclmul_key *k = (const pclmul_key *)(const void *)hkey;
    __m128i acc = bswap128(_mm_loadu_si128((const __m128i *)y));
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        acc = pclmul_fold(k, acc, in, AGG);
    if (nblocks)
        acc = pclmul_fold(k, acc, in, nblocks);
    _mm_storeu_si128((__m128i *)y, bswap128(acc));
}

static int pclmul_available(void)
{
    unsigned need = KUAI_CPU_PCLMUL | KUAI_CPU_SSSE3;
    return (kuai_cpu_features() & need) == need;
}

/* Above ref, below VPCLMULQDQ. */
KUAI_REGISTER_GHASH(ghash_pclmul);
const ghash_impl ghash_pclmul = {
    .priority = 100,
    .name = "pclmul",
    .available = pclmul_available,
    .powers = AGG,
    .init = pclmul_init,
    .update = pclmul_update,
};
