/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, AVX-512 + GFNI backend: the S-box is two instructions per 64 bytes.
 *
 * SM4's S-box is S(x) = A·(A·x + C)^-1 + C with the inversion in
 * GF(2^8)/(x^8+x^7+x^6+x^5+x^4+x^2+1) (see sm4_ref.c). GFNI inverts in the
 * AES field GF(2^8)/(x^8+x^4+x^3+x+1), which is isomorphic: with the linear
 * map T sending x^i to beta^i, beta = 0x23 a root of SM4's polynomial in the
 * AES field, T(a·b) = T(a)·T(b), so
 *     S(x) = (A·T^-1) · inv_AES((T·A)·x + T·C) + C,
 * one vgf2p8affineqb (matrix T·A, constant T·C) and one vgf2p8affineinvqb
 * (matrix A·T^-1, constant C). (The isomorphism route is the one of
 * Saarinen's "sm4ni" note, 2018; T and the products were derived here by
 * search over the 8 roots and checked on all 256 inputs against the
 * standard's table.)
 *
 * Vector layout, rounds, CTR and multi-key: sm4_simd.h, 16 blocks per zmm
 * group, 8 groups (128 blocks) in flight. Compiled with AVX-512 and GFNI
 * flags for this file only; chosen at run time.
 */
#include "../bytes.h"
#include "sm4.h"

#include <immintrin.h>

typedef __m512i sm4v;
#define SM4V_W 16
/* 128 blocks in flight: a round is ~11 cycles of latency for ~3 of
 * throughput per group; 4 groups run at 6.2 GB/s here, 8 at 7.8. */
#define SM4S_G 8
#define SM4S_MK_G 2

/* gf2p8affineqb matrices as 64-bit operands: byte 7 - i is the row giving
 * output bit i (bit j of the row selects input bit j). */
#define SM4_GFNI_PRE_MATRIX 0x4c287db91a22505dLL  /* T·A */
#define SM4_GFNI_PRE_CONST 0x3e                   /* T·C */
#define SM4_GFNI_POST_MATRIX 0xf3ab34a974a6b589LL /* A·T^-1 */
#define SM4_GFNI_POST_CONST 0xd3                  /* C */

#define sm4v_loadu(p) _mm512_loadu_si512((const void *)(p))
#define sm4v_storeu(p, x) _mm512_storeu_si512((void *)(p), x)
#define sm4v_xor(a, b) _mm512_xor_si512(a, b)
#define sm4v_set1(w) _mm512_set1_epi32((int)(w))
#define sm4v_add32(a, b) _mm512_add_epi32(a, b)
#define sm4v_unpacklo32(a, b) _mm512_unpacklo_epi32(a, b)
#define sm4v_unpackhi32(a, b) _mm512_unpackhi_epi32(a, b)
#define sm4v_unpacklo64(a, b) _mm512_unpacklo_epi64(a, b)
#define sm4v_unpackhi64(a, b) _mm512_unpackhi_epi64(a, b)
/* 0x96: three-input XOR. */
#define sm4v_xor3(a, b, c) _mm512_ternarylogic_epi32(a, b, c, 0x96)
/* a ^ b ^ c ^ d with d, the word the previous round just wrote, last. */
#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor3(a, b, c), d)

static inline sm4v sm4v_bswap32(sm4v x)
{
    const __m512i rev =
        _mm512_broadcast_i32x4(_mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12));
    return _mm512_shuffle_epi8(x, rev);
}

/* See sm4_simd.h: position p holds block (p % 4) * 4 + p / 4 of its group. */
static inline sm4v sm4v_lane_blocks(void)
{
    return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

/*
 * x0 ^ L(tau(t)), L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24)
 * (standard, 6.2): 2 GFNI, 4 vprold, 3 XOR-type instructions, grouped so
 * that only 3 of them follow the last rotation.
 */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v s = _mm512_gf2p8affine_epi64_epi8(t, _mm512_set1_epi64(SM4_GFNI_PRE_MATRIX),
                                           SM4_GFNI_PRE_CONST);
    s = _mm512_gf2p8affineinv_epi64_epi8(s, _mm512_set1_epi64(SM4_GFNI_POST_MATRIX),
                                         SM4_GFNI_POST_CONST);
    sm4v a = sm4v_xor3(x0, s, _mm512_rol_epi32(s, 2));
    sm4v b = sm4v_xor3(_mm512_rol_epi32(s, 10), _mm512_rol_epi32(s, 18), _mm512_rol_epi32(s, 24));
    return sm4v_xor(a, b);
}

