/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two builds of kuai in one process (scripts/bench-ab): the uBlock paper
 * matrix's short rows through the public API of build A (symbols A_kuai_*)
 * and build B (B_kuai_*), called in turn, so that whatever the host does
 * to the clock or the caches hits both alike. Per row and build: per call,
 * the lowest of 200 batches of 32 calls, lowest over the alternations
 * (argv[1], default 80); then one CBC chain of 1 KiB, one CBC block, and 4 KiB of CBC
 * decryption, ECB and CTR under the last key. TSC cycles (rdtsc), x86-64
 * only. Both builds take
 * the backend KUAI_BACKEND names, as kuai_key_init does.
 *
 * Each build sets its own key structs up: a kuai_key set up by one build
 * is not the other's (its backend table may differ).
 */
#include <kuai.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#define AB_DECLARE(P)                                                                              \
    size_t P##_kuai_key_size(kuai_cipher);                                                         \
    size_t P##_kuai_block_size(kuai_cipher);                                                       \
    kuai_cipher P##_kuai_cipher_by_name(const char *);                                             \
    int P##_kuai_key_init(kuai_key *, kuai_cipher, const uint8_t *, size_t);                       \
    int P##_kuai_key_init_multi(kuai_key *const *, kuai_cipher, const uint8_t *const *, size_t,    \
                                size_t);                                                           \
    int P##_kuai_ecb_encrypt(const kuai_key *, const uint8_t *, uint8_t *, size_t);                \
    int P##_kuai_ecb_decrypt(const kuai_key *, const uint8_t *, uint8_t *, size_t);                \
    int P##_kuai_ecb_encrypt_multi(const kuai_key *const *, const uint8_t *const *,                \
                                   uint8_t *const *, size_t, size_t);                              \
    int P##_kuai_ecb_decrypt_multi(const kuai_key *const *, const uint8_t *const *,                \
                                   uint8_t *const *, size_t, size_t);                              \
    int P##_kuai_ecb_encrypt_oneshot(kuai_cipher, const uint8_t *, size_t, const uint8_t *,        \
                                     uint8_t *, size_t);                                           \
    int P##_kuai_ecb_decrypt_oneshot(kuai_cipher, const uint8_t *, size_t, const uint8_t *,        \
                                     uint8_t *, size_t);                                           \
    int P##_kuai_ecb_encrypt_oneshot_multi(kuai_cipher, const uint8_t *const *, size_t,            \
                                           const uint8_t *const *, uint8_t *const *, size_t,       \
                                           size_t);                                                \
    int P##_kuai_ecb_decrypt_oneshot_multi(kuai_cipher, const uint8_t *const *, size_t,            \
                                           const uint8_t *const *, uint8_t *const *, size_t,       \
                                           size_t);                                                \
    int P##_kuai_cbc_encrypt(const kuai_key *, uint8_t *, const uint8_t *, uint8_t *, size_t);     \
    int P##_kuai_cbc_decrypt(const kuai_key *, uint8_t *, const uint8_t *, uint8_t *, size_t);     \
    int P##_kuai_cbc_encrypt_multi(const kuai_key *const *, uint8_t *const *,                      \
                                   const uint8_t *const *, uint8_t *const *, size_t, size_t);      \
    int P##_kuai_ctr_crypt(const kuai_key *, uint8_t *, const uint8_t *, uint8_t *, size_t);       \
    int P##_kuai_gcm_encrypt(const kuai_key *, const uint8_t *, size_t, const uint8_t *, size_t,   \
                             const uint8_t *, uint8_t *, size_t, uint8_t *, size_t);               \
    int P##_kuai_gcm_decrypt(const kuai_key *, const uint8_t *, size_t, const uint8_t *, size_t,   \
                             const uint8_t *, uint8_t *, size_t, const uint8_t *, size_t);
AB_DECLARE(A)
AB_DECLARE(B)

enum { NK = 4 };

/* The row being measured: member, key bytes, streams (4 keys; 2 for
 * uBlock-256/256, as the paper's matrix) and the message of each. */
