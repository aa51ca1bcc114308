/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai_bench — the benchmark driver (see ../docs/benchmarks.md and the
 * measuring protocol in shared/bench.md).
 *
 * Every speed claim is a ratio against a peer measured side by side in this
 * process, on the same buffers, with kuai and peer repetitions alternating
 * (A B A B ...) so that drift of a shared 2-core VM hits both equally.
 * Absolute MB/s are printed too, but only the ratios carry over between
 * machines.
 *
 * Scenarios (the uBlock paper's four, per cipher, per backend; uBlock-128/128,
 * 128/256, 256/256 and SM4 with every backend kuai_backends() lists):
 *   long, single key : 256 KiB (2 Mbit) buffer; ECB enc/dec, CBC enc/dec, CTR
 *   GCM              : 256 KiB messages, 12-byte IV, 16 B AAD (128-bit blocks)
 *   long, multi-key  : n x 256 KiB streams, n keys, CBC in lockstep (n = 4, 8, 16)
 *   short, single key: key setup + ECB of 4 blocks (2 for 256-bit blocks)
 *   short, multi-key : n key setups + one block per key through *_multi
 * and the SM4 report's ECB table scaled down: 40 KB ... 40 MB texts on the
 * best backend, 1 and 2 threads (the only rows that are not single-thread).
 *
 * Peers: uBlock exists in no library, so it is held against OpenSSL
 * AES-128-CTR / AES-128-GCM; SM4 against libgcrypt doing the row's own mode
 * and direction (the peer its targets name), plus OpenSSL SM4-CTR on one
 * extra row. Adding a cipher is a line in `ciphers[]`; adding a peer
 * library is one more `peer_ops` and `peer` entries.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "kuai.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_ublock_paper.h"

/* libgcrypt is a peer in kuai_bench only (CMakeLists.txt sets
 * KUAI_BENCH_GCRYPT for it): `kuai speed`, which links this file too,
 * compares with OpenSSL alone and does not link libgcrypt. */
#ifndef KUAI_BENCH_GCRYPT
#define KUAI_BENCH_GCRYPT 0
#endif
#if KUAI_BENCH_GCRYPT
#include <gcrypt.h>
#endif
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */
/* ------------------------------------------------------------------ */

/* How the program is called in messages ("kuai_bench", or "kuai speed"). */
static const char *prog = "kuai_bench";

static void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* Any error from kuai ends the run: a figure measured on a failing call
 * would be a figure for doing nothing. */
static void kcheck(int rc, const char *call, const char *cipher, const char *backend)
{
    if (rc != KUAI_OK)
        die("%s failed for %s/%s: %s (%d)", call, cipher, backend, kuai_strerror(rc), rc);
}

static void ossl_die(const char *what)
{
    fflush(stdout);
    fprintf(stderr, "%s: OpenSSL %s failed\n", prog, what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* 64-byte aligned, as the protocol asks; rounded up because aligned_alloc
 * wants a multiple of the alignment. */
static void *xalloc(size_t n)
{
    size_t r = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, r ? r : 64);
    if (!p)
        die("out of memory (%zu bytes)", n);
    memset(p, 0, r ? r : 64);
    return p;
}

/* Deterministic filler (xorshift64): buffers hold non-trivial data and
 * every page is touched before timing starts. */
static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 32);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ticks(void)
{
#if HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

/* TSC ticks per second, measured against CLOCK_MONOTONIC over ~50 ms.
 * On this kind of VM the TSC runs at the nominal clock, not the current
 * core clock, so "cycles" below are nominal cycles. */
static double calibrate_tsc(void)
{
#if HAVE_TSC
    uint64_t t0 = now_ns(), c0 = ticks(), t1, c1;
    do {
        t1 = now_ns();
        c1 = ticks();
    } while (t1 - t0 < 50000000u);
    return (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
#else
    return 0.0;
#endif
}

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* x86 says "model name"; some arm64 kernels only give "CPU part". */
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ' || *v == '\t')
                    v++;
                v[strcspn(v, "\n")] = '\0';
                snprintf(buf, n, "%s", v);
            }
            break;
        }
    }
    fclose(f);
}

/* The 1-minute load average, or -1. Other processes on a 2-core VM slow
 * every row and halve the 2-thread ones; the header and footer say how
 * busy the machine was so a reader can discount a run. */
static double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* Thread counts the multi-threaded rows may use (--threads). */
#define MAX_THREADS 64

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

typedef struct opts {
    const char *json;    /* --json FILE */
    const char *backend; /* --backend NAME */
    const char *cipher;  /* --cipher NAME */
    int quick;           /* --quick */
    int no_sweep;        /* --no-sweep */
    int reps;            /* --reps N */
    const char *mode;    /* --mode M: rows whose mode starts with M */
    int threads;         /* --threads N: multi-threaded rows on 1 and N threads */
    double rep_ns;       /* target length of one repetition */
    int child_fd;        /* --child-rows FD (internal): see run_aes_child */
} opts;

/* The thread counts of multi-threaded rows: 1, then max. */
static int next_threads(int nt, int max)
{
    return nt < max ? max : max + 1;
}

static int mode_wanted(const opts *o, const char *mode)
{
    return !o->mode || !strncmp(mode, o->mode, strlen(o->mode));
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s [--json FILE] [--quick] [--backend NAME] [--cipher NAME] [--reps N]\n"
            "       [--mode M] [--threads N] [--no-sweep]\n",
            prog);
    fprintf(
        f, "  --json FILE     also write the rows as a JSON array of objects\n"
           "  --quick         fewer and shorter repetitions, 4-stream multi-key rows only,\n"
           "                  sweep up to 4 MB (smoke test)\n"
           "  --backend NAME  only this backend (ref, ssse3, avx2, avx512, gfni, vaes, aesni,\n"
           "                  ttable, ...)\n"
           "  --cipher NAME   only this cipher (ublock-128-128, ublock-128-256, ublock-256-256,\n"
           "                  sm4, aes-128, aes-192, aes-256)\n"
           "  --reps N        repetitions per row (default 7, quick 3); the best is reported\n"
           "  --no-sweep      skip the ECB size sweep (40 KB ... 40 MB, 1 and 2 threads)\n"
           "  --mode M        only rows whose mode starts with M (ecb, cbc, ctr, gcm, cbc-enc-mk,\n"
           "                  short, ecb-enc-sweep, ctr-parallel, paper (the uBlock paper's\n"
           "                  matrix: short/long, 1/4 keys, key setup, one-shot, crossovers)...)\n"
           "  --threads N     multi-threaded rows (ecb-enc-sweep, ctr-parallel) on 1 and N\n"
           "                  threads (default 2, at most 64)\n"
           "Run with OPENSSL_ia32cap=\"~0x200000200000000\" in the environment to measure the\n"
           "OpenSSL yardstick without AES-NI (it must be set before the process starts); the\n"
           "AES rows of the AES-NI/VAES backends then run in a child process without it, so\n"
           "that their OpenSSL peer has AES-NI.\n");
}

static void parse_opts(int argc, char **argv, opts *o)
{
    int reps = 0;
    memset(o, 0, sizeof *o);
    o->child_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (!strcmp(a, "--json") && has_val) {
            o->json = argv[++i];
        } else if (!strcmp(a, "--backend") && has_val) {
            o->backend = argv[++i];
        } else if (!strcmp(a, "--cipher") && has_val) {
            o->cipher = argv[++i];
        } else if (!strcmp(a, "--reps") && has_val) {
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (errno || *end || v < 1 || v > 1000)
                die("--reps wants a number from 1 to 1000, not '%s'", argv[i]);
            reps = (int)v;
        } else if (!strcmp(a, "--child-rows") && has_val) {
            o->child_fd = atoi(argv[++i]);
        } else if (!strcmp(a, "--mode") && has_val) {
            o->mode = argv[++i];
        } else if (!strcmp(a, "--threads") && has_val) {
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (errno || *end || v < 1 || v > MAX_THREADS)
                die("--threads wants a number from 1 to %d, not '%s'", MAX_THREADS, argv[i]);
            o->threads = (int)v;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--no-sweep")) {
            o->no_sweep = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            die("unknown or incomplete option '%s'", a);
        }
    }
    o->reps = reps ? reps : (o->quick ? 3 : 7);
    if (!o->threads)
        o->threads = 2;
    /* Long enough that clock and TSC granularity vanish, short enough that
     * the full run (~320 rows) fits in ~2.5 minutes on 2 cores. */
    o->rep_ns = o->quick ? 3e6 : 25e6;
}

/* ------------------------------------------------------------------ */
/* Measurement                                                         */
/* ------------------------------------------------------------------ */

/* One unit of work: a call (or a few calls) over `bytes` bytes. */
typedef struct job {
    void (*fn)(void *ctx);
    void *ctx;
    size_t bytes;
    uint64_t iters; /* calls per repetition, set by warm_up */
    double best_ns; /* per call, best repetition */
    double best_ticks;
} job;

static void run_rep(job *j)
{
    uint64_t t0 = now_ns(), c0 = ticks();
    for (uint64_t i = 0; i < j->iters; i++)
        j->fn(j->ctx);
    uint64_t c1 = ticks(), t1 = now_ns();
    double ns = (double)(t1 - t0) / (double)j->iters;
    if (ns < j->best_ns) {
        /* cycles come from the same repetition as the time */
        j->best_ns = ns;
        j->best_ticks = (double)(c1 - c0) / (double)j->iters;
    }
}

/* Warm-up doubles as calibration: grow the call count until one
 * repetition lasts about target_ns. Caches, branch predictors, page
 * tables and the CPU clock all settle on the way. */
static void warm_up(job *j, double target_ns)
{
    uint64_t n = 1;
    for (;;) {
        uint64_t t0 = now_ns();
        for (uint64_t i = 0; i < n; i++)
            j->fn(j->ctx);
        double dt = (double)(now_ns() - t0);
        if (dt >= target_ns / 4 || n >= (1u << 30)) {
            double want = (double)n * target_ns / (dt > 1 ? dt : 1);
            j->iters = want < 1 ? 1 : (uint64_t)want;
            break;
        }
        n *= dt * 16 < target_ns ? 8 : 2;
    }
    j->best_ns = INFINITY;
    j->best_ticks = 0;
}

/* A B A B ...: the peer (b, may be NULL) runs between kuai's repetitions. */
static void measure(job *a, job *b, const opts *o)
{
    warm_up(a, o->rep_ns);
    if (b)
        warm_up(b, o->rep_ns);
    for (int r = 0; r < o->reps; r++) {
        run_rep(a);
        if (b)
            run_rep(b);
    }
}

static double mbps_of(const job *j)
{
    return (double)j->bytes * 1e3 / j->best_ns; /* bytes/ns * 1e3 = 10^6 B/s */
}

/* ------------------------------------------------------------------ */
/* Peers (yardsticks from other libraries)                             */
/* ------------------------------------------------------------------ */

