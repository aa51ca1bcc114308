/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES on 128-bit registers with the AES-NI instructions: key setup, ECB,
 * CTR, CBC encryption and the multi-key lanes, as inline functions. The
 * aesni backend (aes_aesni.c, legacy SSE encoding) is made of them; the
 * vaes backend (aes_vaes.c, VEX encoding) takes key setup, CBC encryption
 * and its short tails from here.
 *
 * Every function that runs rounds is specialised on the round count (10,
 * 12, 14) through AESX_BY_NR, so the round loops are fully unrolled and
 * the round keys can sit in registers.

 */
#ifndef KUAI_AES_NI_XMM_H
#define KUAI_AES_NI_XMM_H

#include "../bytes.h"
#include "aes.h"

#include <immintrin.h>
#include <string.h>

#define AESX_INLINE static inline __attribute__((always_inline))
/* Blocks in flight: aesenc has a latency of 4 cycles and a throughput of
 * two per cycle on Zen (1 per cycle on Intel before Ice Lake), so 8
 * independent blocks keep the AES units busy. */
#define AESX_W 8
#define AESX_CTR_W 12

/* Run `call` with the enum constant NR equal to nr. */
#define AESX_BY_NR(nr, call)                                                                       \
    switch (nr) {                                                                                  \
    case 10: {                                                                                     \
        enum { NR = 10 };                                                                          \
        call;                                                                                      \
    } break;                                                                                       \
    case 12: {                                                                                     \
        enum { NR = 12 };                                                                          \
        call;                                                                                      \
    } break;                                                                                       \
    default: {                                                                                     \
        enum { NR = 14 };                                                                          \
        call;                                                                                      \
    } break;                                                                                       \
    }

#define aesx_loadu(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define aesx_storeu(p, x) _mm_storeu_si128((__m128i *)(void *)(p), x)

/* ---- n blocks, one key ---------------------------------------------------- */

/* The blocks of s keys decrypted (dec) or encrypted in one pass, nb of key
 * j's at b[j * nb .. j * nb + nb - 1] (s * nb <= AESX_W; s, nb and dec
 * constants) under its rows rows[j] (drk or rk; the one-shot call's, on
 * its frame): round r's row of each key loaded as the round needs it and
 * zeroed once read, a volatile load and store among the rounds (whose
 * chain of aesdec leaves the store ports idle), so that no copy of the
 * rows is made and no wipe follows them. */
AESX_INLINE void aesx_rows_wiping(__m128i *b, uint8_t (*const *rows)[16], int s, int nb, int nr,
                                  int dec)
{
    for (int r = 0; r <= nr; r++)
        for (int j = 0; j < s; j++) {
            volatile __m128i_u *const row = (volatile __m128i_u *)(void *)rows[j][r];
            const __m128i k = *row;
            *row = _mm_setzero_si128();
            for (int i = j * nb; i < j * nb + nb; i++)
                b[i] = r == 0 ? _mm_xor_si128(b[i], k)
                       : r < nr
                           ? (dec ? _mm_aesdec_si128(b[i], k) : _mm_aesenc_si128(b[i], k))
                           : (dec ? _mm_aesdeclast_si128(b[i], k) : _mm_aesenclast_si128(b[i], k));
        }
}

/* One key's NB (1..4, a constant) blocks the same way. Every input block
 * is read before any output is written. */
AESX_INLINE void aesx_dec_short_wiping(uint8_t (*drk)[16], int nr, const uint8_t *in, uint8_t *out,
                                       int NB)
{
    __m128i b[4];
    uint8_t(*const d[1])[16] = {drk};
    for (int i = 0; i < NB; i++)
        b[i] = aesx_loadu(in + 16 * i);
    aesx_rows_wiping(b, d, 1, NB, nr, 1);
    for (int i = 0; i < NB; i++)
        aesx_storeu(out + 16 * i, b[i]);
}

