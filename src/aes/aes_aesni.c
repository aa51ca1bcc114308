/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES, AES-NI backend: 8 blocks in flight on xmm registers for ECB, CBC
 * decryption and CTR, the CBC chain in a register, and 8 streams of
 * different keys interleaved for the multi-key calls (aes_ni_xmm.h).
 *
 * Compiled with -maes -mpclmul -mssse3, not -mavx: it is the AES backend
 * of CPUs with AES-NI but without AVX (Westmere, Goldmont), and pshufb (for
 * the counter blocks) is all it needs beyond AES-NI. PCLMULQDQ runs only
 * in the fused GCM kernel, which the mode code calls only with the pclmul
 * GHASH backend, i.e. on CPUs that have it.
 */
#include "../ghash/ghash.h"
#include "../ghash/ghash_clmul.h"
#include "aes_ni_xmm.h"
#include "aes_x86.h"

/* 16 lanes in two groups of 8: one kernel call serves 16 streams, and a
 * group of 8 is what keeps the AES units busy. */
#define AESNI_MK_GROUPS 2

static int aes_aesni_available(void)
{
    unsigned need = KUAI_CPU_AESNI | KUAI_CPU_SSSE3;
    return (kuai_cpu_features() & need) == need;
}

KUAI_HOT_ALIGN static void aes_aesni_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                                size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesx_crypt_blocks((const uint8_t(*)[16])s->rk, NR, 0, in, out, nblocks))
}

KUAI_HOT_ALIGN static void aes_aesni_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                                size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesx_crypt_blocks((const uint8_t(*)[16])s->drk, NR, 1, in, out, nblocks))
}

static void aes_aesni_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                                 size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesx_ctr((const uint8_t(*)[16])s->rk, NR, ctr, in, out, nblocks))
}

static void aes_aesni_cbc_dec_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in,
                                     uint8_t *out, size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesx_cbc_dec((const uint8_t(*)[16])s->drk, NR, iv, in, out, nblocks))
}

void aes_aesni_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesx_cbc_enc((const uint8_t(*)[16])s->rk, NR, iv, in, out, nblocks))
}

/*
 * GCM in one pass: 8 counter blocks through AES while the previous 8
 * ciphertext blocks go through GHASH (pclmul_fold), so that a core whose
 * AES and carry-less multiply units are separate can overlap them. On Zen
 * 1 they are not: this ran no faster than the two passes it replaces, and
 * its VEX build (below) is what brought GCM to OpenSSL's speed there.
 *
 * Encryption hashes its own output, so it lags one batch behind; decryption
 * hashes its input, read before the same batch's stores (in == out). The
 * counter blocks sit XORed with rk[0] in memory and only their last words
 * are rewritten from scalars, as in aesx_ctr.
 */