/* GCM rows: every call is a whole message with a 12-byte IV, 16 bytes of
 * AAD and a 16-byte tag, the same bytes for kuai and the peers. */
#define GCM_IV_LEN 12
#define GCM_AAD_LEN 16
#define GCM_TAG_LEN 16
static uint8_t gcm_iv[GCM_IV_LEN], gcm_aad[GCM_AAD_LEN];

/* A peer processes n buffers of len bytes each (n == 1 for single-stream
 * rows; for multi-stream rows it runs the same bytes stream after stream,
 * under one key). Non-AEAD peers keep their chaining value or counter
 * from call to call, as kuai's CBC and CTR rows do. */
typedef struct peer peer;
typedef struct peer_ops {
    void (*label)(const peer *p, char *buf, size_t n);
    void *(*open)(const peer *p);
    /* AEAD decryption only: make the tag that authenticates `in` (len
     * bytes) under the peer's key, IV and AAD, so that run() verifies. */
    void (*prepare)(void *state, const uint8_t *in, size_t len);
    void (*run)(void *state, const uint8_t *const *in, uint8_t *const *out, size_t n, size_t len);
    void (*close)(void *state);
} peer_ops;

struct peer {
    const peer_ops *ops;
    const char *algo; /* shown: "sm4-cbc-dec" */
    const char *impl; /* OpenSSL: EVP name ("AES-128-CTR") */
    int gcry_algo;    /* libgcrypt: GCRY_CIPHER_* */
    int gcry_mode;    /* libgcrypt: GCRY_CIPHER_MODE_* */
    int decrypt;      /* run the decryption direction */
    int aead;         /* GCM: IV, AAD and tag per call (a whole message) */
};

/* The key and IV every peer uses (peers are yardsticks: their output is
 * never compared with kuai's while timing). */
static void peer_key_iv(uint8_t key[64], uint8_t iv[32])
{
    fill(key, 64, 77);
    fill(iv, 32, 78);
}

/* ---- OpenSSL 3 EVP ----
 * The AES-NI switch is read by libcrypto when it loads, so all we can do
 * is report what the environment asked for. */
#define OSSL_NO_AESNI_CAP "~0x200000200000000"

typedef struct ossl_state {
    const peer *p;
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;  /* the peer's direction */
    EVP_CIPHER_CTX *ectx; /* AEAD decryption: an encrypting twin for prepare */
    uint8_t tag[GCM_TAG_LEN];
} ossl_state;

static void ossl_label(const peer *p, char *buf, size_t n)
{
    const char *cap = getenv("OPENSSL_ia32cap");
    int no_aesni = cap && !strcmp(cap, OSSL_NO_AESNI_CAP);
    /* the switch only concerns AES; OpenSSL's SM4 is plain C on x86 */
    int is_aes = !strncmp(p->impl, "AES", 3);
    snprintf(buf, n, "openssl-%u.%u %s%s", OPENSSL_version_major(), OPENSSL_version_minor(),
             p->algo, no_aesni && is_aes ? " (no AES-NI)" : "");
}

static EVP_CIPHER_CTX *ossl_ctx(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx)
        ossl_die("EVP_CIPHER_CTX_new");
    if (!EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL))
        ossl_die("EVP_CipherInit_ex2");
    /* the library pads nothing here: lengths are whole blocks */
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    return ctx;
}

static void *ossl_open(const peer *p)
{
    ossl_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->p = p;
    s->cipher = EVP_CIPHER_fetch(NULL, p->impl, NULL);
    if (!s->cipher)
        ossl_die("EVP_CIPHER_fetch");
    uint8_t key[64], iv[32];
    int kl = EVP_CIPHER_get_key_length(s->cipher);
    if (kl <= 0 || kl > (int)sizeof key)
        die("unexpected key length %d for %s", kl, p->impl);
    peer_key_iv(key, iv);
    if (p->aead) {
        /* GCM's default IV length is 12 bytes: the IV comes with each call */
        if (EVP_CIPHER_get_iv_length(s->cipher) != GCM_IV_LEN)
            die("OpenSSL %s: IV length %d, expected %d", p->impl,
                EVP_CIPHER_get_iv_length(s->cipher), GCM_IV_LEN);
        s->ctx = ossl_ctx(s->cipher, !p->decrypt, key, NULL);
        if (p->decrypt)
            s->ectx = ossl_ctx(s->cipher, 1, key, NULL);
    } else {
        s->ctx = ossl_ctx(s->cipher, !p->decrypt, key, iv);
    }
    return s;
}

/* One GCM message. tag is written (enc) or checked (dec, check != 0);
 * dec with check == 0 leaves the context mid-message, which the next
 * call's re-initialisation discards. */
static void ossl_gcm(EVP_CIPHER_CTX *ctx, int enc, int check, const uint8_t *in, uint8_t *out,
                     size_t len, uint8_t *tag)
{
    int outl = 0, finl = 0;
    if (!EVP_CipherInit_ex2(ctx, NULL, NULL, gcm_iv, enc, NULL))
        ossl_die("EVP_CipherInit_ex2 (GCM IV)");
    if (!enc && check && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, GCM_TAG_LEN, tag))
        ossl_die("EVP_CTRL_AEAD_SET_TAG");
    if (!EVP_CipherUpdate(ctx, NULL, &outl, gcm_aad, GCM_AAD_LEN))
        ossl_die("EVP_CipherUpdate (GCM AAD)");
    if (!EVP_CipherUpdate(ctx, out, &outl, in, (int)len) || (size_t)outl != len)
        ossl_die("EVP_CipherUpdate (GCM)");
    if (!enc && !check)
        return;
    if (!EVP_CipherFinal_ex(ctx, out + outl, &finl) || finl != 0)
        ossl_die(enc ? "EVP_EncryptFinal_ex (GCM)" : "EVP_DecryptFinal_ex (GCM tag check)");
    if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, GCM_TAG_LEN, tag))
        ossl_die("EVP_CTRL_AEAD_GET_TAG");
}

static void ossl_prepare(void *state, const uint8_t *in, size_t len)
{
    ossl_state *s = state;
    if (!s->p->aead || !s->p->decrypt)
        return;
    /* decrypt without the tag, re-encrypt: that gives in back, and its tag */
    uint8_t *pt = xalloc(len), *ct = xalloc(len);
    ossl_gcm(s->ctx, 0, 0, in, pt, len, NULL);
    ossl_gcm(s->ectx, 1, 1, pt, ct, len, s->tag);
    if (memcmp(ct, in, len) != 0)
        die("OpenSSL %s: GCM decrypt/encrypt round trip differs", s->p->impl);
    free(pt);
    free(ct);
}

static void ossl_run(void *state, const uint8_t *const *in, uint8_t *const *out, size_t n,
                     size_t len)
{
    ossl_state *s = state;
    for (size_t i = 0; i < n; i++) {
        if (s->p->aead) {
            ossl_gcm(s->ctx, !s->p->decrypt, 1, in[i], out[i], len, s->tag);
        } else {
            int outl = 0;
            if (!EVP_CipherUpdate(s->ctx, out[i], &outl, in[i], (int)len) || (size_t)outl != len)
                ossl_die("EVP_CipherUpdate");
        }
    }
}

static void ossl_close(void *state)
{
    ossl_state *s = state;
    EVP_CIPHER_CTX_free(s->ctx);
    EVP_CIPHER_CTX_free(s->ectx);
    EVP_CIPHER_free(s->cipher);
    free(s);
}

static const peer_ops ossl_ops = {ossl_label, ossl_open, ossl_prepare, ossl_run, ossl_close};

#if KUAI_BENCH_GCRYPT
/* ---- libgcrypt ----
 * Initialised once in main (gcry_check_version, then
 * GCRYCTL_INITIALIZATION_FINISHED); it picks its own AES-NI/AVX2/VAES
 * code from the CPU, and the header prints its hardware-feature list. */
static char gcry_ver[32]; /* "1.10", from gcry_check_version(NULL) */

static void gcry_die(const char *what, gcry_error_t e)
{
    die("libgcrypt %s failed: %s (%s)", what, gcry_strerror(e), gcry_strsource(e));
}

#define G(call, what)                                                                              \
    do {                                                                                           \
        gcry_error_t e_ = (call);                                                                  \
        if (e_)                                                                                    \
            gcry_die((what), e_);                                                                  \
    } while (0)

typedef struct gcry_state {
    const peer *p;
    gcry_cipher_hd_t h;
    uint8_t tag[GCM_TAG_LEN];
} gcry_state;

static void gcry_label(const peer *p, char *buf, size_t n)
{
    snprintf(buf, n, "libgcrypt-%s %s", gcry_ver, p->algo);
}

static void *gcry_open(const peer *p)
{
    gcry_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->p = p;
    G(gcry_cipher_open(&s->h, p->gcry_algo, p->gcry_mode, 0), "gcry_cipher_open");
    uint8_t key[64], iv[32];
    size_t kl = gcry_cipher_get_algo_keylen(p->gcry_algo);
    size_t bl = gcry_cipher_get_algo_blklen(p->gcry_algo);
    if (kl == 0 || kl > sizeof key || bl == 0 || bl > sizeof iv)
        die("libgcrypt: unexpected key/block length %zu/%zu for %s", kl, bl, p->algo);
    peer_key_iv(key, iv);
    G(gcry_cipher_setkey(s->h, key, kl), "gcry_cipher_setkey");
    if (p->gcry_mode == GCRY_CIPHER_MODE_CBC)
        G(gcry_cipher_setiv(s->h, iv, bl), "gcry_cipher_setiv");
    else if (p->gcry_mode == GCRY_CIPHER_MODE_CTR)
        G(gcry_cipher_setctr(s->h, iv, bl), "gcry_cipher_setctr");
    return s;
}

/* One GCM message; see ossl_gcm. */
static void gcry_gcm(gcry_cipher_hd_t h, int enc, int check, const uint8_t *in, uint8_t *out,
                     size_t len, uint8_t *tag)
{
    G(gcry_cipher_setiv(h, gcm_iv, GCM_IV_LEN), "gcry_cipher_setiv (GCM)");
    G(gcry_cipher_authenticate(h, gcm_aad, GCM_AAD_LEN), "gcry_cipher_authenticate");
    if (enc) {
        G(gcry_cipher_encrypt(h, out, len, in, len), "gcry_cipher_encrypt (GCM)");
        G(gcry_cipher_gettag(h, tag, GCM_TAG_LEN), "gcry_cipher_gettag");
    } else {
        G(gcry_cipher_decrypt(h, out, len, in, len), "gcry_cipher_decrypt (GCM)");
        if (check)
            G(gcry_cipher_checktag(h, tag, GCM_TAG_LEN), "gcry_cipher_checktag");
    }
}

