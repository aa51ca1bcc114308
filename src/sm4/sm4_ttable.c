/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4 with the classic T-tables: NOT CONSTANT TIME. Never a default.
 *
 * The round's T = L(tau(.)) is four lookups in 8->32-bit tables (the S-box
 * with L already applied to each byte position), indexed by secret bytes.
 * Which cache lines those lookups touch depends on key and data, and that
 * leaks through the cache to anyone sharing the machine (cache-timing
 * attacks on table-based SM4 are published, as they are for AES). Its
 * table says leaky, so the registry never picks it by itself: only a caller
 * who names "ttable" gets it.
 *
 * It exists because the SM4 literature measures against it: "table SM4" is
 * the baseline of most SM4 speed papers, and a benchmark without it would
 * leave the comparison to the reader. The key schedule is the shared,
 * constant-time sm4_expand_raw.
 */
#include "../bytes.h"
#include "sm4.h"

#include <string.h>

#include "sm4_sbox.h"

/* The tables are built by the compiler from the S-box: entry a of table j
 * is L(S(a) placed in byte j of the word, byte 0 most significant), L of
 * the standard, 6.2. L is linear, so T(x) = T0[x0] ^ T1[x1] ^ T2[x2] ^ T3[x3]. */
#define ROTL32_C(x, n) ((uint32_t)(((uint32_t)(x) << (n)) | ((uint32_t)(x) >> (32 - (n)))))
#define L_C(b) ((b) ^ ROTL32_C(b, 2) ^ ROTL32_C(b, 10) ^ ROTL32_C(b, 18) ^ ROTL32_C(b, 24))
#define T0_ENTRY(s) L_C((uint32_t)(s) << 24),
#define T1_ENTRY(s) L_C((uint32_t)(s) << 16),
#define T2_ENTRY(s) L_C((uint32_t)(s) << 8),
#define T3_ENTRY(s) L_C((uint32_t)(s)),

static const uint32_t sm4_t0[256] = {SM4_SBOX(T0_ENTRY)};
static const uint32_t sm4_t1[256] = {SM4_SBOX(T1_ENTRY)};
static const uint32_t sm4_t2[256] = {SM4_SBOX(T2_ENTRY)};
static const uint32_t sm4_t3[256] = {SM4_SBOX(T3_ENTRY)};

/* T(a) = L(tau(a)): the four secret-indexed lookups. */
static uint32_t t_lookup(uint32_t a)
{
    return sm4_t0[a >> 24] ^ sm4_t1[(a >> 16) & 0xff] ^ sm4_t2[(a >> 8) & 0xff] ^ sm4_t3[a & 0xff];
}

/* One block; dec runs the round keys backwards (standard, 7.1). */
static void sm4_ttable_block(const uint32_t rk[32], const uint8_t *in, uint8_t *out, int dec)
{
    uint32_t x0 = load_be32(in), x1 = load_be32(in + 4), x2 = load_be32(in + 8),
             x3 = load_be32(in + 12);
    for (unsigned r = 0; r < 32; r += 4) {
        x0 ^= t_lookup(x1 ^ x2 ^ x3 ^ rk[dec ? 31 - r : r]);
        x1 ^= t_lookup(x2 ^ x3 ^ x0 ^ rk[dec ? 30 - r : r + 1]);
        x2 ^= t_lookup(x3 ^ x0 ^ x1 ^ rk[dec ? 29 - r : r + 2]);
        x3 ^= t_lookup(x0 ^ x1 ^ x2 ^ rk[dec ? 28 - r : r + 3]);
    }
    store_be32(out, x3);
    store_be32(out + 4, x2);
    store_be32(out + 8, x1);
    store_be32(out + 12, x0);
}

static int sm4_ttable_available(void)
{
    return 1;
}

static void sm4_ttable_expand(kuai_key *k, const uint8_t *key)
{
    sm4_expand_raw(sm4_sched_of(k), key);
}

static void sm4_ttable_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                  size_t nblocks)
{
    const sm4_sched *s = sm4_sched_const(k);
    for (size_t i = 0; i < nblocks; i++)
        sm4_ttable_block(s->rk, in + 16 * i, out + 16 * i, 0);
}

static void sm4_ttable_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                  size_t nblocks)
{
    const sm4_sched *s = sm4_sched_const(k);
    for (size_t i = 0; i < nblocks; i++)
        sm4_ttable_block(s->rk, in + 16 * i, out + 16 * i, 1);
}

/* Multi-key: one block at a time, so the lane format is the key pointers. */
static void sm4_ttable_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    memcpy(m->b, keys, n * sizeof *keys);
}

static void sm4_ttable_mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n,
                                int dec)
{
    const kuai_key *keys[KUAI_MK_MAX_LANES];
    memcpy(keys, m->b, n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        sm4_ttable_block(sm4_sched_const(keys[i])->rk, in + 16 * i, out + 16 * i, dec);
}

static void sm4_ttable_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_ttable_mk_crypt(m, in, out, n, 0);
}

static void sm4_ttable_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_ttable_mk_crypt(m, in, out, n, 1);
}

/* Leaky: never chosen automatically, from KUAI_BACKEND only with the
 * opt-in (src/registry.c); last in the list besides. */
KUAI_REGISTER(sm4_ttable);
const kuai_impl sm4_ttable = {
    .name = "ttable",
    .family = KUAI_FAMILY_SM4,
    .priority = -100,
    .leaky = 1,
    .available = sm4_ttable_available,
    .expand = sm4_ttable_expand,
    .sched_bytes = SM4_SCHED_BYTES,
    .enc_blocks = sm4_ttable_enc_blocks,
    .dec_blocks = sm4_ttable_dec_blocks,
    .ctr_blocks = NULL,
    .mk_lanes = 8,
    .mk_setup = sm4_ttable_mk_setup,
    .mk_bytes = 8 * sizeof(const kuai_key *),
    .mk_enc = sm4_ttable_mk_enc,
    .mk_dec = sm4_ttable_mk_dec,
};