AESX_INLINE void aesni_gcm(const uint8_t (*rk)[16], int nr, const pclmul_key *hk, uint8_t y[16],
                           uint8_t *ctr, const uint8_t *in, uint8_t *out, size_t nblocks, int enc)
{
    enum { W = GHASH_PCLMUL_AGG };
    __m128i k[AES_MAX_ROUNDS + 1], b[W];
    aesx_load_keys(k, rk, nr);
    __m128i acc = bswap128(aesx_loadu(y));
    uint32_t low = load_be32(ctr + 12), k0w3;
    memcpy(&k0w3, rk[0] + 12, 4);
    _Alignas(16) uint8_t pre[W][16];
    const __m128i top = _mm_xor_si128(aesx_loadu(ctr), k[0]);
    for (int i = 0; i < W; i++)
        _mm_store_si128((__m128i *)(void *)pre[i], top);
    aesx_pre_words(pre, W, low, k0w3);
    const uint8_t *lag = NULL; /* encryption: the output still to hash */
    for (; nblocks >= W; nblocks -= W, in += 16 * W, out += 16 * W) {
        for (int i = 0; i < W; i++)
            b[i] = _mm_load_si128((const __m128i *)(const void *)pre[i]);
        /* The next batch's words; past the caller's last block they are
         * never loaded, so their wrap does not matter. */
        aesx_pre_words(pre, W, low + W, k0w3);
        low += W;
        /* One block's multiplications after each round: Zen's FP scheduler
         * holds too few operations to find them behind a whole batch of
         * aesenc (a GHASH pass after the rounds ran slower than two
         * passes). */
        const uint8_t *h = enc ? lag : in;
        clmul_sum sum = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
        for (int r = 1; r < nr; r++) {
            for (int i = 0; i < W; i++)
                b[i] = _mm_aesenc_si128(b[i], k[r]);
            if (h && r <= W) {
                __m128i x = aesx_loadu(h + 16 * (r - 1));
                if (r == 1)
                    x = _mm_xor_si128(x, bswap128(acc));
                pclmul_sum_block(&sum, hk, (size_t)(r - 1), x);
            }
        }
        for (int i = 0; i < W; i++)
            b[i] = _mm_aesenclast_si128(b[i], k[nr]);
        if (h)
            acc = pclmul_sum_reduce(sum);
        for (int i = 0; i < W; i++)
            aesx_storeu(out + 16 * i, _mm_xor_si128(b[i], aesx_loadu(in + 16 * i)));
        lag = out;
    }
    if (enc && lag)
        acc = pclmul_fold(hk, acc, lag, W);
    if (nblocks) {
        uint8_t buf[16 * W] = {0}; /* the lanes past nblocks are read too */
        copy_blocks16(buf, in, nblocks);
        if (!enc)
            acc = pclmul_fold(hk, acc, buf, nblocks);
        /* low has not wrapped (the caller's promise), so 64-bit counting
         * from the current counter block is inc32 here */
        aesx_ctr_make(b, W, load_be64(ctr), (load_be64(ctr + 8) & ~(uint64_t)UINT32_MAX) | low);
        aesx_enc_n(b, W, k, nr);
        for (int i = 0; i < W; i++)
            aesx_storeu(buf + 16 * i, _mm_xor_si128(b[i], aesx_loadu(buf + 16 * i)));
        if (enc)
            acc = pclmul_fold(hk, acc, buf, nblocks);
        copy_blocks16(out, buf, nblocks);
        kuai_wipe(buf, sizeof buf);
        low += (uint32_t)nblocks;
    }
    kuai_wipe(pre, sizeof pre);
    store_be32(ctr + 12, low);
    aesx_storeu(y, bswap128(acc));
}

#define AESNI_GCM_BODY                                                                             \
    const aes_sched *s = aes_sched_const(k);                                                       \
    const pclmul_key *hk = (const pclmul_key *)(const void *)hkey;                                 \
    AESX_BY_NR(s->nr, aesni_gcm((const uint8_t(*)[16])s->rk, NR, hk, y, ctr, in, out, nblocks, enc))

KUAI_HOT_ALIGN static void aes_aesni_gcm_blocks(const kuai_key *k, const unsigned char *hkey,
                                                uint8_t y[16], uint8_t *ctr, const uint8_t *in,
                                                uint8_t *out, size_t nblocks, int enc)
{
    AESNI_GCM_BODY
}

/* The same kernel in VEX encoding, the aesni-avx backend: three-operand
 * forms save the register copies of the two-operand ones, and the FP pipes
 * that AES and PCLMULQDQ already fill would run those too (~4 % on Zen 1). */
__attribute__((target("avx"))) KUAI_HOT_ALIGN static void
aes_aesni_gcm_blocks_avx(const kuai_key *k, const unsigned char *hkey, uint8_t y[16], uint8_t *ctr,
                         const uint8_t *in, uint8_t *out, size_t nblocks, int enc)
{
    AESNI_GCM_BODY
}

/* What aeskeygenassist's words 3 (rot: SubWord(RotWord(w3)) ^ rc) and 2
 * (SubWord(w3), AES-256's odd rows) give, in every word: a pshufb puts w3
 * (rotated or not) in all four columns, where ShiftRows moves nothing, and
 * aesenclast's SubBytes and round key do the rest, in two pipelined
 * instructions where aeskeygenassist and a pshufd had run (Xeon, Emerald
 * Rapids, in one process with the build before: AES-128 key setup 163 ->
 * 81 TSC cycles, the one-shot call of 4 blocks 167 -> 75). w1: word 1
 * instead of word 3 (AES-192's rows, whose last word sits there). */
static inline __m128i aesni_assist_w(__m128i x, int rc, int rot, int w1)
{
    const __m128i w =
        w1    ? _mm_set_epi8(4, 7, 6, 5, 4, 7, 6, 5, 4, 7, 6, 5, 4, 7, 6, 5)
        : rot ? _mm_set_epi8(12, 15, 14, 13, 12, 15, 14, 13, 12, 15, 14, 13, 12, 15, 14, 13)
              : _mm_set_epi8(15, 14, 13, 12, 15, 14, 13, 12, 15, 14, 13, 12, 15, 14, 13, 12);
    return _mm_aesenclast_si128(_mm_shuffle_epi8(x, w), _mm_set1_epi32(rc));
}

