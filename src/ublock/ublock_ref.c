/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, portable reference backend: the oracle for every other backend
 * and the fallback on every architecture. It follows the spec line by line
 * and is constant time: the S-box is its 8-gate boolean circuit evaluated on
 * all nibbles of a 64-bit word at once, and every permutation index is a
 * public constant.
 *
 * A half block (n/2 bits) is kept as 1 or 2 big-endian 64-bit words, so
 * nibble 0 of the half is the top nibble of word 0, as the spec numbers them.
 */
#include "../bytes.h"
#include "ublock.h"

#include <string.h>

#define NIB_LSB 0x1111111111111111ull /* bit 0 of every nibble */

/*
 * The S-box s on all 16 nibbles of w. s is four Feistel-like updates of its
 * input bits (x3 = most significant), 8 gates in all, which is the designers'
 * 8-gate count; undoing them in reverse order gives s^-1 at the same cost.
 */
static uint64_t sbox_word(uint64_t w)
{
    uint64_t x0 = w & NIB_LSB, x1 = (w >> 1) & NIB_LSB;
    uint64_t x2 = (w >> 2) & NIB_LSB, x3 = (w >> 3) & NIB_LSB;
    x0 ^= ~(x3 & x2) & NIB_LSB;
    x3 ^= x2 | x1;
    x2 ^= ~(x1 & x0) & NIB_LSB;
    x1 ^= x0 | x3;
    return x0 | (x1 << 1) | (x2 << 2) | (x3 << 3);
}

static uint64_t sbox_inv_word(uint64_t w)
{
    uint64_t x0 = w & NIB_LSB, x1 = (w >> 1) & NIB_LSB;
    uint64_t x2 = (w >> 2) & NIB_LSB, x3 = (w >> 3) & NIB_LSB;
    x1 ^= x0 | x3;
    x2 ^= ~(x1 & x0) & NIB_LSB;
    x3 ^= x2 | x1;
    x0 ^= ~(x3 & x2) & NIB_LSB;
    return x0 | (x1 << 1) | (x2 << 2) | (x3 << 3);
}

/* Rotate each of the two 32-bit words of w left by b bits (0 < b < 32). */
static uint64_t rotl32x2(uint64_t w, unsigned b)
{
    uint64_t keep = (uint64_t)(0xffffffffu << b) * 0x100000001ull;
    return ((w << b) & keep) | ((w >> (32 - b)) & ~keep);
}

/* A half: 1 word (128-bit block) or 2 words (256-bit block). */
typedef struct half {
    uint64_t w[2];
} half;

/* nw is 1 or 2; spelled out so the compiler sees the bound. */
static void half_load(half *h, const uint8_t *p, unsigned nw)
{
    h->w[0] = load_be64(p);
    if (nw == 2)
        h->w[1] = load_be64(p + 8);
}

static void half_store(uint8_t *p, const half *h, unsigned nw)
{
    store_be64(p, h->w[0]);
    if (nw == 2)
        store_be64(p + 8, h->w[1]);
}

/* out byte j = in byte perm[j], over the 8*nw bytes of a half. */
static void half_permute(half *h, const uint8_t *perm, unsigned nw)
{
    uint8_t in[16], out[16];
    half_store(in, h, nw);
    for (unsigned j = 0; j < 8 * nw; j++)
        out[j] = in[perm[j]];
    half_load(h, out, nw);
}

/* Everything of one round between the S-box layer and PL/PR. */
static void mix(half *x0, half *x1, unsigned nw)
{
    for (unsigned i = 0; i < nw; i++) {
        uint64_t a = x0->w[i], b = x1->w[i];
        b ^= a;
        a ^= rotl32x2(b, 4);
        b ^= rotl32x2(a, 8);
        a ^= rotl32x2(b, 8);
        b ^= rotl32x2(a, 20);
        a ^= b;
        x0->w[i] = a;
        x1->w[i] = b;
    }
}

static void mix_inv(half *y0, half *y1, unsigned nw)
{
    for (unsigned i = 0; i < nw; i++) {
        uint64_t a = y0->w[i], b = y1->w[i];
        a ^= b;
        b ^= rotl32x2(a, 20);
        a ^= rotl32x2(b, 8);
        b ^= rotl32x2(a, 8);
        a ^= rotl32x2(b, 4);
        b ^= a;
        y0->w[i] = a;
        y1->w[i] = b;
    }
}

static void add_round_key(half *x0, half *x1, const uint8_t *rk, unsigned nw)
{
    for (unsigned i = 0; i < nw; i++) {
        x0->w[i] ^= load_be64(rk + 8 * i);
        x1->w[i] ^= load_be64(rk + 8 * nw + 8 * i);
    }
}