static void gcry_prepare(void *state, const uint8_t *in, size_t len)
{
    gcry_state *s = state;
    if (!s->p->aead || !s->p->decrypt)
        return;
    uint8_t *pt = xalloc(len), *ct = xalloc(len);
    gcry_gcm(s->h, 0, 0, in, pt, len, NULL);
    gcry_gcm(s->h, 1, 1, pt, ct, len, s->tag);
    if (memcmp(ct, in, len) != 0)
        die("libgcrypt %s: GCM decrypt/encrypt round trip differs", s->p->algo);
    free(pt);
    free(ct);
}

static void gcry_run(void *state, const uint8_t *const *in, uint8_t *const *out, size_t n,
                     size_t len)
{
    gcry_state *s = state;
    for (size_t i = 0; i < n; i++) {
        if (s->p->aead)
            gcry_gcm(s->h, !s->p->decrypt, 1, in[i], out[i], len, s->tag);
        else if (s->p->decrypt)
            G(gcry_cipher_decrypt(s->h, out[i], len, in[i], len), "gcry_cipher_decrypt");
        else
            G(gcry_cipher_encrypt(s->h, out[i], len, in[i], len), "gcry_cipher_encrypt");
    }
}

static void gcry_close(void *state)
{
    gcry_state *s = state;
    gcry_cipher_close(s->h);
    free(s);
}

static const peer_ops gcry_ops = {gcry_label, gcry_open, gcry_prepare, gcry_run, gcry_close};

static void gcry_setup(void)
{
    /* gcry_check_version must be the first call into the library */
    const char *v = gcry_check_version(GCRYPT_VERSION);
    if (!v)
        die("libgcrypt is older than the headers (%s) this was built with", GCRYPT_VERSION);
    G(gcry_control(GCRYCTL_DISABLE_SECMEM, 0), "GCRYCTL_DISABLE_SECMEM");
    G(gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0), "GCRYCTL_INITIALIZATION_FINISHED");
    /* "1.10.1" -> "1.10", as the OpenSSL label shows "3.0" */
    unsigned maj = 0, min = 0;
    if (sscanf(gcry_check_version(NULL), "%u.%u", &maj, &min) != 2)
        die("cannot parse the libgcrypt version '%s'", gcry_check_version(NULL));
    snprintf(gcry_ver, sizeof gcry_ver, "%u.%u", maj, min);
}

/* libgcrypt's "hwflist:" line (the CPU features it uses), or "?". */
static void gcry_hwflist(char *buf, size_t n)
{
    char *txt = NULL;
    size_t tlen = 0;
    snprintf(buf, n, "?");
    FILE *f = open_memstream(&txt, &tlen);
    if (!f)
        return;
    gcry_control(GCRYCTL_PRINT_CONFIG, f);
    fclose(f);
    const char *h = txt ? strstr(txt, "hwflist:") : NULL;
    if (h) {
        h += strlen("hwflist:");
        size_t l = strcspn(h, "\n");
        /* "aesni:pclmul:...:" -> "aesni pclmul ..." */
        snprintf(buf, n, "%.*s", (int)(l < 400 ? l : 400), h);
        for (char *q = buf; *q; q++)
            if (*q == ':')
                *q = ' ';
        size_t bl = strlen(buf);
        while (bl && buf[bl - 1] == ' ')
            buf[--bl] = '\0';
    }
    free(txt);
}

#else
static void gcry_setup(void)
{
}
static void gcry_hwflist(char *buf, size_t n)
{
    snprintf(buf, n, "(libgcrypt not linked: kuai_bench has its rows)");
}
#endif

/* ---- The peers used ---- */

/* uBlock exists in no library installed here, so its yardstick is the
 * most common fast cipher of the same block size: AES-128-CTR (and
 * AES-128-GCM for the GCM rows), constant-time software AES when
 * OPENSSL_ia32cap turns AES-NI off. */
static const peer peer_ossl_aes128ctr = {
    .ops = &ossl_ops, .algo = "aes-128-ctr", .impl = "AES-128-CTR"};
static const peer peer_ossl_aes128gcm_enc = {
    .ops = &ossl_ops, .algo = "aes-128-gcm-enc", .impl = "AES-128-GCM", .aead = 1};
static const peer peer_ossl_aes128gcm_dec = {
    .ops = &ossl_ops, .algo = "aes-128-gcm-dec", .impl = "AES-128-GCM", .decrypt = 1, .aead = 1};
/* SM4: libgcrypt doing the row's own mode and direction (it has AES-NI /
 * AVX2 SM4 for CTR, CBC decryption and GCM), and OpenSSL's SM4-CTR (plain
 * C) as a second CTR peer. */
static const peer peer_ossl_sm4ctr = {.ops = &ossl_ops, .algo = "sm4-ctr", .impl = "SM4-CTR"};
#if KUAI_BENCH_GCRYPT
#define GSM4(name, mode, dec, ae)                                                                  \
    {                                                                                              \
        .ops = &gcry_ops, .algo = (name), .gcry_algo = GCRY_CIPHER_SM4,                            \
        .gcry_mode = GCRY_CIPHER_MODE_##mode, .decrypt = (dec), .aead = (ae)                       \
    }
static const peer peer_gcry_sm4ecb_enc = GSM4("sm4-ecb-enc", ECB, 0, 0);
static const peer peer_gcry_sm4ecb_dec = GSM4("sm4-ecb-dec", ECB, 1, 0);
static const peer peer_gcry_sm4cbc_enc = GSM4("sm4-cbc-enc", CBC, 0, 0);
static const peer peer_gcry_sm4cbc_dec = GSM4("sm4-cbc-dec", CBC, 1, 0);
static const peer peer_gcry_sm4ctr = GSM4("sm4-ctr", CTR, 0, 0);
static const peer peer_gcry_sm4gcm_enc = GSM4("sm4-gcm-enc", GCM, 0, 1);
static const peer peer_gcry_sm4gcm_dec = GSM4("sm4-gcm-dec", GCM, 1, 1);
#undef GSM4
#else
/* without libgcrypt: OpenSSL's SM4 (plain C on x86) in the row's own mode */
#define OSM4(name, d, dec)                                                                         \
    {                                                                                              \
        .ops = &ossl_ops, .algo = (name), .impl = (d), .decrypt = (dec)                            \
    }
static const peer peer_ossl_sm4[4] = {
    OSM4("sm4-ecb-enc", "SM4-ECB", 0), OSM4("sm4-ecb-dec", "SM4-ECB", 1),
    OSM4("sm4-cbc-enc", "SM4-CBC", 0), OSM4("sm4-cbc-dec", "SM4-CBC", 1)};
#undef OSM4
#endif

/* AES: OpenSSL EVP and libgcrypt, each in the row's own mode and direction,
 * indexed by row kind (Y_*; the sweep is ECB encryption). The OpenSSL peers
 * of the AES-NI/VAES backends run with OpenSSL's AES-NI on, whatever
 * OPENSSL_ia32cap says (see run_aes_child); the portable backends are held
 * against what the environment asked for (make bench: AES-NI off). */
#define OAES(bits, m, d, ae)                                                                       \
    {                                                                                              \
        .ops = &ossl_ops, .algo = "aes-" #bits "-" m, .impl = "AES-" #bits "-" d, .aead = ae,      \
        .decrypt = 0                                                                               \
    }
#define OAES_DEC(bits, m, d, ae)                                                                   \
    {                                                                                              \
        .ops = &ossl_ops, .algo = "aes-" #bits "-" m, .impl = "AES-" #bits "-" d, .aead = ae,      \
        .decrypt = 1                                                                               \
    }
#define GAES(bits, m, mode, dec, ae)                                                               \
    {                                                                                              \
        .ops = &gcry_ops, .algo = "aes-" #bits "-" m, .gcry_algo = GCRY_CIPHER_AES##bits,          \
        .gcry_mode = GCRY_CIPHER_MODE_##mode, .decrypt = (dec), .aead = (ae)                       \
    }
/* Y_ECB_ENC, Y_ECB_DEC, Y_CBC_ENC, Y_CBC_DEC, Y_CTR, Y_CTR_ALT, Y_GCM_ENC, Y_GCM_DEC, Y_SWEEP */
#define OSSL_AES_PEERS(bits)                                                                       \
    {                                                                                              \
        OAES(bits, "ecb-enc", "ECB", 0), OAES_DEC(bits, "ecb-dec", "ECB", 0),                      \
            OAES(bits, "cbc-enc", "CBC", 0), OAES_DEC(bits, "cbc-dec", "CBC", 0),                  \
            OAES(bits, "ctr", "CTR", 0), {0}, OAES(bits, "gcm-enc", "GCM", 1),                     \
            OAES_DEC(bits, "gcm-dec", "GCM", 1), OAES(bits, "ecb-enc", "ECB", 0)                   \
    }
#define GCRY_AES_PEERS(bits)                                                                       \
    {                                                                                              \
        GAES(bits, "ecb-enc", ECB, 0, 0), GAES(bits, "ecb-dec", ECB, 1, 0),                        \
            GAES(bits, "cbc-enc", CBC, 0, 0), GAES(bits, "cbc-dec", CBC, 1, 0),                    \
            GAES(bits, "ctr", CTR, 0, 0), {0}, GAES(bits, "gcm-enc", GCM, 0, 1),                   \
            GAES(bits, "gcm-dec", GCM, 1, 1), GAES(bits, "ecb-enc", ECB, 0, 0)                     \
    }
static const peer ossl_aes[3][9] = {OSSL_AES_PEERS(128), OSSL_AES_PEERS(192), OSSL_AES_PEERS(256)};
#if KUAI_BENCH_GCRYPT
static const peer gcry_aes[3][9] = {GCRY_AES_PEERS(128), GCRY_AES_PEERS(192), GCRY_AES_PEERS(256)};
#endif
#undef GAES
#undef GCRY_AES_PEERS
#undef OAES
#undef OAES_DEC
#undef OSSL_AES_PEERS

/* ------------------------------------------------------------------ */
/* What to measure                                                     */
/* ------------------------------------------------------------------ */

/* Which peer each kind of row is held against. */
enum {
    Y_ECB_ENC, /* ecb-enc */
    Y_ECB_DEC, /* ecb-dec */
    Y_CBC_ENC, /* cbc-enc, cbc-enc-mkN */
    Y_CBC_DEC, /* cbc-dec, cbc-dec-mkN */
    Y_CTR,     /* ctr */
    Y_CTR_ALT, /* ctr-vs-openssl (a second CTR peer; NULL: no such row) */
    Y_GCM_ENC, /* gcm-enc */
    Y_GCM_DEC, /* gcm-dec */
    Y_SWEEP,   /* ecb-enc-sweep */
    Y_N
};

typedef struct bench_cipher {
    kuai_cipher id;
    const peer *y[Y_N];  /* NULL: no yardstick for that row */
    const peer *y2[Y_N]; /* a second peer: the row again, side by side with it */
} bench_cipher;

