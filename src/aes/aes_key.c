/*
 * AES key expansion (FIPS-197 section 5.2) and the equivalent inverse
 * cipher's round keys (section 5.3.5), shared by every AES backend.
 *
 * Constant time: the S-box is computed, not looked up (inversion in
 * GF(2^8) as a fixed chain of multiplications, then the affine map), and
 * xtime uses a mask instead of a branch. Key setup runs once per key, so
 * plain scalar code is fast enough for the portable path; backends with a
 * one-instruction S-box pass their own subword to aes_expand_with.
 */
#include "aes.h"

#include "../bytes.h"

#include <string.h>

/* Multiplication in GF(2^8) mod x^8 + x^4 + x^3 + x + 1, without branches. */
static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    unsigned r = 0, x = a;
    for (int i = 0; i < 8; i++) {
        r ^= x & (0u - ((b >> i) & 1u));
        x = (x << 1) ^ (0x11bu & (0u - (x >> 7)));
    }
    return (uint8_t)r;
}

/* a^254 = a^-1 (0 -> 0): the chain 2, 3, 6, 12, 15, 30, 60, 120, 240, 252, 254. */
static uint8_t gf_inv(uint8_t a)
{
    uint8_t a2 = gf_mul(a, a), a3 = gf_mul(a2, a);
    uint8_t a12 = gf_mul(gf_mul(a3, a3), gf_mul(a3, a3));
    uint8_t a15 = gf_mul(a12, a3);
    uint8_t t = gf_mul(a15, a15); /* 30 */
    t = gf_mul(t, t);             /* 60 */
    t = gf_mul(t, t);             /* 120 */
    t = gf_mul(t, t);             /* 240 */
    t = gf_mul(t, a12);           /* 252 */
    return gf_mul(t, a2);         /* 254 */
}

/* S(x) = A x^-1 + 0x63, A's row i selects bits i, i+4, i+5, i+6, i+7. */
static uint8_t sbox_ct(uint8_t x)
{
    unsigned v = gf_inv(x);
    unsigned r = v ^ (v << 1) ^ (v << 2) ^ (v << 3) ^ (v << 4);
    return (uint8_t)((r ^ (r >> 8)) ^ 0x63u);
}

uint32_t aes_subword_ct(uint32_t w)
{
    return (uint32_t)sbox_ct((uint8_t)(w >> 24)) << 24 |
           (uint32_t)sbox_ct((uint8_t)(w >> 16)) << 16 | (uint32_t)sbox_ct((uint8_t)(w >> 8)) << 8 |
           sbox_ct((uint8_t)w);
}

static uint8_t xtime(uint8_t x)
{
    return (uint8_t)((x << 1) ^ (0x1bu & (0u - (x >> 7))));
}

/* InvMixColumns of one 16-byte round key, in place. */
static void inv_mix_columns(uint8_t b[16])
{
    for (int c = 0; c < 16; c += 4) {
        uint8_t a0 = b[c], a1 = b[c + 1], a2 = b[c + 2], a3 = b[c + 3];
        /* InvMixColumns = MixColumns o (4 x^2 terms): the usual factoring. */
        uint8_t u = xtime(xtime((uint8_t)(a0 ^ a2))), v = xtime(xtime((uint8_t)(a1 ^ a3)));
        a0 ^= u;
        a1 ^= v;
        a2 ^= u;
        a3 ^= v;
        uint8_t t = (uint8_t)(a0 ^ a1 ^ a2 ^ a3);
        b[c] = (uint8_t)(a0 ^ t ^ xtime((uint8_t)(a0 ^ a1)));
        b[c + 1] = (uint8_t)(a1 ^ t ^ xtime((uint8_t)(a1 ^ a2)));
        b[c + 2] = (uint8_t)(a2 ^ t ^ xtime((uint8_t)(a2 ^ a3)));
        b[c + 3] = (uint8_t)(a3 ^ t ^ xtime((uint8_t)(a3 ^ a0)));
    }
}

void aes_derive_dec(aes_sched *s)
{
    unsigned nr = s->nr;
    memcpy(s->drk[0], s->rk[nr], 16);
    for (unsigned i = 1; i < nr; i++) {
        memcpy(s->drk[i], s->rk[nr - i], 16);
        inv_mix_columns(s->drk[i]);
    }
    memcpy(s->drk[nr], s->rk[0], 16);
}

void aes_expand_with(aes_sched *s, const uint8_t *key, unsigned key_bytes,
                     uint32_t (*subword)(uint32_t))
{
    unsigned nk = key_bytes / 4, nr = nk + 6, total = 4 * (nr + 1);
    uint32_t w[4 * (AES_MAX_ROUNDS + 1)];
    uint32_t rcon = 1;
    s->nr = nr;
    s->nk = nk;
    for (unsigned i = 0; i < nk; i++)
        w[i] = load_be32(key + 4 * i);
    for (unsigned i = nk; i < total; i++) {
        uint32_t t = w[i - 1];
        if (i % nk == 0) { /* i and nk are public */
            t = subword(t << 8 | t >> 24) ^ rcon << 24;
            rcon = xtime((uint8_t)rcon);
        } else if (nk > 6 && i % nk == 4) {
            t = subword(t);
        }
        w[i] = w[i - nk] ^ t;
    }
    for (unsigned i = 0; i < total; i++)
        store_be32(s->rk[i / 4] + 4 * (i % 4), w[i]);
    kuai_wipe(w, sizeof w);
    aes_derive_dec(s);
}

void aes_expand_raw(aes_sched *s, const uint8_t *key, unsigned key_bytes)
{
    aes_expand_with(s, key, key_bytes, aes_subword_ct);
}