/* call with NB = nblocks (1..4) and NR = nr (AESX_BY_NR), both constants */
#define AESX_BY_NB4(nblocks, nr, call)                                                             \
    switch (nblocks) {                                                                             \
    case 1: {                                                                                      \
        enum { NB = 1 };                                                                           \
        AESX_BY_NR(nr, call)                                                                       \
    } break;                                                                                       \
    case 2: {                                                                                      \
        enum { NB = 2 };                                                                           \
        AESX_BY_NR(nr, call)                                                                       \
    } break;                                                                                       \
    case 3: {                                                                                      \
        enum { NB = 3 };                                                                           \
        AESX_BY_NR(nr, call)                                                                       \
    } break;                                                                                       \
    default: {                                                                                     \
        enum { NB = 4 };                                                                           \
        AESX_BY_NR(nr, call)                                                                       \
    } break;                                                                                       \
    }

AESX_INLINE void aesx_load_keys(__m128i *k, const uint8_t (*rk)[16], int nr)
{
    for (int r = 0; r <= nr; r++)
        k[r] = aesx_loadu(rk[r]);
}

AESX_INLINE void aesx_enc_n(__m128i *b, int n, const __m128i *k, int nr)
{
    for (int i = 0; i < n; i++)
        b[i] = _mm_xor_si128(b[i], k[0]);
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < n; i++)
            b[i] = _mm_aesenc_si128(b[i], k[r]);
    for (int i = 0; i < n; i++)
        b[i] = _mm_aesenclast_si128(b[i], k[nr]);
}

AESX_INLINE void aesx_dec_n(__m128i *b, int n, const __m128i *k, int nr)
{
    for (int i = 0; i < n; i++)
        b[i] = _mm_xor_si128(b[i], k[0]);
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < n; i++)
            b[i] = _mm_aesdec_si128(b[i], k[r]);
    for (int i = 0; i < n; i++)
        b[i] = _mm_aesdeclast_si128(b[i], k[nr]);
}

/* n blocks from in to out (n a constant at every call). */
AESX_INLINE void aesx_crypt_n(const __m128i *k, int nr, int dec, int n, const uint8_t *in,
                              uint8_t *out)
{
    __m128i b[AESX_W];
    for (int i = 0; i < n; i++)
        b[i] = aesx_loadu(in + 16 * i);
    if (dec)
        aesx_dec_n(b, n, k, nr);
    else
        aesx_enc_n(b, n, k, nr);
    for (int i = 0; i < n; i++)
        aesx_storeu(out + 16 * i, b[i]);
}

/* ECB over nblocks: 8 at a time, then 4, 2, 1. */
AESX_INLINE void aesx_crypt_blocks(const uint8_t (*rk)[16], int nr, int dec, const uint8_t *in,
                                   uint8_t *out, size_t nblocks)
{
    __m128i k[AES_MAX_ROUNDS + 1];
    aesx_load_keys(k, rk, nr);
    for (; nblocks >= AESX_W; nblocks -= AESX_W, in += 16 * AESX_W, out += 16 * AESX_W)
        aesx_crypt_n(k, nr, dec, AESX_W, in, out);
    if (nblocks & 4) {
        aesx_crypt_n(k, nr, dec, 4, in, out);
        in += 64;
        out += 64;
    }
    if (nblocks & 2) {
        aesx_crypt_n(k, nr, dec, 2, in, out);
        in += 32;
        out += 32;
    }
    if (nblocks & 1)
        aesx_crypt_n(k, nr, dec, 1, in, out);
}

/* ---- CBC encryption ----------------------------------------------------- */

/* The chain stays in a register: per block one XOR, nr AES rounds. The
 * plaintext is XORed with rk[0] off the chain, so the chain pays one XOR. */