/*
 * x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane.
 * The carry out of word j is a mask: word 3 wrapped iff it ended below the
 * addend; a carry passes on through every word that became 0.
 */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    const sm4v one = _mm512_set1_epi32(1);
    x[3] = _mm512_add_epi32(_mm512_set1_epi32((int)w[3]), off);
    __mmask16 c = _mm512_cmplt_epu32_mask(x[3], off);
    for (int j = 2; j >= 0; j--) {
        sm4v wj = _mm512_set1_epi32((int)w[j]);
        x[j] = _mm512_mask_add_epi32(wj, c, wj, one);
        c = _mm512_mask_cmpeq_epi32_mask(c, x[j], _mm512_setzero_si512());
    }
}

/*
 * Key setup: the schedule's 32 rounds on xmm with each key word in every
 * lane, so that no round's word goes to a scalar register and back (as
 * sm4_expand_with's tau per word took); the round is the cipher's with
 * L'(B) = B ^ (B <<< 13) ^ (B <<< 23) (standard, 7.3). Written with xmm
 * shifts and XORs, which the compiler may fuse into vprold and vpternlogd
 * (AVX-512VL is in this file's flags), and which the ISA shim's build
 * (AVX2 only) runs as they are. Rounds four at a time, each slot index a
 * constant, so the key words stay in registers.
 */
static inline __m128i sm4_gfni_key_round(__m128i k[4], int j, unsigned i)
{
    __m128i t = _mm_xor_si128(_mm_xor_si128(k[(j + 1) & 3], k[(j + 2) & 3]),
                              _mm_set1_epi32((int)sm4_ck(i)));
    t = _mm_xor_si128(t, k[(j + 3) & 3]); /* the newest word last */
    __m128i s =
        _mm_gf2p8affine_epi64_epi8(t, _mm_set1_epi64x(SM4_GFNI_PRE_MATRIX), SM4_GFNI_PRE_CONST);
    s = _mm_gf2p8affineinv_epi64_epi8(s, _mm_set1_epi64x(SM4_GFNI_POST_MATRIX),
                                      SM4_GFNI_POST_CONST);
    __m128i r13 = _mm_or_si128(_mm_slli_epi32(s, 13), _mm_srli_epi32(s, 19));
    __m128i r23 = _mm_or_si128(_mm_slli_epi32(s, 23), _mm_srli_epi32(s, 9));
    k[j] = _mm_xor_si128(_mm_xor_si128(k[j], s), _mm_xor_si128(r13, r23));
    return k[j];
}

static void sm4_gfni_expand(kuai_key *k, const uint8_t *key)
{
    __m128i kv[4];
    for (int j = 0; j < 4; j++)
        kv[j] = _mm_set1_epi32((int)(load_be32(key + 4 * j) ^ sm4_fk[j]));
    uint32_t *rk = sm4_sched_of(k)->rk;
    for (unsigned r = 0; r < 32; r += 4) {
        rk[r] = (uint32_t)_mm_cvtsi128_si32(sm4_gfni_key_round(kv, 0, r));
        rk[r + 1] = (uint32_t)_mm_cvtsi128_si32(sm4_gfni_key_round(kv, 1, r + 1));
        rk[r + 2] = (uint32_t)_mm_cvtsi128_si32(sm4_gfni_key_round(kv, 2, r + 2));
        rk[r + 3] = (uint32_t)_mm_cvtsi128_si32(sm4_gfni_key_round(kv, 3, r + 3));
    }
}
#define SM4S_EXPAND_FROM sm4_gfni_expand
/* Short calls on xmm, aesni-avx's (sm4.h): up to 4 keys' schedules side by
 * side, one per word, against a 16-block pass per key. Hence AES-NI and
 * AVX2 below, which every CPU with AVX-512 and GFNI has. */
#define SM4S_ONESHOT_FROM sm4_aesni_avx_oneshot

#include "sm4_simd.h"

static int sm4_gfni_available(void)
{
    unsigned need = KUAI_CPU_AVX512 | KUAI_CPU_GFNI | KUAI_CPU_AESNI | KUAI_CPU_AVX2;
    return (kuai_cpu_features() & need) == need;
}

/* The best x86 S-box: above VAES. */
KUAI_REGISTER(sm4_gfni);
SM4S_IMPLS(sm4_gfni, "gfni", 300, sm4_gfni_available);
