/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES key expansion (FIPS-197 section 5.2) and the equivalent inverse
 * cipher's round keys (section 5.3.5), shared by every AES backend.
 *
 * Constant time: the S-box is computed, not looked up (aes_subword_ct in
 * aes_ref.c, the reference backend's boolean circuit on one word), and
 * xtime uses a mask instead of a branch. Backends with a one-instruction
 * S-box pass their own subword to aes_expand_with.
 */
#include "aes.h"

#include "../bytes.h"

#include <string.h>

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
    aes_expand_rk(s, key, key_bytes / 4, subword);
    aes_derive_dec(s);
}

void aes_expand_raw(aes_sched *s, const uint8_t *key, unsigned key_bytes)
{
    aes_expand_with(s, key, key_bytes, aes_subword_ct);
}