#define UBLOCK_PEERS(gcm_enc, gcm_dec)                                                             \
    {&peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     NULL,                                                                                         \
     gcm_enc,                                                                                      \
     gcm_dec,                                                                                      \
     &peer_ossl_aes128ctr},                                                                        \
    {                                                                                              \
        0                                                                                          \
    }

static const bench_cipher ciphers[] = {
    {KUAI_UBLOCK_128_128, UBLOCK_PEERS(&peer_ossl_aes128gcm_enc, &peer_ossl_aes128gcm_dec)},
    {KUAI_UBLOCK_128_256, UBLOCK_PEERS(&peer_ossl_aes128gcm_enc, &peer_ossl_aes128gcm_dec)},
    /* 256-bit blocks: no GCM */
    {KUAI_UBLOCK_256_256, UBLOCK_PEERS(NULL, NULL)},
#if KUAI_BENCH_GCRYPT
    {KUAI_SM4,
     {&peer_gcry_sm4ecb_enc, &peer_gcry_sm4ecb_dec, &peer_gcry_sm4cbc_enc, &peer_gcry_sm4cbc_dec,
      &peer_gcry_sm4ctr, &peer_ossl_sm4ctr, &peer_gcry_sm4gcm_enc, &peer_gcry_sm4gcm_dec,
      &peer_gcry_sm4ecb_enc},
     {0}},
#else
    {KUAI_SM4,
     {&peer_ossl_sm4[0], &peer_ossl_sm4[1], &peer_ossl_sm4[2], &peer_ossl_sm4[3], &peer_ossl_sm4ctr,
      NULL, NULL, NULL, &peer_ossl_sm4[0]},
     {0}},
#endif
/* AES: OpenSSL in the row's own mode, then the same row against libgcrypt;
 * the sweep against libgcrypt (OPENSSL_ia32cap does not reach it). */
#if KUAI_BENCH_GCRYPT
#define AES_PEERS(i)                                                                               \
    {&ossl_aes[i][0], &ossl_aes[i][1], &ossl_aes[i][2], &ossl_aes[i][3], &ossl_aes[i][4], NULL,    \
     &ossl_aes[i][6], &ossl_aes[i][7], &gcry_aes[i][8]},                                           \
    {                                                                                              \
        &gcry_aes[i][0], &gcry_aes[i][1], &gcry_aes[i][2], &gcry_aes[i][3], &gcry_aes[i][4], NULL, \
            &gcry_aes[i][6], &gcry_aes[i][7], NULL                                                 \
    }
#else
#define AES_PEERS(i)                                                                               \
    {&ossl_aes[i][0], &ossl_aes[i][1], &ossl_aes[i][2], &ossl_aes[i][3], &ossl_aes[i][4], NULL,    \
     &ossl_aes[i][6], &ossl_aes[i][7], &ossl_aes[i][8]},                                           \
    {                                                                                              \
        0                                                                                          \
    }
#endif
    {KUAI_AES_128, AES_PEERS(0)},
    {KUAI_AES_192, AES_PEERS(1)},
    {KUAI_AES_256, AES_PEERS(2)},
#undef AES_PEERS
};
#undef UBLOCK_PEERS

#define LONG_LEN (256u * 1024u) /* 2 Mbit, as in the uBlock paper */
#define MAX_STREAMS 32
static const size_t stream_counts[] = {4, 8, 16, 32};

/* Everything a work function needs; one per (cipher, backend). */
typedef struct ctx {
    kuai_cipher c;
    const char *cname, *backend;
    size_t bs;         /* block size */
    size_t klen;       /* key length */
    uint8_t *keybytes; /* MAX_STREAMS keys, klen apart */
    kuai_key *keys;    /* MAX_STREAMS schedules */
    const kuai_key *keyp[MAX_STREAMS];
    uint8_t *in[MAX_STREAMS], *out[MAX_STREAMS], *iv[MAX_STREAMS];
    uint8_t *in_mem[MAX_STREAMS], *out_mem[MAX_STREAMS]; /* what free() takes */
    uint8_t *gct;              /* GCM ciphertext the gcm-dec rows decrypt */
    uint8_t gtag[GCM_TAG_LEN]; /* its tag */
    uint8_t etag[GCM_TAG_LEN]; /* gcm-enc rows' output tag */
    size_t n;                  /* streams (multi) or keys (short multi) in the current job */
    size_t len;                /* bytes per stream in the current job */
    /* peer of the current row, and its input (in, or &gct for gcm-dec) */
    const peer *pr;
    void *pstate;
    uint8_t **pin;
} ctx;

#define K(rc, call) kcheck((rc), (call), x->cname, x->backend)

static void w_ecb_enc(void *p)
{
    ctx *x = p;
    K(kuai_ecb_encrypt(&x->keys[0], x->in[0], x->out[0], x->len), "kuai_ecb_encrypt");
}
static void w_ecb_dec(void *p)
{
    ctx *x = p;
    K(kuai_ecb_decrypt(&x->keys[0], x->in[0], x->out[0], x->len), "kuai_ecb_decrypt");
}
static void w_cbc_enc(void *p)
{
    ctx *x = p;
    K(kuai_cbc_encrypt(&x->keys[0], x->iv[0], x->in[0], x->out[0], x->len), "kuai_cbc_encrypt");
}
static void w_cbc_dec(void *p)
{
    ctx *x = p;
    K(kuai_cbc_decrypt(&x->keys[0], x->iv[0], x->in[0], x->out[0], x->len), "kuai_cbc_decrypt");
}
static void w_ctr(void *p)
{
    ctx *x = p;
    K(kuai_ctr_crypt(&x->keys[0], x->iv[0], x->in[0], x->out[0], x->len), "kuai_ctr_crypt");
}
static void w_gcm_enc(void *p)
{
    ctx *x = p;
    K(kuai_gcm_encrypt(&x->keys[0], gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, x->in[0], x->out[0],
                       x->len, x->etag, GCM_TAG_LEN),
      "kuai_gcm_encrypt");
}
/* A tag mismatch would be KUAI_ERR_AUTH and end the run: gct and gtag are
 * a real message, encrypted before timing. */
static void w_gcm_dec(void *p)
{
    ctx *x = p;
    K(kuai_gcm_decrypt(&x->keys[0], gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, x->gct, x->out[0],
                       x->len, x->gtag, GCM_TAG_LEN),
      "kuai_gcm_decrypt");
}
static void w_cbc_enc_multi(void *p)
{
    ctx *x = p;
    K(kuai_cbc_encrypt_multi(x->keyp, x->iv, (const uint8_t *const *)x->in, x->out, x->n, x->len),
      "kuai_cbc_encrypt_multi");
}
static void w_cbc_dec_multi(void *p)
{
    ctx *x = p;
    K(kuai_cbc_decrypt_multi(x->keyp, x->iv, (const uint8_t *const *)x->in, x->out, x->n, x->len),
      "kuai_cbc_decrypt_multi");
}

/* Short messages: the key schedule is part of every call, as in the
 * paper's short-message tables, so its cost shows. */
static void w_short_enc(void *p)
{
    ctx *x = p;
    K(kuai_key_init_backend(&x->keys[0], x->c, x->keybytes, x->klen, x->backend),
      "kuai_key_init_backend");
    K(kuai_ecb_encrypt(&x->keys[0], x->in[0], x->out[0], x->len), "kuai_ecb_encrypt");
}
static void w_short_dec(void *p)
{
    ctx *x = p;
    K(kuai_key_init_backend(&x->keys[0], x->c, x->keybytes, x->klen, x->backend),
      "kuai_key_init_backend");
    K(kuai_ecb_decrypt(&x->keys[0], x->in[0], x->out[0], x->len), "kuai_ecb_decrypt");
}
static void w_short_mk_enc(void *p)
{
    ctx *x = p;
    for (size_t i = 0; i < x->n; i++)
        K(kuai_key_init_backend(&x->keys[i], x->c, x->keybytes + i * x->klen, x->klen, x->backend),
          "kuai_key_init_backend");
    K(kuai_ecb_encrypt_multi(x->keyp, (const uint8_t *const *)x->in, x->out, x->n, x->len),
      "kuai_ecb_encrypt_multi");
}
static void w_short_mk_dec(void *p)
{
    ctx *x = p;
    for (size_t i = 0; i < x->n; i++)
        K(kuai_key_init_backend(&x->keys[i], x->c, x->keybytes + i * x->klen, x->klen, x->backend),
          "kuai_key_init_backend");
    K(kuai_ecb_decrypt_multi(x->keyp, (const uint8_t *const *)x->in, x->out, x->n, x->len),
      "kuai_ecb_decrypt_multi");
}

static void w_peer(void *p)
{
    ctx *x = p;
    x->pr->ops->run(x->pstate, (const uint8_t *const *)x->pin, x->out, x->n, x->len);
}

/* ------------------------------------------------------------------ */
/* Rows and output                                                     */
/* ------------------------------------------------------------------ */

typedef struct row {
    char cipher[24], mode[24], backend[24], size[48], peer[80];
    size_t bytes; /* per call, all streams */
    int threads;
    double mbps, cpb, ns_call, peer_mbps, ratio; /* NAN: not applicable */
} row;

static row *rows;
static size_t nrows, caprows;
static int row_fd = -1; /* a child's pipe to the parent (--child-rows) */
static double tsc_hz;

#define TABLE_FMT "%-15s %-14s %-7s %-10s %3s %9s %8s %9s  %-39s %9s %7s\n"

static void print_header_row(void)
{
    printf(TABLE_FMT, "cipher", "mode", "backend", "size", "thr", "MB/s", "cyc/B", "ns/call",
           "peer", "peer MB/s", "ratio");
}

static void fmtnum(char *buf, size_t n, double v, int prec)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", prec, v);
}

static void print_row(const row *r)
{
    char thr[8], mb[24], cpb[24], ns[24], pmb[24], ra[24];
    snprintf(thr, sizeof thr, "%d", r->threads);
    fmtnum(mb, sizeof mb, r->mbps, 1);
    fmtnum(cpb, sizeof cpb, r->cpb, 2);
    fmtnum(ns, sizeof ns, r->ns_call, 1);
    fmtnum(pmb, sizeof pmb, r->peer_mbps, 1);
    /* ref backends sit far below the yardstick: keep small ratios readable */
    fmtnum(ra, sizeof ra, r->ratio, !isnan(r->ratio) && r->ratio < 0.1 ? 4 : 3);
    printf(TABLE_FMT, r->cipher, r->mode, r->backend, r->size, thr, mb, cpb, ns,
           r->peer[0] ? r->peer : "-", pmb, ra);
    fflush(stdout); /* rows appear as they are measured */
}

