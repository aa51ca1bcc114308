/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, SSSE3 backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors, the low-latency kernel of ublock_ll.h in
 * front) over xmm registers and pshufb.
 * Compiled with -mssse3 for this file only; chosen at run time.
 */
#include "../bytes.h"
#include "ublock.h"

#include <string.h>

#include "../simd/sse.h"
#include "ublock_expand_nib.h"

#define UB_V_ISA v128
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

/* every x86-64 CPU with this ISA has SSSE3 */
#define UB_KEY_SETUP ublock_expand_nib_ssse3
#include "ublock_bs.h"

static int ublock_ssse3_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_SSSE3) != 0;
}

#define UB_V128_ISA ssse3
#define UB_V128_NAME "ssse3"
#define UB_V128_AVAILABLE ublock_ssse3_available
#define UB_V128_PRIORITY 100 /* above ref, below AVX2 */
#define UB_V128_NS128 2
/* Crossovers (blocks), from kuai_bench --mode paper's crossover rows on a
 * Zen 1 EPYC (docs/performance.md): uBlock-128/128 and 128/256 below 5
 * (again on 2026-11-29), uBlock-256/256 below 6 (a wide pass is 8 blocks;
 * 3 until 2026-11-29, when 5 blocks encrypted in 1,430 TSC cycles against
 * the pass's 1,627 and decrypted in 1,535 against 1,557). */
#define UB_V128_CROSSOVER128 5
#define UB_V128_CROSSOVER256 6
#include "ublock_v128.h"
KUAI_REGISTER(ublock128_ssse3);
KUAI_REGISTER(ublock256_ssse3);

/* ---- key schedule on nibbles ------------------------------------------- */

/* ublock_expand_raw (ublock_ref.c, the oracle; tests/test_ublock.c compares
 * the two) on nibbles with pshufb (ublock_expand_nib.h); also used by
 * avx512. */
void ublock_expand_nib_ssse3(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    ub_expand_nib_any(s, c, key);
}
