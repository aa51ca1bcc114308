/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, LoongArch LASX (the 256-bit registers of
 * Loongson 3A5000/3A6000, which have no AES instructions): the bitsliced
 * cipher of aes_bs.h on 256-bit vectors, 16 blocks per pass (two
 * independent 8-block halves, one per 128-bit lane, as on AVX2: xvshuf.b
 * never crosses lanes, and neither does the cipher). Calls and tails of up
 * to 8 blocks run on LSX over the same keys (aes_lasx_narrow.c): a 16-block
 * pass for them cost more instructions than LSX's 8-block one (under QEMU,
 * 8 blocks of ECB 2,377 on lsx, 2,786 on lasx before). Multi-key batches
 * of up to 8 keys go to the LSX kernel. Compiled with -mlasx for this file
 * only; chosen from HWCAP_LOONGARCH_LASX.
 */
#include "../simd/lasx.h"

#define AES_V_ISA v256
#define AES_V_BYTES 32
#define AES_BS_NARROW aes_lasx_narrow
#define AES_BS_NARROW_CTR aes_lasx_narrow_ctr
#include "aes_bs.h"

static int aes_lasx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LASX) != 0;
}

/* Above lsx (twice the blocks a pass), below nothing else there. */
KUAI_REGISTER(aes_lasx);
AES_BS_IMPL(aes_lasx, "lasx", 110, aes_lasx_available, &aes_lsx);
