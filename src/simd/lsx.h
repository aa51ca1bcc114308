/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 128-bit vocabulary on LoongArch LSX. Its interleaves and picks
 * take the high source first (vilvl.w vd, vj, vk = {vk.w0, vj.w0, vk.w1,
 * vj.w1}), hence the swapped operands; vshuf.b with both sources x picks
 * from x for indices 0..15 as pshufb does. */
#ifndef KUAI_SIMD_LSX_H
#define KUAI_SIMD_LSX_H

#include "vocab.h"

#include <lsxintrin.h>

typedef __m128i v128;

#define v128_loadu(p) __lsx_vld((const void *)(p), 0)
#define v128_storeu(p, x) __lsx_vst(x, (void *)(p), 0)
#define v128_load(p) v128_loadu(p)
#define v128_row16(p) v128_loadu(p)
#define v128_xor(a, b) __lsx_vxor_v(a, b)
#define v128_and(a, b) __lsx_vand_v(a, b)
#define v128_or(a, b) __lsx_vor_v(a, b)
#define v128_andn(a, b) __lsx_vandn_v(a, b) /* ~a & b */
#define v128_zero() __lsx_vreplgr2vr_b(0)
#define v128_ones() __lsx_vreplgr2vr_b(-1)
#define v128_set1_8(c) __lsx_vreplgr2vr_b((int)(c))
#define v128_set1_32(w) __lsx_vreplgr2vr_w((int)(w))
#define v128_set64x2(lo, hi) __lsx_vinsgr2vr_d(__lsx_vreplgr2vr_d((long)(lo)), (long)(hi), 1)
/* vshuf.b vd, vj, vk, va: byte i = (va[i] & 31) < 16 ? vk[va[i]] : vj[va[i] - 16] */
#define v128_shuf8(x, idx) __lsx_vshuf_b(x, x, idx)
#define v128_srl64(x, n) __lsx_vsrli_d(x, n)
#define v128_sll64(x, n) __lsx_vslli_d(x, n)
/* vsrl.d/vsll.d take the count per element from a register, which the
 * compiler turns into vsrli/vslli once it is a constant. */
#define v128_srl64v(x, n) __lsx_vsrl_d(x, __lsx_vreplgr2vr_d((long)(n)))
#define v128_sll64v(x, n) __lsx_vsll_d(x, __lsx_vreplgr2vr_d((long)(n)))
#define v128_srl32(x, n) __lsx_vsrli_w(x, n)
#define v128_sll32(x, n) __lsx_vslli_w(x, n)
#define v128_add32(a, b) __lsx_vadd_w(a, b)
#define v128_sub32(a, b) __lsx_vsub_w(a, b)
#define v128_cmpeq32(a, b) __lsx_vseq_w(a, b)
#define v128_cmpgt32(a, b) __lsx_vslt_w(b, a) /* signed */
#define v128_unpacklo32(a, b) __lsx_vilvl_w(b, a)
#define v128_unpackhi32(a, b) __lsx_vilvh_w(b, a)
#define v128_unpacklo64(a, b) __lsx_vilvl_d(b, a)
#define v128_unpackhi64(a, b) __lsx_vilvh_d(b, a)
/* vpickev.w vd, vj, vk: {vk.w0, vk.w2, vj.w0, vj.w2}; vpickod.w the odd ones */
#define v128_even32(a, b) __lsx_vpickev_w(b, a)
#define v128_odd32(a, b) __lsx_vpickod_w(b, a)
#define v128_unpacklo8(a, b) __lsx_vilvl_b(b, a)
#define v128_unpackhi8(a, b) __lsx_vilvh_b(b, a)
#define v128_swap64(x) __lsx_vshuf4i_w(x, 0x4e)
/* vextrins.d vd, vj, 0x11: vd.d1 = vj.d1 */
#define v128_xor3(a, b, c) __lsx_vxor_v(__lsx_vxor_v(a, b), c)
#define v128_has_xor3 0
#define v128_sel8(m, a, b) __lsx_vbitsel_v(b, a, m)
#define v128_blend64(a, b) __lsx_vextrins_d(a, b, 0x11)
#define v128_pin(x)                                                                                \
    __extension__({                                                                                \
        v128 pin_ = (x);                                                                           \
        __asm__("" : "+f"(pin_));                                                                  \
        pin_;                                                                                      \
    })
/* vshuf.b reads an index modulo 32 (0x80 is 0): indices above 15 clamped
 * to 16, which picks the zero source */
#define v128_shuf8z(x, idx)                                                                        \
    __lsx_vshuf_b(v128_zero(), x, __lsx_vmin_bu(idx, __lsx_vreplgr2vr_b(16)))

#endif