static void size_label(char *buf, size_t n, size_t streams, size_t len)
{
    char one[24];
    /* binary sizes for the paper's buffers, decimal for the SM4 report's
     * 320 Kbit ... 320 Mbit texts */
    if (len % 1024 == 0)
        snprintf(one, sizeof one, "%zuKiB", len / 1024);
    else if (len % 1000000 == 0)
        snprintf(one, sizeof one, "%zuMB", len / 1000000);
    else if (len % 1000 == 0)
        snprintf(one, sizeof one, "%zuKB", len / 1000);
    else
        snprintf(one, sizeof one, "%zuB", len);
    if (streams > 1)
        snprintf(buf, n, "%zux%s", streams, one);
    else
        snprintf(buf, n, "%s", one);
}

/* Turn measured jobs into a row, print it and keep it for the JSON. */
static void add_row(const ctx *x, const char *mode, const job *a, const job *b, int short_msg,
                    size_t streams, size_t len, int threads)
{
    if (nrows == caprows) {
        caprows = caprows ? caprows * 2 : 64;
        rows = realloc(rows, caprows * sizeof *rows);
        if (!rows)
            die("out of memory");
    }
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->cipher, sizeof r->cipher, "%s", x->cname);
    snprintf(r->mode, sizeof r->mode, "%s", mode);
    snprintf(r->backend, sizeof r->backend, "%s", x->backend);
    size_label(r->size, sizeof r->size, streams, len);
    r->bytes = a->bytes;
    r->threads = threads;
    r->mbps = mbps_of(a);
    r->cpb = HAVE_TSC ? a->best_ticks / (double)a->bytes : NAN;
    r->ns_call = short_msg ? a->best_ns : NAN;
    r->peer_mbps = r->ratio = NAN;
    if (b) {
        x->pr->ops->label(x->pr, r->peer, sizeof r->peer);
        r->peer_mbps = mbps_of(b);
        r->ratio = r->mbps / r->peer_mbps;
    }
    print_row(r);
    if (row_fd >= 0) {
        /* A child hands its rows to the parent's table and JSON: same
         * binary, so the struct goes as it is. */
        const char *p = (const char *)r;
        for (size_t left = sizeof *r; left;) {
            ssize_t w = write(row_fd, p, left);
            if (w <= 0)
                die("writing a row to the parent: %s", strerror(errno));
            p += w;
            left -= (size_t)w;
        }
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v, int prec)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.*f", prec, v);
}

static void write_json(FILE *f, const char *path)
{
    fputs("[\n", f);
    for (size_t i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fputs("  {\"cipher\": ", f);
        json_str(f, r->cipher);
        fputs(", \"mode\": ", f);
        json_str(f, r->mode);
        fputs(", \"backend\": ", f);
        json_str(f, r->backend);
        fprintf(f, ", \"size\": %zu, \"threads\": %d, \"mbps\": ", r->bytes, r->threads);
        json_num(f, r->mbps, 2);
        fputs(", \"cpb\": ", f);
        json_num(f, r->cpb, 3);
        fputs(", \"ns_per_call\": ", f);
        json_num(f, r->ns_call, 1);
        fputs(", \"peer\": ", f);
        if (r->peer[0])
            json_str(f, r->peer);
        else
            fputs("null", f);
        fputs(", \"peer_mbps\": ", f);
        json_num(f, r->peer_mbps, 2);
        fputs(", \"ratio\": ", f);
        json_num(f, r->ratio, 4);
        fputs(i + 1 < nrows ? "},\n" : "}\n", f);
    }
    fputs("]\n", f);
    if (fclose(f) != 0)
        die("error writing %s: %s", path, strerror(errno));
}

/* ------------------------------------------------------------------ */
/* Sanity: never time a backend that computes something else           */
/* ------------------------------------------------------------------ */

/* Each backend must agree with the portable "ref" one on a few KiB of
 * ECB, CBC (both directions), CTR and multi-key CBC and ECB; then GCM is
 * checked (gcm_check). The test suite does the real checking; this only
 * keeps a broken build from producing impressive numbers. */
static void ref_check(kuai_cipher c, const char *cname, const char *backend)
{
    enum { LEN = 4096 };
    size_t klen = kuai_key_size(c);
    uint8_t *kb = xalloc(klen * 4), *in = xalloc(LEN * 4), *a = xalloc(LEN * 4),
            *b = xalloc(LEN * 4);
    kuai_key *kr = xalloc(sizeof(kuai_key) * 4), *kx = xalloc(sizeof(kuai_key) * 4);
    uint8_t iva[4][KUAI_MAX_BLOCK], ivb[4][KUAI_MAX_BLOCK];
    fill(kb, klen * 4, 5);
    fill(in, LEN * 4, 6);
    for (int i = 0; i < 4; i++) {
        kcheck(kuai_key_init_backend(&kr[i], c, kb + i * klen, klen, "ref"),
               "kuai_key_init_backend", cname, "ref");
        kcheck(kuai_key_init_backend(&kx[i], c, kb + i * klen, klen, backend),
               "kuai_key_init_backend", cname, backend);
    }
    const char *what = NULL;
#define CMP(name)                                                                                  \
    do {                                                                                           \
        if (!what && memcmp(a, b, LEN) != 0)                                                       \
            what = (name);                                                                         \
    } while (0)
    kcheck(kuai_ecb_encrypt(&kr[0], in, a, LEN), "kuai_ecb_encrypt", cname, "ref");
    kcheck(kuai_ecb_encrypt(&kx[0], in, b, LEN), "kuai_ecb_encrypt", cname, backend);
    CMP("ECB encryption");
    kcheck(kuai_ecb_decrypt(&kr[0], in, a, LEN), "kuai_ecb_decrypt", cname, "ref");
    kcheck(kuai_ecb_decrypt(&kx[0], in, b, LEN), "kuai_ecb_decrypt", cname, backend);
    CMP("ECB decryption");
    memset(iva, 7, sizeof iva);
    memset(ivb, 7, sizeof ivb);
    kcheck(kuai_cbc_encrypt(&kr[0], iva[0], in, a, LEN), "kuai_cbc_encrypt", cname, "ref");
    kcheck(kuai_cbc_encrypt(&kx[0], ivb[0], in, b, LEN), "kuai_cbc_encrypt", cname, backend);
    CMP("CBC encryption");
    kcheck(kuai_cbc_decrypt(&kr[0], iva[0], in, a, LEN), "kuai_cbc_decrypt", cname, "ref");
    kcheck(kuai_cbc_decrypt(&kx[0], ivb[0], in, b, LEN), "kuai_cbc_decrypt", cname, backend);
    CMP("CBC decryption");
    kcheck(kuai_ctr_crypt(&kr[0], iva[0], in, a, LEN), "kuai_ctr_crypt", cname, "ref");
    kcheck(kuai_ctr_crypt(&kx[0], ivb[0], in, b, LEN), "kuai_ctr_crypt", cname, backend);
    CMP("CTR");
    {
        const kuai_key *pr[4] = {&kr[0], &kr[1], &kr[2], &kr[3]};
        const kuai_key *px[4] = {&kx[0], &kx[1], &kx[2], &kx[3]};
        const uint8_t *ins[4] = {in, in + LEN, in + 2 * LEN, in + 3 * LEN};
        uint8_t *oa[4] = {a, a + LEN, a + 2 * LEN, a + 3 * LEN};
        uint8_t *ob[4] = {b, b + LEN, b + 2 * LEN, b + 3 * LEN};
        uint8_t *ia[4] = {iva[0], iva[1], iva[2], iva[3]};
        uint8_t *ib[4] = {ivb[0], ivb[1], ivb[2], ivb[3]};
        memset(iva, 9, sizeof iva);
        memset(ivb, 9, sizeof ivb);
        kcheck(kuai_cbc_encrypt_multi(pr, ia, ins, oa, 4, LEN), "kuai_cbc_encrypt_multi", cname,
               "ref");
        kcheck(kuai_cbc_encrypt_multi(px, ib, ins, ob, 4, LEN), "kuai_cbc_encrypt_multi", cname,
               backend);
        if (!what && memcmp(a, b, 4 * LEN) != 0)
            what = "multi-key CBC encryption";
        kcheck(kuai_cbc_decrypt_multi(pr, ia, ins, oa, 4, LEN), "kuai_cbc_decrypt_multi", cname,
               "ref");
        kcheck(kuai_cbc_decrypt_multi(px, ib, ins, ob, 4, LEN), "kuai_cbc_decrypt_multi", cname,
               backend);
        if (!what && memcmp(a, b, 4 * LEN) != 0)
            what = "multi-key CBC decryption";
        /* one block per key: the backend's own multi-key kernel, which the
         * short multi-key rows time (long streams bypass it) */
        size_t bs = kuai_block_size(c);
        kcheck(kuai_ecb_encrypt_multi(pr, ins, oa, 4, bs), "kuai_ecb_encrypt_multi", cname, "ref");
        kcheck(kuai_ecb_encrypt_multi(px, ins, ob, 4, bs), "kuai_ecb_encrypt_multi", cname,
               backend);
        for (int i = 0; i < 4 && !what; i++)
            if (memcmp(oa[i], ob[i], bs) != 0)
                what = "multi-key ECB encryption";
        kcheck(kuai_ecb_decrypt_multi(pr, ins, oa, 4, bs), "kuai_ecb_decrypt_multi", cname, "ref");
        kcheck(kuai_ecb_decrypt_multi(px, ins, ob, 4, bs), "kuai_ecb_decrypt_multi", cname,
               backend);
        for (int i = 0; i < 4 && !what; i++)
            if (memcmp(oa[i], ob[i], bs) != 0)
                what = "multi-key ECB decryption";
    }
#undef CMP
    if (what)
        die("backend '%s' disagrees with 'ref' on %s for %s: refusing to benchmark it "
            "(run kuai_test)",
            backend, what, cname);
    for (int i = 0; i < 4; i++) {
        kuai_key_wipe(&kr[i]);
        kuai_key_wipe(&kx[i]);
    }
    free(kb), free(in), free(a), free(b), free(kr), free(kx);
}

#if KUAI_BENCH_GCRYPT
/* libgcrypt SM4 in `mode` over len bytes under key (16 bytes), as an
 * independent reference for kuai's SM4: ECB, or one GCM message with the
 * benchmark's IV and AAD (tag written). */
static void gcry_sm4_ref(int mode, const uint8_t *key, const uint8_t *in, uint8_t *out, size_t len,
                         uint8_t *tag)
{
    gcry_cipher_hd_t h;
    G(gcry_cipher_open(&h, GCRY_CIPHER_SM4, mode, 0), "gcry_cipher_open (check)");
    G(gcry_cipher_setkey(h, key, 16), "gcry_cipher_setkey (check)");
    if (mode == GCRY_CIPHER_MODE_GCM)
        gcry_gcm(h, 1, 1, in, out, len, tag);
    else
        G(gcry_cipher_encrypt(h, out, len, in, len), "gcry_cipher_encrypt (check)");
    gcry_cipher_close(h);
}

