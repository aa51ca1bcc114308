/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, LoongArch LASX backend: the bitsliced algorithm of ublock_bs.h on
 * 256-bit registers as the AVX2 backend runs it (ublock_w256.h: uBlock-128
 * 16 blocks a pass, two lanes of 8; uBlock-256 8 blocks a pass, one
 * register a plane-half), with LASX's lane and word permutes for AVX2's;
 * in front of it the LSX backend's low-latency kernel and key setup
 * (ublock_ll.h and ublock_expand_nib.h over lsx.h), so short calls cost
 * what they cost on `lsx`. Compiled with -mlasx (which includes LSX) for
 * this file only; chosen from HWCAP_LOONGARCH_LASX.
 */
#include "ublock.h"

#include <string.h>

#include "../simd/lasx.h" /* the wide kernels */
#include "../simd/lsx.h"  /* the low-latency kernel and the key setup */
#include "ublock_expand_nib.h"

#define UB_V_ISA v256
#define UB_V_BYTES 32
/* A 16-byte shuffle row serves both lanes. */
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__                                                                   \
    }

/* key setup: the nibble key schedule, with the low-latency kernel's
 * round-key forms stored (LSX's) */
static void ublock_expand_nib_lasx(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    ub_expand_nib_any(s, c, key);
}
#define UB_KEY_SETUP ublock_expand_nib_lasx
#include "ublock_bs.h"

static int ublock_lasx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LASX) != 0;
}

/* ---- the wide kernels (ublock_w256.h) ------------------------------------ */

#define UB_W256_ISA lasx
/* One pass at a time, as on LSX (ublock_lsx.c: two spilled there) */
#define UB_W256_NS128 1
#define UB_W256_NS256 1
#define UB_W256_MEMBER 128
#include "ublock_w256.h"
#define UB_W256_MEMBER 256
#include "ublock_w256.h"

/* ---- the low-latency kernel in front (LSX), and the backend tables ------ */

#define UL_FN(name) ublock_ll_lasx_##name
#include "ublock_ll.h"

/* Crossovers (blocks) and the multi-key CBC limits: LSX's (ublock_v128.h),
 * estimates from instruction counts, not timed on LoongArch hardware
 * (docs/performance.md); a LASX pass (16 uBlock-128 blocks, 8 uBlock-256)
 * takes about the instructions of an LSX one (8 and 8). */
UL_FRONT(ublock128_lasx_, 5, 16, 1, 5)
UL_FRONT(ublock256_lasx_, 5, 8, 1, 5)
UL_NARROW_IMPL(ublock128_lasx_ll, "lasx", KUAI_FAMILY_UBLOCK128, ublock_lasx_available);
UL_NARROW_IMPL(ublock256_lasx_ll, "lasx", KUAI_FAMILY_UBLOCK256, ublock_lasx_available);

/* Above lsx. */
KUAI_REGISTER(ublock128_lasx);
UL_IMPL(ublock128_lasx, "lasx", KUAI_FAMILY_UBLOCK128, 110, ublock_lasx_available, ublock128_lasx_,
        16, &ublock128_lasx_ll, 5, 64);
KUAI_REGISTER(ublock256_lasx);
UL_IMPL(ublock256_lasx, "lasx", KUAI_FAMILY_UBLOCK256, 110, ublock_lasx_available, ublock256_lasx_,
        8, &ublock256_lasx_ll, 4, 32);