static inline __m128i aesni_assist(__m128i x, int rc, int rot)
{
    return aesni_assist_w(x, rc, rot, 0);
}

/* w[i..i+3] ^= w[i-4..i-1] running XOR across the four words of a
 * schedule row, then t (FIPS-197 5.2 for four words at once). */
static inline __m128i aesni_key_row(__m128i prev, __m128i t)
{
    prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
    prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 8));
    return _mm_xor_si128(prev, t);
}

/* AES's key schedule a row at a time (aesni_assist: RotWord, SubWord and
 * the round constant of the row's last word, then the row's XORs), for n
 * keys side by side, row i of every key before row i + 1 of any: each
 * key's rows are one chain of dependent operations, and n chains fill the
 * units one leaves idle (kuai_key_init_multi). A re-key is part of every
 * short message and of every EVP re-initialisation. */
static const int aesni_rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36};

/* Where aesni_key_rows puts the rows of key j: rk[j] and drk[j] (either
 * NULL: not stored), and blk, nb blocks (one key, the one-shot call's
 * encryption) that take each row as their round key as it is made, so
 * the key's chain runs beside the blocks' and nothing is stored. */
typedef struct aesni_key_sink {
    uint8_t (*const *rk)[16];
    uint8_t (*const *drk)[16];
    __m128i *blk;
    int nb;
} aesni_key_sink;

/* Row i (of nr + 1) of key j, as it is made: to rk[j][i], to
 * drk[j][nr - i] (the inner rows through aesimc, InvMixColumns), into the
 * blocks' round i. */
AESX_INLINE void aesni_key_put(const aesni_key_sink *o, int j, unsigned i, unsigned nr, __m128i x)
{
    if (o->rk)
        aesx_storeu(o->rk[j][i], x);
    if (o->drk)
        aesx_storeu(o->drk[j][nr - i], i == 0 || i == nr ? x : _mm_aesimc_si128(x));
    for (int b = 0; o->blk && b < o->nb; b++)
        o->blk[b] = i == 0    ? _mm_xor_si128(o->blk[b], x)
                    : i == nr ? _mm_aesenclast_si128(o->blk[b], x)
                              : _mm_aesenc_si128(o->blk[b], x);
}

/* The round keys of AES-128 (nk 4), AES-192 (6) or AES-256 (8) of key[j], j < n,
 * each row stored as it is made (aesni_key_put): only the last two rows of
 * each key stay in registers, so nothing is kept on the stack to wipe and
 * no row is stored twice. Held as an array of rows, then stored and
 * reloaded for drk, AES-128 key setup cost 81 TSC cycles against 59 (Xeon,
 * Emerald Rapids, bench-ab); four keys 279 against 151. */