static kuai_cipher ab_c;
static size_t ab_klen, ab_bs, ab_nk, ab_len;
/* the short rows' message: 64 bytes (4 blocks, 2 of uBlock-256) unless
 * KUAI_AB_LEN says otherwise, at most AB_MAXLEN */
enum { AB_MAXLEN = 4096 };
static _Alignas(64) uint8_t ab_keyb[NK][32], ab_in[NK][AB_MAXLEN], ab_out[NK][AB_MAXLEN];
/* The longer rows: one CBC chain of AB_CHAIN bytes (each block waits on
 * the one before), and AB_LONG bytes of ECB, CBC decryption and CTR. */
enum { AB_CHAIN = 1024, AB_LONG = 4096 };
static _Alignas(64) uint8_t ab_long_in[AB_LONG], ab_long_out[AB_LONG], ab_iv[32], ab_tag[16];
static const uint8_t *ab_kb[NK], *ab_src[NK];
static uint8_t *ab_dst[NK];
/* The streams' CBC chains (AB_CHAIN bytes each, NK of them in the long
 * buffers) and their IVs. */
_Static_assert(AB_LONG / AB_CHAIN >= NK, "the chains fit the long buffers");
static _Alignas(64) uint8_t ab_ivs_b[NK][32];
static uint8_t *ab_ivs[NK], *ab_chain_out[NK];
static const uint8_t *ab_chain_in[NK];