AESX_INLINE void aesx_cbc_enc(const uint8_t (*rk)[16], int nr, uint8_t *iv, const uint8_t *in,
                              uint8_t *out, size_t nblocks)
{
    __m128i k[AES_MAX_ROUNDS + 1];
    aesx_load_keys(k, rk, nr);
    __m128i c = aesx_loadu(iv);
    for (size_t b = 0; b < nblocks; b++, in += 16, out += 16) {
        c = _mm_xor_si128(c, _mm_xor_si128(aesx_loadu(in), k[0]));
        for (int r = 1; r < nr; r++)
            c = _mm_aesenc_si128(c, k[r]);
        c = _mm_aesenclast_si128(c, k[nr]);
        aesx_storeu(out, c);
    }
    aesx_storeu(iv, c);
}

/* ---- CBC decryption ------------------------------------------------------ */

/* n blocks (a constant): decrypt, XOR with the ciphertext block before each
 * (kept in registers, so in == out works), prev becomes the last one. */
AESX_INLINE void aesx_cbc_dec_n(const __m128i *k, int nr, int n, __m128i *prev, const uint8_t *in,
                                uint8_t *out)
{
    __m128i b[AESX_CTR_W];
    for (int i = 0; i < n; i++)
        b[i] = aesx_loadu(in + 16 * i);
    aesx_dec_n(b, n, k, nr);
    /* The ciphertext for the XORs is read again rather than kept in
     * registers (12 blocks and their copies would not fit in 16), with the
     * stores last block first: in == out then overwrites each ciphertext
     * block only after the block after it has read it. */
    __m128i last = aesx_loadu(in + 16 * (n - 1));
    for (int i = n - 1; i > 0; i--)
        aesx_storeu(out + 16 * i, _mm_xor_si128(b[i], aesx_loadu(in + 16 * (i - 1))));
    aesx_storeu(out, _mm_xor_si128(b[0], *prev));
    *prev = last;
}

AESX_INLINE void aesx_cbc_dec(const uint8_t (*drk)[16], int nr, uint8_t *iv, const uint8_t *in,
                              uint8_t *out, size_t nblocks)
{
    __m128i k[AES_MAX_ROUNDS + 1];
    aesx_load_keys(k, drk, nr);
    __m128i prev = aesx_loadu(iv);
    for (; nblocks >= AESX_CTR_W;
         nblocks -= AESX_CTR_W, in += 16 * AESX_CTR_W, out += 16 * AESX_CTR_W)
        aesx_cbc_dec_n(k, nr, AESX_CTR_W, &prev, in, out);
    if (nblocks >= 8) {
        aesx_cbc_dec_n(k, nr, 8, &prev, in, out);
        in += 128;
        out += 128;
        nblocks -= 8;
    }
    if (nblocks & 4) {
        aesx_cbc_dec_n(k, nr, 4, &prev, in, out);
        in += 64;
        out += 64;
    }
    if (nblocks & 2) {
        aesx_cbc_dec_n(k, nr, 2, &prev, in, out);
        in += 32;
        out += 32;
    }
    if (nblocks & 1)
        aesx_cbc_dec_n(k, nr, 1, &prev, in, out);
    aesx_storeu(iv, prev);
}

/* ---- CTR ------------------------------------------------------------------ */

/* The counter is a 128-bit big-endian integer. It is kept as (hi, lo) in a
 * register with lo in the low 64-bit lane, so paddq counts, and one pshufb
 * that reverses the 16 bytes gives the block. lo carries into hi only when
 * it wraps; a batch that would wrap builds each block from scalars. The
 * counter is public (it comes from the IV), so branching on it is fine. */
