/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 256-bit vocabulary on LoongArch LASX, the operations the
 * bitsliced AES (src/aes/aes_bs.h) and uBlock's wide kernels
 * (src/ublock/ublock_bs.h, ublock_lasx.c) and SM4's groups
 * (src/sm4/sm4_simd.h, sm4_lasx.c) use; as avx2.h's, xvshuf.b,
 * the interleaves, picks and shifts work within each 128-bit lane, and,
 * as on LSX, the interleaves and picks take the high source first. Files
 * that include it are compiled with -mlasx. */
#ifndef KUAI_SIMD_LASX_H
#define KUAI_SIMD_LASX_H

#include "vocab.h"

#include <lasxintrin.h>
#include <stdint.h>
#include <string.h>

typedef __m256i v256;

#define v256_loadu(p) __lasx_xvld((const void *)(p), 0)
#define v256_storeu(p, x) __lasx_xvst(x, (void *)(p), 0)
#define v256_load(p) v256_loadu(p)
#define v256_xor(a, b) __lasx_xvxor_v(a, b)
#define v256_and(a, b) __lasx_xvand_v(a, b)
#define v256_or(a, b) __lasx_xvor_v(a, b)
#define v256_andn(a, b) __lasx_xvandn_v(a, b) /* ~a & b */
#define v256_ones() __lasx_xvreplgr2vr_b(-1)
#define v256_set1_8(c) __lasx_xvreplgr2vr_b((int)(c))
#define v256_set1_32(w) __lasx_xvreplgr2vr_w((int)(w))
#define v256_zero() __lasx_xvreplgr2vr_b(0)
#define v256_add32(a, b) __lasx_xvadd_w(a, b)
#define v256_sub32(a, b) __lasx_xvsub_w(a, b)
#define v256_srl64v(x, n) __lasx_xvsrl_d(x, __lasx_xvreplgr2vr_d((long)(n)))
#define v256_sll64v(x, n) __lasx_xvsll_d(x, __lasx_xvreplgr2vr_d((long)(n)))
#define v256_unpacklo32(a, b) __lasx_xvilvl_w(b, a)
#define v256_unpackhi32(a, b) __lasx_xvilvh_w(b, a)
#define v256_unpacklo64(a, b) __lasx_xvilvl_d(b, a)
#define v256_unpackhi64(a, b) __lasx_xvilvh_d(b, a)
#define v256_even32(a, b) __lasx_xvpickev_w(b, a)
#define v256_odd32(a, b) __lasx_xvpickod_w(b, a)
#define v256_pin(x)                                                                                \
    __extension__({                                                                                \
        v256 pin_ = (x);                                                                           \
        __asm__("" : "+f"(pin_));                                                                  \
        pin_;                                                                                      \
    })
/* Beyond vocab.h, for uBlock's 256-bit wide kernels (ublock_w256.h), as
 * avx2.h has them: bytes equal (all ones) or not; 128-bit lanes {a.lo,
 * b.lo} (imm 0x20) or {a.hi, b.hi} (0x31) as vperm2i128; qwords by an
 * immediate as vpermq; dwords across lanes by index as vpermd; dwords from
 * eight integers, the first lowest. */
#define v256_cmpeq8(a, b) __lasx_xvseq_b(a, b)
#define v256_lanes(a, b, imm) __lasx_xvpermi_q(b, a, imm)
#define v256_perm64(x, imm) __lasx_xvpermi_d(x, imm)
#define v256_perm32(x, idx) __lasx_xvperm_w(x, idx)
#define v256_set32(a, b, c, d, e, f, g, h) ((__m256i)(v8i32){a, b, c, d, e, f, g, h})
/* xvshuf.b xd, xj, xk, xa, per 128-bit lane: byte i = (xa[i] & 31) < 16 ?
 * xk[xa[i]] : xj[xa[i] - 16]; with both sources x, pshufb's for 0..15 */
#define v256_shuf8(x, idx) __lasx_xvshuf_b(x, x, idx)
#define v256_srl64(x, n) __lasx_xvsrli_d(x, n)
#define v256_sll64(x, n) __lasx_xvslli_d(x, n)

/* 16 bytes from p into both lanes (no 16-byte load into a 256-bit
 * register among the intrinsics: two 64-bit words, each into its place in
 * both lanes) */
static inline v256 v256_row16(const void *p)
{
    uint64_t w[2];
    memcpy(w, p, 16);
    v256 x = __lasx_xvreplgr2vr_d((long)w[0]);
    x = __lasx_xvinsgr2vr_d(x, (long)w[1], 1);
    return __lasx_xvinsgr2vr_d(x, (long)w[1], 3);
}

#endif
