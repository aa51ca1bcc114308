/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4's round function T through the AES instruction, shared by the AES-NI
 * (xmm) and VAES (ymm) backends; included by them before sm4_simd.h, after
 * defining the vocabulary of sm4_simd.h plus
 *
 *   sm4v_and, sm4v_or, sm4v_sub32, sm4v_srli32, sm4v_slli32,
 *   sm4v_cmpeq32, sm4v_cmpgt32 (signed), sm4v_zero(),
 *   sm4v_shuffle8(x, idx)   pshufb in every 128-bit lane
 *   sm4v_aesenclast(x, k)   the AES last round in every 128-bit lane
 *   sm4v_row(p)             a 16-byte table row in every 128-bit lane
 *
 * ---- S-box ---------------------------------------------------------------
 *
 * SM4's S-box is affine ∘ inversion ∘ affine over GF(2^8) (Liu et al., see
 * sm4_ref.c); so is AES's SubBytes, over an isomorphic field. With T the
 * field isomorphism (see sm4_gfni.c) and SB the AES S-box,
 * SB(z) = A_aes·inv_AES(z) + 0x63, SM4's S-box is
 *     S(x) = P·SB(Q·x + q) + p,   Q = T·A, q = T·C,
 *                                 P = A·T^-1·A_aes^-1, p = P·0x63 + C,
 * (the route of Saarinen's "sm4ni" note, 2018; the matrices were derived
 * here by search and checked on all 256 inputs against the standard's
 * table). Each affine map is split by nibbles, M·x + m = (M·lo + m) ^
 * (M·(hi << 4)), two 16-entry pshufb tables. aesenclast with a zero round
 * key gives SB after ShiftRows; MixColumns is not in the last round.
 *
 * ---- ShiftRows and L -------------------------------------------------------
 *
 * aesenclast also moves bytes: output byte i = SB(input byte sr(i)),
 * sr(r + 4c) = r + 4((c + r) mod 4) (the AES state is column-major). The
 * S-box and the output affine map are bytewise, so the bytes may be put
 * back afterwards, and that pshufb merges with the byte rotations of L:
 *     L(B) = B ^ (B <<< 24) ^ ((B ^ (B <<< 8) ^ (B <<< 16)) <<< 2)
 * takes B, B <<< 8, B <<< 16, B <<< 24 each as one pshufb straight from the
 * shifted S-box output, and one shift pair for <<< 2.
 */
#ifndef KUAI_SM4_AES_SBOX_H
#define KUAI_SM4_AES_SBOX_H

#include <stdint.h>

#include "sm4_vocab_ops.h"

/* Nibble tables of the input map Q·x + q and the output map P·y + p. The
 * constant is in the low-nibble table. */
static const uint8_t sm4_aes_pre_lo[16] = {0x3e, 0xb2, 0x0e, 0x82, 0xbb, 0x37, 0x8b, 0x07,
                                           0xa1, 0x2d, 0x91, 0x1d, 0x24, 0xa8, 0x14, 0x98};
static const uint8_t sm4_aes_pre_hi[16] = {0x00, 0xdc, 0x2e, 0xf2, 0xc5, 0x19, 0xeb, 0x37,
                                           0x08, 0xd4, 0x26, 0xfa, 0xcd, 0x11, 0xe3, 0x3f};
static const uint8_t sm4_aes_post_lo[16] = {0x6c, 0xd4, 0xa6, 0x1e, 0x52, 0xea, 0x98, 0x20,
                                            0x0b, 0xb3, 0xc1, 0x79, 0x35, 0x8d, 0xff, 0x47};
static const uint8_t sm4_aes_post_hi[16] = {0x00, 0xe0, 0x50, 0xb0, 0x9d, 0x7d, 0xcd, 0x2d,
                                            0xc0, 0x20, 0x90, 0x70, 0x5d, 0xbd, 0x0d, 0xed};

/* Where byte j's S-box output lands after ShiftRows: sr^-1(j). */
#define SM4_ISR(j) (((j)&3) + 4 * ((((j) >> 2) - ((j)&3)) & 3))
/* Byte j of (unshifted output <<< 8k) per 32-bit word (little-endian words:
 * rotating left by 8k takes byte (j - k) mod 4 of the same word). */