AESX_INLINE __m128i aesx_rev16(void)
{
    return _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

/* Counter blocks ctr + 0 .. ctr + n - 1 into b. */
AESX_INLINE void aesx_ctr_make(__m128i *b, int n, uint64_t hi, uint64_t lo)
{
    const __m128i rev = aesx_rev16();
    if (lo <= UINT64_MAX - (uint64_t)(n - 1)) {
        __m128i v = _mm_set_epi64x((long long)hi, (long long)lo);
        for (int i = 0; i < n; i++)
            b[i] = _mm_shuffle_epi8(_mm_add_epi64(v, _mm_set_epi64x(0, i)), rev);
    } else {
        for (int i = 0; i < n; i++) {
            uint64_t l = lo + (uint64_t)i, h = hi + (uint64_t)(l < lo);
            b[i] = _mm_shuffle_epi8(_mm_set_epi64x((long long)h, (long long)l), rev);
        }
    }
}

#define AESX_CTR_ADD(hi, lo, n)                                                                    \
    do {                                                                                           \
        uint64_t aesx_old_ = (lo);                                                                 \
        (lo) += (uint64_t)(n);                                                                     \
        (hi) += (uint64_t)((lo) < aesx_old_);                                                      \
    } while (0)

/* The last words of n counter blocks kept XORed with rk[0] (k0w3: rk[0]'s
 * last word): counters low, low + 1, ... big-endian. The other 96 bits of
 * pre[] stay as they are. */
AESX_INLINE void aesx_pre_words(uint8_t (*pre)[16], int n, uint32_t low, uint32_t k0w3)
{
    for (int i = 0; i < n; i++) {
        uint32_t w = __builtin_bswap32(low + (uint32_t)i) ^ k0w3;
        memcpy(pre[i] + 12, &w, 4);
    }
}

/* n blocks (a constant) of keystream from (hi, lo) XORed from in into out
 * (in == out allowed: each block is loaded before it is stored). */
AESX_INLINE void aesx_ctr_pass(__m128i *b, int n, const __m128i *k, int nr, uint64_t hi,
                               uint64_t lo, const uint8_t *in, uint8_t *out)
{
    aesx_ctr_make(b, n, hi, lo);
    aesx_enc_n(b, n, k, nr);
    for (int i = 0; i < n; i++)
        aesx_storeu(out + 16 * i, _mm_xor_si128(b[i], aesx_loadu(in + 16 * i)));
}

/* A CTR call's last blocks (fewer than a batch), straight from in to out:
 * a pass for each set bit of nblocks (8, 4, 2, 1), independent of one
 * another, so the core overlaps them as it does ECB's. They ran as one
 * pass of 1, 2, 4, 8 or 12 blocks through a stack buffer: copies in and
 * out, padding blocks computed and dropped, the buffer wiped (AES-128 on
 * aesni, 5-7 blocks 107 TSC cycles against 63 for 4, 9-11 169 against
 * 124 for 12; Xeon, Sapphire Rapids class). (hi, lo) is advanced past
 * them. */
AESX_INLINE void aesx_ctr_tail(__m128i *b, const __m128i *k, int nr, uint64_t *hi, uint64_t *lo,
                               const uint8_t *in, uint8_t *out, size_t nblocks)
{
    for (int bit = 8; bit; bit >>= 1) {
        if (!(nblocks & (size_t)bit))
            continue;
        switch (bit) {
        case 8:
            aesx_ctr_pass(b, 8, k, nr, *hi, *lo, in, out);
            break;
        case 4:
            aesx_ctr_pass(b, 4, k, nr, *hi, *lo, in, out);
            break;
        case 2:
            aesx_ctr_pass(b, 2, k, nr, *hi, *lo, in, out);
            break;
        default:
            aesx_ctr_pass(b, 1, k, nr, *hi, *lo, in, out);
            break;
        }
        AESX_CTR_ADD(*hi, *lo, bit);
        in += 16 * bit;
        out += 16 * bit;
    }
}

AESX_INLINE void aesx_ctr(const uint8_t (*rk)[16], int nr, uint8_t *ctr, const uint8_t *in,
                          uint8_t *out, size_t nblocks)
{
    __m128i k[AES_MAX_ROUNDS + 1];
    aesx_load_keys(k, rk, nr);
    uint64_t hi = load_be64(ctr), lo = load_be64(ctr + 8);
    __m128i b[AESX_CTR_W];
    /* The main loop keeps the counter blocks XORed with rk[0] in memory
     * and rewrites only their last 32-bit word, from scalars (as OpenSSL's
     * ctr32 code does): the AES units share their vector ports with the
     * adds, shuffles and XORs that building blocks in registers takes, and
     * those cost ~10 %. Valid while the upper 96 bits stay the same over a
     * batch; a batch that crosses a 2^32 boundary is built in registers. */
    _Alignas(16) uint8_t pre[AESX_CTR_W][16];
    uint64_t pre_hi = ~hi, pre_mid = 0; /* the upper 96 bits pre[] holds */
    uint32_t k0w3;
    memcpy(&k0w3, rk[0] + 12, 4);
    /* pre[] is written for the next batch as soon as this batch has
     * loaded it: a 16-byte load right after a 4-byte store into it would
     * wait for the store to reach the cache. */
    int pre_ok = 0;   /* pre[] holds the blocks of the batch at (hi, lo) */
    int pre_used = 0; /* pre[] written (rk[0] in it): wiped at the end */
    /* A call of fewer than 16 batches builds its blocks in registers:
     * setting pre[] up (its first loads wait for its stores) and wiping it
     * cost more than it saves there (AES-128 on a Xeon, Sapphire Rapids
     * class: 12 blocks 129 TSC cycles through pre[], 87 without; 24
     * blocks 190 against 137; 256 KiB level, 1.04-1.05x OpenSSL's MB/s
     * through pre[], 1.00-1.07x without: the gain pre[] was made for is
     * another core's, kept for long calls). */
    const int use_pre = nblocks >= 16 * AESX_CTR_W;
    for (; nblocks >= AESX_CTR_W;
         nblocks -= AESX_CTR_W, in += 16 * AESX_CTR_W, out += 16 * AESX_CTR_W) {
        uint32_t low = (uint32_t)lo;
        if (use_pre && low <= UINT32_MAX - (2 * AESX_CTR_W - 1)) {
            if (!pre_ok || pre_hi != hi || pre_mid != lo >> 32) {
                aesx_ctr_make(b, 1, hi, lo);
                for (int i = 0; i < AESX_CTR_W; i++)
                    _mm_store_si128((__m128i *)(void *)pre[i], _mm_xor_si128(b[0], k[0]));
                aesx_pre_words(pre, AESX_CTR_W, low, k0w3);
                pre_used = 1;
                pre_hi = hi;
                pre_mid = lo >> 32;
            }
            for (int i = 0; i < AESX_CTR_W; i++)
                b[i] = _mm_load_si128((const __m128i *)(const void *)pre[i]);
            /* the next batch's words (it cannot wrap: checked above) */
            aesx_pre_words(pre, AESX_CTR_W, low + AESX_CTR_W, k0w3);
            pre_ok = 1;
            for (int r = 1; r < nr; r++)
                for (int i = 0; i < AESX_CTR_W; i++)
                    b[i] = _mm_aesenc_si128(b[i], k[r]);
            for (int i = 0; i < AESX_CTR_W; i++)
                b[i] = _mm_aesenclast_si128(b[i], k[nr]);
        } else {
            pre_ok = 0;
            aesx_ctr_make(b, AESX_CTR_W, hi, lo);
            aesx_enc_n(b, AESX_CTR_W, k, nr);
        }
        for (int i = 0; i < AESX_CTR_W; i++)
            aesx_storeu(out + 16 * i, _mm_xor_si128(b[i], aesx_loadu(in + 16 * i)));
        AESX_CTR_ADD(hi, lo, AESX_CTR_W);
    }
    if (pre_used)
        kuai_wipe(pre, sizeof pre);
    aesx_ctr_tail(b, k, nr, &hi, &lo, in, out, nblocks);
    store_be64(ctr, hi);
    store_be64(ctr + 8, lo);
}

/* ---- multi-key -------------------------------------------------------------
 *
 * kuai_mk layout: a header, then every lane's round keys interleaved by
 * round, [dir][group][round][lane], 16 bytes each, lanes of a group
 * adjacent so that a 256-bit load takes the keys of two lanes. Lanes past
 * n in the last group repeat the keys of the group's first lane: they
 * compute garbage that is never stored (or, in CBC encryption, the first
 * lane's own blocks again), and a full group costs no more than a partial
 * one.
 */
typedef struct aesx_mk_hdr {
    uint32_t nr, n;
} aesx_mk_hdr;

#define AESX_MK_HDR 64
/* Offset of the key of (dir, group, round, lane) in a kuai_mk whose groups
 * hold `glanes` lanes and that has `ngroups` groups. */
#define AESX_MK_OFF(glanes, ngroups, dir, g, r, l)                                                 \
    (AESX_MK_HDR +                                                                                 \
     16 * ((((size_t)(dir) * (ngroups) + (g)) * (AES_MAX_ROUNDS + 1) + (r)) * (glanes) + (l)))

/* (unused in aes_vaes_gcm512.c, which includes this file for the rest) */
__attribute__((unused)) static void aesx_mk_fill(kuai_mk *m, const kuai_key *const *keys, size_t n,
                                                 size_t glanes, size_t ngroups)
{
    aesx_mk_hdr *h = (aesx_mk_hdr *)(void *)m->b;
    const unsigned nr = aes_sched_const(keys[0])->nr;
    h->nr = nr;
    h->n = (uint32_t)n;
    size_t groups = (n + glanes - 1) / glanes;
    for (size_t g = 0; g < groups; g++) {
        for (size_t l = 0; l < glanes; l++) {
            size_t lane = g * glanes + l;
            /* a spare lane repeats its group's first (see aesx_mk_cbc_enc) */
            const aes_sched *s = aes_sched_const(keys[lane < n ? lane : g * glanes]);
            for (unsigned r = 0; r <= nr; r++) {
                memcpy(m->b + AESX_MK_OFF(glanes, ngroups, 0, g, r, l), s->rk[r], 16);
                memcpy(m->b + AESX_MK_OFF(glanes, ngroups, 1, g, r, l), s->drk[r], 16);
            }
        }
    }
}

/* One group of AESX_W lanes, lane i under its own keys from kp (the
 * group's round-0 keys; round r is r * AESX_W keys on). */
AESX_INLINE void aesx_mk_group(const uint8_t *kp, int nr, int dec, __m128i *b)
{
#define AESX_MKK(r, i) _mm_load_si128((const __m128i *)(const void *)(kp + 16 * ((r)*AESX_W + (i))))
    for (int i = 0; i < AESX_W; i++)
        b[i] = _mm_xor_si128(b[i], AESX_MKK(0, i));
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < AESX_W; i++)
            b[i] = dec ? _mm_aesdec_si128(b[i], AESX_MKK(r, i))
                       : _mm_aesenc_si128(b[i], AESX_MKK(r, i));
    for (int i = 0; i < AESX_W; i++)
        b[i] = dec ? _mm_aesdeclast_si128(b[i], AESX_MKK(nr, i))
                   : _mm_aesenclast_si128(b[i], AESX_MKK(nr, i));
#undef AESX_MKK
}

