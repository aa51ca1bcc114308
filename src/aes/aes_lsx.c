/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES without AES instructions, LoongArch LSX (Loongson 3A5000/3A6000 have
 * no AES instructions): the bitsliced cipher of aes_bs.h on 128-bit
 * vectors, 8 blocks per pass, vshuf.b for the byte shuffles. Compiled with
 * -mlsx for this file only; chosen from HWCAP_LOONGARCH_LSX.
 */
#include <lsxintrin.h>
#include <stdint.h>

typedef __m128i aes_v;
#define AES_V_BYTES 16

static inline aes_v v_loadu(const void *p)
{
    return __lsx_vld(p, 0);
}
static inline void v_storeu(void *p, aes_v x)
{
    __lsx_vst(x, p, 0);
}
static inline aes_v v_xor(aes_v a, aes_v b)
{
    return __lsx_vxor_v(a, b);
}
static inline aes_v v_and(aes_v a, aes_v b)
{
    return __lsx_vand_v(a, b);
}
static inline aes_v v_bcast8(uint8_t c)
{
    return __lsx_vreplgr2vr_b((int)c);
}
static inline aes_v v_lane16(const uint8_t t[16])
{
    return __lsx_vld(t, 0);
}
/* vshuf.b with both sources x: indices 0..15 pick from x as pshufb does
 * (aes_bs.h's rows hold 0..15 only). */
static inline aes_v v_shuf(aes_v x, aes_v idx)
{
    return __lsx_vshuf_b(x, x, idx);
}
#define v_srl64(x, n) __lsx_vsrli_d(x, n)
#define v_sll64(x, n) __lsx_vslli_d(x, n)

#include "aes_bs.h"

static int aes_lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

/* Bitsliced: below the AES instructions, above ref. */
KUAI_REGISTER(aes_lsx);
AES_BS_IMPL(aes_lsx, "lsx", 100, aes_lsx_available, NULL);
