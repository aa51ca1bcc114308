/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, LoongArch LSX backend: ublock_v128.h (the bitsliced algorithm of
 * ublock_bs.h on 128-bit vectors) over LSX registers, vshuf.b as the byte
 * shuffle (both sources the same vector, so indices 0..15 pick from it as
 * pshufb does). Two uBlock-128 passes side by side, as on NEON.
 * Compiled with -mlsx for this file only; chosen from HWCAP_LOONGARCH_LSX.
 */
#include "ublock.h"

#include <lsxintrin.h>
#include <string.h>

typedef __m128i ub_v;
#define UB_V_BYTES 16
#define UB_ROW16(...)                                                                              \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

#define ub_xor(a, b) __lsx_vxor_v(a, b)
#define ub_and(a, b) __lsx_vand_v(a, b)
#define ub_or(a, b) __lsx_vor_v(a, b)
#define ub_andn(a, b) __lsx_vandn_v(a, b) /* ~a & b */
/* Shift counts are constants after inlining; vsrl.d/vsll.d take them per
 * element from a register, which the compiler turns into vsrli/vslli. */
#define ub_srl64(x, n) __lsx_vsrl_d(x, __lsx_vreplgr2vr_d((long)(n)))
#define ub_sll64(x, n) __lsx_vsll_d(x, __lsx_vreplgr2vr_d((long)(n)))
#define ub_set1_8(c) __lsx_vreplgr2vr_b((int)(c))
/* vilvl.d vd, vj, vk: {vk.d0, vj.d0}; vilvh.d: {vk.d1, vj.d1} */
#define ub_unpacklo64(a, b) __lsx_vilvl_d(b, a)
#define ub_unpackhi64(a, b) __lsx_vilvh_d(b, a)
#define ub_loadu(p) __lsx_vld((const void *)(p), 0)
#define ub_storeu(p, x) __lsx_vst(x, (void *)(p), 0)
#define ub_row(p) __lsx_vld((const void *)(p), 0)
#define ub_ones() __lsx_vreplgr2vr_b(-1)

/* vshuf.b vd, vj, vk, va: byte i = (va[i] & 31) < 16 ? vk[va[i]] : vj[va[i] - 16] */
#define ub_shuf(x, idx) __lsx_vshuf_b(x, x, idx)
#define ub_unpacklo32(a, b) __lsx_vilvl_w(b, a)
#define ub_unpackhi32(a, b) __lsx_vilvh_w(b, a)
/* vpickev.w vd, vj, vk: {vk.w0, vk.w2, vj.w0, vj.w2}; vpickod.w the odd ones */
#define ub_even32(a, b) __lsx_vpickev_w(b, a)
#define ub_odd32(a, b) __lsx_vpickod_w(b, a)

#include "ublock_bs.h"

static int ublock_lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

#define UB_V128_ISA lsx
#define UB_V128_NAME "lsx"
#define UB_V128_AVAILABLE ublock_lsx_available
#define UB_V128_PRIORITY 100 /* above ref */
#define UB_V128_NS128 2
#include "ublock_v128.h"
KUAI_REGISTER(ublock128_lsx);
KUAI_REGISTER(ublock256_lsx);