AESX_INLINE void aesni_key_rows(const aesni_key_sink *o, const uint8_t *const *key, unsigned nk,
                                int n)
{
    const unsigned nr = nk + 6;
    /* row i - 2 (AES-256; zeroed: gcc cannot tell it is set wherever it is
     * read) and row i - 1 */
    __m128i p0[4] = {0}, p1[4];
    for (int j = 0; j < n; j++) {
        p1[j] = aesx_loadu(key[j]);
        aesni_key_put(o, j, 0, nr, p1[j]);
        if (nk == 8) {
            p0[j] = p1[j];
            p1[j] = aesx_loadu(key[j] + 16);
            aesni_key_put(o, j, 1, nr, p1[j]);
        }
    }
    if (nk == 6) {
        /* AES-192's 6-word rows: a the words 6s..6s+3, b 6s+4, 6s+5 (low
         * half; the high half is never read). A round key is 4 words: row
         * s of 6 words completes round keys 3(s - 1)/2 + 1 and + 2 for odd
         * s, 3s/2 for even s (FIPS-197 5.2, the words regrouped) */
        __m128i a[4], b[4];
        for (int j = 0; j < n; j++) {
            a[j] = p1[j];
            b[j] = _mm_loadl_epi64((const __m128i *)(const void *)(key[j] + 16));
        }
#pragma GCC unroll 8
        for (unsigned i = 1; i <= 8; i++)
#pragma GCC unroll 4
            for (int j = 0; j < n; j++) {
                const __m128i x =
                    aesni_key_row(a[j], aesni_assist_w(b[j], aesni_rcon[i - 1], 1, 1));
                const __m128i y = _mm_xor_si128(_mm_xor_si128(b[j], _mm_slli_si128(b[j], 4)),
                                                _mm_shuffle_epi32(x, 0xff));
                if (i & 1) {
                    aesni_key_put(o, j, 3 * (i - 1) / 2 + 1, nr, _mm_unpacklo_epi64(b[j], x));
                    aesni_key_put(o, j, 3 * (i - 1) / 2 + 2, nr,
                                  _mm_castpd_si128(
                                      _mm_shuffle_pd(_mm_castsi128_pd(x), _mm_castsi128_pd(y), 1)));
                } else {
                    aesni_key_put(o, j, 3 * i / 2, nr, x);
                }
                a[j] = x;
                b[j] = y;
            }
    } else if (nk == 4) {
#pragma GCC unroll 10
        for (unsigned i = 1; i <= 10; i++)
#pragma GCC unroll 4
            for (int j = 0; j < n; j++) {
                p1[j] = aesni_key_row(p1[j], aesni_assist(p1[j], aesni_rcon[i - 1], 1));
                aesni_key_put(o, j, i, nr, p1[j]);
            }
    } else {
        /* even rows: RotWord, SubWord and a constant; odd rows: SubWord */
#pragma GCC unroll 13
        for (unsigned i = 2; i <= 14; i++)
#pragma GCC unroll 4
            for (int j = 0; j < n; j++) {
                const __m128i t = i & 1 ? aesni_assist(p1[j], 0, 0)
                                        : aesni_assist(p1[j], aesni_rcon[i / 2 - 1], 1);
                const __m128i x = aesni_key_row(p0[j], t);
                p0[j] = p1[j];
                p1[j] = x;
                aesni_key_put(o, j, i, nr, x);
            }
    }
}

/* n schedules: rk and drk by aesni_key_rows. */
AESX_INLINE void aesni_expand_n(kuai_key *const *k, const uint8_t *const *key, unsigned nk, int n)
{
    uint8_t(*rk[4])[16], (*drk[4])[16];
    for (int j = 0; j < n; j++) {
        aes_sched *s = aes_sched_of(k[j]);
        s->nr = nk + 6;
        s->nk = nk;
        rk[j] = s->rk;
        drk[j] = s->drk;
    }
    const aesni_key_sink o = {rk, drk, NULL, 0};
    aesni_key_rows(&o, key, nk, n);
}

/* The shared schedule form (aes.h): FIPS-197 section 5.2 with the S-box in
 * hardware, and drk by aesimc (InvMixColumns), the same keys the portable
 * aes_derive_dec computes (the tests compare both with aes_expand_raw's). */
KUAI_HOT_ALIGN void aes_aesni_expand(kuai_key *k, const uint8_t *key)
{
    aesni_expand_n(&k, &key, aes_key_bytes(k) / 4, 1);
}

/* kuai_key_init_multi's pairs and fours of keys (src/core.c), their rows
 * side by side. */
KUAI_HOT_ALIGN void aes_aesni_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0,
                                      const uint8_t *key1)
{
    kuai_key *const k[2] = {k0, k1};
    const uint8_t *const key[2] = {key0, key1};
    aesni_expand_n(k, key, aes_key_bytes(k0) / 4, 2);
}

KUAI_HOT_ALIGN void aes_aesni_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    aesni_expand_n(k, key, aes_key_bytes(k[0]) / 4, 4);
}

/*
 * One-shot ECB (src/modes/oneshot.c): no kuai_key. Encryption of up to 4
 * blocks by one key or two makes each round key between the rounds (key
 * setup's aesni_key_rows, each row into the blocks' aesenc as it is
 * made), so the key's chain runs beside the data's and nothing is stored.
 * Decryption of up to 4 blocks a key (which wants the rows last to first)
 * and encryption of 1-2 blocks under 3 keys or more store the rows (rk,
 * or drk by aesimc) on the frame and read them there, each zeroed by the
 * round that reads it (aesni_os_dec1_short, aesni_os_short_*). Longer
 * messages store each key's rows in 240 bytes of stack, wiped once at
 * the end, and run the ECB kernel over them. Either way there is no
 * InvMixColumns for encryption and no 8 KiB key to wipe.
 */
