/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, GFNI on 128-bit registers (VEX encoding): the gfni backend's S-box
 * (sm4_gfni.h) without AVX-512, on the aesni-avx backend's layout and
 * group counts (sm4_xmm_vocab.h), for CPUs with GFNI and AVX2 but no
 * AVX-512. It also holds what the gfni backend runs on xmm: key setup and
 * the short calls (one-shot and multi-key), whose lanes are four 32-bit
 * words, one key or block each (sm4.h).
 *
 * T's linear layer L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^
 * (B <<< 24) = B ^ (B <<< 24) ^ ((B ^ (B <<< 8) ^ (B <<< 16)) <<< 2): the
 * byte rotations as pshufb, one shift pair for <<< 2 (no vprold here).
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

/* The S-box on every byte. */
static inline sm4v sm4v_sbox(sm4v t)
{
    sm4v s =
        _mm_gf2p8affine_epi64_epi8(t, _mm_set1_epi64x(SM4_GFNI_PRE_MATRIX), SM4_GFNI_PRE_CONST);
    return _mm_gf2p8affineinv_epi64_epi8(s, _mm_set1_epi64x(SM4_GFNI_POST_MATRIX),
                                         SM4_GFNI_POST_CONST);
}

/* x0 ^ L(tau(t)). */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v s = sm4v_sbox(t);
    sm4v b8 = sm4v_shuffle8(s, sm4v_row(sm4_gfni_avx_rol8[0]));
    sm4v b16 = sm4v_shuffle8(s, sm4v_row(sm4_gfni_avx_rol8[1]));
    sm4v b24 = sm4v_shuffle8(s, sm4v_row(sm4_gfni_avx_rol8[2]));
    sm4v m = sm4v_xor(sm4v_xor(s, b8), b16);
    m = sm4v_or(sm4v_slli32(m, 2), sm4v_srli32(m, 30));
    return sm4v_xor(sm4v_xor(x0, s), sm4v_xor(b24, m));
}

/* x0 ^ L'(tau(t)), the key schedule's round (L'(B) = B ^ (B <<< 13) ^
 * (B <<< 23)) on every word. same (one key in every word) changes
 * nothing here: GFNI has no ShiftRows to undo. */
static inline sm4v sm4v_round_key(sm4v x0, sm4v t, int same)
{
    (void)same;
    sm4v b = sm4v_sbox(t);
    sm4v r13 = sm4v_or(sm4v_slli32(b, 13), sm4v_srli32(b, 19));
    sm4v r23 = sm4v_or(sm4v_slli32(b, 23), sm4v_srli32(b, 9));
    return sm4v_xor(sm4v_xor(x0, b), sm4v_xor(r13, r23));
}
#define SM4V_HAS_ROUND_KEY 1

#define SM4S_ONESHOT 1
#include "sm4_simd.h"

/* The gfni backend's short calls and key setup (sm4.h). */
void sm4_gfni_avx_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                          uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    sm4s_oneshot(c, keys, in, out, n, nblocks, enc);
}

void sm4_gfni_avx_mk_short(const kuai_key *const *keys, uint8_t *const *ivs,
                           const uint8_t *const *in, uint8_t *const *out, size_t n, size_t nblocks,
                           int enc)
{
    sm4s_mk_short(keys, ivs, in, out, n, nblocks, enc);
}

void sm4_gfni_avx_expand(kuai_key *k, const uint8_t *key)
{
    sm4s_expand(k, key);
}

void sm4_gfni_avx_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1)
{
    sm4s_expand2(k0, k1, key0, key1);
}

void sm4_gfni_avx_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    sm4s_expand4(k, key);
}

static int sm4_gfni_avx_available(void)
{
    unsigned need = KUAI_CPU_GFNI | KUAI_CPU_AVX2;
    return (kuai_cpu_features() & need) == need;
}

/* Below gfni (AVX-512) and, until a CPU with GFNI and VAES but no AVX-512
 * has timed both, below vaes; above aesni-avx. */
KUAI_REGISTER(sm4_gfni_avx);
SM4S_IMPLS(sm4_gfni_avx, "gfni-avx", 150, sm4_gfni_avx_available);
