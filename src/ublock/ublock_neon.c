/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, ARM64 NEON backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors) over NEON registers, tbl as the byte
 * shuffle. Every index the tables hold is below 16, where tbl and pshufb
 * agree. Two uBlock-128 passes run side by side (16 blocks, 167
 * instructions a round, no spills); with three, clang 19 spills state to
 * the stack inside the round loop. ASIMD is part of the ARMv8-A baseline; the check still follows
 * HWCAP.
 */
#include "ublock.h"

#include <arm_neon.h>
#include <string.h>

typedef uint8x16_t ub_v;
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

#define ub_u64(x) vreinterpretq_u64_u8(x)
#define ub_u32(x) vreinterpretq_u32_u8(x)
#define ub_xor(a, b) veorq_u8(a, b)
#define ub_and(a, b) vandq_u8(a, b)
#define ub_or(a, b) vorrq_u8(a, b)
#define ub_andn(a, b) vbicq_u8(b, a) /* ~a & b */
/* Shift counts are constants after inlining; vshlq takes them in a
 * register (negative: right), which the compiler turns into ushr/shl. */
#define ub_srl64(x, n) vreinterpretq_u8_u64(vshlq_u64(ub_u64(x), vdupq_n_s64(-(int64_t)(n))))
#define ub_sll64(x, n) vreinterpretq_u8_u64(vshlq_u64(ub_u64(x), vdupq_n_s64((int64_t)(n))))
#define ub_set1_8(c) vdupq_n_u8((uint8_t)(c))
#define ub_unpacklo64(a, b) vreinterpretq_u8_u64(vzip1q_u64(ub_u64(a), ub_u64(b)))
#define ub_unpackhi64(a, b) vreinterpretq_u8_u64(vzip2q_u64(ub_u64(a), ub_u64(b)))
#define ub_loadu(p) vld1q_u8((const uint8_t *)(const void *)(p))
#define ub_storeu(p, x) vst1q_u8((uint8_t *)(void *)(p), x)
#define ub_row(p) vld1q_u8((const uint8_t *)(const void *)(p))
#define ub_ones() vdupq_n_u8(0xff)

#define ub_shuf(x, idx) vqtbl1q_u8(x, idx)
#define ub_unpacklo32(a, b) vreinterpretq_u8_u32(vzip1q_u32(ub_u32(a), ub_u32(b)))
#define ub_unpackhi32(a, b) vreinterpretq_u8_u32(vzip2q_u32(ub_u32(a), ub_u32(b)))
#define ub_even32(a, b) vreinterpretq_u8_u32(vuzp1q_u32(ub_u32(a), ub_u32(b)))
#define ub_odd32(a, b) vreinterpretq_u8_u32(vuzp2q_u32(ub_u32(a), ub_u32(b)))

#include "ublock_bs.h"

static int ublock_neon_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_NEON) != 0;
}

#define UB_V128_ISA neon
#define UB_V128_NAME "neon"
#define UB_V128_AVAILABLE ublock_neon_available
#define UB_V128_PRIORITY 100 /* above ref */
#define UB_V128_NS128 2
#include "ublock_v128.h"
KUAI_REGISTER(ublock128_neon);
KUAI_REGISTER(ublock256_neon);