#endif

/* GCM on a 128-bit-block cipher: the backend must give ref's ciphertext
 * and tag, decrypt its own message back, and refuse a wrong tag. For SM4
 * both ECB and GCM must also match libgcrypt byte for byte on the same
 * key, IV and AAD (an implementation that shares no code with kuai), so
 * the rows below time the right function against the right peer. The
 * length is not a multiple of 16, to cover the partial last block. */
static void gcm_check(kuai_cipher c, const char *cname, const char *backend)
{
    enum { LEN = 4096 + 7 };
    size_t klen = kuai_key_size(c);
    uint8_t *kb = xalloc(klen), *in = xalloc(LEN), *a = xalloc(LEN), *b = xalloc(LEN);
    uint8_t ta[GCM_TAG_LEN], tb[GCM_TAG_LEN];
    kuai_key *kr = xalloc(sizeof(kuai_key)), *kx = xalloc(sizeof(kuai_key));
    const char *what = NULL;
    fill(kb, klen, 11);
    fill(in, LEN, 12);
    kcheck(kuai_key_init_backend(kr, c, kb, klen, "ref"), "kuai_key_init_backend", cname, "ref");
    kcheck(kuai_key_init_backend(kx, c, kb, klen, backend), "kuai_key_init_backend", cname,
           backend);
    kcheck(
        kuai_gcm_encrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, in, a, LEN, ta, GCM_TAG_LEN),
        "kuai_gcm_encrypt", cname, backend);
    if (strcmp(backend, "ref")) {
        kcheck(kuai_gcm_encrypt(kr, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, in, b, LEN, tb,
                                GCM_TAG_LEN),
               "kuai_gcm_encrypt", cname, "ref");
        if (memcmp(a, b, LEN) || memcmp(ta, tb, GCM_TAG_LEN))
            what = "GCM encryption (vs ref)";
    }
#if KUAI_BENCH_GCRYPT
    if (!what && c == KUAI_SM4) {
        gcry_sm4_ref(GCRY_CIPHER_MODE_GCM, kb, in, b, LEN, tb);
        if (memcmp(a, b, LEN) != 0)
            what = "SM4-GCM ciphertext (vs libgcrypt)";
        else if (memcmp(ta, tb, GCM_TAG_LEN) != 0)
            what = "SM4-GCM tag (vs libgcrypt)";
    }
    if (!what && c == KUAI_SM4) {
        gcry_sm4_ref(GCRY_CIPHER_MODE_ECB, kb, in, b, 4096, NULL);
        kcheck(kuai_ecb_encrypt(kx, in, a, 4096), "kuai_ecb_encrypt", cname, backend);
        if (memcmp(a, b, 4096) != 0)
            what = "SM4-ECB encryption (vs libgcrypt)";
    }
#endif
    if (!what) {
        kcheck(kuai_gcm_encrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, in, a, LEN, ta,
                                GCM_TAG_LEN),
               "kuai_gcm_encrypt", cname, backend);
        kcheck(kuai_gcm_decrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, a, b, LEN, ta,
                                GCM_TAG_LEN),
               "kuai_gcm_decrypt (own message)", cname, backend);
        if (memcmp(b, in, LEN) != 0)
            what = "GCM decryption (round trip)";
        ta[3] ^= 0x10;
        if (!what && kuai_gcm_decrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, a, b, LEN, ta,
                                      GCM_TAG_LEN) != KUAI_ERR_AUTH)
            what = "GCM decryption with a wrong tag (not KUAI_ERR_AUTH)";
    }
    if (what)
        die("backend '%s' of %s fails the check on %s: refusing to benchmark it (run kuai_test)",
            backend, cname, what);
    kuai_key_wipe(kr);
    kuai_key_wipe(kx);
    free(kb), free(in), free(a), free(b), free(kr), free(kx);
}

static void cross_check(kuai_cipher c, const char *cname, const char *backend)
{
    if (strcmp(backend, "ref"))
        ref_check(c, cname, backend);
    if (kuai_block_size(c) == 16)
        gcm_check(c, cname, backend);
}

/* ------------------------------------------------------------------ */
/* The scenarios                                                       */
/* ------------------------------------------------------------------ */

/* Measure kuai (a) and, when the row has one, the peer in `slot` (b) side
 * by side, and add the row; then the same for the row's second peer. */
static void measure_row(ctx *x, void *const *pstates, const bench_cipher *bc, int slot,
                        const char *mode, job *a, int short_msg, size_t streams, const opts *o)
{
    if (!mode_wanted(o, mode))
        return;
    for (int second = 0; second <= 1; second++) {
        const peer *const *ys = second ? bc->y2 : bc->y;
        x->pr = slot >= 0 ? ys[slot] : NULL;
        if (second && !x->pr)
            break;
        x->pstate = slot >= 0 ? pstates[second * Y_N + slot] : NULL;
        job b = {.fn = w_peer, .ctx = x, .bytes = a->bytes};
        measure(a, x->pr ? &b : NULL, o);
        add_row(x, mode, a, x->pr ? &b : NULL, short_msg, streams, x->len, 1);
    }
}

static void bench_backend(const bench_cipher *bc, const char *backend, const opts *o)
{
    ctx X, *x = &X;
    memset(x, 0, sizeof *x);
    x->c = bc->id;
    x->cname = kuai_cipher_name(bc->id);
    x->backend = backend;
    x->bs = kuai_block_size(bc->id);
    x->klen = kuai_key_size(bc->id);
    x->keybytes = xalloc(x->klen * MAX_STREAMS);
    x->keys = xalloc(sizeof(kuai_key) * MAX_STREAMS);
    fill(x->keybytes, x->klen * MAX_STREAMS, 1);
    for (size_t i = 0; i < MAX_STREAMS; i++) {
        K(kuai_key_init_backend(&x->keys[i], x->c, x->keybytes + i * x->klen, x->klen, backend),
          "kuai_key_init_backend");
        x->keyp[i] = &x->keys[i];
        /* Each stream's buffers start at their own cache-line offset in
         * the page (buffer k at line 5k mod 64, all 64 distinct): big
         * allocations all start at the same page offset, and 16 streams in
         * and out at one offset overflow an 8-way L1 set on every block,
         * which takes 35 % off 8-stream AES-NI CBC encryption (3.6 against
         * 5.7 GB/s on Zen 1). Real streams' buffers fall where they may;
         * the cbc-enc-mk rows measure the cipher, not that coincidence.
         * Every buffer stays 64-byte aligned. */
        x->in_mem[i] = xalloc(LONG_LEN + 4096);
        x->out_mem[i] = xalloc(LONG_LEN + 4096);
        x->in[i] = x->in_mem[i] + 64 * ((5 * (2 * i)) % 64);
        x->out[i] = x->out_mem[i] + 64 * ((5 * (2 * i + 1)) % 64);
        x->iv[i] = xalloc(KUAI_MAX_BLOCK);
        fill(x->in[i], LONG_LEN, 100 + i);
        fill(x->iv[i], KUAI_MAX_BLOCK, 200 + i);
    }
    x->pin = x->in;
    /* one peer context per kind of row, each with its own chaining state */
    void *pstates[2 * Y_N] = {0};
    for (int y = 0; y < Y_N; y++) {
        if (bc->y[y])
            pstates[y] = bc->y[y]->ops->open(bc->y[y]);
        if (bc->y2[y])
            pstates[Y_N + y] = bc->y2[y]->ops->open(bc->y2[y]);
    }

    job a;
    /* long message, single key */
    static const struct {
        const char *mode;
        void (*fn)(void *);
        int slot;
    } long_modes[] = {
        {"ecb-enc", w_ecb_enc, Y_ECB_ENC},
        {"ecb-dec", w_ecb_dec, Y_ECB_DEC},
        {"cbc-enc", w_cbc_enc, Y_CBC_ENC},
        {"cbc-dec", w_cbc_dec, Y_CBC_DEC},
        {"ctr", w_ctr, Y_CTR},
        {"ctr-vs-openssl", w_ctr, Y_CTR_ALT},
    };
    for (size_t m = 0; m < sizeof long_modes / sizeof long_modes[0]; m++) {
        if ((long_modes[m].slot == Y_CTR_ALT && !bc->y[Y_CTR_ALT]) ||
            !mode_wanted(o, long_modes[m].mode))
            continue;
        x->n = 1;
        x->len = LONG_LEN;
        a = (job){.fn = long_modes[m].fn, .ctx = x, .bytes = LONG_LEN};
        measure_row(x, pstates, bc, long_modes[m].slot, long_modes[m].mode, &a, 0, 1, o);
    }

    /* GCM (128-bit blocks): whole 256 KiB messages, 12-byte IV, 16 B AAD */
    if (x->bs == 16 && (mode_wanted(o, "gcm-enc") || mode_wanted(o, "gcm-dec"))) {
        x->n = 1;
        x->len = LONG_LEN;
        a = (job){.fn = w_gcm_enc, .ctx = x, .bytes = LONG_LEN};
        measure_row(x, pstates, bc, Y_GCM_ENC, "gcm-enc", &a, 0, 1, o);
        /* the message gcm-dec decrypts, kuai's and the peer's alike */
        x->gct = xalloc(LONG_LEN);
        K(kuai_gcm_encrypt(&x->keys[0], gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, x->in[0], x->gct,
                           LONG_LEN, x->gtag, GCM_TAG_LEN),
          "kuai_gcm_encrypt");
        if (bc->y[Y_GCM_DEC])
            bc->y[Y_GCM_DEC]->ops->prepare(pstates[Y_GCM_DEC], x->gct, LONG_LEN);
        if (bc->y2[Y_GCM_DEC])
            bc->y2[Y_GCM_DEC]->ops->prepare(pstates[Y_N + Y_GCM_DEC], x->gct, LONG_LEN);
        x->pin = &x->gct;
        a = (job){.fn = w_gcm_dec, .ctx = x, .bytes = LONG_LEN};
        measure_row(x, pstates, bc, Y_GCM_DEC, "gcm-dec", &a, 0, 1, o);
        x->pin = x->in;
        free(x->gct);
        x->gct = NULL;
    }

    /* long message, multi-key: n streams x 256 KiB, MB/s over all of them;
     * --quick keeps the 4- and 8-stream rows only */
    for (size_t s = 0; s < sizeof stream_counts / sizeof stream_counts[0]; s++) {
        static const struct {
            const char *mode;
            void (*fn)(void *);
            int slot;
        } mk_modes[] = {{"cbc-enc-mk", w_cbc_enc_multi, Y_CBC_ENC},
                        {"cbc-dec-mk", w_cbc_dec_multi, Y_CBC_DEC}};
        if (o->quick && stream_counts[s] > 8)
            break;
        for (size_t m = 0; m < 2; m++) {
            char mode[24];
            x->n = stream_counts[s];
            x->len = LONG_LEN;
            snprintf(mode, sizeof mode, "%s%zu", mk_modes[m].mode, x->n);
            if (!mode_wanted(o, mode))
                continue;
            a = (job){.fn = mk_modes[m].fn, .ctx = x, .bytes = LONG_LEN * x->n};
            measure_row(x, pstates, bc, mk_modes[m].slot, mode, &a, 0, x->n, o);
        }
    }

    /* short message: 64 bytes, i.e. 4 blocks of 16 or 2 of 32; no peer
     * (an EVP or gcry call this short would mostly time context setup) */
    size_t nblk = x->bs == 32 ? 2 : 4;
    x->n = 1;
    x->len = nblk * x->bs;
    a = (job){.fn = w_short_enc, .ctx = x, .bytes = x->len};
    measure_row(x, pstates, bc, -1, "short-enc", &a, 1, 1, o);
    a = (job){.fn = w_short_dec, .ctx = x, .bytes = x->len};
    measure_row(x, pstates, bc, -1, "short-dec", &a, 1, 1, o);

    /* short message, multi-key: one block under each of nblk keys */
    x->n = nblk;
    x->len = x->bs;
    a = (job){.fn = w_short_mk_enc, .ctx = x, .bytes = x->n * x->len};
    measure_row(x, pstates, bc, -1, "short-mk-enc", &a, 1, x->n, o);
    a = (job){.fn = w_short_mk_dec, .ctx = x, .bytes = x->n * x->len};
    measure_row(x, pstates, bc, -1, "short-mk-dec", &a, 1, x->n, o);

    for (int y = 0; y < Y_N; y++) {
        if (pstates[y])
            bc->y[y]->ops->close(pstates[y]);
        if (pstates[Y_N + y])
            bc->y2[y]->ops->close(pstates[Y_N + y]);
    }
    for (size_t i = 0; i < MAX_STREAMS; i++) {
        kuai_key_wipe(&x->keys[i]);
        free(x->in_mem[i]);
        free(x->out_mem[i]);
        free(x->iv[i]);
    }
    free(x->keys);
    free(x->keybytes);
}