/* The rows, once per build P (its own key structs, its own calls). */
#define AB_ROWS(P)                                                                                 \
    static kuai_key P##_keys[NK];                                                                  \
    static kuai_key *P##_kp[NK] = {&P##_keys[0], &P##_keys[1], &P##_keys[2], &P##_keys[3]};        \
    static const kuai_key *P##_kc[NK] = {&P##_keys[0], &P##_keys[1], &P##_keys[2], &P##_keys[3]};  \
    static void P##_short_enc(void)                                                                \
    {                                                                                              \
        P##_kuai_key_init(P##_kp[0], ab_c, ab_kb[0], ab_klen);                                     \
        P##_kuai_ecb_encrypt(P##_kc[0], ab_in[0], ab_out[0], ab_len);                              \
    }                                                                                              \
    static void P##_short_dec(void)                                                                \
    {                                                                                              \
        P##_kuai_key_init(P##_kp[0], ab_c, ab_kb[0], ab_klen);                                     \
        P##_kuai_ecb_decrypt(P##_kc[0], ab_in[0], ab_out[0], ab_len);                              \
    }                                                                                              \
    static void P##_keys_enc(void)                                                                 \
    {                                                                                              \
        P##_kuai_key_init_multi(P##_kp, ab_c, ab_kb, ab_klen, ab_nk);                              \
        P##_kuai_ecb_encrypt_multi(P##_kc, ab_src, ab_dst, ab_nk, ab_bs);                          \
    }                                                                                              \
    static void P##_keys_1by1(void)                                                                \
    {                                                                                              \
        for (size_t i = 0; i < ab_nk; i++)                                                         \
            P##_kuai_key_init(P##_kp[i], ab_c, ab_kb[i], ab_klen);                                 \
        P##_kuai_ecb_encrypt_multi(P##_kc, ab_src, ab_dst, ab_nk, ab_bs);                          \
    }                                                                                              \
    static void P##_oneshot_enc(void)                                                              \
    {                                                                                              \
        P##_kuai_ecb_encrypt_oneshot(ab_c, ab_kb[0], ab_klen, ab_in[0], ab_out[0], ab_len);        \
    }                                                                                              \
    static void P##_oneshot_dec(void)                                                              \
    {                                                                                              \
        P##_kuai_ecb_decrypt_oneshot(ab_c, ab_kb[0], ab_klen, ab_in[0], ab_out[0], ab_len);        \
    }                                                                                              \
    static void P##_oneshot_keys_enc(void)                                                         \
    {                                                                                              \
        P##_kuai_ecb_encrypt_oneshot_multi(ab_c, ab_kb, ab_klen, ab_src, ab_dst, ab_nk, ab_bs);    \
    }                                                                                              \
    static void P##_oneshot_keys_dec(void)                                                         \
    {                                                                                              \
        P##_kuai_ecb_decrypt_oneshot_multi(ab_c, ab_kb, ab_klen, ab_src, ab_dst, ab_nk, ab_bs);    \
    }                                                                                              \
    static void P##_outside_enc(void) /* the key of the last row that set one up */                \
    {                                                                                              \
        P##_kuai_ecb_encrypt(P##_kc[0], ab_in[0], ab_out[0], ab_len);                              \
    }                                                                                              \
    static void P##_outside_dec(void)                                                              \
    {                                                                                              \
        P##_kuai_ecb_decrypt(P##_kc[0], ab_in[0], ab_out[0], ab_len);                              \
    }                                                                                              \
    static void P##_block_enc(void) /* one block, the key set up */                                \
    {                                                                                              \
        P##_kuai_ecb_encrypt(P##_kc[0], ab_in[0], ab_out[0], ab_bs);                               \
    }                                                                                              \
    static void P##_block_dec(void)                                                                \
    {                                                                                              \
        P##_kuai_ecb_decrypt(P##_kc[0], ab_in[0], ab_out[0], ab_bs);                               \
    }                                                                                              \
    static void P##_setup(void)                                                                    \
    {                                                                                              \
        P##_kuai_key_init(P##_kp[0], ab_c, ab_kb[0], ab_klen);                                     \
    }                                                                                              \
    static void P##_multi_alone(void) /* the keys of keys_enc's last call */                       \
    {                                                                                              \
        P##_kuai_ecb_encrypt_multi(P##_kc, ab_src, ab_dst, ab_nk, ab_bs);                          \
    }                                                                                              \
    static void P##_multi_alone_dec(void)                                                          \
    {                                                                                              \
        P##_kuai_ecb_decrypt_multi(P##_kc, ab_src, ab_dst, ab_nk, ab_bs);                          \
    }                                                                                              \
    static void P##_setup_multi(void)                                                              \
    {                                                                                              \
        P##_kuai_key_init_multi(P##_kp, ab_c, ab_kb, ab_klen, ab_nk);                              \
    }                                                                                              \
    static void P##_cbc_enc_chain(void) /* the key of the last row that set one up */              \
    {                                                                                              \
        P##_kuai_cbc_encrypt(P##_kc[0], ab_iv, ab_long_in, ab_long_out, AB_CHAIN);                 \
    }                                                                                              \
    static void P##_cbc_enc_chains(void) /* the keys of keys_enc's last call */                    \
    {                                                                                              \
        P##_kuai_cbc_encrypt_multi(P##_kc, ab_ivs, ab_chain_in, ab_chain_out, ab_nk, AB_CHAIN);    \
    }                                                                                              \
    static void P##_cbc_enc_block(void)                                                            \
    {                                                                                              \
        P##_kuai_cbc_encrypt(P##_kc[0], ab_iv, ab_long_in, ab_long_out, ab_bs);                    \
    }                                                                                              \
    static void P##_cbc_dec_long(void)                                                             \
    {                                                                                              \
        P##_kuai_cbc_decrypt(P##_kc[0], ab_iv, ab_long_in, ab_long_out, AB_LONG);                  \
    }                                                                                              \
    static void P##_ecb_long(void)                                                                 \
    {                                                                                              \
        P##_kuai_ecb_encrypt(P##_kc[0], ab_long_in, ab_long_out, AB_LONG);                         \
    }                                                                                              \
    static void P##_ctr_long(void)                                                                 \
    {                                                                                              \
        P##_kuai_ctr_crypt(P##_kc[0], ab_iv, ab_long_in, ab_long_out, AB_LONG);                    \
    }                                                                                              \
    static void P##_gcm_enc_long(void) /* 12-byte IV, no AAD, 16-byte tag */                       \
    {                                                                                              \
        P##_kuai_gcm_encrypt(P##_kc[0], ab_iv, 12, NULL, 0, ab_long_in, ab_long_out, AB_LONG,      \
                             ab_tag, 16);                                                          \
    }                                                                                              \
    static void P##_gcm_dec_long(void) /* the tag does not match: the call's work is the same */   \
    {                                                                                              \
        P##_kuai_gcm_decrypt(P##_kc[0], ab_iv, 12, NULL, 0, ab_long_in, ab_long_out, AB_LONG,      \
                             ab_tag, 16);                                                          \
    }
