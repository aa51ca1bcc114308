/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, SSSE3 backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors) over xmm registers and pshufb.
 * Compiled with -mssse3 for this file only; chosen at run time.
 */
#include "../bytes.h"
#include "ublock.h"

#include <string.h>
#include <tmmintrin.h>

typedef __m128i ub_v;
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

#define ub_xor(a, b) _mm_xor_si128(a, b)
#define ub_and(a, b) _mm_and_si128(a, b)
#define ub_or(a, b) _mm_or_si128(a, b)
#define ub_andn(a, b) _mm_andnot_si128(a, b)
#define ub_srl64(x, n) _mm_srli_epi64(x, n)
#define ub_sll64(x, n) _mm_slli_epi64(x, n)
#define ub_set1_8(c) _mm_set1_epi8((char)(c))
#define ub_unpacklo64(a, b) _mm_unpacklo_epi64(a, b)
#define ub_unpackhi64(a, b) _mm_unpackhi_epi64(a, b)
#define ub_loadu(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ub_storeu(p, x) _mm_storeu_si128((__m128i *)(void *)(p), x)
#define ub_row(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define ub_ones() _mm_set1_epi32(-1)

#define ub_shuf(x, idx) _mm_shuffle_epi8(x, idx)
#define ub_unpacklo32(a, b) _mm_unpacklo_epi32(a, b)
#define ub_unpackhi32(a, b) _mm_unpackhi_epi32(a, b)
#define ub_even32(a, b)                                                                            \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(2, 0, 2, 0)))
#define ub_odd32(a, b)                                                                             \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(3, 1, 3, 1)))

/* every x86-64 CPU with this ISA has SSSE3 */
#define UB_EXPAND_RAW ublock_expand_raw_ssse3
#include "ublock_bs.h"

static int ublock_ssse3_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_SSSE3) != 0;
}

#define UB_V128_ISA ssse3
#define UB_V128_NAME "ssse3"
#define UB_V128_AVAILABLE ublock_ssse3_available
#define UB_V128_NS128 2
#include "ublock_v128.h"

/* ---- key schedule on nibbles ------------------------------------------- */

/*
 * ublock_expand_raw (ublock_ref.c, the oracle; tests/test_ublock.c compares
 * the two) with the key register one nibble per byte, 16 nibbles (a
 * quarter of a 256-bit key, or half of a 128-bit one) per xmm: PK is one
 * pshufb per 16 nibbles, Sk and Tk are pshufb lookups (constant time: no
 * memory index), so a round is a handful of instructions where the scalar
 * code moves 32-64 nibbles one at a time. Used by the x86 backends.
 */

/* 8 bytes -> 16 nibbles, the high nibble of each byte first. */
static inline __m128i ub_nib_load(const uint8_t *p)
{
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)p), m = _mm_set1_epi8(0x0f);
    return _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

/* 16 nibbles -> 8 bytes: pairs (hi, lo) to hi * 16 + lo, then packed. */
static inline void ub_nib_store(uint8_t *p, __m128i n)
{
    __m128i w = _mm_maddubs_epi16(n, _mm_set1_epi16(0x0110));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packus_epi16(w, w));
}

void ublock_expand_raw_ssse3(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    /* spec tables: s, and multiplication by 2 in GF(2^4) mod x^4 + x + 1 */
    const __m128i sbox = _mm_setr_epi8(7, 4, 9, 12, 11, 10, 13, 8, 15, 14, 1, 6, 0, 3, 2, 5);
    const __m128i tk = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 3, 1, 7, 5, 11, 9, 15, 13);
    const unsigned wide = c != KUAI_UBLOCK_128_128; /* 256-bit key: 16-nibble quarters */
    s->nbytes = c == KUAI_UBLOCK_256_256 ? 32 : 16;
    s->rounds = wide ? 24 : 16;
    __m128i k[4]; /* 128-bit key: k[0] = K0||K1, k[1] = K2||K3; 256-bit: K0..K3 */
    for (unsigned i = 0; i < 2 + 2 * wide; i++)
        k[i] = ub_nib_load(key + 8 * i);
    const uint8_t *pk = !wide ? ublock_pk1 : c == KUAI_UBLOCK_128_256 ? ublock_pk2 : ublock_pk3;
    const __m128i pk0 = _mm_loadu_si128((const __m128i *)(const void *)pk);
    /* 256-bit keys: PK2/3 take K1's nibbles from K1 only (16..31) */
    const __m128i pk1 =
        wide ? _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(pk + 16)),
                            _mm_set1_epi8(16))
             : pk0;
    for (unsigned r = 0; r <= s->rounds; r++) {
        if (r > 0) {
            uint8_t rcb[8] = {0};
            store_be32(rcb, ublock_rc[r - 1]);
            __m128i rc = ub_nib_load(rcb); /* the left 32 bits of K0 */
            if (!wide) {
                __m128i p = _mm_shuffle_epi8(k[0], pk0); /* p0 || p1 */
                __m128i sk = _mm_shuffle_epi8(sbox, _mm_xor_si128(p, rc));
                __m128i t = _mm_shuffle_epi8(tk, p);
                k[0] = _mm_xor_si128(k[1], _mm_unpacklo_epi64(sk, _mm_unpackhi_epi64(t, t)));
                k[1] = _mm_shuffle_epi32(p, 0x4e); /* p1 || p0 */
            } else {
                __m128i p0 = _mm_shuffle_epi8(k[0], pk0), p1 = _mm_shuffle_epi8(k[1], pk1);
                k[0] = _mm_xor_si128(k[2], _mm_shuffle_epi8(sbox, _mm_xor_si128(p0, rc)));
                k[1] = _mm_xor_si128(k[3], _mm_shuffle_epi8(tk, p1));
                k[2] = p1;
                k[3] = p0;
            }
        }
        /* RK_r: the left nbytes of the register */
        for (unsigned i = 0; i < s->nbytes / 8; i++)
            ub_nib_store(s->rk[r] + 8 * i, k[i]);
    }
    kuai_wipe(k, sizeof k);
}