AESX_INLINE void aesni_os_enc(const uint8_t *key, unsigned nk, const uint8_t *in, uint8_t *out,
                              int NB)
{
    __m128i b[4];
    for (int i = 0; i < NB; i++)
        b[i] = aesx_loadu(in + 16 * i);
    const aesni_key_sink o = {NULL, NULL, b, NB};
    aesni_key_rows(&o, &key, nk, 1);
    for (int i = 0; i < NB; i++)
        aesx_storeu(out + 16 * i, b[i]);
}

static void aesni_os_enc_short(const uint8_t *key, unsigned nk, const uint8_t *in, uint8_t *out,
                               size_t nblocks)
{
    switch (nblocks) {
    case 1:
        aesni_os_enc(key, nk, in, out, 1);
        break;
    case 2:
        aesni_os_enc(key, nk, in, out, 2);
        break;
    case 3:
        aesni_os_enc(key, nk, in, out, 3);
        break;
    default:
        aesni_os_enc(key, nk, in, out, 4);
        break;
    }
}

/* The rows of s keys (rk to encrypt, drk to decrypt) into ks[0..s-1],
 * side by side. A function of its own, a copy for each nk, s and enc, so
 * that the keys' states stay in registers: inlined into aesni_os_group,
 * its constants and the rows it had just stored stayed live through the
 * blocks' rounds, whose registers then spilled, rows among them, to
 * slots the stack search found (1-19 pieces, AES-128 and AES-256, Zen
 * 4); with nk a variable, the states' arrays lived on the stack. */
__attribute__((noinline)) static void aesni_os_rows_n(const uint8_t *const *keys, unsigned nk,
                                                      uint8_t (*ks)[AES_MAX_ROUNDS + 1][16], int s,
                                                      int enc)
{
    uint8_t(*const d[4])[16] = {ks[0], ks[1], ks[2], ks[3]};
    const aesni_key_sink oe = {d, NULL, NULL, 0}, od = {NULL, d, NULL, 0};
#define OS_ROWS(S)                                                                                 \
    if (enc)                                                                                       \
        AESX_BY_NR(nk + 6, aesni_key_rows(&oe, keys, NR - 6, S))                                   \
    else                                                                                           \
        AESX_BY_NR(nk + 6, aesni_key_rows(&od, keys, NR - 6, S))
    switch (s) {
    case 4:
        OS_ROWS(4)
        break;
    case 3:
        OS_ROWS(3)
        break;
    case 2:
        OS_ROWS(2)
        break;
    default:
        OS_ROWS(1)
        break;
    }
#undef OS_ROWS
}

/* s keys' nb blocks each (both constants at every call; s * nb <=
 * AESX_W), encrypted or decrypted: the keys' rows into ks[0..s-1], then
 * their blocks side by side, each row zeroed by the round that reads it
 * (aesx_rows_wiping). Every input block is read before any output is
 * written (out[j] may be in[j]). */
AESX_INLINE void aesni_os_group(const uint8_t *const *keys, unsigned nk, const uint8_t *const *in,
                                uint8_t *const *out, int s, int nb,
                                uint8_t (*ks)[AES_MAX_ROUNDS + 1][16], int enc)
{
    aesni_os_rows_n(keys, nk, ks, s, enc);
    /* read through a pointer the compiler cannot tie to the stack pointer
     * (aesni_os_dec1_short's reason) */
    __asm__("" : "+r"(ks));
    uint8_t(*const kp[4])[16] = {ks[0], ks[1], ks[2], ks[3]};
    __m128i b[AESX_W];
    for (int j = 0; j < s; j++)
        for (int t = 0; t < nb; t++)
            b[j * nb + t] = aesx_loadu(in[j] + 16 * t);
    aesx_rows_wiping(b, kp, s, nb, (int)nk + 6, !enc);
    for (int j = 0; j < s; j++)
        for (int t = 0; t < nb; t++)
            aesx_storeu(out[j] + 16 * t, b[j * nb + t]);
}

/* n keys' nblocks (1..4) each: groups of 4 keys (2 for 3 or 4 blocks a
 * key), then the keys left, on this frame (ks: a group's rows, zeroed as
 * the group's rounds read them). Decryption of 2 keys or more: key by key
 * (a schedule, then its blocks) the call cost more than
 * kuai_key_init_multi and kuai_ecb_decrypt_multi, and a key alone keeps
 * its own path (aesni_os_dec1_short), which measured 5-11% faster than a
 * group of one (docs/performance.md). Encryption of 3 keys or more, 1 or
 * 2 blocks each: 0.69-0.97x the time of each key's rows made into its
 * blocks (aesni_os_enc_short; 2 keys level; 3-4 blocks a key level, which
 * keep that path; Zen 4, vaes, docs/performance.md). */
