/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, ARM64 NEON: the bitsliced cipher of
 * aes_bs.h on 128-bit vectors, 8 blocks per pass, tbl for the byte
 * shuffles. For cores without the Cryptography Extensions (Cortex-A53 builds
 * without crypto, some Raspberry Pi SoCs); `armce` wins wherever AESE exists.
 */
#include "../simd/neon.h"

#define AES_V_ISA v128
#define AES_V_BYTES 16
#include "aes_bs.h"

static int aes_neon_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_NEON) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_neon);
AES_BS_IMPL(aes_neon, "neon", 100, aes_neon_available, NULL);
