/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, LoongArch LSX backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors, the low-latency kernel of ublock_ll.h in
 * front) over LSX registers, vshuf.b as the byte
 * shuffle (both sources the same vector, so indices 0..15 pick from it as
 * pshufb does). Two uBlock-128 passes side by side, as on NEON.
 * Compiled with -mlsx for this file only; chosen from HWCAP_LOONGARCH_LSX.
 */
#include "ublock.h"

#include <string.h>

#include "../simd/lsx.h"
#include "ublock_expand_nib.h"

#define UB_V_ISA v128
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

/* key setup: the nibble key schedule, with the low-latency kernel's
 * round-key forms stored */
static void ublock_expand_nib_lsx(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    ub_expand_nib_any(s, c, key);
}
#define UB_KEY_SETUP ublock_expand_nib_lsx
#include "ublock_bs.h"

static int ublock_lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

#define UB_V128_ISA lsx
#define UB_V128_NAME "lsx"
#define UB_V128_AVAILABLE ublock_lsx_available
#define UB_V128_PRIORITY 100 /* above ref */
/* One pass at a time: with two, clang 19 spilled ~19 vectors a round
 * (NEON's build of the same source does not) and 4 KiB of uBlock-128/128
 * ECB took 82,873 instructions against 61,399 with one (QEMU's count,
 * docs/performance.md). A pass's round is ~100 instructions, ~15 deep, so
 * one pass still has more independent work a round than a 4-pipe core
 * issues in its chain's time. Counts, not timings. */
#define UB_V128_NS128 1
/* clang 19 leaves uBlock-256's wide rounds' loops over the planes rolled
 * here (not on NEON; uBlock-128's it unrolls), and the state then lives
 * in memory, a load and a store of every plane a round: 4 KiB of ECB
 * 131,526 instructions, 90,470 unrolled (QEMU's count) */
#define UB_V128_PLANE_UNROLL256 1
/* Crossovers (blocks): estimates from instruction counts, not timed on
 * LSX hardware (docs/performance.md, "The low-latency kernel on ARM64 and
 * LoongArch64"): a wide pass costs the same for 1 block as for 8, about
 * as much as 4-5 blocks of the low-latency kernel, for both members. */
#define UB_V128_CROSSOVER128 5
#define UB_V128_CROSSOVER256 5
#include "ublock_v128.h"
KUAI_REGISTER(ublock128_lsx);
KUAI_REGISTER(ublock256_lsx);