/* ------------------------------------------------------------------ */
/* ECB size sweep, 1 and 2 threads (the SM4 report's table)            */
/* ------------------------------------------------------------------ */

/* The SM4 report encrypts 320 Kbit ... 3.2 Gbit texts in ECB, single and
 * multi-threaded. Scaled to this machine: 40 KB ... 40 MB, 1 and 2
 * threads, best backend only.
 *
 * Worker threads are started for a multi-threaded row only and wait for
 * work by spinning: a futex or barrier wake-up on these VMs costs tens of
 * microseconds, more than a whole 40 KB call, and would time the
 * scheduler rather than the cipher. A waiter that has spun for a while
 * yields, though: when another process holds the second core, both of
 * our threads share one, and a pure spinner would burn a whole time slice
 * (~8 ms, seen here) before the thread it waits for could run. Workers
 * are stopped before the next single-thread row so no spinning core
 * disturbs it. */
static const size_t sweep_sizes[] = {40000, 400000, 4000000, 40000000};

typedef struct pool {
    int nthreads;
    pthread_t tid[MAX_THREADS];
    atomic_uint gen;  /* bumped once per call: "go" */
    atomic_uint done; /* workers finished with this call */
    atomic_int quit;
    void (*fn)(void *arg, int t);
    void *arg;
} pool;

typedef struct worker_arg {
    pool *p;
    int t;
} worker_arg;

static worker_arg worker_args[MAX_THREADS];

static inline void cpu_relax(void)
{
#if HAVE_TSC
    _mm_pause();
#endif
}

/* One step of a wait loop: pause while the wait is short, then give the
 * core away (see above). */
static inline void wait_step(unsigned *spins)
{
    if (++*spins < 1024)
        cpu_relax();
    else
        sched_yield();
}

static void *worker(void *wa)
{
    worker_arg *w = wa;
    pool *p = w->p;
    unsigned seen = 0; /* gen starts at 0 before this thread exists */
    for (;;) {
        unsigned g, spins = 0;
        while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->quit))
            wait_step(&spins);
        if (atomic_load(&p->quit))
            return NULL;
        seen = g;
        p->fn(p->arg, w->t);
        atomic_fetch_add(&p->done, 1);
    }
}

static void pool_start(pool *p, int nthreads)
{
    p->nthreads = nthreads;
    atomic_init(&p->gen, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->quit, 0);
    for (int t = 1; t < nthreads; t++) {
        worker_args[t] = (worker_arg){p, t};
        if (pthread_create(&p->tid[t], NULL, worker, &worker_args[t]))
            die("pthread_create failed");
    }
}

/* The calling thread takes share 0, so n threads means n busy cores. The
 * seq_cst atomics publish fn/arg to the workers and their output back. */
static void pool_run(pool *p, void (*fn)(void *, int), void *arg)
{
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->done, 0);
    atomic_fetch_add(&p->gen, 1);
    fn(arg, 0);
    unsigned spins = 0;
    while (atomic_load(&p->done) != (unsigned)(p->nthreads - 1))
        wait_step(&spins);
}

static void pool_stop(pool *p)
{
    atomic_store(&p->quit, 1);
    for (int t = 1; t < p->nthreads; t++)
        pthread_join(p->tid[t], NULL);
}

typedef struct sweep {
    ctx *x;
    pool *pl;
    int nt;
    size_t len;
    uint8_t *in, *out;
    void *pstate[MAX_THREADS]; /* one peer context per thread */
} sweep;

/* Thread t's contiguous slice, whole blocks; the last takes the rest. */
static void slice(const sweep *sw, int t, size_t *off, size_t *n)
{
    size_t blocks = sw->len / sw->x->bs, per = blocks / (size_t)sw->nt;
    size_t first = per * (size_t)t;
    *off = first * sw->x->bs;
    *n = (t == sw->nt - 1 ? blocks - first : per) * sw->x->bs;
}

static void sweep_kuai_part(void *p, int t)
{
    sweep *sw = p;
    ctx *x = sw->x;
    size_t off, n;
    slice(sw, t, &off, &n);
    K(kuai_ecb_encrypt(&x->keys[0], sw->in + off, sw->out + off, n), "kuai_ecb_encrypt");
}

static void sweep_peer_part(void *p, int t)
{
    sweep *sw = p;
    size_t off, n;
    slice(sw, t, &off, &n);
    const uint8_t *in = sw->in + off;
    uint8_t *out = sw->out + off;
    sw->x->pr->ops->run(sw->pstate[t], &in, &out, 1, n);
}

static void w_sweep_kuai(void *p)
{
    sweep *sw = p;
    if (sw->nt == 1)
        sweep_kuai_part(sw, 0);
    else
        pool_run(sw->pl, sweep_kuai_part, sw);
}

static void w_sweep_peer(void *p)
{
    sweep *sw = p;
    if (sw->nt == 1)
        sweep_peer_part(sw, 0);
    else
        pool_run(sw->pl, sweep_peer_part, sw);
}

/* The library's own multi-threaded call (kuai_ctr_crypt_parallel, its
 * pthread pool), as a caller gets it: 64 MiB of CTR on 1 and 2 threads. */
#define PAR_LEN ((size_t)64 << 20)
typedef struct par_job {
    const ctx *x;
    const kuai_key *k;
    uint8_t ctr[KUAI_MAX_BLOCK];
    const uint8_t *in;
    uint8_t *out;
    size_t len;
    unsigned threads;
} par_job;

static void w_ctr_parallel(void *p)
{
    par_job *pj = p;
    const ctx *x = pj->x;
    K(kuai_ctr_crypt_parallel(pj->k, pj->ctr, pj->in, pj->out, pj->len, pj->threads),
      "kuai_ctr_crypt_parallel");
}

static void bench_ctr_parallel(ctx *x, const uint8_t *in, uint8_t *out, size_t len, const opts *o)
{
    par_job pj = {.x = x, .k = &x->keys[0], .in = in, .out = out, .len = len};
    if (!mode_wanted(o, "ctr-parallel"))
        return;
    for (int nt = 1; nt <= o->threads; nt = next_threads(nt, o->threads)) {
        pj.threads = (unsigned)nt;
        job a = {.fn = w_ctr_parallel, .ctx = &pj, .bytes = len};
        measure(&a, NULL, o);
        add_row(x, "ctr-parallel", &a, NULL, 0, 1, len, (int)nt);
    }
}

static void bench_sweep(const bench_cipher *bc, const char *backend, const opts *o)
{
    pool pl_, *pl = &pl_;
    ctx X, *x = &X;
    memset(x, 0, sizeof *x);
    x->c = bc->id;
    x->cname = kuai_cipher_name(bc->id);
    x->backend = backend;
    x->bs = kuai_block_size(bc->id);
    x->klen = kuai_key_size(bc->id);
    x->keybytes = xalloc(x->klen);
    x->keys = xalloc(sizeof(kuai_key));
    fill(x->keybytes, x->klen, 3);
    K(kuai_key_init_backend(&x->keys[0], x->c, x->keybytes, x->klen, backend),
      "kuai_key_init_backend");
    x->pr = bc->y[Y_SWEEP];

    size_t nsizes = sizeof sweep_sizes / sizeof sweep_sizes[0];
    size_t maxlen = sweep_sizes[nsizes - 1];
    if (o->quick)
        maxlen = 4000000; /* keep --quick a smoke test */
    size_t parlen = o->quick ? maxlen : PAR_LEN;
    if (parlen > maxlen)
        maxlen = parlen;
    sweep sw = {.x = x, .pl = pl};
    sw.in = xalloc(maxlen);
    sw.out = xalloc(maxlen);
    fill(sw.in, maxlen, 300);
    for (int t = 0; t < MAX_THREADS; t++)
        if (x->pr)
            sw.pstate[t] = x->pr->ops->open(x->pr);

    double last_mbps = 0, last_peer_mbps = 0;
    for (size_t si = 0; si < nsizes && sweep_sizes[si] <= maxlen && mode_wanted(o, "ecb-enc-sweep");
         si++) {
        size_t len = sweep_sizes[si];
        if (len % x->bs)
            continue;
        /* A slow backend would spend minutes on the largest text: skip a
         * size whose single call would last over half a second (a second
         * for the peer: libgcrypt 1.10's SM4-ECB is plain C, ~110 MB/s,
         * and its 40 MB row is worth having). */
        if (last_mbps > 0 && (double)len / (last_mbps * 1e6) > 0.5) {
            printf("  (%s %s: ECB sweep stops before %zu bytes, one call would take > 0.5 s)\n",
                   x->cname, backend, len);
            break;
        }
        if (last_peer_mbps > 0 && (double)len / (last_peer_mbps * 1e6) > 1.0) {
            printf("  (%s %s: ECB sweep stops before %zu bytes, one peer call would take > 1 s)\n",
                   x->cname, backend, len);
            break;
        }
        for (int nt = 1; nt <= o->threads; nt = next_threads(nt, o->threads)) {
            char mode[24];
            sw.nt = nt;
            sw.len = len;
            job a = {.fn = w_sweep_kuai, .ctx = &sw, .bytes = len};
            job b = {.fn = w_sweep_peer, .ctx = &sw, .bytes = len};
            if (nt > 1)
                pool_start(pl, nt);
            measure(&a, x->pr ? &b : NULL, o);
            if (nt > 1)
                pool_stop(pl);
            snprintf(mode, sizeof mode, "ecb-enc-sweep");
            add_row(x, mode, &a, x->pr ? &b : NULL, 0, 1, len, nt);
            if (nt == 1) {
                last_mbps = mbps_of(&a);
                last_peer_mbps = x->pr ? mbps_of(&b) : 0;
            }
        }
    }

    x->pr = NULL;
    bench_ctr_parallel(x, sw.in, sw.out, parlen, o);

    for (int t = 0; t < MAX_THREADS; t++)
        if (sw.pstate[t])
            bc->y[Y_SWEEP]->ops->close(sw.pstate[t]);
    kuai_key_wipe(&x->keys[0]);
    free(sw.in);
    free(sw.out);
    free(x->keys);
    free(x->keybytes);
}

