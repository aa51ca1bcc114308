/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH with VPCLMULQDQ on 512-bit registers (built with -mvpclmulqdq
 * -mpclmul -mavx512f -mavx512bw -mavx512vl): four blocks per register,
 * thirty-two blocks per reduction (ghash_vclmul.h, shared with the 256-bit
 * ghash_vpclmul.c). The 32 registers of AVX-512 hold eight data registers,
 * their products and the accumulators without spilling, and a long
 * aggregation hides the latency of the one reduction that the next group
 * waits for.
 */
#include "ghash_vclmul512.h"

static int vpclmul512_available(void)
{
    unsigned need = KUAI_CPU_VPCLMUL | KUAI_CPU_AVX512 | KUAI_CPU_PCLMUL;
    return (kuai_cpu_features() & need) == need;
}

/* Above the 256-bit one. */
KUAI_REGISTER_GHASH(ghash_vpclmul512);
const ghash_impl ghash_vpclmul512 = {
    .priority = 300,
    .name = "vpclmul512",
    .available = vpclmul512_available,
    .powers = AGG,
    .init = vpclmul512_init,
    .update = vpclmul512_update,
};
