/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, LoongArch LASX backend: the LSX backend's S-box (sm4_lsx.c: eight
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

#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor(a, b), sm4v_xor(c, d))
/* xvshuf4i.b with 0b00011011: bytes 3, 2, 1, 0 of every word */
#define sm4v_bswap32(x) __lasx_xvshuf4i_b(x, 0x1b)
#define SM4_LASX_ROL(x, n) __lasx_xvrotri_w(x, 32 - (n))

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

static inline sm4v sm4_lasx_sub(sm4v x)
{
    /* sm4_lsx.c's lookups and selects, per 128-bit lane */
    const sm4v idx = __lasx_xvandi_b(x, 0x1f);
    const sm4v m5 = __lasx_xvslti_b(__lasx_xvslli_b(x, 2), 0),
               m6 = __lasx_xvslti_b(__lasx_xvslli_b(x, 1), 0), m7 = __lasx_xvslti_b(x, 0);
    sm4v u[2];
    for (int h = 0; h < 2; h++) {
        sm4v w[2];
        for (int p = 0; p < 2; p++) {
            const int r = 8 * h + 4 * p;
            /* xvshuf.b xd, xj, xk, xa: index < 16 picks xk, 16..31 picks xj */
            sm4v v0 = __lasx_xvshuf_b(sm4_lasx_row(r + 1), sm4_lasx_row(r), idx),
                 v1 = __lasx_xvshuf_b(sm4_lasx_row(r + 3), sm4_lasx_row(r + 2), idx);
            w[p] = __lasx_xvbitsel_v(v0, v1, m5);
        }
        u[h] = __lasx_xvbitsel_v(w[0], w[1], m6);
    }
    return __lasx_xvbitsel_v(u[0], u[1], m7);
}

/* x0 ^ L(tau(t)), L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24). */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v b = sm4_lasx_sub(t);
    sm4v m = sm4v_xor(sm4v_xor(b, SM4_LASX_ROL(b, 8)), SM4_LASX_ROL(b, 16));
    return sm4v_xor(sm4v_xor(x0, b), sm4v_xor(SM4_LASX_ROL(b, 24), SM4_LASX_ROL(m, 2)));
}

/* x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane:
 * word 3 wrapped iff it ended below the addend; the carry, an all-ones
 * mask, passes on through every word that became 0 (subtracting it adds 1). */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    x[3] = sm4v_add32(sm4v_set1(w[3]), off);
    sm4v c = __lasx_xvslt_wu(x[3], off);
    for (int j = 2; j >= 0; j--) {
        x[j] = sm4v_sub32(sm4v_set1(w[j]), c);
        c = sm4v_and(c, __lasx_xvseqi_w(x[j], 0));
    }
}

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
