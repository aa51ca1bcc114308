/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, LoongArch LSX backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors) over LSX registers, vshuf.b as the byte
 * shuffle (both sources the same vector, so indices 0..15 pick from it as
 * pshufb does). Two uBlock-128 passes side by side, as on NEON.
 * Compiled with -mlsx for this file only; chosen from HWCAP_LOONGARCH_LSX.
 */
#include "ublock.h"

#include <string.h>

#include "../simd/lsx.h"

#define UB_V_ISA v128
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

#include "ublock_bs.h"

static int ublock_lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

#define UB_V128_ISA lsx
#define UB_V128_NAME "lsx"
#define UB_V128_AVAILABLE ublock_lsx_available
#define UB_V128_PRIORITY 100 /* above ref */
#define UB_V128_NS128 2
#include "ublock_v128.h"
KUAI_REGISTER(ublock128_lsx);
KUAI_REGISTER(ublock256_lsx);