AESX_INLINE void aesni_os_short_body(const uint8_t *const *keys, unsigned nk,
                                     const uint8_t *const *in, uint8_t *const *out, size_t n,
                                     size_t nblocks, int enc)
{
    uint8_t ks[4][AES_MAX_ROUNDS + 1][16];
    size_t g = 0;
#define OS_DEC(S, NB) aesni_os_group(keys + g, nk, in + g, out + g, S, NB, ks, enc)
    switch (nblocks) {
    case 1:
    case 2:
        for (; n - g >= 4; g += 4)
            nblocks == 1 ? OS_DEC(4, 1) : OS_DEC(4, 2);
        if (n - g == 3)
            nblocks == 1 ? OS_DEC(3, 1) : OS_DEC(3, 2);
        else if (n - g == 2)
            nblocks == 1 ? OS_DEC(2, 1) : OS_DEC(2, 2);
        else if (n - g == 1)
            nblocks == 1 ? OS_DEC(1, 1) : OS_DEC(1, 2);
        break;
    default:
        for (; n - g >= 2; g += 2)
            nblocks == 3 ? OS_DEC(2, 3) : OS_DEC(2, 4);
        if (n - g == 1)
            nblocks == 3 ? OS_DEC(1, 3) : OS_DEC(1, 4);
        break;
    }
#undef OS_DEC
}

/* enc a constant in each */
__attribute__((noinline)) static void aesni_os_short_enc(const uint8_t *const *keys, unsigned nk,
                                                         const uint8_t *const *in,
                                                         uint8_t *const *out, size_t n,
                                                         size_t nblocks)
{
    aesni_os_short_body(keys, nk, in, out, n, nblocks, 1);
}

__attribute__((noinline)) static void aesni_os_short_dec(const uint8_t *const *keys, unsigned nk,
                                                         const uint8_t *const *in,
                                                         uint8_t *const *out, size_t n,
                                                         size_t nblocks)
{
    aesni_os_short_body(keys, nk, in, out, n, nblocks, 0);
}

void aes_aesni_rows(unsigned nk, const uint8_t *key, uint8_t (*rk)[16], uint8_t (*drk)[16])
{
    uint8_t(*const r[1])[16] = {rk}, (*const d[1])[16] = {drk};
    const aesni_key_sink o = {rk ? r : NULL, drk ? d : NULL, NULL, 0};
    aesni_key_rows(&o, &key, nk, 1);
}

/* aes_aesni_oneshot's calls that store their rows: a frame of their own,
 * overwritten after they return (AES_ONESHOT_STORED_STACK) */
__attribute__((noinline)) static void aesni_oneshot_stored(unsigned nk, const uint8_t *const *keys,
                                                           const uint8_t *const *in,
                                                           uint8_t *const *out, size_t n,
                                                           size_t nblocks, int enc);

/* One key's decryption of 1-4 blocks: its rows on this frame, zeroed by
 * the rounds that read them (aesx_dec_short_wiping), no stack to overwrite
 * after it (tests/test_oneshot.c searches). The stored-row path, its
 * kuai_wipe and its 1 KiB overwrite had cost 2-2.7x key setup and
 * decryption: Zen 4, scripts/bench-ab, TSC cycles, both link orders, one
 * key's 4 blocks on aesni-avx 180-190 -> 76 (AES-128), 183-184 -> 82-83
 * (192), 182-184 -> 98 (256), on aesni 165-184 -> 77-78, 183-184 -> 84,
 * 184-203 -> 98-99; key setup and decryption 70-72, 78-79, 95-96. */
__attribute__((noinline)) static void aesni_os_dec1_short(unsigned nk, const uint8_t *key,
                                                          const uint8_t *in, uint8_t *out,
                                                          size_t nblocks)
{
    uint8_t drk[AES_MAX_ROUNDS + 1][16];
    /* the rows read through a pointer the compiler cannot tie to the stack
     * pointer: read as 0x40(%rsp) and the like, after aes_aesni_rows
     * stored them through its argument, AES-256's call took 134-150 TSC
     * cycles against 91-94 (Zen 4, aesni, a loop of calls; AES-128's and
     * 192's level; as slow without the zeroing stores), the loads likely
     * predicted to take their values from earlier stores at the same
     * offsets of the stack pointer */
    uint8_t(*d)[16] = drk;
    __asm__("" : "+r"(d));
    aes_aesni_rows(nk, key, NULL, d);
    AESX_BY_NB4(nblocks, nk + 6, aesx_dec_short_wiping(d, NR, in, out, NB))
}

