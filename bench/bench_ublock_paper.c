/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The 2024 uBlock AVX2 paper's test matrix (kuai_bench --mode paper, and
 * `kuai speed --mode paper`): per member, short messages with 1 and 4 keys
 * (2 for uBlock-256/256) with the key schedule in every call (several keys
 * set up in one kuai_key_init_multi call, and one by one), the same with
 * the key set up outside the loop, key setup alone, the one-shot calls,
 * long ECB with 1 and 4 keys, long CBC with 1 and 4 chains, and rows on
 * both sides of the crossover between the low-latency and the wide kernel.
 *
 * Beside kuai's rows stand the figures of the paper's own code (github.com/
 * Xenooooooooo/optimized_uBlock_algorithm, f2b5fc7) from issue 14: measured
 * on an AMD EPYC Zen 3 at TSC 2.45 GHz in another run, not a same-run
 * peer. Both sides are given in TSC cycles (the reference's ns x 2.45), and
 * the ratio is reference cycles / kuai cycles (above 1: kuai is faster).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_ublock_paper.h"

#include "kuai.h"

#if KUAI_BENCH_GCRYPT
#include <gcrypt.h>
#endif
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BP_TSC 1
#else
#define BP_TSC 0
#endif

#define REF_GHZ 2.45
#define LONG 262144 /* 2 Mbit, the paper's long message */
#define NSTREAM 4

static uint64_t bp_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t bp_ticks(void)
{
#if BP_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

typedef struct bp {
    kuai_cipher c;
    const char *backend;
    int dflt;                        /* backend is the one kuai_key_init picks */
    char dflt_name[24];              /* that one (the one-shot calls run it) */
    size_t bs, klen, sblocks, nkeys; /* short: blocks per call, keys */
    uint8_t *keybytes;
    kuai_key *keys;
    const kuai_key *keyp[NSTREAM];
    kuai_key *keyo[NSTREAM]; /* the same structs, to set up */
    uint8_t *in[NSTREAM], *out[NSTREAM], *iv[NSTREAM];
    const uint8_t *keyb[NSTREAM];
    size_t len; /* bytes per stream of the row being measured */
    size_t n;   /* streams */
    uint8_t *mem[2 * NSTREAM];
    /* SM4's and AES's same-run peers, per stream and direction (0 enc, 1
     * dec); NULL where the library lacks the cipher */
#if KUAI_BENCH_GCRYPT
    gcry_cipher_hd_t gh[NSTREAM][2];
#endif
    EVP_CIPHER_CTX *oc[NSTREAM][2];
    int have_gcry, have_ossl;
    int pdec, psetkey, pcrypt; /* the peers' share of the row being measured */
} bp;

static void bp_check(int rc, const char *what)
{
    if (rc != KUAI_OK) {
        fprintf(stderr, "paper rows: %s failed: %s\n", what, kuai_strerror(rc));
        exit(1);
    }
}

/* ---- the work of each row (one call = what the row's figure is per) ---- */

/* The timed key setups: kuai_key_init, what an application calls, where
 * the row's backend is the default; else kuai_key_init_backend, whose
 * lookup of the name costs ~18 cycles a key more (Zen 1). */
static void bp_key(const bp *x, kuai_key *k, const uint8_t *key)
{
    bp_check(x->dflt ? kuai_key_init(k, x->c, key, x->klen)
                     : kuai_key_init_backend(k, x->c, key, x->klen, x->backend),
             "key");
}
static void w_setup(bp *x)
{
    bp_key(x, &x->keys[0], x->keybytes);
}
/* The n keys of a multi-key row in one kuai_key_init_multi call (batch),
 * or one kuai_key_init each. */
static void bp_keys(const bp *x, int batch)
{
    if (!batch) {
        for (size_t i = 0; i < x->n; i++)
            bp_key(x, &x->keys[i], x->keyb[i]);
        return;
    }
    bp_check(x->dflt
                 ? kuai_key_init_multi(x->keyo, x->c, x->keyb, x->klen, x->n)
                 : kuai_key_init_multi_backend(x->keyo, x->c, x->keyb, x->klen, x->n, x->backend),
             "keys");
}
static void w_short(bp *x, int dec, int batch)
{
    bp_keys(x, batch);
    if (x->n == 1)
        bp_check(
            (dec ? kuai_ecb_decrypt : kuai_ecb_encrypt)(&x->keys[0], x->in[0], x->out[0], x->len),
            "ecb");
    else
        bp_check((dec ? kuai_ecb_decrypt_multi : kuai_ecb_encrypt_multi)(
                     x->keyp, (const uint8_t *const *)x->in, x->out, x->n, x->len),
                 "ecb multi");
}
static void w_short_enc(bp *x)
{
    w_short(x, 0, 1);
}
static void w_short_dec(bp *x)
{
    w_short(x, 1, 1);
}
static void w_short_enc_1by1(bp *x)
{
    w_short(x, 0, 0);
}
static void w_short_dec_1by1(bp *x)
{
    w_short(x, 1, 0);
}
static void w_oneshot(bp *x, int dec)
{
    if (x->n == 1)
        bp_check((dec ? kuai_ecb_decrypt_oneshot : kuai_ecb_encrypt_oneshot)(
                     x->c, x->keyb[0], x->klen, x->in[0], x->out[0], x->len),
                 "oneshot");
    else
        bp_check((dec ? kuai_ecb_decrypt_oneshot_multi : kuai_ecb_encrypt_oneshot_multi)(
                     x->c, x->keyb, x->klen, (const uint8_t *const *)x->in, x->out, x->n, x->len),
                 "oneshot multi");
}
static void w_oneshot_enc(bp *x)
{
    w_oneshot(x, 0);
}
static void w_oneshot_dec(bp *x)
{
    w_oneshot(x, 1);
}
static void w_ecb(bp *x, int dec)
{
    if (x->n == 1)
        bp_check(
            (dec ? kuai_ecb_decrypt : kuai_ecb_encrypt)(&x->keys[0], x->in[0], x->out[0], x->len),
            "ecb");
    else
        bp_check((dec ? kuai_ecb_decrypt_multi : kuai_ecb_encrypt_multi)(
                     x->keyp, (const uint8_t *const *)x->in, x->out, x->n, x->len),
                 "ecb multi");
}
static void w_ecb_enc(bp *x)
{
    w_ecb(x, 0);
}
static void w_ecb_dec(bp *x)
{
    w_ecb(x, 1);
}
static void w_cbc(bp *x, int dec)
{
    if (x->n == 1)
        bp_check((dec ? kuai_cbc_decrypt : kuai_cbc_encrypt)(&x->keys[0], x->iv[0], x->in[0],
                                                             x->out[0], x->len),
                 "cbc");
    else
        bp_check((dec ? kuai_cbc_decrypt_multi : kuai_cbc_encrypt_multi)(
                     x->keyp, x->iv, (const uint8_t *const *)x->in, x->out, x->n, x->len),
                 "cbc multi");
}
static void w_cbc_enc(bp *x)
{
    w_cbc(x, 0);
}
static void w_cbc_dec(bp *x)
{
    w_cbc(x, 1);
}

/* ---- SM4's and AES's peers: the same rows through libgcrypt and OpenSSL
 * EVP. Neither has a one-shot call or a multi-key call: their short rows
 * are "set the key, then encrypt", per key, on handles opened once (what
 * an application that re-keys does; opening a handle per message would
 * cost them more). OpenSSL re-keys a context whose cipher is already set
 * (EVP_CipherInit_ex2 with a NULL cipher). ---- */

#if KUAI_BENCH_GCRYPT
static void pg_check(gcry_error_t e, const char *what)
{
    if (e) {
        fprintf(stderr, "paper rows: libgcrypt %s failed: %s\n", what, gcry_strerror(e));
        exit(1);
    }
}
static void pg_work(bp *x, int dec, int setkey, int crypt)
{
    for (size_t i = 0; i < x->n; i++) {
        gcry_cipher_hd_t h = x->gh[i][dec];
        if (setkey)
            pg_check(gcry_cipher_setkey(h, x->keyb[i], x->klen), "setkey");
        if (crypt)
            pg_check((dec ? gcry_cipher_decrypt : gcry_cipher_encrypt)(h, x->out[i], x->len,
                                                                       x->in[i], x->len),
                     "encrypt/decrypt");
    }
}
/* the peer's share of the row being measured: bp's pdec, psetkey, pcrypt */
static void pg_row(bp *x)
{
    pg_work(x, x->pdec, x->psetkey, x->pcrypt);
}
#endif

static void po_work(bp *x, int dec, int setkey, int crypt)
{
    for (size_t i = 0; i < x->n; i++) {
        EVP_CIPHER_CTX *c = x->oc[i][dec];
        int outl = 0;
        if (setkey && !EVP_CipherInit_ex2(c, NULL, x->keyb[i], NULL, !dec, NULL)) {
            fprintf(stderr, "paper rows: EVP_CipherInit_ex2 failed\n");
            exit(1);
        }
        if (crypt && (!EVP_CipherUpdate(c, x->out[i], &outl, x->in[i], (int)x->len) ||
                      (size_t)outl != x->len)) {
            fprintf(stderr, "paper rows: EVP_CipherUpdate failed\n");
            exit(1);
        }
    }
}
static void po_row(bp *x)
{
    po_work(x, x->pdec, x->psetkey, x->pcrypt);
}

/* A row's work: kuai's, and the peers' (peer: 0 none; else what they do
 * per key: set it (setkey), encrypt or decrypt (dec) the blocks (crypt));
 * oneshot: kuai's one-shot calls, which take no backend (the default's). */
typedef struct bp_work {
    void (*kuai)(bp *);
    int peer, dec, setkey, crypt, oneshot;
} bp_work;

/* the one-shot rows' peers are their short rows: set the key, then encrypt */
static const bp_work W_SHORT_ENC = {w_short_enc, 1, 0, 1, 1, 0},
                     W_SHORT_DEC = {w_short_dec, 1, 1, 1, 1, 0},
                     W_SHORT_ENC1 = {w_short_enc_1by1, 1, 0, 1, 1, 0},
                     W_SHORT_DEC1 = {w_short_dec_1by1, 1, 1, 1, 1, 0},
                     W_ONESHOT_ENC = {w_oneshot_enc, 1, 0, 1, 1, 1},
                     W_ONESHOT_DEC = {w_oneshot_dec, 1, 1, 1, 1, 1},
                     W_KEYOUT_ENC = {w_ecb_enc, 1, 0, 0, 1, 0},
                     W_KEYOUT_DEC = {w_ecb_dec, 1, 1, 0, 1, 0}, W_SETUP = {w_setup, 1, 0, 1, 0, 0},
                     W_ECB_ENC = {w_ecb_enc, 0, 0, 0, 0, 0}, W_ECB_DEC = {w_ecb_dec, 0, 0, 0, 0, 0},
                     W_CBC_ENC = {w_cbc_enc, 0, 0, 0, 0, 0}, W_CBC_DEC = {w_cbc_dec, 0, 0, 0, 0, 0};

/* Best of reps repetitions of ~rep_ns each after a warm-up that sizes them;
 * ns and TSC ticks per call from the same (best) repetition. */
static void bp_measure(bp *x, void (*fn)(bp *), const bench_paper_opts *o, double *ns,
                       double *ticks)
{
    uint64_t n = 1;
    for (;;) {
        uint64_t t0 = bp_ns();
        for (uint64_t i = 0; i < n; i++)
            fn(x);
        double dt = (double)(bp_ns() - t0);
        if (dt >= o->rep_ns / 4 || n >= (1u << 30)) {
            double want = (double)n * o->rep_ns / (dt > 1 ? dt : 1);
            n = want < 1 ? 1 : (uint64_t)want;
            break;
        }
        n *= dt * 16 < o->rep_ns ? 8 : 2;
    }
    *ns = INFINITY;
    *ticks = NAN;
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bp_ns(), c0 = bp_ticks();
        for (uint64_t i = 0; i < n; i++)
            fn(x);
        uint64_t c1 = bp_ticks(), t1 = bp_ns();
        double v = (double)(t1 - t0) / (double)n;
        if (v < *ns) {
            *ns = v;
            *ticks = BP_TSC ? (double)(c1 - c0) / (double)n : NAN;
        }
    }
}

/* The reference: ns per call (short rows) or MB/s (long rows); 0 = none. */
typedef struct ref3 {
    double v[3]; /* 128/128, 128/256, 256/256 */
} ref3;

/* SM4's and AES's two peers by name and version, as the table and the
 * JSON give them */
static void peer_names(char *gv, size_t gn, char *ov, size_t on)
{
#if KUAI_BENCH_GCRYPT
    snprintf(gv, gn, "libgcrypt %s", gcry_check_version(NULL));
#else
    snprintf(gv, gn, "libgcrypt (not in this build)");
#endif
    snprintf(ov, on, "OpenSSL %u.%u.%u EVP", OPENSSL_version_major(), OPENSSL_version_minor(),
             OPENSSL_version_patch());
}

/* One peer's figure and its ratio (peer time / kuai time: above 1, kuai
 * is faster) into buf, or "-" where the peer has no such row; returns the
 * peer's time (NAN: none). */
static double peer_cell(bp *x, void (*fn)(bp *), double kuai_ns, const bench_paper_opts *o,
                        char *buf, size_t n)
{
    if (!fn) {
        snprintf(buf, n, "-");
        return NAN;
    }
    double ns, tk;
    bp_measure(x, fn, o, &ns, &tk);
    snprintf(buf, n, "%8.1f ns %6.0f cyc %5.2fx", ns, tk, ns / kuai_ns);
    return ns;
}

static void row(bp *x, const char *what, const char *size, bp_work w, size_t bytes, int is_short,
                ref3 ref, const bench_paper_opts *o)
{
    if (w.oneshot && !x->dflt) {
        /* measured under the default backend's name, where it is a row */
        printf("%-15s %-7s %-26s %-12s - (the one-shot calls run the default backend, %s)\n",
               kuai_cipher_name(x->c), x->backend, what, size, x->dflt_name);
        return;
    }
    double ns, tk;
    bp_measure(x, w.kuai, o, &ns, &tk);
    int m = x->c == KUAI_UBLOCK_128_128 ? 0 : x->c == KUAI_UBLOCK_128_256 ? 1 : 2;
    char kuai_s[64], ref_s[64], ratio_s[16];
    double mbps = (double)bytes * 1e3 / ns, cpb = tk / (double)bytes;
    if (is_short)
        snprintf(kuai_s, sizeof kuai_s, "%8.1f ns %8.0f cyc", ns, tk);
    else
        snprintf(kuai_s, sizeof kuai_s, "%7.1f MB/s %6.2f c/B", mbps, cpb);
    const bench_paper_row jr = {kuai_cipher_name(x->c), x->backend, what, size, bytes, is_short, ns,
                                BP_TSC ? tk : NAN};
    if (x->c > KUAI_UBLOCK_256_256) {
        /* SM4 and AES: their same-run peers instead of the paper's code */
        char g[64], s[64];
        x->pdec = w.dec;
        x->psetkey = w.setkey;
        x->pcrypt = w.crypt;
#if KUAI_BENCH_GCRYPT
        double gns = peer_cell(x, w.peer && x->have_gcry ? pg_row : NULL, ns, o, g, sizeof g);
#else
        double gns = peer_cell(x, NULL, ns, o, g, sizeof g);
#endif
        double sns = peer_cell(x, w.peer && x->have_ossl ? po_row : NULL, ns, o, s, sizeof s);
        printf("%-15s %-9s %-24s %-12s %-29s %-33s %s\n", kuai_cipher_name(x->c), x->backend, what,
               size, kuai_s, g, s);
        fflush(stdout);
        char gv[48], ov[48];
        peer_names(gv, sizeof gv, ov, sizeof ov);
        if (!isnan(gns))
            bench_paper_json_row(&jr, gv, (double)bytes * 1e3 / gns, gns / ns);
        if (!isnan(sns))
            bench_paper_json_row(&jr, ov, (double)bytes * 1e3 / sns, sns / ns);
        if (isnan(gns) && isnan(sns))
            bench_paper_json_row(&jr, NULL, NAN, NAN);
        return;
    }
    double r = ref.v[m], ratio = NAN;
    if (r > 0 && is_short) {
        snprintf(ref_s, sizeof ref_s, "%6.0f ns %6.0f cyc", r, r * REF_GHZ);
        ratio = r * REF_GHZ / tk;
    } else if (r > 0) {
        snprintf(ref_s, sizeof ref_s, "%5.0f MB/s %6.2f c/B", r, REF_GHZ * 1e3 / r);
        ratio = REF_GHZ * 1e3 / r / cpb;
    } else {
        snprintf(ref_s, sizeof ref_s, "-");
    }
    if (!BP_TSC)
        ratio = NAN; /* no cycles here to hold against the reference's */
    if (isnan(ratio))
        snprintf(ratio_s, sizeof ratio_s, "-");
    else
        snprintf(ratio_s, sizeof ratio_s, "%.2fx", ratio);
    printf("%-15s %-7s %-26s %-12s %-29s %-28s %s\n", kuai_cipher_name(x->c), x->backend, what,
           size, kuai_s, ref_s, ratio_s);
    fflush(stdout);
    if (r > 0)
        bench_paper_json_row(&jr, "2024 AVX2 code, Zen 3 at TSC 2.45 GHz (reference, another run)",
                             is_short ? (double)bytes * 1e3 / r : r, ratio);
    else
        bench_paper_json_row(&jr, NULL, NAN, NAN);
}

/* Issue 14's figures of the paper's code (Zen 3, TSC 2.45 GHz): ns/call
 * for short rows, MB/s for long ones. Long ECB: ../shared/bench.md. */
static const ref3 R_SHORT1 = {{150, 199, 297}}, R_SHORTK = {{185, 242, 294}},
                  R_KEYOUT = {{118, 162, 221}}, R_SETUP = {{35, 40, 71}}, R_CBC1 = {{127, 93, 133}},
                  R_CBCK = {{503, 375, 263}}, R_ECB1 = {{560, 410, 300}}, R_NONE = {{0, 0, 0}};

/* SM4's and AES's peers, one handle per stream and direction, keyed with
 * the stream's key. OpenSSL's AES is left out when OPENSSL_ia32cap is set
 * (make bench turns its AES-NI off for the portable backends' rows: no
 * yardstick for short calls on AES-NI); libgcrypt picks its own code. */
static void peers_open(bp *x)
{
    static const struct {
        kuai_cipher c;
        const char *ossl;
#if KUAI_BENCH_GCRYPT
        int gcry;
#endif
    } map[] = {
#if KUAI_BENCH_GCRYPT
        {KUAI_SM4, "SM4-ECB", GCRY_CIPHER_SM4},
        {KUAI_AES_128, "AES-128-ECB", GCRY_CIPHER_AES128},
        {KUAI_AES_192, "AES-192-ECB", GCRY_CIPHER_AES192},
        {KUAI_AES_256, "AES-256-ECB", GCRY_CIPHER_AES256},
#else
        {KUAI_SM4, "SM4-ECB"},
        {KUAI_AES_128, "AES-128-ECB"},
        {KUAI_AES_192, "AES-192-ECB"},
        {KUAI_AES_256, "AES-256-ECB"},
#endif
    };
    size_t m = 0;
    while (m < sizeof map / sizeof map[0] && map[m].c != x->c)
        m++;
    if (m == sizeof map / sizeof map[0])
        return;
#if KUAI_BENCH_GCRYPT
    x->have_gcry = 1;
    for (size_t i = 0; i < NSTREAM; i++)
        for (int d = 0; d < 2; d++) {
            pg_check(gcry_cipher_open(&x->gh[i][d], map[m].gcry, GCRY_CIPHER_MODE_ECB, 0), "open");
            pg_check(gcry_cipher_setkey(x->gh[i][d], x->keyb[i], x->klen), "setkey");
        }
#endif
    int is_aes = x->c != KUAI_SM4;
    EVP_CIPHER *ec =
        is_aes && getenv("OPENSSL_ia32cap") ? NULL : EVP_CIPHER_fetch(NULL, map[m].ossl, NULL);
    if (!ec)
        return;
    x->have_ossl = 1;
    for (size_t i = 0; i < NSTREAM; i++)
        for (int d = 0; d < 2; d++) {
            x->oc[i][d] = EVP_CIPHER_CTX_new();
            if (!x->oc[i][d] || !EVP_CipherInit_ex2(x->oc[i][d], ec, x->keyb[i], NULL, !d, NULL)) {
                fprintf(stderr, "paper rows: OpenSSL %s: set-up failed\n", map[m].ossl);
                exit(1);
            }
            EVP_CIPHER_CTX_set_padding(x->oc[i][d], 0);
        }
    EVP_CIPHER_free(ec); /* the contexts hold their own reference */
}

static void peers_close(bp *x)
{
    for (size_t i = 0; i < NSTREAM; i++)
        for (int d = 0; d < 2; d++) {
#if KUAI_BENCH_GCRYPT
            if (x->have_gcry)
                gcry_cipher_close(x->gh[i][d]);
#endif
            EVP_CIPHER_CTX_free(x->oc[i][d]);
        }
}

/* short_only: the short-message rows (key setup, 1 and 4 keys, one-shot,
 * key outside), without crossover and long rows (the main table has SM4's
 * and AES's long rows). */
static void bench_member(kuai_cipher c, const char *backend, int short_only,
                         const bench_paper_opts *o)
{
    bp X, *x = &X;
    memset(x, 0, sizeof *x);
    x->c = c;
    x->backend = backend;
    x->bs = kuai_block_size(c);
    x->klen = kuai_key_size(c);
    {
        uint8_t kb[32] = {0};
        kuai_key k;
        bp_check(kuai_key_init(&k, c, kb, x->klen), "key");
        x->dflt = strcmp(kuai_key_backend(&k), backend) == 0;
        snprintf(x->dflt_name, sizeof x->dflt_name, "%s", kuai_key_backend(&k));
        kuai_key_wipe(&k);
    }
    x->sblocks = x->bs == 16 ? 4 : 2;
    x->nkeys = x->bs == 16 ? 4 : 2;
    x->keybytes = malloc(x->klen * NSTREAM);
    x->keys = aligned_alloc(64, sizeof(kuai_key) * NSTREAM);
    if (!x->keybytes || !x->keys)
        exit(1);
    for (size_t i = 0; i < x->klen * NSTREAM; i++)
        x->keybytes[i] = (uint8_t)(i * 131 + 7);
    for (size_t i = 0; i < NSTREAM; i++) {
        x->keyb[i] = x->keybytes + i * x->klen;
        /* each stream's buffers at their own cache-line offset in the page
         * (as bench.c does): at one offset, 4 streams in and out share L1
         * sets and 4K-alias, which costs the multi-stream rows up to 7x */
        x->mem[2 * i] = aligned_alloc(64, LONG + 4096);
        x->mem[2 * i + 1] = aligned_alloc(64, LONG + 4096);
        if (!x->mem[2 * i] || !x->mem[2 * i + 1])
            exit(1);
        x->in[i] = x->mem[2 * i] + 64 * ((5 * (2 * i)) % 64);
        x->out[i] = x->mem[2 * i + 1] + 64 * ((5 * (2 * i + 1)) % 64);
        x->iv[i] = aligned_alloc(64, 64);
        if (!x->in[i] || !x->out[i] || !x->iv[i])
            exit(1);
        for (size_t j = 0; j < LONG; j++)
            x->in[i][j] = (uint8_t)(j * 17 + i);
        memset(x->iv[i], (int)i, 64);
        bp_check(kuai_key_init_backend(&x->keys[i], c, x->keyb[i], x->klen, backend), "key");
        x->keyp[i] = &x->keys[i];
        x->keyo[i] = &x->keys[i];
    }
    if (c > KUAI_UBLOCK_256_256)
        peers_open(x);
    char sz[32], szk[32];
    size_t sbytes = x->sblocks * x->bs;
    snprintf(sz, sizeof sz, "%zu blocks", x->sblocks);
    snprintf(szk, sizeof szk, "%zux1 block", x->nkeys);

    x->n = 1;
    x->len = sbytes;
    row(x, "short enc, 1 key", sz, W_SHORT_ENC, sbytes, 1, R_SHORT1, o);
    row(x, "short dec, 1 key", sz, W_SHORT_DEC, sbytes, 1, R_NONE, o);
    x->n = x->nkeys;
    x->len = x->bs;
    row(x, "short enc, keys", szk, W_SHORT_ENC, x->nkeys * x->bs, 1, R_SHORTK, o);
    row(x, "short dec, keys", szk, W_SHORT_DEC, x->nkeys * x->bs, 1, R_NONE, o);
    row(x, "short enc, keys 1 by 1", szk, W_SHORT_ENC1, x->nkeys * x->bs, 1, R_SHORTK, o);
    row(x, "short dec, keys 1 by 1", szk, W_SHORT_DEC1, x->nkeys * x->bs, 1, R_NONE, o);
    x->n = 1;
    x->len = sbytes;
    row(x, "one-shot enc, 1 key", sz, W_ONESHOT_ENC, sbytes, 1, R_SHORT1, o);
    row(x, "one-shot dec, 1 key", sz, W_ONESHOT_DEC, sbytes, 1, R_NONE, o);
    x->n = x->nkeys;
    x->len = x->bs;
    row(x, "one-shot enc, keys", szk, W_ONESHOT_ENC, x->nkeys * x->bs, 1, R_SHORTK, o);
    row(x, "one-shot dec, keys", szk, W_ONESHOT_DEC, x->nkeys * x->bs, 1, R_NONE, o);
    x->n = 1;
    x->len = sbytes;
    row(x, "key outside, enc", sz, W_KEYOUT_ENC, sbytes, 1, R_KEYOUT, o);
    row(x, "key outside, dec", sz, W_KEYOUT_DEC, sbytes, 1, R_NONE, o);
    row(x, "key setup alone", "-", W_SETUP, x->klen, 1, R_SETUP, o);
    bp_check(kuai_key_init_backend(&x->keys[0], c, x->keyb[0], x->klen, backend), "key");

    /* crossover rows: the public ECB call at sizes around the switch */
    if (!o->quick && !short_only) {
        static const size_t nbl[] = {1, 2, 3, 4, 6, 8, 12, 15, 16, 24, 32, 48, 64};
        for (size_t i = 0; i < sizeof nbl / sizeof nbl[0]; i++) {
            char s[32];
            snprintf(s, sizeof s, "%zu blocks", nbl[i]);
            x->len = nbl[i] * x->bs;
            row(x, "ecb enc (crossover)", s, W_ECB_ENC, x->len, 1, R_NONE, o);
        }
    }

    if (short_only)
        goto done;
    x->len = LONG;
    snprintf(sz, sizeof sz, "256KiB");
    snprintf(szk, sizeof szk, "%zux256KiB", x->nkeys);
    x->n = 1;
    row(x, "long ECB enc, 1 key", sz, W_ECB_ENC, LONG, 0, R_ECB1, o);
    row(x, "long ECB dec, 1 key", sz, W_ECB_DEC, LONG, 0, R_NONE, o);
    x->n = NSTREAM;
    row(x, "long ECB enc, 4 keys", "4x256KiB", W_ECB_ENC, NSTREAM * LONG, 0, R_NONE, o);
    x->n = 1;
    row(x, "long CBC enc, 1 chain", sz, W_CBC_ENC, LONG, 0, R_CBC1, o);
    row(x, "long CBC dec, 1 chain", sz, W_CBC_DEC, LONG, 0, R_NONE, o);
    x->n = x->nkeys;
    row(x, "long CBC enc, chains", szk, W_CBC_ENC, x->nkeys * LONG, 0, R_CBCK, o);
    row(x, "long CBC dec, chains", szk, W_CBC_DEC, x->nkeys * LONG, 0, R_NONE, o);

done:
    peers_close(x);
    for (size_t i = 0; i < NSTREAM; i++) {
        kuai_key_wipe(&x->keys[i]);
        free(x->mem[2 * i]);
        free(x->mem[2 * i + 1]);
        free(x->iv[i]);
    }
    free(x->keys);
    free(x->keybytes);
}

static void print_peer_header(void)
{
    char gv[48], ov[48];
    peer_names(gv, sizeof gv, ov, sizeof ov);
    printf("\nSM4 and AES, the same short-message rows against same-run peers: %s and %s, "
           "ECB handles opened once, the key set (gcry_cipher_setkey, EVP_CipherInit_ex2 on a "
           "context whose cipher is set) and the blocks encrypted per call and per key (they "
           "have no one-shot or multi-key call: their one-shot rows repeat their short rows); "
           "ratio = peer time / kuai time (above 1: kuai is faster)%s\n",
           gv, ov,
           getenv("OPENSSL_ia32cap") ? "; OpenSSL's AES left out (OPENSSL_ia32cap is set: its "
                                       "AES-NI may be off)"
                                     : "");
    printf("%-15s %-9s %-24s %-12s %-29s %-33s %s\n", "cipher", "backend", "row", "size", "kuai",
           "libgcrypt (ratio)", "OpenSSL EVP (ratio)");
}

void bench_ublock_paper(const bench_paper_opts *o)
{
    static const kuai_cipher members[3] = {KUAI_UBLOCK_128_128, KUAI_UBLOCK_128_256,
                                           KUAI_UBLOCK_256_256};
    printf("\nuBlock: the 2024 AVX2 paper's test matrix. Reference: 2024 AVX2 code, measured on "
           "Zen 3 at TSC 2.45 GHz (reference from another run, not a same-run peer; issue 14 "
           "and ../shared/bench.md), converted to cycles; ratio = reference cycles / kuai "
           "cycles (per call, or per byte for long rows); kuai cycles are this machine's TSC "
           "ticks; the default backend's key setups are kuai_key_init, another backend's "
           "kuai_key_init_backend (its lookup by name costs more)\n");
    printf("%-15s %-7s %-26s %-12s %-29s %-28s %s\n", "cipher", "backend", "row", "size", "kuai",
           "reference (2024 AVX2 code)", "ratio");
    for (int m = 0; m < 3; m++) {
        const char *cn = kuai_cipher_name(members[m]);
        if (o->cipher && strcmp(o->cipher, cn))
            continue;
        const char *names[32];
        size_t nb = kuai_backends(members[m], names, 32);
        for (size_t j = 0; j < nb && j < 32; j++) {
            if (o->backend ? strcmp(o->backend, names[j]) != 0 : j > 0)
                continue; /* default: the best backend only */
            bench_member(members[m], names[j], 0, o);
        }
    }
    /* Issue 14 item 4: the same short-message rows for SM4 and AES, so the
     * one-shot calls can be held against key setup + the public calls. */
    static const kuai_cipher others[3] = {KUAI_SM4, KUAI_AES_128, KUAI_AES_256};
    int header = 0;
    for (int m = 0; m < 3; m++) {
        const char *cn = kuai_cipher_name(others[m]);
        if (o->cipher && strcmp(o->cipher, cn))
            continue;
        const char *names[32];
        size_t nb = kuai_backends(others[m], names, 32);
        for (size_t j = 0; j < nb && j < 32; j++) {
            if (o->backend ? strcmp(o->backend, names[j]) != 0 : j > 0)
                continue;
            if (!header++)
                print_peer_header();
            bench_member(others[m], names[j], 1, o);
        }
    }
}
