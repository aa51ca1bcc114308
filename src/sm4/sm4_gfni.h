/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4's S-box through GFNI, for the gfni (zmm) and gfni-avx (xmm) backends.
 *
 * SM4's S-box is S(x) = A·(A·x + C)^-1 + C with the inversion in
 * GF(2^8)/(x^8+x^7+x^6+x^5+x^4+x^2+1) (see sm4_ref.c). GFNI inverts in the
 * AES field GF(2^8)/(x^8+x^4+x^3+x+1), which is isomorphic: with the linear
 * map T sending x^i to beta^i, beta = 0x23 a root of SM4's polynomial in the
 * AES field, T(a·b) = T(a)·T(b), so
 *     S(x) = (A·T^-1) · inv_AES((T·A)·x + T·C) + C,
 * one gf2p8affineqb (matrix T·A, constant T·C) and one gf2p8affineinvqb
 * (matrix A·T^-1, constant C). (The isomorphism route is the one of
 * Saarinen's "sm4ni" note, 2018; T and the products were derived here by
 * search over the 8 roots and checked on all 256 inputs against the
 * standard's table.)
 */
#ifndef KUAI_SM4_GFNI_H
#define KUAI_SM4_GFNI_H

/* gf2p8affineqb matrices as 64-bit operands: byte 7 - i is the row giving
 * output bit i (bit j of the row selects input bit j). */
#define SM4_GFNI_PRE_MATRIX 0x4c287db91a22505dLL  /* T·A */
#define SM4_GFNI_PRE_CONST 0x3e                   /* T·C */
#define SM4_GFNI_POST_MATRIX 0xf3ab34a974a6b589LL /* A·T^-1 */
#define SM4_GFNI_POST_CONST 0xd3                  /* C */

/*
 * The cipher's rounds in the S-box's input form (SM4V_DOMAIN; the
 * derivation is sm4_aes_sbox.h's, with Q = T·A, P = A·T^-1 and the
 * inversion inside gf2p8affineinvqb): each state word X is kept as
 * Y = Q·X + T·C, a round's S-box input is Y1 ^ Y2 ^ Y3 ^ Q·rk, and the new
 * word is Y0 ^ R0·C0·v ^ R8·C1·v ^ R16·C1·v ^ R24·(C0·v ^ C1·v) ^ c with v
 * the inverse of that input: two gf2p8affineinvqb side by side (C1 with
 * c, which three terms carry), byte rotations and XORs. A round then has
 * one GFNI instruction on its chain instead of two, and L's rotations by
 * 2 are in the matrices. The words leave through Q^-1·(y + T·C).
 * (Matrices derived here from the ones above and checked against the
 * standard's vector and every backend's tests.)
 */
#define SM4_GFNI_C0_MATRIX 0x040db891e9a481b7LL /* Q·(I + H)·P, H(b) = b << 2 */
#define SM4_GFNI_C1_MATRIX 0x2c020425162040adLL /* Q·(H + D)·P, D(b) = b >> 6 */
#define SM4_GFNI_C1_CONST 0x63                  /* c = Q·L(C, C, C, C), one byte */
#define SM4_GFNI_C2_MATRIX 0x280fbcb4ff84c11aLL /* Q·(I + D)·P = C0 + C1 */
/* The key schedule's round in that form (sm4_aes_sbox.h's K0..K3, L' for
 * L): Y0 ^ R0·K0·v ^ R8·K1·v ^ R16·K2·v ^ R24·K3·v ^ c', four GFNI. */
#define SM4_GFNI_K0_MATRIX 0x280f0901760dc1afLL  /* Q·P */
#define SM4_GFNI_K0_CONST 0xc5                   /* c' = Q·L'(C, C, C, C), one byte */
#define SM4_GFNI_K1_MATRIX 0xabf358c700f3ababLL  /* Q·(b << 5)·P */
#define SM4_GFNI_K2_MATRIX 0x13b5336648748933LL  /* Q·((b >> 3) + (b << 7))·P */
#define SM4_GFNI_K3_MATRIX 0x54c1eccce6812f59LL  /* Q·(b >> 1)·P */
#define SM4_GFNI_OUT_MATRIX 0xb3a4f5863284728bLL /* Q^-1 */
#define SM4_GFNI_OUT_CONST 0x75                  /* Q^-1·T·C */

/* The maps in and out of that form, for a file that defines its
 * SM4_GFNI_AFFINE(x, matrix, constant) (gf2p8affineqb of its width) and
 * SM4_GFNI_INV(x, matrix, constant) (gf2p8affineinvqb). */
#define SM4V_DOMAIN 1
#define sm4v_dom_in(x) SM4_GFNI_AFFINE(x, SM4_GFNI_PRE_MATRIX, SM4_GFNI_PRE_CONST)
#define sm4v_dom_key(k) SM4_GFNI_AFFINE(k, SM4_GFNI_PRE_MATRIX, 0)
#define sm4v_dom_out(y) SM4_GFNI_AFFINE(y, SM4_GFNI_OUT_MATRIX, SM4_GFNI_OUT_CONST)

#endif
