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

static void row(bp *x, const char *what, const char *size, void (*fn)(bp *), size_t bytes,
                int is_short, ref3 ref, const bench_paper_opts *o)
{
    double ns, tk;
    bp_measure(x, fn, o, &ns, &tk);
    int m = x->c == KUAI_UBLOCK_128_128 ? 0 : x->c == KUAI_UBLOCK_128_256 ? 1 : 2;
    /* the reference is uBlock's: SM4 and AES rows stand alone */
    double r = x->c <= KUAI_UBLOCK_256_256 ? ref.v[m] : 0;
    char kuai_s[64], ref_s[64], ratio_s[16];
    double mbps = (double)bytes * 1e3 / ns, cpb = tk / (double)bytes;
    if (is_short) {
        snprintf(kuai_s, sizeof kuai_s, "%8.1f ns %8.0f cyc", ns, tk);
        if (r > 0) {
            snprintf(ref_s, sizeof ref_s, "%6.0f ns %6.0f cyc", r, r * REF_GHZ);
            snprintf(ratio_s, sizeof ratio_s, "%.2fx", r * REF_GHZ / tk);
        }
    } else {
        snprintf(kuai_s, sizeof kuai_s, "%7.1f MB/s %6.2f c/B", mbps, cpb);
        if (r > 0) {
            snprintf(ref_s, sizeof ref_s, "%5.0f MB/s %6.2f c/B", r, REF_GHZ * 1e3 / r);
            snprintf(ratio_s, sizeof ratio_s, "%.2fx", REF_GHZ * 1e3 / r / cpb);
        }
    }
    if (r <= 0) {
        snprintf(ref_s, sizeof ref_s, "-");
        snprintf(ratio_s, sizeof ratio_s, "-");
    }
    printf("%-15s %-7s %-26s %-12s %-29s %-28s %s\n", kuai_cipher_name(x->c), x->backend, what,
           size, kuai_s, ref_s, ratio_s);
    fflush(stdout);
}

/* Issue 14's figures of the paper's code (Zen 3, TSC 2.45 GHz): ns/call
 * for short rows, MB/s for long ones. Long ECB: ../shared/bench.md. */
static const ref3 R_SHORT1 = {{150, 199, 297}}, R_SHORTK = {{185, 242, 294}},
                  R_KEYOUT = {{118, 162, 221}}, R_SETUP = {{35, 40, 71}}, R_CBC1 = {{127, 93, 133}},
                  R_CBCK = {{503, 375, 263}}, R_ECB1 = {{560, 410, 300}}, R_NONE = {{0, 0, 0}};

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
    char sz[32], szk[32];
    size_t sbytes = x->sblocks * x->bs;
    snprintf(sz, sizeof sz, "%zu blocks", x->sblocks);
    snprintf(szk, sizeof szk, "%zux1 block", x->nkeys);

    x->n = 1;
    x->len = sbytes;
    row(x, "short enc, 1 key", sz, w_short_enc, sbytes, 1, R_SHORT1, o);
    row(x, "short dec, 1 key", sz, w_short_dec, sbytes, 1, R_NONE, o);
    x->n = x->nkeys;
    x->len = x->bs;
    row(x, "short enc, keys", szk, w_short_enc, x->nkeys * x->bs, 1, R_SHORTK, o);
    row(x, "short dec, keys", szk, w_short_dec, x->nkeys * x->bs, 1, R_NONE, o);
    row(x, "short enc, keys 1 by 1", szk, w_short_enc_1by1, x->nkeys * x->bs, 1, R_SHORTK, o);
    row(x, "short dec, keys 1 by 1", szk, w_short_dec_1by1, x->nkeys * x->bs, 1, R_NONE, o);
    x->n = 1;
    x->len = sbytes;
    row(x, "one-shot enc, 1 key", sz, w_oneshot_enc, sbytes, 1, R_SHORT1, o);
    row(x, "one-shot dec, 1 key", sz, w_oneshot_dec, sbytes, 1, R_NONE, o);
    x->n = x->nkeys;
    x->len = x->bs;
    row(x, "one-shot enc, keys", szk, w_oneshot_enc, x->nkeys * x->bs, 1, R_SHORTK, o);
    row(x, "one-shot dec, keys", szk, w_oneshot_dec, x->nkeys * x->bs, 1, R_NONE, o);
    x->n = 1;
    x->len = sbytes;
    row(x, "key outside, enc", sz, w_ecb_enc, sbytes, 1, R_KEYOUT, o);
    row(x, "key outside, dec", sz, w_ecb_dec, sbytes, 1, R_NONE, o);
    row(x, "key setup alone", "-", w_setup, x->klen, 1, R_SETUP, o);
    bp_check(kuai_key_init_backend(&x->keys[0], c, x->keyb[0], x->klen, backend), "key");

    /* crossover rows: the public ECB call at sizes around the switch */
    if (!o->quick && !short_only) {
        static const size_t nbl[] = {1, 2, 3, 4, 6, 8, 12, 15, 16, 24, 32, 48, 64};
        for (size_t i = 0; i < sizeof nbl / sizeof nbl[0]; i++) {
            char s[32];
            snprintf(s, sizeof s, "%zu blocks", nbl[i]);
            x->len = nbl[i] * x->bs;
            row(x, "ecb enc (crossover)", s, w_ecb_enc, x->len, 1, R_NONE, o);
        }
    }

    if (short_only)
        goto done;
    x->len = LONG;
    snprintf(sz, sizeof sz, "256KiB");
    snprintf(szk, sizeof szk, "%zux256KiB", x->nkeys);
    x->n = 1;
    row(x, "long ECB enc, 1 key", sz, w_ecb_enc, LONG, 0, R_ECB1, o);
    row(x, "long ECB dec, 1 key", sz, w_ecb_dec, LONG, 0, R_NONE, o);
    x->n = NSTREAM;
    row(x, "long ECB enc, 4 keys", "4x256KiB", w_ecb_enc, NSTREAM * LONG, 0, R_NONE, o);
    x->n = 1;
    row(x, "long CBC enc, 1 chain", sz, w_cbc_enc, LONG, 0, R_CBC1, o);
    row(x, "long CBC dec, 1 chain", sz, w_cbc_dec, LONG, 0, R_NONE, o);
    x->n = x->nkeys;
    row(x, "long CBC enc, chains", szk, w_cbc_enc, x->nkeys * LONG, 0, R_CBCK, o);
    row(x, "long CBC dec, chains", szk, w_cbc_dec, x->nkeys * LONG, 0, R_NONE, o);

done:
    for (size_t i = 0; i < NSTREAM; i++) {
        kuai_key_wipe(&x->keys[i]);
        free(x->mem[2 * i]);
        free(x->mem[2 * i + 1]);
        free(x->iv[i]);
    }
    free(x->keys);
    free(x->keybytes);
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
                printf("\nSM4 and AES, the same short-message rows (no reference)\n");
            bench_member(others[m], names[j], 1, o);
        }
    }
}
