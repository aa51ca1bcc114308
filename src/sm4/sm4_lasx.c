/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, LoongArch LASX backend: the LSX backend's S-box (sm4_loong.h: eight
 * 32-byte tables read with xvshuf.b, chosen by a tree of bit selects on
 * the top three bits) on 256-bit registers, 8 blocks per group
 * (sm4_simd.h), 2 groups in flight; each table half is in both 128-bit
 * lanes of its register, since xvshuf.b picks within a lane. Short calls and
 * key setup are lsx's (SM4S_SHORT_FROM, SM4S_EXPAND_FROM), as vaes takes
 * aesni-avx's: their lanes are 4 words. Constant time as sm4_lsx.c.
 * Compiled with -mlasx for this file only; chosen from
 * HWCAP_LOONGARCH_LASX.
 */
#include "sm4.h"
#include "sm4_sbox.h"

#include "../simd/lasx.h"

#define SM4V_ISA v256
#include "sm4_vocab.h"

#define SM4V_W 8
/* Two groups, as on LSX (sm4_lsx.c: the table's 16 registers and two
 * groups' state fit in 32; four reloaded the table every round there) */
#define SM4S_G 2
#define SM4S_MK_G 2

/* See sm4_simd.h: position p holds block (p % 4) * 2 + p / 4 of its group
 * (sm4_vaes.c's order: a lane of 4 words is 4 blocks' word j). */
static inline sm4v sm4v_lane_blocks(void)
{
    static const _Alignas(32) int p[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    return __lasx_xvld(p, 0);
}

/* the first k (1..2) of the 2 blocks at p, zeros after (sm4_simd.h's
 * partial groups) */
static inline sm4v sm4v_load_blocks(const uint8_t *p, size_t k)
{
    if (k > 1)
        return __lasx_xvld(p, 0);
    uint64_t w[2];
    memcpy(w, p, 16);
    sm4v x = __lasx_xvinsgr2vr_d(__lasx_xvreplgr2vr_d(0), (long)w[0], 0);
    return __lasx_xvinsgr2vr_d(x, (long)w[1], 1);
}

/* The S-box, and 16 bytes more: a table half is one 32-byte load (the
 * half in the low lane) and xvreplve0.q (into both lanes); the last half's
 * load reads the padding. */
#define SM4_LASX_BYTE(s) s,
static const _Alignas(32) uint8_t sm4_lasx_sbox[256 + 16] = {SM4_SBOX(SM4_LASX_BYTE)};
#undef SM4_LASX_BYTE

static inline sm4v sm4_lasx_row(int r)
{
    return __lasx_xvreplve0_q(__lasx_xvld(sm4_lasx_sbox + 16 * r, 0));
}

#define SM4L(op) __lasx_xv##op
#define SM4L_TABLE(r, k) sm4_lasx_row((r) + (k))
#include "sm4_loong.h"

#define SM4S_SHORT_FROM sm4_lsx
#define SM4S_EXPAND_FROM sm4_lsx
#include "sm4_simd.h"

static int sm4_lasx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LASX) != 0;
}

/* Above lsx. */
KUAI_REGISTER(sm4_lasx);
SM4S_IMPLS(sm4_lasx, "lasx", 110, sm4_lasx_available);
