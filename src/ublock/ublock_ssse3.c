/*
 * uBlock, SSSE3 backend: the bitsliced algorithm of ublock_bs.h on xmm
 * registers. A pass is 8 blocks for both block sizes; a uBlock-256
 * plane-half is two xmm ("lanes" 0 and 1 of ublock_bs.h's layout L).
 * Compiled with -mssse3 for this file only; chosen at run time.
 */
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

#include "ublock_bs.h"

static int ublock_ssse3_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_SSSE3) != 0;
}

/* ---- uBlock-128: 8 blocks per pass, drifting layouts -------------------- */

static inline void ublock128_ssse3_key_layout(ub_v x[8], unsigned i)
{
    ub_v p = ub_row(ub128_tab[i & 7][UB128_KEY]);
    for (int j = 0; j < 8; j++)
        x[j] = _mm_shuffle_epi8(x[j], p);
}

#define UBM_FN(name) ublock128_ssse3_##name
#define UBM_H __m128i
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) _mm_shuffle_epi8(x, ub_row(ub128_tab[l][row]))
#define UBM_ROT1 UB128_ROT1
#define UBM_ROT2 UB128_ROT2
#define UBM_ROT5 UB128_ROT5
#define UBM_PERM_L(x, l) (x)
#define UBM_PERM_R(x, l) _mm_shuffle_epi8(x, ub_row(ub128_tab[l][UB128_FIX]))
#define UBM_PERM_L_INV(x, l) (x)
#define UBM_PERM_R_INV(x, l) _mm_shuffle_epi8(x, ub_row(ub128_tab[l][UB128_FIX_INV]))
#define UBM_LAYOUT_MASK 7u
#define UBM_DRIFT 1
#define UBM_BLOCK 16
#define UBM_PASS 8
#define UBM_NS 2
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ublock128_ssse3_key_layout(x, i)
#include "ublock_bs.h"

/* ---- uBlock-256: 8 blocks per pass, plane-half = two xmm ---------------- */

typedef struct ub256_h {
    __m128i l, h; /* lane 0: words 0-1 of the half, lane 1: words 2-3 */
} ub256_h;

static inline ub256_h ub256_make(__m128i l, __m128i h)
{
    ub256_h r = {l, h};
    return r;
}

static inline ub256_h ub256_xor(ub256_h a, ub256_h b)
{
    return ub256_make(_mm_xor_si128(a.l, b.l), _mm_xor_si128(a.h, b.h));
}

static inline ub256_h ub256_and(ub256_h a, ub256_h b)
{
    return ub256_make(_mm_and_si128(a.l, b.l), _mm_and_si128(a.h, b.h));
}

static inline ub256_h ub256_or(ub256_h a, ub256_h b)
{
    return ub256_make(_mm_or_si128(a.l, b.l), _mm_or_si128(a.h, b.h));
}

static inline ub256_h ub256_andn(ub256_h a, ub256_h b)
{
    return ub256_make(_mm_andnot_si128(a.l, b.l), _mm_andnot_si128(a.h, b.h));
}

static inline ub256_h ub256_ones(void)
{
    return ub256_make(ub_ones(), ub_ones());
}

/* pshufb of each lane by its half of a 32-byte ub256_tab row */
static inline ub256_h ub256_shuf(ub256_h x, int row)
{
    return ub256_make(_mm_shuffle_epi8(x.l, ub_row(ub256_tab[row])),
                      _mm_shuffle_epi8(x.h, ub_row(ub256_tab[row] + 16)));
}

/* The dword gathers of layout L (see ublock_bs.h): PL takes qword 0 of
 * both lanes into lane 0 and qword 1 into lane 1; PR takes dwords 0, 2 of
 * both lanes into lane 0 and dwords 1, 3 into lane 1. */
static inline ub256_h ub256_pl(ub256_h x)
{
    return ub256_shuf(ub256_make(_mm_unpacklo_epi64(x.l, x.h), _mm_unpackhi_epi64(x.l, x.h)),
                      UB256_PL);
}

static inline ub256_h ub256_pr(ub256_h x)
{
    __m128 l = _mm_castsi128_ps(x.l), h = _mm_castsi128_ps(x.h);
    return ub256_shuf(ub256_make(_mm_castps_si128(_mm_shuffle_ps(l, h, _MM_SHUFFLE(2, 0, 2, 0))),
                                 _mm_castps_si128(_mm_shuffle_ps(l, h, _MM_SHUFFLE(3, 1, 3, 1)))),
                      UB256_PR);
}

static inline ub256_h ub256_pl_inv(ub256_h x)
{
    ub256_h t = ub256_shuf(x, UB256_PL_INV);
    return ub256_make(_mm_unpacklo_epi64(t.l, t.h), _mm_unpackhi_epi64(t.l, t.h));
}

static inline ub256_h ub256_pr_inv(ub256_h x)
{
    ub256_h t = ub256_shuf(x, UB256_PR_INV);
    return ub256_make(_mm_unpacklo_epi32(t.l, t.h), _mm_unpackhi_epi32(t.l, t.h));
}

/* Block b is two xmm: half X0 (bytes 0-15) and half X1 (bytes 16-31),
 * transposed separately; the unpacks give pairs 0..7 ("lane 0") and 8..15
 * ("lane 1") of each half in split layout, to_l moves them to layout L. */
