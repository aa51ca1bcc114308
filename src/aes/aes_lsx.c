/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, LoongArch LSX (Loongson 3A5000/3A6000 have
 * no AES instructions): the bitsliced cipher of aes_bs.h on 128-bit
 * vectors, 8 blocks per pass, vshuf.b for the byte shuffles. Compiled with
 * -mlsx for this file only; chosen from HWCAP_LOONGARCH_LSX.
 */
#include "../simd/lsx.h"

#define AES_V_ISA v128
#define AES_V_BYTES 16
#include "aes_bs.h"

static int aes_lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_lsx);
AES_BS_IMPL(aes_lsx, "lsx", 100, aes_lsx_available, NULL);
