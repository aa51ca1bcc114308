/* SPDX-License-Identifier: Apache-2.0 */
/* SM4 (GB/T 32907-2016): the schedule form every SM4 backend shares. */
#ifndef KUAI_SM4_H
#define KUAI_SM4_H

#include "../internal.h"

/*
 * Stored at the start of kuai_key.priv_sched by every SM4 backend: the 32
 * encryption round keys rk[0..31] as the standard defines them (decryption
 * uses them in reverse order). ext is the backend's own derived form.
 */
typedef struct sm4_sched {
    uint32_t rk[32];
    unsigned char ext[8192 - 128];
} sm4_sched;

_Static_assert(sizeof(sm4_sched) <= sizeof(((kuai_key *)0)->priv_sched),
               "SM4 schedule must fit in kuai_key");

/* What expand writes of a key when the backend keeps no form of its own
 * (kuai_impl.sched_bytes). */
#define SM4_SCHED_BYTES offsetof(sm4_sched, ext)

static inline sm4_sched *sm4_sched_of(kuai_key *k)
{
    return (sm4_sched *)(void *)k->priv_sched;
}
static inline const sm4_sched *sm4_sched_const(const kuai_key *k)
{
    return (const sm4_sched *)(const void *)k->priv_sched;
}

/* FK (standard, 7.3). */
static const uint32_t sm4_fk[4] = {0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc};

/* CK(i): byte j is (4 i + j) * 7 mod 256 (standard, 7.3), computed rather
 * than tabulated. */
static inline uint32_t sm4_ck(unsigned i)
{
    uint32_t ck = 0;
    for (unsigned j = 0; j < 4; j++)
        ck = (ck << 8) | (((4 * i + j) * 7) & 0xff);
    return ck;
}

/* The portable, constant-time key schedule (sm4_ref.c; ref's and ttable's
 * key setup, and sm4_simd.h's where the ISA file gives it no S-box). */
void sm4_expand_raw(sm4_sched *s, const uint8_t key[16]);
/* The same schedule with another constant-time tau (the S-box on each byte
 * of a word): a backend whose S-box is a couple of instructions makes key
 * setup several times cheaper than the portable bitsliced one. */
void sm4_expand_with(sm4_sched *s, const uint8_t key[16], uint32_t (*tau)(uint32_t));

/* A 4-word backend's short calls (one-shot ECB, multi-key mk_short, CBC
 * encryption of one chain) and vector key setup (one key, a pair, four)
 * under the names P_oneshot, P_mk_short, P_cbc_enc, P_expand, P_expand2,
 * P_expand4 (sm4_simd.h's
 * SM4S_SHORT_EXPORT defines them). Their lanes are four 32-bit words, one
 * key or block each, which is what a short call has; a wider backend takes
 * them (SM4S_SHORT_FROM, SM4S_EXPAND_FROM) rather than run a pass of 8 or
 * 16 blocks per key. */
#define SM4_SHORT_API(P)                                                                           \
    void P##_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,          \
                     uint8_t *const *out, size_t n, size_t nblocks, int enc);                      \
    void P##_mk_short(const kuai_key *const *keys, uint8_t *const *ivs, const uint8_t *const *in,  \
                      uint8_t *const *out, size_t n, size_t nblocks, int enc);                     \
    void P##_cbc_enc(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,              \
                     size_t nblocks);                                                              \
    void P##_expand(kuai_key *k, const uint8_t *key);                                              \
    void P##_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1);        \
    void P##_expand4(kuai_key *const k[4], const uint8_t *const key[4])
#if defined(__x86_64__) || defined(_M_X64)
/* aesni-avx's (AES-NI S-box), which vaes takes; gfni-avx's (GFNI on xmm),
 * which gfni takes. */
SM4_SHORT_API(sm4_aesni_avx);
SM4_SHORT_API(sm4_gfni_avx);
#elif defined(__loongarch64)
/* lsx's, which lasx takes. */
SM4_SHORT_API(sm4_lsx);
#endif

#endif
