/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, ARM64 NEON: the bitsliced cipher of
 * aes_bs.h on 128-bit vectors, 8 blocks per pass, tbl for the byte
 * shuffles. For cores without the Cryptography Extensions (Cortex-A53 builds
 * without crypto, some Raspberry Pi SoCs); `armce` wins wherever AESE exists.
 */
#include <arm_neon.h>
#include <stdint.h>

typedef uint8x16_t aes_v;
#define AES_V_BYTES 16

static inline aes_v v_loadu(const void *p)
{
    return vld1q_u8((const uint8_t *)p);
}
static inline void v_storeu(void *p, aes_v x)
{
    vst1q_u8((uint8_t *)p, x);
}
static inline aes_v v_xor(aes_v a, aes_v b)
{
    return veorq_u8(a, b);
}
static inline aes_v v_and(aes_v a, aes_v b)
{
    return vandq_u8(a, b);
}
static inline aes_v v_bcast8(uint8_t c)
{
    return vdupq_n_u8(c);
}
static inline aes_v v_lane16(const uint8_t t[16])
{
    return vld1q_u8(t);
}
/* aes_bs.h's shuffle rows hold indices 0..15 only, where tbl and pshufb
 * agree. */
static inline aes_v v_shuf(aes_v x, aes_v idx)
{
    return vqtbl1q_u8(x, idx);
}
#define v_srl64(x, n) vreinterpretq_u8_u64(vshrq_n_u64(vreinterpretq_u64_u8(x), n))
#define v_sll64(x, n) vreinterpretq_u8_u64(vshlq_n_u64(vreinterpretq_u64_u8(x), n))

#include "aes_bs.h"

static int aes_neon_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_NEON) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_neon);
AES_BS_IMPL(aes_neon, "neon", 100, aes_neon_available, NULL);