static inline void ublock256_ssse3_load(ub256_h x[8], const uint8_t *in)
{
    ub_v r0[8], r1[8];
    for (int b = 0; b < 8; b++) {
        r0[b] = ub_loadu(in + 32 * b);
        r1[b] = ub_loadu(in + 32 * b + 16);
    }
    ub_transpose8(r0);
    ub_transpose8(r1);
    for (int j = 0; j < 4; j++) {
        x[j] = ub256_shuf(
            ub256_make(_mm_unpacklo_epi64(r0[j + 4], r0[j]), _mm_unpackhi_epi64(r0[j + 4], r0[j])),
            UB256_TO_L);
        x[4 + j] = ub256_shuf(
            ub256_make(_mm_unpacklo_epi64(r1[j + 4], r1[j]), _mm_unpackhi_epi64(r1[j + 4], r1[j])),
            UB256_TO_L);
    }
}

static inline void ublock256_ssse3_to_blocks(ub_v r0[8], ub_v r1[8], const ub256_h x[8])
{
    for (int j = 0; j < 4; j++) {
        ub256_h a = ub256_shuf(x[j], UB256_FROM_L), b = ub256_shuf(x[4 + j], UB256_FROM_L);
        r0[j + 4] = _mm_unpacklo_epi64(a.l, a.h);
        r0[j] = _mm_unpackhi_epi64(a.l, a.h);
        r1[j + 4] = _mm_unpacklo_epi64(b.l, b.h);
        r1[j] = _mm_unpackhi_epi64(b.l, b.h);
    }
    ub_transpose8(r0);
    ub_transpose8(r1);
}

static inline void ublock256_ssse3_store(uint8_t *out, const ub256_h x[8])
{
    ub_v r0[8], r1[8];
    ublock256_ssse3_to_blocks(r0, r1, x);
    for (int b = 0; b < 8; b++) {
        ub_storeu(out + 32 * b, r0[b]);
        ub_storeu(out + 32 * b + 16, r1[b]);
    }
}

static inline void ublock256_ssse3_store_xor(uint8_t *out, const uint8_t *in, const ub256_h x[8])
{
    ub_v r0[8], r1[8];
    ublock256_ssse3_to_blocks(r0, r1, x);
    for (int b = 0; b < 8; b++) {
        ub_storeu(out + 32 * b, ub_xor(r0[b], ub_loadu(in + 32 * b)));
        ub_storeu(out + 32 * b + 16, ub_xor(r1[b], ub_loadu(in + 32 * b + 16)));
    }
}

#define UBM_FN(name) ublock256_ssse3_##name
#define UBM_H ub256_h
#define UBM_XOR ub256_xor
#define UBM_AND ub256_and
#define UBM_OR ub256_or
#define UBM_ANDN ub256_andn
#define UBM_ONES ub256_ones
#define UBM_ROT(x, l, row) ub256_shuf(x, row)
#define UBM_ROT1 UB256_ROT1
#define UBM_ROT2 UB256_ROT2
#define UBM_ROT5 UB256_ROT5
#define UBM_PERM_L(x, l) ub256_pl(x)
#define UBM_PERM_R(x, l) ub256_pr(x)
#define UBM_PERM_L_INV(x, l) ub256_pl_inv(x)
#define UBM_PERM_R_INV(x, l) ub256_pr_inv(x)
#define UBM_LAYOUT_MASK 0u
#define UBM_DRIFT 0
#define UBM_BLOCK 32
#define UBM_PASS 8
#define UBM_NS 1
#define UBM_LOAD(x, in) ublock256_ssse3_load(x, in)
#define UBM_STORE(out, x) ublock256_ssse3_store(out, x)
#define UBM_STORE_XOR(out, in, x) ublock256_ssse3_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ((void)(x), (void)(i))
#include "ublock_bs.h"

/* ---- backend tables ------------------------------------------------------ */

const kuai_impl ublock128_128_ssse3 = {
    .name = "ssse3",
    .cipher = KUAI_UBLOCK_128_128,
    .available = ublock_ssse3_available,
    .expand = ublock128_ssse3_expand,
    .enc_blocks = ublock128_ssse3_enc_blocks,
    .dec_blocks = ublock128_ssse3_dec_blocks,
    .ctr_blocks = ublock128_ssse3_ctr_blocks,
    .mk_lanes = 8,
    .mk_setup = ublock128_ssse3_mk_setup,
    .mk_enc = ublock128_ssse3_mk_enc,
    .mk_dec = ublock128_ssse3_mk_dec,
};

const kuai_impl ublock128_256_ssse3 = {
    .name = "ssse3",
    .cipher = KUAI_UBLOCK_128_256,
    .available = ublock_ssse3_available,
    .expand = ublock128_ssse3_expand,
    .enc_blocks = ublock128_ssse3_enc_blocks,
    .dec_blocks = ublock128_ssse3_dec_blocks,
    .ctr_blocks = ublock128_ssse3_ctr_blocks,
    .mk_lanes = 8,
    .mk_setup = ublock128_ssse3_mk_setup,
    .mk_enc = ublock128_ssse3_mk_enc,
    .mk_dec = ublock128_ssse3_mk_dec,
};

const kuai_impl ublock256_256_ssse3 = {
    .name = "ssse3",
    .cipher = KUAI_UBLOCK_256_256,
    .available = ublock_ssse3_available,
    .expand = ublock256_ssse3_expand,
    .enc_blocks = ublock256_ssse3_enc_blocks,
    .dec_blocks = ublock256_ssse3_dec_blocks,
    .ctr_blocks = ublock256_ssse3_ctr_blocks,
    .mk_lanes = 8,
    .mk_setup = ublock256_ssse3_mk_setup,
    .mk_enc = ublock256_ssse3_mk_enc,
    .mk_dec = ublock256_ssse3_mk_dec,
};
