/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sm4_simd.h's derived operations for a vocabulary without three-input
 * XORs, rotations or mask registers (SSE, AVX2, NEON): byte order, the
 * four-input XOR of a round, the counter words of CTR. Included by the S-box headers
 * (sm4_aes_sbox.h) and the backends that have their own S-box
 * (sm4_gfni_avx.c), after the vocabulary: sm4v_shuffle8, sm4v_row,
 * sm4v_xor, sm4v_and, sm4v_or, sm4v_set1, sm4v_add32, sm4v_sub32,
 * sm4v_slli32, sm4v_srli32, sm4v_cmpeq32, sm4v_cmpgt32 (signed),
 * sm4v_zero().
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
