/*
 * GHASH with PCLMULQDQ (built with -mpclmul -mssse3). Eight blocks per
 * reduction: the products X_i * H^(8-i) are summed unreduced (Karatsuba,
 * three multiplications each) and reduced once, which takes the two
 * dependent reduction multiplications off the per-block critical path.
 * The arithmetic is the reflected Montgomery form of ghash_ref.c.
 */
#include "ghash.h"
#include "ghash_clmul.h"

#include <immintrin.h>
#include <string.h>

#define AGG 8

/* hkey layout: pow[i] = H^(AGG-i) for i < AGG (descending, so a run of n
 * blocks starts at pow[AGG-n]), then kar[i] = lo ^ hi of pow[i] in the low
 * word, for the Karatsuba middle product. */
typedef struct pclmul_key {
    __m128i pow[AGG];
    __m128i kar[AGG];
} pclmul_key;
_Static_assert(sizeof(pclmul_key) <= GHASH_KEY_BYTES, "GHASH key area too small");

static void pclmul_init(unsigned char *hkey, const uint8_t h[16])
{
    pclmul_key *k = (pclmul_key *)(void *)hkey;
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    __m128i h1 = bswap128(_mm_loadu_si128((const __m128i *)hr)), p = h1;
    for (int i = AGG - 1; i >= 0; i--) {
        k->pow[i] = p;
        k->kar[i] = karatsuba_word(p);
        p = mul(p, h1);
    }
    kuai_wipe(hr, sizeof hr);
}

/* n (1..AGG) blocks folded into acc with one reduction. */
static inline __m128i fold(const pclmul_key *k, __m128i acc, const uint8_t *in, size_t n)
{
    __m128i lo = _mm_setzero_si128(), hi = lo, mid = lo;
    size_t base = AGG - n;
    for (size_t i = 0; i < n; i++) {
        __m128i x = bswap128(_mm_loadu_si128((const __m128i *)(in + 16 * i)));
        if (i == 0)
            x = _mm_xor_si128(x, acc);
        __m128i h = k->pow[base + i];
        lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(x, h, 0x00));
        hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(x, h, 0x11));
        mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(karatsuba_word(x), k->kar[base + i], 0x00));
    }
    mid = _mm_xor_si128(mid, _mm_xor_si128(lo, hi));
    return reduce(lo, mid, hi);
}

static void pclmul_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in,
                          size_t nblocks)
{
    const pclmul_key *k = (const pclmul_key *)(const void *)hkey;
    __m128i acc = bswap128(_mm_loadu_si128((const __m128i *)y));
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG)
        acc = fold(k, acc, in, AGG);
    if (nblocks)
        acc = fold(k, acc, in, nblocks);
    _mm_storeu_si128((__m128i *)y, bswap128(acc));
}

static int pclmul_available(void)
{
    unsigned need = KUAI_CPU_PCLMUL | KUAI_CPU_SSSE3;
    return (kuai_cpu_features() & need) == need;
}

const ghash_impl ghash_pclmul = {
    .name = "pclmul",
    .available = pclmul_available,
    .init = pclmul_init,
    .update = pclmul_update,
};
