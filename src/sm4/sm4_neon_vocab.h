/* SPDX-License-Identifier: Apache-2.0 */
/* sm4_simd.h's vocabulary on NEON (uint32x4_t, one block per word lane
 * set), shared by sm4_armaes.c and sm4_neon.c; each defines SM4S_G and
 * SM4S_MK_G first. */
#ifndef KUAI_SM4_NEON_VOCAB_H
#define KUAI_SM4_NEON_VOCAB_H

#include <arm_neon.h>

typedef uint32x4_t sm4v;
#define SM4V_W 4

#define sm4v_u8(x) vreinterpretq_u8_u32(x)
#define sm4v_of8(x) vreinterpretq_u32_u8(x)
#define sm4v_loadu(p) sm4v_of8(vld1q_u8((const uint8_t *)(const void *)(p)))
#define sm4v_storeu(p, x) vst1q_u8((uint8_t *)(void *)(p), sm4v_u8(x))
#define sm4v_row(p) sm4v_loadu(p)
#define sm4v_xor(a, b) veorq_u32(a, b)
#define sm4v_and(a, b) vandq_u32(a, b)
#define sm4v_or(a, b) vorrq_u32(a, b)
#define sm4v_set1(w) vdupq_n_u32((uint32_t)(w))
#define sm4v_zero() vdupq_n_u32(0)
#define sm4v_add32(a, b) vaddq_u32(a, b)
#define sm4v_sub32(a, b) vsubq_u32(a, b)
#define sm4v_srli32(x, n) vshrq_n_u32(x, n)
#define sm4v_slli32(x, n) vshlq_n_u32(x, n)
#define sm4v_cmpeq32(a, b) vceqq_u32(a, b)
#define sm4v_cmpgt32(a, b) vcgtq_s32(vreinterpretq_s32_u32(a), vreinterpretq_s32_u32(b))
/* tbl gives 0 for an index >= 16, pshufb for one with bit 7 set: the
 * tables here hold 0..15 only, where both agree. */
#define sm4v_shuffle8(x, idx) sm4v_of8(vqtbl1q_u8(sm4v_u8(x), sm4v_u8(idx)))
#define sm4v_unpacklo32(a, b) vzip1q_u32(a, b)
#define sm4v_unpackhi32(a, b) vzip2q_u32(a, b)
#define sm4v_unpacklo64(a, b)                                                                      \
    vreinterpretq_u32_u64(vzip1q_u64(vreinterpretq_u64_u32(a), vreinterpretq_u64_u32(b)))
#define sm4v_unpackhi64(a, b)                                                                      \
    vreinterpretq_u32_u64(vzip2q_u64(vreinterpretq_u64_u32(a), vreinterpretq_u64_u32(b)))
/* an XOR tree's grouping kept as written (compilers re-associate) */
#define sm4v_pin(x)                                                                                \
    __extension__({                                                                                \
        sm4v pin_ = (x);                                                                           \
        __asm__("" : "+w"(pin_));                                                                  \
        pin_;                                                                                      \
    })

/* See sm4_simd.h: with one 128-bit lane, position p holds block p. */
static inline sm4v sm4v_lane_blocks(void)
{
    static const uint32_t p[4] = {0, 1, 2, 3};
    return vld1q_u32(p);
}

#endif