void aes_aesni_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                       uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    const unsigned nk = c == KUAI_AES_128 ? 4 : c == KUAI_AES_192 ? 6 : 8;
    if (!enc && nblocks <= 4) {
        if (n > 1)
            aesni_os_short_dec(keys, nk, in, out, n, nblocks);
        else
            aesni_os_dec1_short(nk, keys[0], in[0], out[0], nblocks);
        return;
    }
    if (enc && nblocks <= 4) {
        size_t g = nblocks <= 2 && n >= 3 ? n : 0;
        if (g)
            aesni_os_short_enc(keys, nk, in, out, g, nblocks);
        for (; g < n; g++)
            aesni_os_enc_short(keys[g], nk, in[g], out[g], nblocks);
        return;
    }
    aesni_oneshot_stored(nk, keys, in, out, n, nblocks, enc);
    kuai_wipe_stack(AES_ONESHOT_STORED_STACK);
}

static void aesni_oneshot_stored(unsigned nk, const uint8_t *const *keys, const uint8_t *const *in,
                                 uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    const unsigned nr = nk + 6;
    /* The round keys the kernel reads: rk for encryption, drk for
     * decryption (aes.h), one key's at a time. */
    uint8_t ks[AES_MAX_ROUNDS + 1][16];
    /* stored and read through a pointer the compiler cannot tie to the
     * stack pointer (aesni_os_dec1_short's reason): read back as
     * 0x..(%rsp), one AES-128 key's encryption of 5 blocks took 224 TSC
     * cycles against 112 (Zen 4, vaes, a loop of calls) */
    uint8_t(*kr)[16] = ks;
    __asm__("" : "+r"(kr));
    uint8_t(*const kp[1])[16] = {kr};
    for (size_t i = 0; i < n; i++) {
        const aesni_key_sink o = {enc ? kp : NULL, enc ? NULL : kp, NULL, 0};
        aesni_key_rows(&o, &keys[i], nk, 1);
        AESX_BY_NR(nr,
                   aesx_crypt_blocks((const uint8_t(*)[16])kr, NR, !enc, in[i], out[i], nblocks))
    }
    kuai_wipe(ks, 16 * (nr + 1));
}

void aes_aesni_mk_short(const kuai_key *const *keys, uint8_t *const *ivs, const uint8_t *const *in,
                        uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    if (enc)
        aesx_mk_short(keys, NULL, in, out, n, nblocks, 0);
    else
        aesx_mk_short(keys, ivs, in, out, n, nblocks, 1);
}

static void aes_aesni_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    aesx_mk_fill(m, keys, n, AESX_W, AESNI_MK_GROUPS);
}

static void aes_aesni_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    const aesx_mk_hdr *h = (const aesx_mk_hdr *)(const void *)m->b;
    AESX_BY_NR(h->nr, aesx_mk_crypt(m, NR, 0, AESNI_MK_GROUPS, in, out, n))
}

static void aes_aesni_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    const aesx_mk_hdr *h = (const aesx_mk_hdr *)(const void *)m->b;
    AESX_BY_NR(h->nr, aesx_mk_crypt(m, NR, 1, AESNI_MK_GROUPS, in, out, n))
}

static void aes_aesni_mk_cbc_enc(const kuai_mk *m, uint8_t *ivs, const uint8_t *const *in,
                                 uint8_t *const *out, size_t n, size_t nblocks)
{
    const aesx_mk_hdr *h = (const aesx_mk_hdr *)(const void *)m->b;
    AESX_BY_NR(h->nr, aesx_mk_cbc_enc(m, NR, AESNI_MK_GROUPS, ivs, in, out, n, nblocks))
}

_Static_assert(AESX_MK_OFF(AESX_W, AESNI_MK_GROUPS, 2, 0, 0, 0) <= KUAI_MK_BYTES,
               "AES-NI multi-key lanes must fit in kuai_mk");

