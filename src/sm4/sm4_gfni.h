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

#endif