static void ublock_ref_enc_block(const ublock_sched *s, const uint8_t *in, uint8_t *out)
{
    unsigned nw = s->nbytes / 16;
    const uint8_t *pl = nw == 1 ? ublock_pl128 : ublock_pl256;
    const uint8_t *pr = nw == 1 ? ublock_pr128 : ublock_pr256;
    half x0, x1;
    uint8_t buf[32]; /* RK_r of a key of another backend (multi-key calls) */
    half_load(&x0, in, nw);
    half_load(&x1, in + 8 * nw, nw);
    for (unsigned r = 0; r < s->rounds; r++) {
        add_round_key(&x0, &x1, ublock_rk_row(s, r, buf), nw);
        for (unsigned i = 0; i < nw; i++) {
            x0.w[i] = sbox_word(x0.w[i]);
            x1.w[i] = sbox_word(x1.w[i]);
        }
        mix(&x0, &x1, nw);
        half_permute(&x0, pl, nw);
        half_permute(&x1, pr, nw);
    }
    add_round_key(&x0, &x1, ublock_rk_row(s, s->rounds, buf), nw);
    half_store(out, &x0, nw);
    half_store(out + 8 * nw, &x1, nw);
    if (!s->raw)
        kuai_wipe(buf, sizeof buf);
}

static void ublock_ref_dec_block(const ublock_sched *s, const uint8_t *in, uint8_t *out)
{
    unsigned nw = s->nbytes / 16;
    const uint8_t *pli = nw == 1 ? ublock_pl128_inv : ublock_pl256_inv;
    const uint8_t *pri = nw == 1 ? ublock_pr128_inv : ublock_pr256_inv;
    half y0, y1;
    uint8_t buf[32]; /* as in ublock_ref_enc_block */
    half_load(&y0, in, nw);
    half_load(&y1, in + 8 * nw, nw);
    for (unsigned r = s->rounds; r >= 1; r--) {
        add_round_key(&y0, &y1, ublock_rk_row(s, r, buf), nw);
        half_permute(&y0, pli, nw);
        half_permute(&y1, pri, nw);
        mix_inv(&y0, &y1, nw);
        for (unsigned i = 0; i < nw; i++) {
            y0.w[i] = sbox_inv_word(y0.w[i]);
            y1.w[i] = sbox_inv_word(y1.w[i]);
        }
    }
    add_round_key(&y0, &y1, ublock_rk_row(s, 0, buf), nw);
    half_store(out, &y0, nw);
    half_store(out + 8 * nw, &y1, nw);
    if (!s->raw)
        kuai_wipe(buf, sizeof buf);
}

/* ---- key schedule ------------------------------------------------------ */

/* Source for PK1-3 and RC: ../shared/spec/ublock.md, "Key schedule". Defined
 * here, not in ublock_tables.c, so that this file's scalar expansion reads
 * them as constants (~15 % of a short message on ref). */
const uint8_t ublock_pk1[16] = {6, 0, 8, 13, 1, 15, 5, 10, 4, 9, 12, 2, 11, 3, 7, 14};
const uint8_t ublock_pk2[32] = {10, 5,  15, 0,  2,  7,  8,  13, 14, 6,  4,  12, 1,  3,  11, 9,
                                24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23};
const uint8_t ublock_pk3[32] = {10, 5,  15, 0,  2,  7,  8,  13, 1,  14, 4,  12, 9,  11, 3,  6,
                                24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23};
const uint32_t ublock_rc[24] = {
    0x988cc9dd, 0xf0e4a1b5, 0x21357064, 0x8397d2c6, 0xc7d39682, 0x4f5b1e0a, 0x5e4a0f1b, 0x7c682d39,
    0x392d687c, 0xb3a7e2f6, 0xa7b3f6e2, 0x8e9adfcb, 0xdcc88d99, 0x786c293d, 0x30246175, 0xa1b5f0e4,
    0x8296d3c7, 0xc5d19480, 0x4a5e1b0f, 0x55410410, 0x6b7f3a2e, 0x17034652, 0xeffbbeaa, 0x1f0b4e5a};

/* Multiplication by x in GF(2^4) mod x^4 + x + 1 of every nibble of w. */
static uint64_t gf16_mul2_word(uint64_t w)
{
    return ((w << 1) & ~NIB_LSB) ^ (((w >> 3) & NIB_LSB) * 3);
}

/*
 * The key register as four quarters K0..K3 of qn nibbles each (8 for 128-bit
 * keys, 16 for 256-bit keys), each right-aligned in a 64-bit word with its
 * nibble 0 most significant.
 */
static unsigned quarter_nibble(const uint64_t *k, unsigned qn, unsigned j)
{
    return (unsigned)(k[j / qn] >> (4 * (qn - 1 - j % qn))) & 0xf;
}

