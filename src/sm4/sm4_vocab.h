/* SPDX-License-Identifier: Apache-2.0 */
/* sm4_simd.h's vocabulary from src/simd/: the backend includes the ISA's
 * header, names its vector type (SM4V_ISA: v128, v256) and includes this;
 * what differs per backend (sm4v_aesenclast, sm4v_lane_blocks, group
 * counts) stays in its own file. */
#ifndef KUAI_SM4_VOCAB_H
#define KUAI_SM4_VOCAB_H

typedef SM4V_ISA sm4v;
#define sm4v_loadu KUAI_V(SM4V_ISA, loadu)
#define sm4v_storeu KUAI_V(SM4V_ISA, storeu)
#define sm4v_row KUAI_V(SM4V_ISA, row16)
#define sm4v_xor KUAI_V(SM4V_ISA, xor)
#define sm4v_and KUAI_V(SM4V_ISA, and)
#define sm4v_or KUAI_V(SM4V_ISA, or)
#define sm4v_set1 KUAI_V(SM4V_ISA, set1_32)
#define sm4v_zero KUAI_V(SM4V_ISA, zero)
#define sm4v_add32 KUAI_V(SM4V_ISA, add32)
#define sm4v_sub32 KUAI_V(SM4V_ISA, sub32)
#define sm4v_srli32 KUAI_V(SM4V_ISA, srl32)
#define sm4v_slli32 KUAI_V(SM4V_ISA, sll32)
#define sm4v_cmpeq32 KUAI_V(SM4V_ISA, cmpeq32)
#define sm4v_cmpgt32 KUAI_V(SM4V_ISA, cmpgt32)
#define sm4v_shuffle8 KUAI_V(SM4V_ISA, shuf8)
#define sm4v_unpacklo32 KUAI_V(SM4V_ISA, unpacklo32)
#define sm4v_unpackhi32 KUAI_V(SM4V_ISA, unpackhi32)
#define sm4v_unpacklo64 KUAI_V(SM4V_ISA, unpacklo64)
#define sm4v_unpackhi64 KUAI_V(SM4V_ISA, unpackhi64)
/* an XOR tree's grouping kept as written (compilers re-associate) */
#define sm4v_pin KUAI_V(SM4V_ISA, pin)

#endif