AESX_INLINE void aesx_mk_crypt(const kuai_mk *m, int nr, int dec, size_t ngroups, const uint8_t *in,
                               uint8_t *out, size_t n)
{
    for (size_t g = 0; g * AESX_W < n; g++) {
        size_t cnt = n - g * AESX_W < AESX_W ? n - g * AESX_W : AESX_W;
        const uint8_t *src = in + 16 * AESX_W * g;
        uint8_t *dst = out + 16 * AESX_W * g;
        /* A partial group goes through a buffer, so that every load and
         * store below has a constant count (a variable one makes the
         * compiler spill the blocks and copy them out with rep movs). */
        uint8_t buf[16 * AESX_W];
        if (cnt < AESX_W) {
            memset(buf, 0, sizeof buf);
            memcpy(buf, src, 16 * cnt);
            src = dst = buf;
        }
        __m128i b[AESX_W];
        for (int i = 0; i < AESX_W; i++)
            b[i] = aesx_loadu(src + 16 * i);
        aesx_mk_group(m->b + AESX_MK_OFF(AESX_W, ngroups, dec, g, 0, 0), nr, dec, b);
        for (int i = 0; i < AESX_W; i++)
            aesx_storeu(dst + 16 * i, b[i]);
        if (cnt < AESX_W) {
            memcpy(out + 16 * AESX_W * g, buf, 16 * cnt);
            kuai_wipe(buf, sizeof buf);
        }
    }
}