/* aesni-avx differs from aesni only in its GCM kernel; offered where the
 * AVX2 bit is set (it implies AVX and the OS's support for its state; kuai
 * has no AVX-only bit), as SM4's aesni-avx is. */
static int aes_aesni_avx_available(void)
{
    return aes_aesni_available() && (kuai_cpu_features() & KUAI_CPU_AVX2) != 0;
}

/* mk_cbc_wide_blocks: kuai_cbc_encrypt_multi through the lanes against the
 * streams one by one, time relative to kuai_cbc_encrypt stream by stream
 * (Xeon, Sapphire Rapids): 9 streams of 12 / 16 blocks 1.29 / 1.03 against
 * 1.13 / 1.10, 33 streams of 9 / 12 blocks 1.10 / 0.85 against 1.07 /
 * 1.05; VAES 9 streams of 12 blocks 1.09 against 1.13, 33 of 8 / 9 1.13 /
 * 0.99 against 1.07: the lanes from 12 blocks a stream. mk_cbc_wide_total:
 * with few streams a pass of 8 lanes costs the same, and the lanes' setup
 * and wipe are paid for by the batch's blocks in all: through the lanes
 * against kuai_cbc_encrypt stream by stream, 2 streams x 12 / 32 / 64
 * blocks 2.87 / 1.33 / 1.02, 3 x 32 0.89, 4 x 16 / 24 1.17 / 0.80, 9 x 12
 * / 16 / 24 1.30 / 1.03 / 0.71 (8 lanes and 1), 8 or 16 x 12 0.78-0.80:
 * the lanes from 192 blocks a batch. mk_short_blocks: multi-key ECB and
 * CBC decryption of streams of 1-4 blocks side by side (aes_aesni_mk_short)
 * against the streams one by one, 3 / 8 / 33 streams of AES-128 (Xeon):
 * ECB 0.83-1.09 / 0.61-0.99 / 0.65-0.93 (one by one had taken 1.05-1.24
 * of the single-key calls: the multi-key call's own checks), CBC
 * decryption 0.95-1.20 / 0.61-0.83 / 0.65-0.87; 2 streams of one block
 * 1.16 (1.27 one by one). */
#define AESNI_IMPL(var, name_, prio, avail, gcm_fn)                                                \
    const kuai_impl var = {.name = name_,                                                          \
                           .family = KUAI_FAMILY_AES,                                              \
                           .priority = prio,                                                       \
                           .available = avail,                                                     \
                           .expand = aes_aesni_expand,                                             \
                           .expand2 = aes_aesni_expand2,                                           \
                           .expand4 = aes_aesni_expand4,                                           \
                           .sched_bytes = AES_SCHED_BYTES,                                         \
                           .oneshot = aes_aesni_oneshot,                                           \
                           .enc_blocks = aes_aesni_enc_blocks,                                     \
                           .dec_blocks = aes_aesni_dec_blocks,                                     \
                           .ctr_blocks = aes_aesni_ctr_blocks,                                     \
                           .cbc_enc_blocks = aes_aesni_cbc_enc_blocks,                             \
                           .cbc_dec_blocks = aes_aesni_cbc_dec_blocks,                             \
                           .mk_lanes = AESX_W * AESNI_MK_GROUPS,                                   \
                           .mk_setup = aes_aesni_mk_setup,                                         \
                           .mk_bytes = AESX_MK_OFF(AESX_W, AESNI_MK_GROUPS, 2, 0, 0, 0),           \
                           .mk_enc = aes_aesni_mk_enc,                                             \
                           .mk_dec = aes_aesni_mk_dec,                                             \
                           .mk_cbc_enc = aes_aesni_mk_cbc_enc,                                     \
                           .mk_slots_blocks = 1,                                                   \
                           .mk_short = aes_aesni_mk_short,                                         \
                           .mk_short_blocks = 5,                                                   \
                           .mk_cbc_wide_blocks = 12,                                               \
                           .mk_cbc_wide_total = 192,                                               \
                           .gcm = {{&ghash_pclmul, gcm_fn}}}

/* Below VAES, above the bitsliced backends. */
KUAI_REGISTER(aes_aesni);
AESNI_IMPL(aes_aesni, "aesni", 200, aes_aesni_available, aes_aesni_gcm_blocks);
KUAI_REGISTER(aes_aesni_avx);
AESNI_IMPL(aes_aesni_avx, "aesni-avx", 210, aes_aesni_avx_available, aes_aesni_gcm_blocks_avx);
