/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with VPCLMULQDQ on 256-bit registers (built with -mvpclmulqdq
 * -mavx2 -mpclmul): two blocks per register, sixteen blocks per reduction
 * (ghash_vclmul.h, shared with the 512-bit ghash_vpclmul512.c; the ymm
 * vocabulary in ghash_vclmul256.h, shared with aes_vaes_gcm256.c). 256-bit
 * rather than 512-bit registers so that the CPUs with VPCLMULQDQ but no
 * AVX-512 get it too.
 */
#include "ghash_vclmul256.h"

static int vpclmul_available(void)
{
    unsigned need = KUAI_CPU_VPCLMUL | KUAI_CPU_AVX2 | KUAI_CPU_PCLMUL;
    return (kuai_cpu_features() & need) == need;
}

/* Above PCLMULQDQ, below the 512-bit one. */
KUAI_REGISTER_GHASH(ghash_vpclmul);
const ghash_impl ghash_vpclmul = {
    .priority = 200,
    .name = "vpclmul",
    .available = vpclmul_available,
    .powers = AGG,
    .init = vpclmul_init,
    .update = vpclmul_update,
};
