/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 128-bit vocabulary on ARM64 ASIMD (NEON), as bytes
 * (uint8x16_t); the reinterprets cost nothing. tbl gives 0 for an index
 * >= 16 where pshufb looks at bit 7: callers use 0..15, where both agree. */
#ifndef KUAI_SIMD_NEON_H
#define KUAI_SIMD_NEON_H

#include "vocab.h"

#include <arm_neon.h>

typedef uint8x16_t v128;

#define v128_u64(x) vreinterpretq_u64_u8(x)
#define v128_u32(x) vreinterpretq_u32_u8(x)
#define v128_of64(x) vreinterpretq_u8_u64(x)
#define v128_of32(x) vreinterpretq_u8_u32(x)

#define v128_loadu(p) vld1q_u8((const uint8_t *)(const void *)(p))
#define v128_storeu(p, x) vst1q_u8((uint8_t *)(void *)(p), x)
#define v128_load(p) v128_loadu(p)
#define v128_row16(p) v128_loadu(p)
#define v128_xor(a, b) veorq_u8(a, b)
#define v128_and(a, b) vandq_u8(a, b)
#define v128_or(a, b) vorrq_u8(a, b)
#define v128_andn(a, b) vbicq_u8(b, a) /* ~a & b */
#define v128_zero() vdupq_n_u8(0)
#define v128_ones() vdupq_n_u8(0xff)
#define v128_set1_8(c) vdupq_n_u8((uint8_t)(c))
#define v128_set1_32(w) v128_of32(vdupq_n_u32((uint32_t)(w)))
#define v128_set64x2(lo, hi) vcombine_u8(vcreate_u8((uint64_t)(lo)), vcreate_u8((uint64_t)(hi)))
#define v128_shuf8(x, idx) vqtbl1q_u8(x, idx)
#define v128_srl64(x, n) v128_of64(vshrq_n_u64(v128_u64(x), n))
#define v128_sll64(x, n) v128_of64(vshlq_n_u64(v128_u64(x), n))
/* vshlq takes the count in a register (negative: right), which the compiler
 * turns into ushr/shl once it is a constant. */
#define v128_srl64v(x, n) v128_of64(vshlq_u64(v128_u64(x), vdupq_n_s64(-(int64_t)(n))))
#define v128_sll64v(x, n) v128_of64(vshlq_u64(v128_u64(x), vdupq_n_s64((int64_t)(n))))
#define v128_srl32(x, n) v128_of32(vshrq_n_u32(v128_u32(x), n))
#define v128_sll32(x, n) v128_of32(vshlq_n_u32(v128_u32(x), n))
#define v128_add32(a, b) v128_of32(vaddq_u32(v128_u32(a), v128_u32(b)))
#define v128_sub32(a, b) v128_of32(vsubq_u32(v128_u32(a), v128_u32(b)))
#define v128_cmpeq32(a, b) v128_of32(vceqq_u32(v128_u32(a), v128_u32(b)))
#define v128_cmpgt32(a, b) v128_of32(vcgtq_s32(vreinterpretq_s32_u8(a), vreinterpretq_s32_u8(b)))
#define v128_unpacklo32(a, b) v128_of32(vzip1q_u32(v128_u32(a), v128_u32(b)))
#define v128_unpackhi32(a, b) v128_of32(vzip2q_u32(v128_u32(a), v128_u32(b)))
#define v128_unpacklo64(a, b) v128_of64(vzip1q_u64(v128_u64(a), v128_u64(b)))
#define v128_unpackhi64(a, b) v128_of64(vzip2q_u64(v128_u64(a), v128_u64(b)))
#define v128_even32(a, b) v128_of32(vuzp1q_u32(v128_u32(a), v128_u32(b)))
#define v128_odd32(a, b) v128_of32(vuzp2q_u32(v128_u32(a), v128_u32(b)))
#define v128_unpacklo8(a, b) vzip1q_u8(a, b)
#define v128_unpackhi8(a, b) vzip2q_u8(a, b)
#define v128_swap64(x) vextq_u8(x, x, 8)
#define v128_xor3(a, b, c) veorq_u8(veorq_u8(a, b), c)
#define v128_has_xor3 0
#define v128_sel8(m, a, b) vbslq_u8(m, a, b)
#define v128_blend64(a, b) vcombine_u8(vget_low_u8(a), vget_high_u8(b))
#define v128_pin(x)                                                                                \
    __extension__({                                                                                \
        v128 pin_ = (x);                                                                           \
        __asm__("" : "+w"(pin_));                                                                  \
        pin_;                                                                                      \
    })
#define v128_shuf8z(x, idx) vqtbl1q_u8(x, idx) /* 0x80..0x8f are >= 16: 0 */

#endif
