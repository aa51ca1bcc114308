/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, LoongArch LSX backend: the S-box as eight 32-byte tables read with
 * vshuf.b (which picks from two registers by the low five index bits),
 * the results chosen by the top three bits of the input byte (a tree of
 * bit selects; sm4_loong.h, shared with lasx); 4 blocks per group
 * (sm4_simd.h), 2 groups in flight. LSX
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

static inline sm4v sm4v_lane_blocks(void)
{
    static const int p[4] = {0, 1, 2, 3};
    return __lsx_vld(p, 0);
}

#define SM4_LSX_BYTE(s) s,
static const _Alignas(16) uint8_t sm4_lsx_sbox[256] = {SM4_SBOX(SM4_LSX_BYTE)};
#undef SM4_LSX_BYTE

#define SM4L(op) __lsx_v##op
#define SM4L_TABLE(r, k) __lsx_vld(sm4_lsx_sbox + 16 * (r), 16 * (k))
#include "sm4_loong.h"

/* The key schedule's round on every word, for the one-shot calls and the
 * vector key setup: y0 ^ L'(tau(t)), L'(B) = B ^ (B <<< 13) ^ (B <<< 23).
 * same (one key in every word) changes nothing: no form to undo. */
static inline sm4v sm4v_round_key(sm4v y0, sm4v t, int same)
{
    (void)same;
    sm4v b = sm4l_sub(t);
    return sm4v_xor(sm4v_xor(y0, b), sm4v_xor(SM4L_ROL(b, 13), SM4L_ROL(b, 23)));
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