AB_ROWS(A)
AB_ROWS(B)

typedef void (*ab_fn)(void);
static const struct {
    const char *name;
    ab_fn a, b;
} ab_rows[] = {
    {"short enc, 1 key (setup + 4 blocks; 2)", A_short_enc, B_short_enc},
    {"short dec, 1 key", A_short_dec, B_short_dec},
    {"short enc, keys (init_multi + multi)", A_keys_enc, B_keys_enc},
    {"short enc, keys 1 by 1", A_keys_1by1, B_keys_1by1},
    {"one-shot enc, 1 key", A_oneshot_enc, B_oneshot_enc},
    {"one-shot dec, 1 key", A_oneshot_dec, B_oneshot_dec},
    {"one-shot enc, keys", A_oneshot_keys_enc, B_oneshot_keys_enc},
    {"one-shot dec, keys", A_oneshot_keys_dec, B_oneshot_keys_dec},
    {"key outside, enc", A_outside_enc, B_outside_enc},
    {"key outside, dec", A_outside_dec, B_outside_dec},
    {"ecb enc, 1 block", A_block_enc, B_block_enc},
    {"ecb dec, 1 block", A_block_dec, B_block_dec},
    {"key setup alone", A_setup, B_setup},
    {"multi-key call alone", A_multi_alone, B_multi_alone},
    {"multi-key call alone, dec", A_multi_alone_dec, B_multi_alone_dec},
    {"kuai_key_init_multi alone", A_setup_multi, B_setup_multi},
    {"cbc enc, one chain of 1 KiB", A_cbc_enc_chain, B_cbc_enc_chain},
    {"cbc enc, keys' chains of 1 KiB", A_cbc_enc_chains, B_cbc_enc_chains},
    {"cbc enc, one block", A_cbc_enc_block, B_cbc_enc_block},
    {"cbc dec, 4 KiB", A_cbc_dec_long, B_cbc_dec_long},
    {"ecb enc, 4 KiB", A_ecb_long, B_ecb_long},
    {"ctr, 4 KiB", A_ctr_long, B_ctr_long},
    {"gcm enc, 4 KiB", A_gcm_enc_long, B_gcm_enc_long}, /* 128-bit blocks only */
    {"gcm dec, 4 KiB", A_gcm_dec_long, B_gcm_dec_long},
};

/* Whether the row's name contains one of the comma-separated parts of
 * pick (every row when pick is unset or empty). */
