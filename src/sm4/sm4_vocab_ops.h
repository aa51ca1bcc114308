/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sm4_simd.h's derived operations for a vocabulary without three-input
 * XORs, rotations or mask registers (SSE, AVX2, NEON): byte order, the
 * four-input XOR of a round, the counter words of CTR, L and L'. Included by the S-box headers
 * (sm4_aes_sbox.h) and the backends that have their own S-box
 * (sm4_gfni_avx.c), after the vocabulary: sm4v_shuffle8, sm4v_row,
 * sm4v_xor, sm4v_and, sm4v_or, sm4v_set1, sm4v_add32, sm4v_sub32,
 * sm4v_slli32, sm4v_srli32, sm4v_cmpeq32, sm4v_cmpgt32 (signed),
 * sm4v_zero(). Also the linear layers L and L' of a round whose S-box
 * output comes as byte rotations.
 */
#ifndef KUAI_SM4_VOCAB_OPS_H
#define KUAI_SM4_VOCAB_OPS_H

#include <stdint.h>

/* Byte order of each 32-bit word reversed (the words are big-endian). */
static const uint8_t sm4_bswap32_row[16] = {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12};

static inline sm4v sm4v_bswap32(sm4v x)
{
    return sm4v_shuffle8(x, sm4v_row(sm4_bswap32_row));
}

/* d, the word the previous round just wrote, last: one XOR on the chain */
#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor(sm4v_xor(a, b), c), d)

/* x0 ^ L(B), L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24)
 * = B ^ (B <<< 24) ^ ((B ^ (B <<< 8) ^ (B <<< 16)) <<< 2) (standard,
 * 6.2), from B's byte rotations b0 = B, b8, b16, b24: each one pshufb
 * from the S-box's output, one shift pair for <<< 2. */
static inline sm4v sm4v_lin_rot(sm4v x0, sm4v b0, sm4v b8, sm4v b16, sm4v b24)
{
    sm4v m = sm4v_xor(sm4v_xor(b0, b8), b16);
    m = sm4v_or(sm4v_slli32(m, 2), sm4v_srli32(m, 30));
    return sm4v_xor(sm4v_xor(x0, b0), sm4v_xor(b24, m));
}

/* x0 ^ L'(b), the key schedule's L'(B) = B ^ (B <<< 13) ^ (B <<< 23)
 * (standard, 7.3). */
static inline sm4v sm4v_lin_key(sm4v x0, sm4v b)
{
    sm4v r13 = sm4v_or(sm4v_slli32(b, 13), sm4v_srli32(b, 19));
    sm4v r23 = sm4v_or(sm4v_slli32(b, 23), sm4v_srli32(b, 9));
    return sm4v_xor(sm4v_xor(x0, b), sm4v_xor(r13, r23));
}

/*
 * x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane.
 * Word 3 wrapped iff it ended below the addend (an unsigned compare, made
 * signed by flipping the top bits); the carry, an all-ones mask, passes on
 * through every word that became 0. Subtracting the mask adds 1.
 */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    const sm4v top = sm4v_set1(0x80000000u);
    x[3] = sm4v_add32(sm4v_set1(w[3]), off);
    sm4v c = sm4v_cmpgt32(sm4v_xor(off, top), sm4v_xor(x[3], top));
    for (int j = 2; j >= 0; j--) {
        x[j] = sm4v_sub32(sm4v_set1(w[j]), c);
        c = sm4v_and(c, sm4v_cmpeq32(x[j], sm4v_zero()));
    }
}

#endif
