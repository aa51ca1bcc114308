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

#include <string.h>

#include "../simd/neon.h"

#define UB_V_ISA v128
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

#include "ublock_bs.h"

static int ublock_neon_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_NEON) != 0;
}

#define UB_V128_ISA neon
#define UB_V128_NAME "neon"
#define UB_V128_AVAILABLE ublock_neon_available
#define UB_V128_NS128 2
#define UB_V128_LOW_LATENCY
#include "ublock_v128.h"

/* ---- the low-latency kernel in front ------------------------------------- */

/* ublock_ll.h over this file's vocabulary: the same kernel as ssse3's, its
 * one-shot calls on the raw schedule (the nibble key schedule is x86's). */
#define UL_FN(name) ublock_ll_neon_##name
#include "ublock_ll.h"

/* Crossovers (blocks): estimates from instruction counts, not timed on
 * NEON hardware (docs/performance.md, "The low-latency kernel on ARM64 and
 * LoongArch64"): a wide pass costs the same for 1 block as for 8, about
 * as much as 4-5 blocks of the low-latency kernel, for both members. */
UL_FRONT(ublock128_neon_, 5, 8)
UL_FRONT(ublock256_neon_, 5, 8)
UL_NARROW_IMPL(ublock128_neon_ll, "neon", KUAI_FAMILY_UBLOCK128, ublock_neon_available);
UL_NARROW_IMPL(ublock256_neon_ll, "neon", KUAI_FAMILY_UBLOCK256, ublock_neon_available);
/* Above ref. */
KUAI_REGISTER(ublock128_neon);
UL_IMPL(ublock128_neon, "neon", KUAI_FAMILY_UBLOCK128, 100, ublock_neon_available, ublock128_neon_,
        8, &ublock128_neon_ll);
KUAI_REGISTER(ublock256_neon);
UL_IMPL(ublock256_neon, "neon", KUAI_FAMILY_UBLOCK256, 100, ublock_neon_available, ublock256_neon_,
        8, &ublock256_neon_ll);
