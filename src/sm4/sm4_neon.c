/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, plain NEON backend (any ARMv8-A core, no crypto instructions: e.g.
 * the Cortex-A72 of a Raspberry Pi 4): the S-box as a 256-byte table held
 * in sixteen vector registers and read with tbl/tbx, four 64-byte lookups
 * per 16 bytes; 4 blocks per group (sm4_simd.h), 4 groups in flight.
 * Constant time: the table is in registers and every lookup reads all of
 * it; no memory address depends on data.
 *
 * tbl gives 0 and tbx leaves the destination alone for an index past the
 * table's 64 bytes, so lookup q (q = 0..3) on x - 64q fills exactly the
 * bytes with x in [64q, 64q + 64).
 */
#include "sm4.h"
#include "sm4_sbox.h"

#include <arm_neon.h>

#define SM4S_G 4 /* the table takes 16 of the 32 registers */
#define SM4S_MK_G 4
#include "sm4_neon_vocab.h"

#define SM4_NEON_BYTE(s) s,
static const uint8_t sm4_neon_sbox[256] = {SM4_SBOX(SM4_NEON_BYTE)};
#undef SM4_NEON_BYTE

static inline uint8x16_t sm4_neon_sub(uint8x16_t x)
{
    const uint8x16x4_t t0 = vld1q_u8_x4(sm4_neon_sbox), t1 = vld1q_u8_x4(sm4_neon_sbox + 64);
    const uint8x16x4_t t2 = vld1q_u8_x4(sm4_neon_sbox + 128);
    const uint8x16x4_t t3 = vld1q_u8_x4(sm4_neon_sbox + 192);
    const uint8x16_t c64 = vdupq_n_u8(64);
    uint8x16_t r = vqtbl4q_u8(t0, x);
    x = vsubq_u8(x, c64);
    r = vqtbx4q_u8(r, t1, x);
    x = vsubq_u8(x, c64);
    r = vqtbx4q_u8(r, t2, x);
    x = vsubq_u8(x, c64);
    return vqtbx4q_u8(r, t3, x);
}

static inline sm4v sm4v_bswap32(sm4v x)
{
    return sm4v_of8(vrev32q_u8(sm4v_u8(x)));
}

#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor(a, b), sm4v_xor(c, d))
#define SM4_NEON_ROL(x, n) vsriq_n_u32(vshlq_n_u32(x, n), x, 32 - (n))

/* x0 ^ L(tau(t)), L(B) = B ^ (B <<< 24) ^ ((B ^ (B <<< 8) ^ (B <<< 16)) <<< 2). */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v b = sm4v_of8(sm4_neon_sub(sm4v_u8(t)));
    sm4v b16 = vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(b)));
    sm4v m = sm4v_xor(sm4v_xor(b, SM4_NEON_ROL(b, 8)), b16);
    return sm4v_xor(sm4v_xor(x0, b), sm4v_xor(SM4_NEON_ROL(b, 24), SM4_NEON_ROL(m, 2)));
}

/* x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane:
 * word 3 wrapped iff it ended below the addend; the carry, an all-ones
 * mask, passes on through every word that became 0 (subtracting it adds 1). */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    x[3] = vaddq_u32(vdupq_n_u32(w[3]), off);
    sm4v c = vcltq_u32(x[3], off);
    for (int j = 2; j >= 0; j--) {
        x[j] = vsubq_u32(vdupq_n_u32(w[j]), c);
        c = vandq_u32(c, vceqzq_u32(x[j]));
    }
}

/* tau for key setup through the same register table (a table in memory
 * would index it by key bytes). */
static inline uint32_t sm4_neon_tau(uint32_t a)
{
    return vgetq_lane_u32(sm4v_of8(sm4_neon_sub(sm4v_u8(vdupq_n_u32(a)))), 0);
}
#define SM4S_TAU sm4_neon_tau

#include "sm4_simd.h"

static int sm4_neon_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_NEON) != 0;
}

/* Above ref. */
KUAI_REGISTER(sm4_neon);
SM4S_IMPLS(sm4_neon, "neon", 100, sm4_neon_available);