/* Multi-key CBC encryption: the chains of a group's 8 lanes in registers,
 * one block of every lane per step. A spare lane of a partial group runs
 * the group's first stream again (same keys, chain, input and output), so
 * every step has constant counts; its stores write the same bytes as the
 * first lane's. */
AESX_INLINE void aesx_mk_cbc_enc(const kuai_mk *m, int nr, size_t ngroups, uint8_t *ivs,
                                 const uint8_t *const *in, uint8_t *const *out, size_t n,
                                 size_t nblocks)
{
    for (size_t g = 0; g * AESX_W < n; g++) {
        const uint8_t *kp = m->b + AESX_MK_OFF(AESX_W, ngroups, 0, g, 0, 0);
        const uint8_t *ip[AESX_W];
        uint8_t *op[AESX_W];
        __m128i c[AESX_W];
        for (size_t i = 0; i < AESX_W; i++) {
            size_t lane = g * AESX_W + i < n ? g * AESX_W + i : g * AESX_W;
            ip[i] = in[lane];
            op[i] = out[lane];
            c[i] = aesx_loadu(ivs + 16 * lane);
        }
        for (size_t off = 0; off < 16 * nblocks; off += 16) {
            for (int i = 0; i < AESX_W; i++)
                c[i] = _mm_xor_si128(c[i], aesx_loadu(ip[i] + off));
            aesx_mk_group(kp, nr, 0, c);
            for (int i = 0; i < AESX_W; i++)
                aesx_storeu(op[i] + off, c[i]);
        }
        for (size_t i = 0; i < AESX_W && g * AESX_W + i < n; i++)
            aesx_storeu(ivs + 16 * (g * AESX_W + i), c[i]);
    }
}

