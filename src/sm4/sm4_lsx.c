/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, LoongArch LSX backend: the S-box as eight 32-byte tables read with
 * vshuf.b (which picks from two registers by the low five index bits),
 * the results chosen by the top three bits of the input byte (a tree of
 * bit selects); 4 blocks per group (sm4_simd.h), 2 groups in flight. LSX
 * has no AES instruction, so this is the table-free route. Constant time: the
 * tables are read whole into registers at fixed addresses, every byte goes
 * through all eight lookups, the selection is by masks.
 * Compiled with -mlsx for this file only; chosen from HWCAP_LOONGARCH_LSX.
 */
#include "sm4.h"
#include "sm4_sbox.h"

#include "../simd/lsx.h"

#define SM4V_ISA v128
#include "sm4_vocab.h"

#define SM4V_W 4
/* Two groups, so that their state and the table (16 of the 32 registers)
 * stay in registers: with four, clang 19 loaded the table again in every
 * round, and 1 KiB of ECB took 30,717 instructions where two groups take
 * 19,917 (QEMU's count; docs/performance.md). A group's round is ~39
 * instructions, so two groups still give a 4-pipe core more independent
 * work a round than one round's dependency chain is deep. */
#define SM4S_G 2
#define SM4S_MK_G 2

#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor(a, b), sm4v_xor(c, d))
/* vshuf4i.b with 0b00011011: bytes 3, 2, 1, 0 of every word */
#define sm4v_bswap32(x) __lsx_vshuf4i_b(x, 0x1b)
#define SM4_LSX_ROL(x, n) __lsx_vrotri_w(x, 32 - (n))

static inline sm4v sm4v_lane_blocks(void)
{
    static const int p[4] = {0, 1, 2, 3};
    return __lsx_vld(p, 0);
}

#define SM4_LSX_BYTE(s) s,
static const _Alignas(16) uint8_t sm4_lsx_sbox[256] = {SM4_SBOX(SM4_LSX_BYTE)};
#undef SM4_LSX_BYTE

static inline sm4v sm4_lsx_sub(sm4v x)
{
    /* the eight lookups by the low five bits, then a tree of bit selects
     * by bits 5, 6 and 7 (each mask: bit b shifted to the sign, a signed
     * compare with 0): 8 vshuf.b, 5 mask and 7 vbitsel.v operations where
     * a compare, an AND and an OR after each lookup had taken 8 x 3; each
     * pair selected as soon as it is looked up, so few vectors are live */
    const sm4v idx = __lsx_vandi_b(x, 0x1f);
    const sm4v m5 = __lsx_vslti_b(__lsx_vslli_b(x, 2), 0),
               m6 = __lsx_vslti_b(__lsx_vslli_b(x, 1), 0), m7 = __lsx_vslti_b(x, 0);
    sm4v u[2];
    for (int h = 0; h < 2; h++) {
        sm4v w[2];
        for (int p = 0; p < 2; p++) {
            const uint8_t *t = sm4_lsx_sbox + 128 * h + 64 * p;
            /* vshuf.b vd, vj, vk, va: index < 16 picks vk, 16..31 picks vj */
            sm4v v0 = __lsx_vshuf_b(__lsx_vld(t, 16), __lsx_vld(t, 0), idx),
                 v1 = __lsx_vshuf_b(__lsx_vld(t, 48), __lsx_vld(t, 32), idx);
            /* vbitsel.v vd, vj, vk, va: vk's bits where va's are set, vj's elsewhere */
            w[p] = __lsx_vbitsel_v(v0, v1, m5);
        }
        u[h] = __lsx_vbitsel_v(w[0], w[1], m6);
    }
    return __lsx_vbitsel_v(u[0], u[1], m7);
}

/* x0 ^ L(tau(t)), L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24). */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v b = sm4_lsx_sub(t);
    sm4v m = sm4v_xor(sm4v_xor(b, SM4_LSX_ROL(b, 8)), SM4_LSX_ROL(b, 16));
    return sm4v_xor(sm4v_xor(x0, b), sm4v_xor(SM4_LSX_ROL(b, 24), SM4_LSX_ROL(m, 2)));
}

/* x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane:
 * word 3 wrapped iff it ended below the addend; the carry, an all-ones
 * mask, passes on through every word that became 0 (subtracting it adds 1). */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    x[3] = sm4v_add32(sm4v_set1(w[3]), off);
    sm4v c = __lsx_vslt_wu(x[3], off);
    for (int j = 2; j >= 0; j--) {
        x[j] = sm4v_sub32(sm4v_set1(w[j]), c);
        c = sm4v_and(c, __lsx_vseqi_w(x[j], 0));
    }
}

/* The key schedule's round on every word, for the one-shot calls and the
 * vector key setup: y0 ^ L'(tau(t)), L'(B) = B ^ (B <<< 13) ^ (B <<< 23).
 * same (one key in every word) changes nothing: no form to undo. */
static inline sm4v sm4v_round_key(sm4v y0, sm4v t, int same)
{
    (void)same;
    sm4v b = sm4_lsx_sub(t);
    return sm4v_xor(sm4v_xor(y0, b), sm4v_xor(SM4_LSX_ROL(b, 13), SM4_LSX_ROL(b, 23)));
}
#define sm4v_word0(x) ((uint32_t)__lsx_vpickve2gr_w(x, 0))

/* the one-shot calls, the multi-key short hook and the vector key setup
 * (4 keys side by side), which lasx takes too (SM4S_SHORT_EXPORT below) */
#define SM4S_ONESHOT 1

#include "sm4_simd.h"
/* short calls and key setup for lasx (sm4_lasx.c) */
SM4S_SHORT_EXPORT(sm4_lsx)

static int sm4_lsx_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_LSX) != 0;
}

/* Above ref. */
KUAI_REGISTER(sm4_lsx);
SM4S_IMPLS(sm4_lsx, "lsx", 100, sm4_lsx_available);
