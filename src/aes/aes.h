/* SPDX-License-Identifier: Apache-2.0 */
/* AES (FIPS-197): the schedule form every AES backend shares. */
#ifndef KUAI_AES_H
#define KUAI_AES_H

#include "../bytes.h"
#include "../internal.h"

/*
 * Stored at the start of kuai_key.priv_sched by every AES backend, so a key
 * set up by one backend can join a multi-key call run by another:
 *
 *   rk[0..nr]   the encryption round keys, 16 bytes each, in FIPS-197 byte
 *               order (rk[0] is the first 16 bytes of the cipher key);
 *   drk[0..nr]  the round keys of the equivalent inverse cipher (FIPS-197
 *               section 5.3.5) in the order decryption uses them:
 *               drk[0] = rk[nr], drk[i] = InvMixColumns(rk[nr - i]) for
 *               0 < i < nr, drk[nr] = rk[0] — exactly what AESDEC/AESD take.
 *
 * ext is the backend's own derived form (bitsliced keys, for instance).
 */
#define AES_MAX_ROUNDS 14
typedef struct aes_sched {
    uint32_t nr; /* 10, 12 or 14 */
    uint32_t nk; /* key length in 32-bit words: 4, 6 or 8 */
    uint8_t rk[AES_MAX_ROUNDS + 1][16];
    uint8_t drk[AES_MAX_ROUNDS + 1][16];
    unsigned char ext[8192 - 8 - 2 * 16 * (AES_MAX_ROUNDS + 1)];
} aes_sched;

_Static_assert(sizeof(aes_sched) <= sizeof(((kuai_key *)0)->priv_sched),
               "AES schedule must fit in kuai_key");

/* What expand writes of a key when the backend keeps no form of its own
 * (kuai_impl.sched_bytes). */
#define AES_SCHED_BYTES offsetof(aes_sched, ext)

static inline aes_sched *aes_sched_of(kuai_key *k)
{
    return (aes_sched *)(void *)k->priv_sched;
}
static inline const aes_sched *aes_sched_const(const kuai_key *k)
{
    return (const aes_sched *)(const void *)k->priv_sched;
}

/* Key length in bytes for KUAI_AES_128/192/256 (the expand hook gets only
 * the key, its length comes from k->priv_cipher). */
static inline unsigned aes_key_bytes(const kuai_key *k)
{
    return k->priv_cipher == KUAI_AES_128 ? 16 : k->priv_cipher == KUAI_AES_192 ? 24 : 32;
}

/*
 * The portable, constant-time key expansion (aes_key.c), rk and drk both.
 * subword applies the S-box to each byte of a word; aes_subword_ct is the
 * portable one, and a backend with a cheaper constant-time S-box passes its
 * own (as the SM4 backends do with sm4_expand_with).
 */
uint32_t aes_subword_ct(uint32_t w);
void aes_expand_with(aes_sched *s, const uint8_t *key, unsigned key_bytes,
                     uint32_t (*subword)(uint32_t));
void aes_expand_raw(aes_sched *s, const uint8_t *key, unsigned key_bytes);
/* drk from rk (constant time; InvMixColumns is linear). */
void aes_derive_dec(aes_sched *s);

/* FIPS-197 section 5.2: rk[0..nk+6] from the key (aes_expand_words), and
 * with nr and nk into a schedule (aes_expand_rk; the caller derives drk).
 * Inline, so that a backend passing its own constant subword gets it inlined
 * (aes_aesni.c's AES-192; aes_expand_with for the rest). j = i mod nk is
 * kept by hand: a division per word would cost more than the S-boxes (i and
 * nk are public, so are the branches). */
static inline void aes_expand_words(uint8_t (*rk)[16], const uint8_t *key, unsigned nk,
                                    uint32_t (*subword)(uint32_t))
{
    const unsigned nr = nk + 6, total = 4 * (nr + 1);
    uint32_t w[4 * (AES_MAX_ROUNDS + 1)];
    uint32_t rcon = 1;
    for (unsigned i = 0; i < nk; i++)
        w[i] = load_be32(key + 4 * i);
    for (unsigned i = nk, j = 0; i < total; i++, j = j + 1 == nk ? 0 : j + 1) {
        uint32_t t = w[i - 1];
        if (j == 0) {
            t = subword(t << 8 | t >> 24) ^ rcon << 24;
            rcon = (rcon << 1) ^ (0x11bu & (0u - (rcon >> 7)));
        } else if (nk > 6 && j == 4) {
            t = subword(t);
        }
        w[i] = w[i - nk] ^ t;
    }
    for (unsigned i = 0; i < total; i++)
        store_be32(rk[i / 4] + 4 * (i % 4), w[i]);
    kuai_wipe(w, sizeof w);
}
static inline void aes_expand_rk(aes_sched *s, const uint8_t *key, unsigned nk,
                                 uint32_t (*subword)(uint32_t))
{
    s->nr = nk + 6;
    s->nk = nk;
    aes_expand_words(s->rk, key, nk, subword);
}

/* The multi-key kernels aes_avx2.c and aes_lasx.c hand narrow batches
 * to. */
extern const kuai_impl aes_ssse3;
extern const kuai_impl aes_lsx;

/* LASX's few blocks (up to 8) on LSX over LASX's keys of the direction
 * (aes_lasx_narrow.c): ECB, and CTR's out = in + E(cb) for the counter
 * blocks cb. */
void aes_lasx_narrow(const unsigned char *kb, unsigned nr, const uint8_t *in, uint8_t *out,
                     size_t n, int dec);
void aes_lasx_narrow_ctr(const unsigned char *kb, unsigned nr, const uint8_t *cb, const uint8_t *in,
                         uint8_t *out, size_t n);

#endif
