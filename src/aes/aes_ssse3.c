/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, SSSE3: the bitsliced cipher of aes_bs.h on
 * 128-bit vectors, 8 blocks per pass, pshufb for the byte shuffles.
 */
#include "../simd/sse.h"

#define AES_V_ISA v128
#define AES_V_BYTES 16
#include "aes_bs.h"

static int aes_ssse3_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_SSSE3) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_ssse3);
AES_BS_IMPL(aes_ssse3, "ssse3", 100, aes_ssse3_available, NULL);
