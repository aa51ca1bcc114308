/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, ARMv8 Cryptography Extensions backend (FEAT_SM4): SM4E runs four
 * rounds of one block per instruction, SM4EKEY four rounds of the key
 * schedule. Eight blocks are interleaved so that SM4E's latency (several
 * cycles on the cores that have it) is hidden behind the other blocks.
 *
 * Compiled with -march=armv8.2-a+sm4 for this file only; chosen at run time
 * from HWCAP_SM4. Constant time: the instructions are.
 *
 * Register form: SM4E Vd, Vn takes the state words (X0, X1, X2, X3) in
 * lanes 0..3 of Vd (each word as a number, so big-endian bytes are
 * reversed on load) and round keys rk[4i..4i+3] in Vn, and leaves
 * (X4, X5, X6, X7). After 32 rounds the output block is (X35, X34, X33, X32)
 * big-endian: all 16 bytes reversed.
 */
#include "sm4.h"

#include <arm_neon.h>
#include <string.h>

static int sm4_armce_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_ARM_SM4) != 0;
}

static inline uint8x16_t sm4_armce_rev16(uint8x16_t x)
{
    x = vrev64q_u8(x);
    return vextq_u8(x, x, 8);
}

static inline uint32x4_t sm4_armce_in(const uint8_t *p)
{
    return vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p)));
}

/* State (X32..X35) to the output block (X35..X32, big-endian words): with
 * little-endian lanes that is the register's 16 bytes in reverse order. */
static inline uint8x16_t sm4_armce_out(uint32x4_t x)
{
    return sm4_armce_rev16(vreinterpretq_u8_u32(x));
}

static void sm4_armce_expand(kuai_key *k, const uint8_t *key)
{
    /* FK and CK: GB/T 32907-2016, 7.3 (CK(i) byte j = (4i + j) * 7 mod 256) */
    static const uint32_t fk[4] = {0xa3b1bac6u, 0x56aa3350u, 0x677d9197u, 0xb27022dcu};
    sm4_sched *s = sm4_sched_of(k);
    uint32x4_t kk = veorq_u32(sm4_armce_in(key), vld1q_u32(fk));
    for (int i = 0; i < 8; i++) {
        uint32_t ck[4];
        for (int j = 0; j < 4; j++) {
            uint32_t w = 0;
            for (int b = 0; b < 4; b++)
                w = (w << 8) | (uint32_t)(((16 * i + 4 * j + b) * 7) & 0xff);
            ck[j] = w;
        }
        kk = vsm4ekeyq_u32(kk, vld1q_u32(ck));
        vst1q_u32(&s->rk[4 * i], kk);
    }
    kuai_wipe(&kk, sizeof kk);
}

/* The eight key vectors of SM4E from the standard schedule; decryption
 * takes them in reverse, words reversed too. Only rk[] is read, so keys
 * set up by any backend work (multi-key calls mix them). */
static inline void sm4_armce_keys(uint32x4_t key[8], const uint32_t *rk, int dec)
{
    for (int r = 0; r < 8; r++) {
        if (dec) {
            uint32x4_t v = vrev64q_u32(vld1q_u32(rk + 28 - 4 * r));
            key[r] = vextq_u32(v, v, 2);
        } else {
            key[r] = vld1q_u32(rk + 4 * r);
        }
    }
}

/* n blocks (n <= 8) through the 32 rounds, interleaved. */
static inline void sm4_armce_crypt_n(const uint32x4_t key[8], const uint8_t *in, uint8_t *out,
                                     int n)
{
    uint32x4_t x[8];
    for (int b = 0; b < n; b++)
        x[b] = sm4_armce_in(in + 16 * b);
    for (int r = 0; r < 8; r++)
        for (int b = 0; b < n; b++)
            x[b] = vsm4eq_u32(x[b], key[r]);
    for (int b = 0; b < n; b++)
        vst1q_u8(out + 16 * b, sm4_armce_out(x[b]));
}

static void sm4_armce_crypt(const uint32_t *rk, int dec, const uint8_t *in, uint8_t *out, size_t n)
{
    uint32x4_t key[8];
    sm4_armce_keys(key, rk, dec);
    for (; n >= 8; n -= 8, in += 128, out += 128)
        sm4_armce_crypt_n(key, in, out, 8);
    for (; n >= 4; n -= 4, in += 64, out += 64)
        sm4_armce_crypt_n(key, in, out, 4);
    for (; n > 0; n--, in += 16, out += 16)
        sm4_armce_crypt_n(key, in, out, 1);
}

static void sm4_armce_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_armce_crypt(sm4_sched_const(k)->rk, 0, in, out, n);
}

static void sm4_armce_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_armce_crypt(sm4_sched_const(k)->rk, 1, in, out, n);
}

/* CBC encryption is one block's latency per block: keep the chain and the
 * round keys in registers. */
static void sm4_armce_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in,
                                     uint8_t *out, size_t n)
{
    uint32x4_t key[8];
    sm4_armce_keys(key, sm4_sched_const(k)->rk, 0);
    uint8x16_t c = vld1q_u8(iv);
    for (; n > 0; n--, in += 16, out += 16) {
        uint32x4_t x = vreinterpretq_u32_u8(vrev32q_u8(veorq_u8(vld1q_u8(in), c)));
        for (int r = 0; r < 8; r++)
            x = vsm4eq_u32(x, key[r]);
        c = sm4_armce_out(x);
        vst1q_u8(out, c);
    }
    vst1q_u8(iv, c);
}

/* Multi-key: each lane's block under its own key, interleaved in fours. */
static void sm4_armce_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    memcpy(m->b, keys, n * sizeof *keys);
}

static void sm4_armce_mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    const kuai_key *keys[KUAI_MK_MAX_LANES];
    memcpy(keys, m->b, n * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        uint32x4_t key[8];
        sm4_armce_keys(key, sm4_sched_const(keys[i])->rk, dec);
        sm4_armce_crypt_n(key, in + 16 * i, out + 16 * i, 1);
    }
}

static void sm4_armce_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_armce_mk_crypt(m, in, out, n, 0);
}

static void sm4_armce_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_armce_mk_crypt(m, in, out, n, 1);
}

/* The SM4 instructions: above every other ARM64 backend. */
KUAI_REGISTER(sm4_armce);
const kuai_impl sm4_armce = {
    .name = "armce",
    .family = KUAI_FAMILY_SM4,
    .priority = 200,
    .available = sm4_armce_available,
    .expand = sm4_armce_expand,
    .sched_bytes = SM4_SCHED_BYTES,
    .enc_blocks = sm4_armce_enc_blocks,
    .dec_blocks = sm4_armce_dec_blocks,
    .ctr_blocks = NULL,
    .cbc_enc_blocks = sm4_armce_cbc_enc_blocks,
    .mk_lanes = 8,
    .mk_setup = sm4_armce_mk_setup,
    .mk_bytes = 8 * sizeof(const kuai_key *),
    .mk_enc = sm4_armce_mk_enc,
    .mk_dec = sm4_armce_mk_dec,
};
