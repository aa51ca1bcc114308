/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, ARMv8 AES-instruction backend: the AES-NI method (sm4_aes_sbox.h,
 * the S-box through the AES S-box between two affine maps of nibble
 * lookups) on NEON registers, AESE as the S-box and tbl as pshufb; 4 blocks
 * per group (sm4_simd.h), 8 groups in flight. For ARM64 cores with the AES
 * instructions but without FEAT_SM4 (most of them: Cortex-A53..X4,
 * Neoverse N1, Graviton 2/3, Apple), where it beats any table-free
 * software S-box.
 *
 * Compiled with -mcpu=generic+aes for this file only; chosen at run time
 * from HWCAP_AES. AESE(x, k) = ShiftRows(SubBytes(x ^ k)): with k = 0 it
 * moves bytes exactly as aesenclast with a zero key, which is what
 * sm4_aes_sbox.h's tables undo.
 */
#include "sm4.h"

#include <arm_neon.h>

#define SM4S_G 8 /* 32 blocks in flight, as the AES-NI backend */
#define SM4S_MK_G 8
#include "sm4_neon_vocab.h"

#define sm4v_aesenclast(x, k) veorq_u32(sm4v_of8(vaeseq_u8(sm4v_u8(x), vdupq_n_u8(0))), k)

#include "sm4_aes_sbox.h"

/* tau for key setup, on one word: the word in all four columns, so
 * ShiftRows moves only equal bytes and lane 0 is S of its bytes in place. */
static inline uint32_t sm4_armaes_tau(uint32_t a)
{
    sm4v x = sm4v_affine_nibbles(sm4v_set1(a), sm4_aes_pre_lo, sm4_aes_pre_hi);
    x = sm4v_aesenclast(x, sm4v_zero());
    x = sm4v_affine_nibbles(x, sm4_aes_post_lo, sm4_aes_post_hi);
    return vgetq_lane_u32(x, 0);
}
#define SM4S_TAU sm4_armaes_tau

#include "sm4_simd.h"

static int sm4_armaes_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_ARM_AES) != 0;
}

/* Below the SM4 instructions, above NEON. */
KUAI_REGISTER(sm4_armaes);
SM4S_IMPLS(sm4_armaes, "armaes", 150, sm4_armaes_available);