/* ------------------------------------------------------------------ */
/* OpenSSL with AES-NI for the AES hardware backends                    */
/* ------------------------------------------------------------------ */

/* make bench sets OPENSSL_ia32cap to turn OpenSSL's AES-NI off, so that
 * uBlock and the portable AES backends meet constant-time software AES.
 * libcrypto reads the variable once, when it loads, so an AES-NI or VAES
 * backend cannot get an AES-NI OpenSSL in this process: its rows are
 * measured by this same binary re-executed without the variable
 * (--child-rows), which prints them and passes them back through a pipe
 * for the JSON. kuai and the peer still alternate inside that one process. */
static int uses_aes_instructions(kuai_cipher c, const char *backend)
{
    int aes = c == KUAI_AES_128 || c == KUAI_AES_192 || c == KUAI_AES_256;
    return aes && (!strcmp(backend, "aesni") || !strcmp(backend, "vaes"));
}

static int ossl_aesni_off(void)
{
    const char *cap = getenv("OPENSSL_ia32cap");
    return cap && *cap;
}

static void run_aes_child(const char *cname, const char *backend, const opts *o)
{
    int fds[2];
    if (pipe(fds))
        die("pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        unsetenv("OPENSSL_ia32cap");
        char fd[16], reps[16];
        snprintf(fd, sizeof fd, "%d", fds[1]);
        snprintf(reps, sizeof reps, "%d", o->reps);
        /* The same program: kuai_bench, or the kuai tool's speed command. */
        char *args[16];
        int na = 0;
        if (!strcmp(prog, "kuai speed")) {
            args[na++] = "kuai";
            args[na++] = "speed";
        } else {
            args[na++] = "kuai_bench";
        }
        char *rest[] = {"--child-rows",  fd,           "--cipher", (char *)cname, "--backend",
                        (char *)backend, "--no-sweep", "--reps",   reps};
        for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
            args[na++] = rest[i];
        if (o->mode) {
            args[na++] = "--mode";
            args[na++] = (char *)o->mode;
        }
        if (o->quick)
            args[na++] = "--quick";
        args[na] = NULL;
        execv("/proc/self/exe", args);
        fprintf(stderr, "kuai_bench: exec /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    row r;
    for (;;) {
        size_t got = 0;
        while (got < sizeof r) {
            ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (got < sizeof r)
            break;
        if (nrows == caprows) {
            caprows = caprows ? caprows * 2 : 64;
            rows = realloc(rows, caprows * sizeof *rows);
            if (!rows)
                die("out of memory");
        }
        rows[nrows++] = r;
    }
    close(fds[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the child measuring %s/%s with OpenSSL's AES-NI failed", cname, backend);
}

int kuai_bench_main(const char *name, int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--modes-ext"))
        return kuai_bench_modes_ext(name, argc - 1, argv + 1);
    opts o;
    prog = name;
    parse_opts(argc, argv, &o);
    gcry_setup();
    fill(gcm_iv, sizeof gcm_iv, 90);
    fill(gcm_aad, sizeof gcm_aad, 91);

    /* Validate the filters before spending minutes measuring. */
    int cipher_found = !o.cipher, backend_found = !o.backend;
    for (size_t i = 0; i < sizeof ciphers / sizeof ciphers[0]; i++) {
        const char *cn = kuai_cipher_name(ciphers[i].id);
        if (!cn)
            die("kuai_cipher_name(%d) returned NULL", (int)ciphers[i].id);
        if (o.cipher && !strcmp(o.cipher, cn)) {
            cipher_found = 1;
        }
        if (o.backend && (!o.cipher || !strcmp(o.cipher, cn))) {
            const char *names[32];
            size_t nb = kuai_backends(ciphers[i].id, names, 32);
            for (size_t j = 0; j < nb && j < 32; j++)
                if (!strcmp(names[j], o.backend))
                    backend_found = 1;
        }
    }
    if (!cipher_found) {
        fprintf(stderr, "%s: unknown cipher '%s'; known:", prog, o.cipher);
        for (size_t i = 0; i < sizeof ciphers / sizeof ciphers[0]; i++)
            fprintf(stderr, " %s", kuai_cipher_name(ciphers[i].id));
        fputc('\n', stderr);
        return 2;
    }
    if (!backend_found) {
        fprintf(stderr, "%s: backend '%s' is unknown or not usable on this CPU%s%s\n", prog,
                o.backend, o.cipher ? " for " : "", o.cipher ? o.cipher : "");
        return 2;
    }

    /* Open the output now: a typo in the path should cost a second, not
     * the whole run. */
    FILE *json = NULL;
    if (o.json && !(json = fopen(o.json, "w")))
        die("cannot write %s: %s", o.json, strerror(errno));

    char model[256];
    cpu_model(model, sizeof model);
    tsc_hz = calibrate_tsc();
    const char *cap = getenv("OPENSSL_ia32cap");

    row_fd = o.child_fd;
    char hwf[512];
    gcry_hwflist(hwf, sizeof hwf);
    if (row_fd < 0) {
#if KUAI_BENCH_GCRYPT
        printf("%s: kuai %s, %s, libgcrypt %s\n", prog, KUAI_VERSION,
               OpenSSL_version(OPENSSL_VERSION), gcry_check_version(NULL));
#else
        printf("%s: kuai %s, %s (libgcrypt peers: kuai_bench only)\n", prog, KUAI_VERSION,
               OpenSSL_version(OPENSSL_VERSION));
#endif
        printf("cpu: %s (%ld online)\n", model, sysconf(_SC_NPROCESSORS_ONLN));
        if (HAVE_TSC)
            printf(
                "cycles: rdtsc ticks, TSC measured at %.3f GHz against CLOCK_MONOTONIC over 50 ms "
                "(nominal clock, not the current core clock)\n",
                tsc_hz / 1e9);
        else
            printf("cycles: not measured on this architecture (null in JSON)\n");
        printf(
            "timing: best of %d repetitions of ~%.0f ms after warm-up, kuai and peer alternating; "
            "MB/s = 10^6 bytes/s; single thread except ecb-enc-sweep and ctr-parallel rows (thr); "
            "64-byte aligned buffers, the streams' at distinct cache-line offsets in the "
            "page%s\n",
            o.reps, o.rep_ns / 1e6, o.quick ? " (--quick)" : "");
        printf("load average (1 min) at start: %.2f\n", loadavg1());
        printf("OPENSSL_ia32cap: %s%s\n", cap ? cap : "(unset)",
               cap && !strcmp(cap, OSSL_NO_AESNI_CAP) ? " (OpenSSL AES-NI paths off)" : "");
#if KUAI_BENCH_GCRYPT
        printf("libgcrypt hwflist: %s\n", hwf);
        printf(
            "peers: uBlock vs OpenSSL AES-128-CTR (gcm rows: AES-128-GCM); SM4 vs libgcrypt in the "
            "row's own mode and direction, ctr-vs-openssl vs OpenSSL SM4-CTR; gcm rows: 12-byte "
            "IV, %d B AAD, %d B tag per message\n",
            GCM_AAD_LEN, GCM_TAG_LEN);
        printf(
            "peers: AES vs OpenSSL EVP in the row's own mode, then the same row vs libgcrypt; the "
            "aesni/vaes rows run in a child process where OpenSSL has AES-NI (OPENSSL_ia32cap "
            "removed), the portable AES backends meet the OpenSSL this process got\n\n");
#else
        (void)hwf;
        printf("peers: uBlock vs OpenSSL AES-128-CTR (gcm rows: AES-128-GCM); SM4 and AES vs "
               "OpenSSL EVP in the row's own mode (SM4 GCM rows: none); gcm rows: 12-byte IV, %d B "
               "AAD, %d B tag per message; libgcrypt rows: kuai_bench\n\n",
               GCM_AAD_LEN, GCM_TAG_LEN);
#endif
        print_header_row();
    }

    for (size_t i = 0; i < sizeof ciphers / sizeof ciphers[0]; i++) {
        const bench_cipher *bc = &ciphers[i];
        const char *cn = kuai_cipher_name(bc->id);
        if (o.cipher && strcmp(o.cipher, cn))
            continue;
        const char *names[32];
        size_t nb = kuai_backends(bc->id, names, 32);
        if (nb == 0)
            die("kuai_backends reports no backend for %s", cn);
        if (nb > 32)
            nb = 32;
        const char *best = NULL; /* first = best for this CPU */
        for (size_t j = 0; j < nb; j++) {
            if (o.backend && strcmp(o.backend, names[j]))
                continue;
            if (row_fd < 0 && ossl_aesni_off() && uses_aes_instructions(bc->id, names[j])) {
                run_aes_child(cn, names[j], &o);
            } else {
                cross_check(bc->id, cn, names[j]);
                bench_backend(bc, names[j], &o);
            }
            if (!best)
                best = names[j];
        }
        if (best && !o.no_sweep)
            bench_sweep(bc, best, &o);
    }

    if (row_fd >= 0)
        return 0;
    if (mode_wanted(&o, "paper")) {
        /* many short repetitions: the best of them is the one the machine
         * left alone (these rows run in microseconds) */
        bench_paper_opts po = {o.backend, o.cipher, o.quick ? 5 : 31, o.quick, 2e6};
        bench_ublock_paper(&po);
    }
    printf("\nload average (1 min) at end: %.2f (this run alone adds about 1)\n", loadavg1());
    if (json) {
        write_json(json, o.json);
        printf("wrote %zu rows to %s\n", nrows, o.json);
    }
    free(rows);
    return 0;
}