/* Inlined per quarter size so that qn is a constant and the nibble
 * arithmetic has no division in it. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
expand_quarters(ublock_sched *s, const uint8_t *key, unsigned qn, const uint8_t *pk,
                unsigned nbytes, unsigned rounds)
{
    uint64_t qmask = qn == 8 ? 0xffffffffull : ~0ull;
    uint64_t k[4];
    uint8_t nib[32]; /* K0||K1 one nibble per byte, for PK */

    s->nbytes = nbytes;
    s->rounds = rounds;
    for (unsigned i = 0; i < 4; i++)
        k[i] = qn == 8 ? load_be32(key + 4 * i) : load_be64(key + 8 * i);
    for (unsigned r = 0; r <= rounds; r++) {
        if (r > 0) {
            /* K0||K1 <- PK(K0||K1) */
            uint64_t p0 = 0, p1 = 0; /* new K0, K1; scalars stay in registers */
            for (unsigned j = 0; j < 2 * qn; j++)
                nib[j] = (uint8_t)quarter_nibble(k, qn, j);
            for (unsigned j = 0; j < qn; j++) {
                p0 = (p0 << 4) | nib[pk[j]];
                p1 = (p1 << 4) | nib[pk[qn + j]];
            }
            /* K2 ^= Sk(K0 ^ RC): RC on the left 32 bits of K0 */
            uint64_t rc = (uint64_t)ublock_rc[r - 1] << (4 * qn - 32);
            uint64_t k2 = k[2] ^ (sbox_word(p0 ^ rc) & qmask);
            /* K3 ^= Tk(K1) */
            uint64_t k3 = k[3] ^ gf16_mul2_word(p1);
            /* K <- K2 || K3 || K1 || K0 */
            k[0] = k2;
            k[1] = k3;
            k[2] = p1;
            k[3] = p0;
        }
        /* RK_r is the left n bits of the register: its first quarters. */
        for (unsigned i = 0; i < nbytes / (qn / 2); i++) {
            if (qn == 8)
                store_be32(s->rk[r] + 4 * i, (uint32_t)k[i]);
            else
                store_be64(s->rk[r] + 8 * i, k[i]);
        }
    }
    kuai_wipe(k, sizeof k);
    kuai_wipe(nib, sizeof nib);
}

void ublock_expand_raw(ublock_sched *s, kuai_cipher c, const uint8_t *key)
{
    if (c == KUAI_UBLOCK_128_128)
        expand_quarters(s, key, 8, ublock_pk1, 16, 16);
    else if (c == KUAI_UBLOCK_128_256)
        expand_quarters(s, key, 16, ublock_pk2, 16, 24);
    else
        expand_quarters(s, key, 16, ublock_pk3, 32, 24);
    s->raw = 1;
    /* The kernel form too: a multi-key call runs on its first key's
     * backend, and the low-latency kernel reads every key in that form. */
    ublock_llk_from_rk(s);
}

/* ---- backend table ----------------------------------------------------- */

static int ublock_ref_available(void)
{
    return 1;
}

static void ublock_ref_expand(kuai_key *k, const uint8_t *key)
{
    ublock_expand_raw(ublock_sched_of(k), (kuai_cipher)k->priv_cipher, key);
}

static void ublock_ref_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                  size_t nblocks)
{
    const ublock_sched *s = ublock_sched_const(k);
    for (size_t i = 0; i < nblocks; i++)
        ublock_ref_enc_block(s, in + i * s->nbytes, out + i * s->nbytes);
}

static void ublock_ref_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                  size_t nblocks)
{
    const ublock_sched *s = ublock_sched_const(k);
    for (size_t i = 0; i < nblocks; i++)
        ublock_ref_dec_block(s, in + i * s->nbytes, out + i * s->nbytes);
}

/* Multi-key for ref: the "lane format" is just the list of key pointers. */
static void ublock_ref_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    memcpy(m->b, keys, n * sizeof *keys);
}

static void ublock_ref_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    const kuai_key *const *keys = (const kuai_key *const *)(const void *)m->b;
    for (size_t i = 0; i < n; i++) {
        const ublock_sched *s = ublock_sched_const(keys[i]);
        ublock_ref_enc_block(s, in + i * s->nbytes, out + i * s->nbytes);
    }
}

static void ublock_ref_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    const kuai_key *const *keys = (const kuai_key *const *)(const void *)m->b;
    for (size_t i = 0; i < n; i++) {
        const ublock_sched *s = ublock_sched_const(keys[i]);
        ublock_ref_dec_block(s, in + i * s->nbytes, out + i * s->nbytes);
    }
}

/* Below every other uBlock backend: the one any CPU runs. */
#define UBLOCK_REF_IMPL(var, fam)                                                                  \
    const kuai_impl var = {                                                                        \
        .name = "ref",                                                                             \
        .family = fam,                                                                             \
        .priority = 0,                                                                             \
        .available = ublock_ref_available,                                                         \
        .expand = ublock_ref_expand,                                                               \
        .enc_blocks = ublock_ref_enc_blocks,                                                       \
        .dec_blocks = ublock_ref_dec_blocks,                                                       \
        .ctr_blocks = NULL,                                                                        \
        .mk_lanes = 8,                                                                             \
        .mk_setup = ublock_ref_mk_setup,                                                           \
        .mk_bytes = 8 * sizeof(const kuai_key *),                                                  \
        .mk_enc = ublock_ref_mk_enc,                                                               \
        .mk_dec = ublock_ref_mk_dec,                                                               \
    }

KUAI_REGISTER(ublock128_ref);
UBLOCK_REF_IMPL(ublock128_ref, KUAI_FAMILY_UBLOCK128);
KUAI_REGISTER(ublock256_ref);
UBLOCK_REF_IMPL(ublock256_ref, KUAI_FAMILY_UBLOCK256);
