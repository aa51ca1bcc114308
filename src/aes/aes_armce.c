/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES, ARMv8 Cryptography Extensions backend: AESE/AESMC for encryption,
 * AESD/AESIMC for decryption, eight blocks interleaved so that the
 * instructions' latency is hidden behind the other blocks.
 *
 * AESE(x, k) = SubBytes(ShiftRows(x ^ k)): the round key goes in before
 * the S-box, so FIPS round i is AESE with rk[i] then AESMC, the last round
 * AESE with rk[nr-1] and a plain XOR of rk[nr]. AESD(x, k) =
 * InvSubBytes(InvShiftRows(x ^ k)) and AESIMC = InvMixColumns: with the
 * equivalent inverse cipher's keys (aes.h's drk, the form AESDEC takes on
 * x86) decryption is AESD drk[i] then AESIMC, AESD drk[nr-1], XOR drk[nr].
 *
 * Compiled with -mcpu=generic+aes for this file only; chosen at run time
 * from HWCAP_AES. Constant time: the instructions are.
 */
#include "aes.h"

#include <arm_neon.h>
#include <string.h>

static int aes_armce_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_ARM_AES) != 0;
}

/* SubWord through AESE: the word in all four columns, so ShiftRows moves
 * only equal bytes and lane 0 is the S-box of each byte in place. */
static uint32_t aes_armce_subword(uint32_t w)
{
    uint8x16_t x = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(x), 0);
}

static void aes_armce_expand(kuai_key *k, const uint8_t *key)
{
    aes_expand_with(aes_sched_of(k), key, aes_key_bytes(k), aes_armce_subword);
}

static inline void aes_armce_load_keys(uint8x16_t key[AES_MAX_ROUNDS + 1], const uint8_t (*rk)[16],
                                       unsigned nr)
{
    for (unsigned i = 0; i <= nr; i++)
        key[i] = vld1q_u8(rk[i]);
}

/* n blocks (n <= 8) through all rounds, interleaved. */
static inline void aes_armce_enc_n(const uint8x16_t *key, unsigned nr, const uint8_t *in,
                                   uint8_t *out, int n)
{
    uint8x16_t x[8];
    for (int b = 0; b < n; b++)
        x[b] = vld1q_u8(in + 16 * b);
    for (unsigned i = 0; i + 1 < nr; i++)
        for (int b = 0; b < n; b++)
            x[b] = vaesmcq_u8(vaeseq_u8(x[b], key[i]));
    for (int b = 0; b < n; b++)
        vst1q_u8(out + 16 * b, veorq_u8(vaeseq_u8(x[b], key[nr - 1]), key[nr]));
}

static inline void aes_armce_dec_n(const uint8x16_t *key, unsigned nr, const uint8_t *in,
                                   uint8_t *out, int n)
{
    uint8x16_t x[8];
    for (int b = 0; b < n; b++)
        x[b] = vld1q_u8(in + 16 * b);
    for (unsigned i = 0; i + 1 < nr; i++)
        for (int b = 0; b < n; b++)
            x[b] = vaesimcq_u8(vaesdq_u8(x[b], key[i]));
    for (int b = 0; b < n; b++)
        vst1q_u8(out + 16 * b, veorq_u8(vaesdq_u8(x[b], key[nr - 1]), key[nr]));
}

static void aes_armce_crypt(const aes_sched *s, int dec, const uint8_t *in, uint8_t *out, size_t n)
{
    uint8x16_t key[AES_MAX_ROUNDS + 1];
    unsigned nr = s->nr;
    aes_armce_load_keys(key, dec ? s->drk : s->rk, nr);
    for (; n >= 8; n -= 8, in += 128, out += 128)
        dec ? aes_armce_dec_n(key, nr, in, out, 8) : aes_armce_enc_n(key, nr, in, out, 8);
    for (; n >= 4; n -= 4, in += 64, out += 64)
        dec ? aes_armce_dec_n(key, nr, in, out, 4) : aes_armce_enc_n(key, nr, in, out, 4);
    for (; n > 0; n--, in += 16, out += 16)
        dec ? aes_armce_dec_n(key, nr, in, out, 1) : aes_armce_enc_n(key, nr, in, out, 1);
}

static void aes_armce_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    aes_armce_crypt(aes_sched_const(k), 0, in, out, n);
}

static void aes_armce_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    aes_armce_crypt(aes_sched_const(k), 1, in, out, n);
}

/* CBC encryption is one block's latency per block: chain and keys stay in
 * registers. */
static void aes_armce_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in,
                                     uint8_t *out, size_t n)
{
    const aes_sched *s = aes_sched_const(k);
    uint8x16_t key[AES_MAX_ROUNDS + 1];
    unsigned nr = s->nr;
    aes_armce_load_keys(key, s->rk, nr);
    uint8x16_t c = vld1q_u8(iv);
    for (; n > 0; n--, in += 16, out += 16) {
        uint8x16_t x = veorq_u8(vld1q_u8(in), c);
        for (unsigned i = 0; i + 1 < nr; i++)
            x = vaesmcq_u8(vaeseq_u8(x, key[i]));
        c = veorq_u8(vaeseq_u8(x, key[nr - 1]), key[nr]);
        vst1q_u8(out, c);
    }
    vst1q_u8(iv, c);
}

/* Multi-key: each lane's block under its own key (any backend's: only the
 * shared rk/drk are read). */
static void aes_armce_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    memcpy(m->b, keys, n * sizeof *keys);
}

static void aes_armce_mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    const kuai_key *keys[KUAI_MK_MAX_LANES];
    memcpy(keys, m->b, n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        aes_armce_crypt(aes_sched_const(keys[i]), dec, in + 16 * i, out + 16 * i, 1);
}

static void aes_armce_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    aes_armce_mk_crypt(m, in, out, n, 0);
}

static void aes_armce_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    aes_armce_mk_crypt(m, in, out, n, 1);
}

/* The ARMv8 AES instructions: above the bitsliced NEON backend. */
KUAI_REGISTER(aes_armce);
const kuai_impl aes_armce = {
    .name = "armce",
    .family = KUAI_FAMILY_AES,
    .priority = 200,
    .available = aes_armce_available,
    .expand = aes_armce_expand,
    .sched_bytes = AES_SCHED_BYTES,
    .enc_blocks = aes_armce_enc_blocks,
    .dec_blocks = aes_armce_dec_blocks,
    .ctr_blocks = NULL,
    .cbc_enc_blocks = aes_armce_cbc_enc_blocks,
    .mk_lanes = 8,
    .mk_setup = aes_armce_mk_setup,
    .mk_bytes = 8 * sizeof(const kuai_key *),
    .mk_enc = aes_armce_mk_enc,
    .mk_dec = aes_armce_mk_dec,
};
