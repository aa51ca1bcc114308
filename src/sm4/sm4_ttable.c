/*
 * SM4 with the classic T-tables: NOT CONSTANT TIME. Never a default.
 *
 * The round's T = L(tau(.)) is four lookups in 8->32-bit tables (the S-box
 * with L already applied to each byte position), indexed by secret bytes.
 * Which cache lines those lookups touch depends on key and data, and that
 * leaks through the cache to anyone sharing the machine (cache-timing
 * attacks on table-based SM4 are published, as they are for AES). It is
 * listed last in the registry, so only a caller who names "ttable" gets it.
 *
 * It exists because the SM4 literature measures against it: "table SM4" is
 * the baseline of most SM4 speed papers, and a benchmark without it would
 * leave the comparison to the reader. The key schedule is the shared,
 * constant-time sm4_expand_raw.
 */
#include "../bytes.h"
#include "sm4.h"

#include <string.h>

/* The S-box of GB/T 32907-2016 (Table 1, "S-box"), row by row. */
// clang-format off
#define SM4_SBOX(X) \
    X(0xd6) X(0x90) X(0xe9) X(0xfe) X(0xcc) X(0xe1) X(0x3d) X(0xb7) \
    X(0x16) X(0xb6) X(0x14) X(0xc2) X(0x28) X(0xfb) X(0x2c) X(0x05) \
    X(0x2b) X(0x67) X(0x9a) X(0x76) X(0x2a) X(0xbe) X(0x04) X(0xc3) \
    X(0xaa) X(0x44) X(0x13) X(0x26) X(0x49) X(0x86) X(0x06) X(0x99) \
    X(0x9c) X(0x42) X(0x50) X(0xf4) X(0x91) X(0xef) X(0x98) X(0x7a) \
    X(0x33) X(0x54) X(0x0b) X(0x43) X(0xed) X(0xcf) X(0xac) X(0x62) \
    X(0xe4) X(0xb3) X(0x1c) X(0xa9) X(0xc9) X(0x08) X(0xe8) X(0x95) \
    X(0x80) X(0xdf) X(0x94) X(0xfa) X(0x75) X(0x8f) X(0x3f) X(0xa6) \
    X(0x47) X(0x07) X(0xa7) X(0xfc) X(0xf3) X(0x73) X(0x17) X(0xba) \
    X(0x83) X(0x59) X(0x3c) X(0x19) X(0xe6) X(0x85) X(0x4f) X(0xa8) \
    X(0x68) X(0x6b) X(0x81) X(0xb2) X(0x71) X(0x64) X(0xda) X(0x8b) \
    X(0xf8) X(0xeb) X(0x0f) X(0x4b) X(0x70) X(0x56) X(0x9d) X(0x35) \
    X(0x1e) X(0x24) X(0x0e) X(0x5e) X(0x63) X(0x58) X(0xd1) X(0xa2) \
    X(0x25) X(0x22) X(0x7c) X(0x3b) X(0x01) X(0x21) X(0x78) X(0x87) \
    X(0xd4) X(0x00) X(0x46) X(0x57) X(0x9f) X(0xd3) X(0x27) X(0x52) \
    X(0x4c) X(0x36) X(0x02) X(0xe7) X(0xa0) X(0xc4) X(0xc8) X(0x9e) \
    X(0xea) X(0xbf) X(0x8a) X(0xd2) X(0x40) X(0xc7) X(0x38) X(0xb5) \
    X(0xa3) X(0xf7) X(0xf2) X(0xce) X(0xf9) X(0x61) X(0x15) X(0xa1) \
    X(0xe0) X(0xae) X(0x5d) X(0xa4) X(0x9b) X(0x34) X(0x1a) X(0x55) \
    X(0xad) X(0x93) X(0x32) X(0x30) X(0xf5) X(0x8c) X(0xb1) X(0xe3) \
    X(0x1d) X(0xf6) X(0xe2) X(0x2e) X(0x82) X(0x66) X(0xca) X(0x60) \
    X(0xc0) X(0x29) X(0x23) X(0xab) X(0x0d) X(0x53) X(0x4e) X(0x6f) \
    X(0xd5) X(0xdb) X(0x37) X(0x45) X(0xde) X(0xfd) X(0x8e) X(0x2f) \
    X(0x03) X(0xff) X(0x6a) X(0x72) X(0x6d) X(0x6c) X(0x5b) X(0x51) \
    X(0x8d) X(0x1b) X(0xaf) X(0x92) X(0xbb) X(0xdd) X(0xbc) X(0x7f) \
    X(0x11) X(0xd9) X(0x5c) X(0x41) X(0x1f) X(0x10) X(0x5a) X(0xd8) \
    X(0x0a) X(0xc1) X(0x31) X(0x88) X(0xa5) X(0xcd) X(0x7b) X(0xbd) \
    X(0x2d) X(0x74) X(0xd0) X(0x12) X(0xb8) X(0xe5) X(0xb4) X(0xb0) \
    X(0x89) X(0x69) X(0x97) X(0x4a) X(0x0c) X(0x96) X(0x77) X(0x7e) \
    X(0x65) X(0xb9) X(0xf1) X(0x09) X(0xc5) X(0x6e) X(0xc6) X(0x84) \
    X(0x18) X(0xf0) X(0x7d) X(0xec) X(0x3a) X(0xdc) X(0x4d) X(0x20) \
    X(0x79) X(0xee) X(0x5f) X(0x3e) X(0xd7) X(0xcb) X(0x39) X(0x48)
// clang-format on

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

const kuai_impl sm4_ttable = {
    .name = "ttable",
    .cipher = KUAI_SM4,
    .available = sm4_ttable_available,
    .expand = sm4_ttable_expand,
    .enc_blocks = sm4_ttable_enc_blocks,
    .dec_blocks = sm4_ttable_dec_blocks,
    .ctr_blocks = NULL,
    .mk_lanes = 8,
    .mk_setup = sm4_ttable_mk_setup,
    .mk_enc = sm4_ttable_mk_enc,
    .mk_dec = sm4_ttable_mk_dec,
};
