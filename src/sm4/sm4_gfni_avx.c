/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, GFNI on 128-bit registers (VEX encoding): the gfni backend's S-box
 * (sm4_gfni.h) without AVX-512, on the aesni-avx backend's layout and
 * group counts (sm4_xmm_vocab.h), for CPUs with GFNI and AVX2 but no
 * AVX-512. It also holds what the gfni backend runs on xmm: key setup and
 * the short calls (one-shot and multi-key), whose lanes are four 32-bit
 * words, one key or block each (sm4.h).
 *
 * The rounds in the S-box's input form (sm4_gfni.h), L's byte rotations
 * as pshufb (no vprold without AVX-512).
 */
#include "sm4.h"
#include "sm4_gfni.h"
#include "sm4_xmm_vocab.h"

#include "sm4_vocab_ops.h"

/* <<< 8, 16, 24 of every 32-bit word, as pshufb rows. */
static const uint8_t sm4_gfni_avx_rol8[3][16] = {
    {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14},
    {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13},
    {1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12},
};

/* The rounds in the S-box's input form (sm4_gfni.h). */
#define SM4_GFNI_AFFINE(x, m, c) _mm_gf2p8affine_epi64_epi8(x, _mm_set1_epi64x(m), c)
#define SM4_GFNI_INV(x, m, c) _mm_gf2p8affineinv_epi64_epi8(x, _mm_set1_epi64x(m), c)

/* y0 ^ a ^ (b <<< 8) ^ (c <<< 16) ^ (d <<< 24) on every word: every
 * round's last step, grouped so that two XORs follow the rotations. */
static inline sm4v sm4_gfni_avx_sum(sm4v y0, sm4v a, sm4v b, sm4v c, sm4v d)
{
    sm4v s = sm4v_pin(sm4v_xor(y0, a));
    s = sm4v_pin(sm4v_xor(s, sm4v_shuffle8(b, sm4v_row(sm4_gfni_avx_rol8[0]))));
    sm4v t = sm4v_pin(sm4v_xor(sm4v_shuffle8(c, sm4v_row(sm4_gfni_avx_rol8[1])),
                               sm4v_shuffle8(d, sm4v_row(sm4_gfni_avx_rol8[2]))));
    return sm4v_xor(s, t);
}

/* y0 ^ N·v ^ c for the S-box input t, all in the Y form. */
static inline sm4v sm4v_round(sm4v y0, sm4v t)
{
    sm4v c0 = SM4_GFNI_INV(t, SM4_GFNI_C0_MATRIX, 0);
    sm4v c1 = SM4_GFNI_INV(t, SM4_GFNI_C1_MATRIX, SM4_GFNI_C1_CONST);
    return sm4_gfni_avx_sum(y0, c0, c1, c1, sm4v_xor(c0, c1));
}

/* sm4v_round for one chain (CBC encryption): C0 + C1 by its own GFNI
 * instead of an XOR of the two, one operation less deep, and c in C0's
 * term alone (once). */
static inline sm4v sm4v_round1(sm4v y0, sm4v t)
{
    sm4v c1 = SM4_GFNI_INV(t, SM4_GFNI_C1_MATRIX, 0);
    return sm4_gfni_avx_sum(y0, SM4_GFNI_INV(t, SM4_GFNI_C0_MATRIX, SM4_GFNI_C1_CONST), c1, c1,
                            SM4_GFNI_INV(t, SM4_GFNI_C2_MATRIX, 0));
}
#define SM4V_HAS_ROUND1 1

/* The key schedule's round in the same form (SM4V_KEY_DOMAIN, sm4_simd.h):
 * y0 ^ Q·L'(tau(...)) for the S-box input t, on every word. same (one key
 * in every word) changes nothing here: GFNI has no ShiftRows to undo. */
#define SM4V_KEY_DOMAIN 1
static inline sm4v sm4v_round_key(sm4v y0, sm4v t, int same)
{
    (void)same;
    return sm4_gfni_avx_sum(y0, SM4_GFNI_INV(t, SM4_GFNI_K0_MATRIX, SM4_GFNI_K0_CONST),
                            SM4_GFNI_INV(t, SM4_GFNI_K1_MATRIX, 0),
                            SM4_GFNI_INV(t, SM4_GFNI_K2_MATRIX, 0),
                            SM4_GFNI_INV(t, SM4_GFNI_K3_MATRIX, 0));
}

#define SM4S_ONESHOT 1
#include "sm4_simd.h"

/* The gfni backend's short calls and key setup (sm4.h). */
SM4S_SHORT_EXPORT(sm4_gfni_avx)

static int sm4_gfni_avx_available(void)
{
    unsigned need = KUAI_CPU_GFNI | KUAI_CPU_AVX2;
    return (kuai_cpu_features() & need) == need;
}

/* Below gfni (AVX-512) and, until a CPU with GFNI and VAES but no AVX-512
 * has timed both, below vaes; above aesni-avx. */
KUAI_REGISTER(sm4_gfni_avx);
SM4S_IMPLS(sm4_gfni_avx, "gfni-avx", 150, sm4_gfni_avx_available);