static int ab_row_picked(const char *name, const char *pick)
{
    if (!pick || !*pick)
        return 1;
    for (const char *p = pick; *p;) {
        const size_t n = strcspn(p, ",");
        for (const char *q = name; n && strlen(q) >= n; q++)
            if (!strncmp(q, p, n))
                return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

static double ab_best(ab_fn f)
{
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < 200; r++) {
        const uint64_t t0 = __rdtsc();
        for (int i = 0; i < 32; i++)
            f();
        const uint64_t t = __rdtsc() - t0;
        best = t < best ? t : best;
    }
    return (double)best / 32;
}

int main(int argc, char **argv)
{
    const int alternations = argc > 1 ? atoi(argv[1]) : 80;
    static const struct {
        kuai_cipher c;
        const char *name;
    } members[] = {{KUAI_UBLOCK_128_128, "ublock-128-128"},
                   {KUAI_UBLOCK_128_256, "ublock-128-256"},
                   {KUAI_UBLOCK_256_256, "ublock-256-256"}};
    if (alternations < 1) {
        fprintf(stderr, "usage: %s [alternations >= 1]\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < NK; i++) {
        for (int j = 0; j < 32; j++)
            ab_keyb[i][j] = (uint8_t)(37 * i + 11 * j + 1);
        ab_kb[i] = ab_keyb[i];
        ab_src[i] = ab_in[i];
        ab_dst[i] = ab_out[i];
        ab_ivs[i] = ab_ivs_b[i];
        ab_chain_in[i] = ab_long_in + i * AB_CHAIN;
        ab_chain_out[i] = ab_long_out + i * AB_CHAIN;
    }
    /* KUAI_AB_KEYS: the key count of the rows with several keys (1..4; by
     * default the paper's: 4, 2 for 256-bit blocks); KUAI_AB_ROWS: only the
     * rows whose name contains one of its comma-separated parts */
    const char *keys_env = getenv("KUAI_AB_KEYS"), *rows = getenv("KUAI_AB_ROWS");
    const int keys = keys_env ? atoi(keys_env) : 0;
    if (keys_env && (keys < 1 || keys > NK)) {
        fprintf(stderr, "bench-ab: KUAI_AB_KEYS must be 1..%d\n", NK);
        return 2;
    }
    /* KUAI_AB_LEN: the bytes of the one-key short rows (one-shot, key
     * outside, setup + blocks), a multiple of every picked cipher's block */
    const char *len_env = getenv("KUAI_AB_LEN");
    const long len = len_env ? atol(len_env) : 64;
    if (len < 32 || len > AB_MAXLEN || len % 32) {
        fprintf(stderr, "bench-ab: KUAI_AB_LEN must be a multiple of 32 from 32 to %d\n",
                AB_MAXLEN);
        return 2;
    }
    printf("TSC cycles per call, lowest; A and B called in turn, %d alternations\n", alternations);
    /* KUAI_AB_CIPHERS: other members by name, comma-separated (e.g.
     * "sm4,aes-128"), in place of the three uBlock members */
    const char *names = getenv("KUAI_AB_CIPHERS");
    char list[256];
    const char *pick[16];
    size_t npick = 0;
    if (names && *names) {
        snprintf(list, sizeof list, "%s", names);
        for (char *t = strtok(list, ","); t && npick < 16; t = strtok(NULL, ","))
            pick[npick++] = t;
    }
    const size_t nm = npick ? npick : sizeof members / sizeof members[0];
    for (size_t m = 0; m < nm; m++) {
        const char *mname = npick ? pick[m] : members[m].name;
        ab_c = npick ? A_kuai_cipher_by_name(pick[m]) : members[m].c;
        if (!ab_c) {
            fprintf(stderr, "bench-ab: unknown cipher %s\n", pick[m]);
            return 2;
        }
        ab_klen = A_kuai_key_size(ab_c);
        ab_bs = A_kuai_block_size(ab_c);
        ab_nk = ab_bs == 32 ? 2 : 4;
        if (keys)
            ab_nk = (size_t)keys;
        ab_len = (size_t)len;
        /* the keys of the rows that use keys set up by an earlier row, so
         * that every row can run alone (KUAI_AB_ROWS) */
        if (A_kuai_key_init_multi(A_kp, ab_c, ab_kb, ab_klen, ab_nk) ||
            B_kuai_key_init_multi(B_kp, ab_c, ab_kb, ab_klen, ab_nk)) {
            fprintf(stderr, "bench-ab: key setup failed for %s\n", mname);
            return 2;
        }
        for (size_t r = 0; r < sizeof ab_rows / sizeof ab_rows[0]; r++) {
            if (!ab_row_picked(ab_rows[r].name, rows) ||
                (ab_bs != 16 && !strncmp(ab_rows[r].name, "gcm", 3)))
                continue;
            double a = 1e30, b = 1e30;
            for (int k = 0; k < alternations; k++) {
                const double x = ab_best(ab_rows[r].a), y = ab_best(ab_rows[r].b);
                a = x < a ? x : a;
                b = y < b ? y : b;
            }
            printf("%-15s %-40s A %7.0f  B %7.0f  B/A %.2f\n", mname, ab_rows[r].name, a, b, b / a);
        }
    }
    return 0;
}
