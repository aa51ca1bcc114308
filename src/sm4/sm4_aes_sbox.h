/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4's round function T through the AES instruction, shared by the AES-NI
 * (xmm), VAES (ymm) and ARM armaes backends; included by them before
 * sm4_simd.h, after
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
 * S-box and every map after it are bytewise, so the bytes may be put back
 * afterwards, and that pshufb merges with L's byte rotations: row k of
 * sm4_aes_isr_rol puts the bytes back and rotates each word by 8k bits.
 *
 * ---- The cipher's rounds in the S-box's input form (SM4V_DOMAIN) ----------
 *
 * One block's rounds are a chain: each round waits for the one before it
 * (CBC encryption, short messages). Computed as above, a round is the input
 * map, aesenclast, the output map, the shuffles and L: ~21 operations deep.
 * The blocks' rounds keep each state word X as Y = Q·X + q (bytewise)
 * instead. A round's S-box input is then Y1 ^ Y2 ^ Y3 ^ Q·rk (three q's
 * are one), which aesenclast takes as it is, and the new word is
 *     Y0 ^ Q·L(P·v + p) = Y0 ^ N·v ^ c,   v = aesenclast's bytes put back,
 * with N = Q·L·P linear. L's rotations by 8, 16, 24 are byte moves, which
 * commute with the bytewise P and Q, and <<< 2 is, per byte, (b << 2) plus
 * the byte below's (b >> 6) moved up one byte: with H(b) = b << 2 and
 * D(b) = b >> 6 (within a byte),
 *     L = (I + H) + R8·(H + D) + R16·(H + D) + R24·(I + D),
 *     N = C0 + R8·C1 + R16·C1 + R24·C2,
 *         C0 = Q(I + H)P, C1 = Q(H + D)P, C2 = Q(I + D)P = C0 + C1,
 * so N·v = R0·C0v ^ R8·C1v ^ R16·C1v ^ R24·(C0v ^ C1v): two bytewise
 * linear maps (two nibble tables each) whose outputs go into place by the
 * same shuffles as before (byte rotation after ShiftRows' undoing). c =
 * Q·L(p, p, p, p) has four equal bytes, 0x76, which no rotation moves: it
 * sits in C1's low table, which three terms carry (three c's are one). A
 * round is XOR, aesenclast, the nibble split, a lookup, two XORs, a
 * shuffle and two XORs: ~12 operations deep instead of ~21, and 22 in all
 * against 28, 8 of them shuffles against 8. (A third map's tables for C2
 * measured slower: on a 2-core Xeon, Emerald Rapids, the round's six
 * lookups and three rotations wait on the two shuffle ports.) The words
 * enter through Q·x + q (the input map) and leave
 * through Q^-1·(y + q); the round keys through Q. (Tables derived here
 * from the ones above and checked against the standard's vector and every
 * backend's tests.)
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

/* The round's maps in the Y form (above): C0 and C1 (with c), Q without
 * its constant for the round keys (its high table is the input map's),
 * and Q^-1·(y + q) out. */
static const uint8_t sm4_aes_c0_lo[16] = {0x00, 0x86, 0xd3, 0x55, 0x78, 0xfe, 0xab, 0x2d,
                                          0x1c, 0x9a, 0xcf, 0x49, 0x64, 0xe2, 0xb7, 0x31};
static const uint8_t sm4_aes_c0_hi[16] = {0x00, 0xeb, 0xdc, 0x37, 0xf0, 0x1b, 0x2c, 0xc7,
                                          0xcd, 0x26, 0x11, 0xfa, 0x3d, 0xd6, 0xe1, 0x0a};
static const uint8_t sm4_aes_c1_lo[16] = {0x76, 0xa5, 0x7b, 0xa8, 0xd6, 0x05, 0xdb, 0x08,
                                          0x34, 0xe7, 0x39, 0xea, 0x94, 0x47, 0x99, 0x4a};
static const uint8_t sm4_aes_c1_hi[16] = {0x00, 0xb4, 0x49, 0xfd, 0x82, 0x36, 0xcb, 0x7f,
                                          0xbc, 0x08, 0xf5, 0x41, 0x3e, 0x8a, 0x77, 0xc3};
static const uint8_t sm4_aes_key_lo[16] = {0x00, 0x8c, 0x30, 0xbc, 0x85, 0x09, 0xb5, 0x39,
                                           0x9f, 0x13, 0xaf, 0x23, 0x1a, 0x96, 0x2a, 0xa6};
static const uint8_t sm4_aes_out_lo[16] = {0x75, 0xf0, 0xac, 0x29, 0x5b, 0xde, 0x82, 0x07,
                                           0xf5, 0x70, 0x2c, 0xa9, 0xdb, 0x5e, 0x02, 0x87};
static const uint8_t sm4_aes_out_hi[16] = {0x00, 0x55, 0x57, 0x02, 0x44, 0x11, 0x13, 0x46,
                                           0xaf, 0xfa, 0xf8, 0xad, 0xeb, 0xbe, 0xbc, 0xe9};

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

#define SM4V_DOMAIN 1
#define sm4v_dom_in(x) sm4v_affine_nibbles(x, sm4_aes_pre_lo, sm4_aes_pre_hi)
#define sm4v_dom_out(y) sm4v_affine_nibbles(y, sm4_aes_out_lo, sm4_aes_out_hi)
#define sm4v_dom_key(k) sm4v_affine_nibbles(k, sm4_aes_key_lo, sm4_aes_pre_hi)

/* y0 ^ r0 ^ r8 ^ r16 ^ r24, every round's last step: grouped so that two
 * XORs follow the last shuffles, y0 joining r0 while r8's runs. */
static inline sm4v sm4v_aes_sum(sm4v y0, sm4v r0, sm4v r8, sm4v r16, sm4v r24)
{
    sm4v a = sm4v_pin(sm4v_xor(y0, r0));
    a = sm4v_pin(sm4v_xor(a, r8));
    sm4v b = sm4v_pin(sm4v_xor(r16, r24));
    return sm4v_xor(a, b);
}

/* The round's lookups on aesenclast's output u: c[0] = C0·u, c[1] =
 * C1·u ^ c, c[2] = c[0] ^ c[1]. */
static inline void sm4v_round_maps(sm4v t, sm4v c[3])
{
    const sm4v low4 = sm4v_set1(0x0f0f0f0fu);
    sm4v u = sm4v_aesenclast(t, sm4v_zero());
    sm4v l = sm4v_and(u, low4), h = sm4v_and(sm4v_srli32(u, 4), low4);
    c[0] = sm4v_xor(sm4v_shuffle8(sm4v_row(sm4_aes_c0_lo), l),
                    sm4v_shuffle8(sm4v_row(sm4_aes_c0_hi), h));
    c[1] = sm4v_xor(sm4v_shuffle8(sm4v_row(sm4_aes_c1_lo), l),
                    sm4v_shuffle8(sm4v_row(sm4_aes_c1_hi), h));
    c[2] = sm4v_xor(c[0], c[1]);
}

/* y0 ^ N·v ^ c (above) for the S-box input t, all in the Y form. */
static inline sm4v sm4v_round(sm4v y0, sm4v t)
{
    sm4v c[3];
    sm4v_round_maps(t, c);
    sm4v r0 = sm4v_shuffle8(c[0], sm4v_row(sm4_aes_isr_rol[0]));
    sm4v r8 = sm4v_shuffle8(c[1], sm4v_row(sm4_aes_isr_rol[1]));
    sm4v r16 = sm4v_shuffle8(c[1], sm4v_row(sm4_aes_isr_rol[2]));
    sm4v r24 = sm4v_shuffle8(c[2], sm4v_row(sm4_aes_isr_rol[3]));
    return sm4v_aes_sum(y0, r0, r8, r16, r24);
}

/* sm4v_round with one word in every column (CBC encryption): ShiftRows
 * moved only equal bytes, so C0's term needs no shuffle and y0 joins it
 * while the shuffles run. */
static inline sm4v sm4v_round1(sm4v y0, sm4v t)
{
    sm4v c[3];
    sm4v_round_maps(t, c);
    sm4v r8 = sm4v_shuffle8(c[1], sm4v_row(sm4_aes_isr_rol[1]));
    sm4v r16 = sm4v_shuffle8(c[1], sm4v_row(sm4_aes_isr_rol[2]));
    sm4v r24 = sm4v_shuffle8(c[2], sm4v_row(sm4_aes_isr_rol[3]));
    return sm4v_aes_sum(y0, c[0], r8, r16, r24);
}
#define SM4V_HAS_ROUND1 1

/*
 * The key schedule's round in the same Y form (SM4V_KEY_DOMAIN, see
 * sm4_simd.h): L'(B) = B ^ (B <<< 13) ^ (B <<< 23) (standard, 7.3), and
 * per byte <<< 13 is <<< 8 of (b << 5) plus <<< 16 of (b >> 3), <<< 23 is
 * <<< 16 of (b << 7) plus <<< 24 of (b >> 1), so
 *     Q·L'·P = K0 + R8·K1 + R16·K2 + R24·K3,
 *     K0 = QP, K1 = Q(b << 5)P, K2 = Q((b >> 3) + (b << 7))P, K3 = Q(b >> 1)P,
 * four maps, Q·L'(p, p, p, p) = 0x28 in every byte in K0's low table.
 */
static const uint8_t sm4_aes_k_lo[4][16] = {
    {0x28, 0x4d, 0x4a, 0x2f, 0xf0, 0x95, 0x92, 0xf7, 0xfa, 0x9f, 0x98, 0xfd, 0x22, 0x47, 0x40,
     0x25},
    {0x00, 0x00, 0xc5, 0xc5, 0xcd, 0xcd, 0x08, 0x08, 0xe3, 0xe3, 0x26, 0x26, 0x2e, 0x2e, 0xeb,
     0xeb},
    {0x00, 0xe5, 0xcf, 0x2a, 0x39, 0xdc, 0xf6, 0x13, 0x12, 0xf7, 0xdd, 0x38, 0x2b, 0xce, 0xe4,
     0x01},
    {0x00, 0x03, 0xe2, 0xe1, 0x7a, 0x79, 0x98, 0x9b, 0x4e, 0x4d, 0xac, 0xaf, 0x34, 0x37, 0xd6,
     0xd5},
};
static const uint8_t sm4_aes_k_hi[4][16] = {
    {0x00, 0xe3, 0x19, 0xfa, 0x42, 0xa1, 0x5b, 0xb8, 0xcd, 0x2e, 0xd4, 0x37, 0x8f, 0x6c, 0x96,
     0x75},
    {0x00, 0x00, 0x00, 0x00, 0x26, 0x26, 0x26, 0x26, 0x00, 0x00, 0x00, 0x00, 0x26, 0x26, 0x26,
     0x26},
    {0x00, 0xc6, 0xaf, 0x69, 0x68, 0xae, 0xc7, 0x01, 0x43, 0x85, 0xec, 0x2a, 0x2b, 0xed, 0x84,
     0x42},
    {0x00, 0x37, 0xb1, 0x86, 0xef, 0xd8, 0x5e, 0x69, 0xeb, 0xdc, 0x5a, 0x6d, 0x04, 0x33, 0xb5,
     0x82},
};
#define SM4V_KEY_DOMAIN 1

/* y0 ^ Q·L'(tau(...)) for the S-box input t, in the Y form, on every word:
 * the one-shot call runs the schedules of several keys, one per word,
 * beside the blocks. same: every word of t is the same (one key in every
 * word, as key setup runs it), so ShiftRows moved only equal bytes and
 * K0's term needs no shuffle. */
static inline sm4v sm4v_round_key(sm4v y0, sm4v t, int same)
{
    const sm4v low4 = sm4v_set1(0x0f0f0f0fu);
    sm4v u = sm4v_aesenclast(t, sm4v_zero());
    sm4v l = sm4v_and(u, low4), h = sm4v_and(sm4v_srli32(u, 4), low4), r[4];
    for (int m = 0; m < 4; m++) {
        r[m] = sm4v_xor(sm4v_shuffle8(sm4v_row(sm4_aes_k_lo[m]), l),
                        sm4v_shuffle8(sm4v_row(sm4_aes_k_hi[m]), h));
        if (m || !same)
            r[m] = sm4v_shuffle8(r[m], sm4v_row(sm4_aes_isr_rol[m]));
    }
    return sm4v_aes_sum(y0, r[0], r[1], r[2], r[3]);
}

#endif