/* ---- multi-key, a few blocks a stream (kuai_impl.mk_short) ---------------- */

/* m blocks (a constant at every call), block i under the round keys at
 * k[i] (a stream's rk, or drk to decrypt), read straight from the
 * schedules as memory operands: no copies, nothing to wipe. The round
 * loop stays a loop (nr is not a constant here); its body is the m
 * blocks' rounds side by side. */
AESX_INLINE void aesx_mks_rounds(__m128i *b, const uint8_t (*const *k)[16], int m, int nr, int dec)
{
    for (int i = 0; i < m; i++)
        b[i] = _mm_xor_si128(b[i], aesx_loadu(k[i][0]));
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < m; i++)
            b[i] = dec ? _mm_aesdec_si128(b[i], aesx_loadu(k[i][r]))
                       : _mm_aesenc_si128(b[i], aesx_loadu(k[i][r]));
    for (int i = 0; i < m; i++)
        b[i] = dec ? _mm_aesdeclast_si128(b[i], aesx_loadu(k[i][nr]))
                   : _mm_aesenclast_si128(b[i], aesx_loadu(k[i][nr]));
}

/* s whole streams of nb blocks each (both constants at every call: with
 * nb a variable, the block indices' divisions cost more than the rounds),
 * ECB or, with ivs, CBC decryption: every input block, and each stream's
 * chain, read before any output is written (out[i] may be in[i]). */