#define SM4_ISR_ROL(j, k) SM4_ISR(((j) & ~3) + ((((j)&3) - (k)) & 3))
#define SM4_ISR_ROW(k)                                                                             \
    {                                                                                              \
        SM4_ISR_ROL(0, k), SM4_ISR_ROL(1, k), SM4_ISR_ROL(2, k), SM4_ISR_ROL(3, k),                \
            SM4_ISR_ROL(4, k), SM4_ISR_ROL(5, k), SM4_ISR_ROL(6, k), SM4_ISR_ROL(7, k),            \
            SM4_ISR_ROL(8, k), SM4_ISR_ROL(9, k), SM4_ISR_ROL(10, k), SM4_ISR_ROL(11, k),          \
            SM4_ISR_ROL(12, k), SM4_ISR_ROL(13, k), SM4_ISR_ROL(14, k), SM4_ISR_ROL(15, k)         \
    }
static const uint8_t sm4_aes_isr_rol[4][16] = {SM4_ISR_ROW(0), SM4_ISR_ROW(1), SM4_ISR_ROW(2),
                                               SM4_ISR_ROW(3)};

/* The affine map of nibble tables lo, hi on every byte of x. */
static inline sm4v sm4v_affine_nibbles(sm4v x, const uint8_t *lo, const uint8_t *hi)
{
    const sm4v low4 = sm4v_set1(0x0f0f0f0fu);
    sm4v l = sm4v_and(x, low4), h = sm4v_and(sm4v_srli32(x, 4), low4);
    return sm4v_xor(sm4v_shuffle8(sm4v_row(lo), l), sm4v_shuffle8(sm4v_row(hi), h));
}

/* x0 ^ L(tau(t)). */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v s = sm4v_affine_nibbles(t, sm4_aes_pre_lo, sm4_aes_pre_hi);
    s = sm4v_aesenclast(s, sm4v_zero());
    s = sm4v_affine_nibbles(s, sm4_aes_post_lo, sm4_aes_post_hi);
    sm4v b0 = sm4v_shuffle8(s, sm4v_row(sm4_aes_isr_rol[0]));
    sm4v b8 = sm4v_shuffle8(s, sm4v_row(sm4_aes_isr_rol[1]));
    sm4v b16 = sm4v_shuffle8(s, sm4v_row(sm4_aes_isr_rol[2]));
    sm4v b24 = sm4v_shuffle8(s, sm4v_row(sm4_aes_isr_rol[3]));
    return sm4v_lin_rot(x0, b0, b8, b16, b24);
}

/* x0 ^ L'(tau(t)), the key schedule's round (L'(B) = B ^ (B <<< 13) ^
 * (B <<< 23)) on every word: the one-shot call runs the schedules of
 * several keys, one per word, beside the blocks. same: every word of t is
 * the same (one key in every word, as key setup runs it), so ShiftRows
 * moved only equal bytes and the shuffle back is left out of the
 * schedule's chain. */
static inline sm4v sm4v_round_key(sm4v x0, sm4v t, int same)
{
    sm4v s = sm4v_affine_nibbles(t, sm4_aes_pre_lo, sm4_aes_pre_hi);
    s = sm4v_aesenclast(s, sm4v_zero());
    s = sm4v_affine_nibbles(s, sm4_aes_post_lo, sm4_aes_post_hi);
    return sm4v_lin_key(x0, same ? s : sm4v_shuffle8(s, sm4v_row(sm4_aes_isr_rol[0])));
}
#define SM4V_HAS_ROUND_KEY 1

#if defined(__x86_64__) || defined(__i386__)
/*
 * tau for key setup, on one word: with the word in all four columns,
 * ShiftRows only moves equal bytes, so column 0 of aesenclast's output is
 * S of the word's bytes in place. 128-bit AES-NI, which every backend
 * including this header has.
 */
static inline uint32_t sm4_aes_tau(uint32_t a)
{
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i x = _mm_set1_epi32((int)a);
#define SM4_AES_NIBBLES(x, lo, hi)                                                                 \
    _mm_xor_si128(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(lo)),           \
                                   _mm_and_si128(x, low4)),                                        \
                  _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(hi)),           \
                                   _mm_and_si128(_mm_srli_epi32(x, 4), low4)))
    x = SM4_AES_NIBBLES(x, sm4_aes_pre_lo, sm4_aes_pre_hi);
    x = _mm_aesenclast_si128(x, _mm_setzero_si128());
    x = SM4_AES_NIBBLES(x, sm4_aes_post_lo, sm4_aes_post_hi);
#undef SM4_AES_NIBBLES
    return (uint32_t)_mm_cvtsi128_si32(x);
}
#define SM4S_TAU sm4_aes_tau
#endif /* x86; other ISAs define their own SM4S_TAU */

#endif
