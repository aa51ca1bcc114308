/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, AVX2: the bitsliced cipher of aes_bs.h on
 * 256-bit vectors, 16 blocks per pass (two independent 8-block halves, one
 * per 128-bit lane: vpshufb never crosses lanes, and neither does the
 * cipher). Multi-key batches of up to 8 keys go to the SSSE3 kernel.
 */
#include "../simd/avx2.h"

#define AES_V_ISA v256
#define AES_V_BYTES 32
#include "aes_bs.h"

static int aes_avx2_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_AVX2) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_avx2);
AES_BS_IMPL(aes_avx2, "avx2", 110, aes_avx2_available, &aes_ssse3);