AESX_INLINE void aesx_mks_group(const kuai_key *const *keys, uint8_t *const *ivs,
                                const uint8_t *const *in, uint8_t *const *out, int s, int nb,
                                int nr, int dec)
{
    const uint8_t(*k[AESX_W])[16];
    __m128i b[AESX_W], c[AESX_W], last[AESX_W];
    for (int j = 0; j < s; j++) {
        const aes_sched *ks = aes_sched_const(keys[j]);
        for (int t = 0; t < nb; t++) {
            k[j * nb + t] = (const uint8_t(*)[16])(dec ? ks->drk : ks->rk);
            b[j * nb + t] = aesx_loadu(in[j] + 16 * t);
            if (ivs)
                c[j * nb + t] = t ? aesx_loadu(in[j] + 16 * (t - 1)) : aesx_loadu(ivs[j]);
        }
    }
    aesx_mks_rounds(b, k, s * nb, nr, dec);
    if (ivs) {
        for (int j = 0; j < s; j++)
            last[j] = aesx_loadu(in[j] + 16 * (nb - 1));
        for (int i = 0; i < s * nb; i++)
            b[i] = _mm_xor_si128(b[i], c[i]);
        for (int j = 0; j < s; j++)
            aesx_storeu(ivs[j], last[j]);
    }
    for (int j = 0; j < s; j++)
        for (int t = 0; t < nb; t++)
            aesx_storeu(out[j] + 16 * t, b[j * nb + t]);
}

/* n streams of NB blocks each: groups of AESX_W / NB streams, then the
 * TAILS' case for the streams left (AESX_MKS_TAIL: S streams). */
#define AESX_MKS_RUN(NB, TAILS)                                                                    \
    {                                                                                              \
        size_t g = 0;                                                                              \
        for (; n - g >= AESX_W / (NB); g += AESX_W / (NB))                                         \
            aesx_mks_group(keys + g, ivs ? ivs + g : NULL, in + g, out + g, AESX_W / (NB), NB, nr, \
                           dec);                                                                   \
        uint8_t *const *iv = ivs ? ivs + g : NULL;                                                 \
        switch (n - g) {                                                                           \
            TAILS                                                                                  \
        }                                                                                          \
    }
#define AESX_MKS_TAIL(S, NB)                                                                       \
    case S:                                                                                        \
        aesx_mks_group(keys + g, iv, in + g, out + g, S, NB, nr, dec);                             \
        break;

/* n streams of nblocks (1..4) blocks each. */
AESX_INLINE void aesx_mk_short(const kuai_key *const *keys, uint8_t *const *ivs,
                               const uint8_t *const *in, uint8_t *const *out, size_t n,
                               size_t nblocks, int dec)
{
    const int nr = (int)aes_sched_const(keys[0])->nr;
    switch (nblocks) {
    case 1:
        AESX_MKS_RUN(1, AESX_MKS_TAIL(1, 1) AESX_MKS_TAIL(2, 1) AESX_MKS_TAIL(3, 1) AESX_MKS_TAIL(
                            4, 1) AESX_MKS_TAIL(5, 1) AESX_MKS_TAIL(6, 1) AESX_MKS_TAIL(7, 1))
        break;
    case 2:
        AESX_MKS_RUN(2, AESX_MKS_TAIL(1, 2) AESX_MKS_TAIL(2, 2) AESX_MKS_TAIL(3, 2))
        break;
    case 3:
        AESX_MKS_RUN(3, AESX_MKS_TAIL(1, 3))
        break;
    default:
        AESX_MKS_RUN(4, AESX_MKS_TAIL(1, 4))
        break;
    }
}
#undef AESX_MKS_TAIL
#undef AESX_MKS_RUN

#endif
