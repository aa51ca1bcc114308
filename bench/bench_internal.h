/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of kuai_bench share (see bench.c for the benchmark as a
 * whole):
 *   bench.c           options, the AES-NI child process, kuai_bench_main
 *   bench_timing.c    clocks, TSC, warm-up and the A B A B measuring loop
 *   bench_peers.c     the peers (OpenSSL EVP, libgcrypt) and which row
 *                     each cipher is held against (peer_rows[])
 *   bench_check.c     the agreement checks run before a backend is timed
 *   bench_scenarios.c the single-thread rows of one (cipher, backend)
 *   bench_sweep.c     the ECB size sweep and ctr-parallel (threads)
 *   bench_report.c    the rows: table, child pipe, JSON
 * Each .c defines _POSIX_C_SOURCE before including this header.
 */
#ifndef KUAI_BENCH_INTERNAL_H
#define KUAI_BENCH_INTERNAL_H

#include "kuai.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* libgcrypt is a peer in kuai_bench only (CMakeLists.txt sets
 * KUAI_BENCH_GCRYPT for it): `kuai speed`, which links these files too,
 * compares with OpenSSL alone and does not link libgcrypt. */
#ifndef KUAI_BENCH_GCRYPT
#define KUAI_BENCH_GCRYPT 0
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

/* ---- Small utilities (bench.c) ---- */

/* How the program is called in messages ("kuai_bench", or "kuai speed"). */
extern const char *prog;

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void ossl_die(const char *what) __attribute__((noreturn));
void *xalloc(size_t n);
void fill(uint8_t *p, size_t n, uint64_t seed);

/* Any error from kuai ends the run: a figure measured on a failing call
 * would be a figure for doing nothing. Inline: the short rows call it a
 * few times per ~100 ns call. */
static inline void kcheck(int rc, const char *call, const char *cipher, const char *backend)
{
    if (rc != KUAI_OK)
        die("%s failed for %s/%s: %s (%d)", call, cipher, backend, kuai_strerror(rc), rc);
}

/* Thread counts the multi-threaded rows may use (--threads). */
#define MAX_THREADS 64

/* ---- Options (bench.c) ---- */

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
    int child_fd;        /* --child-rows FD (internal): run_aes_child, bench.c */
} opts;

int next_threads(int nt, int max);
int mode_wanted(const opts *o, const char *mode);

/* ---- Measurement (bench_timing.c) ---- */

/* One unit of work: a call (or a few calls) over `bytes` bytes. */
typedef struct job {
    void (*fn)(void *ctx);
    void *ctx;
    size_t bytes;
    uint64_t iters; /* calls per repetition, set by warm_up */
    double best_ns; /* per call, best repetition */
    double best_ticks;
} job;

double calibrate_tsc(void);
void cpu_model(char *buf, size_t n);
double loadavg1(void);
void measure(job *a, job *b, const opts *o);
double mbps_of(const job *j);

/* ---- Peers (bench_peers.c) ---- */

/* GCM rows: every call is a whole message with a 12-byte IV, 16 bytes of
 * AAD and a 16-byte tag, the same bytes for kuai and the peers. */
#define GCM_IV_LEN 12
#define GCM_AAD_LEN 16
#define GCM_TAG_LEN 16
extern uint8_t gcm_iv[GCM_IV_LEN], gcm_aad[GCM_AAD_LEN];

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

/* ---- OpenSSL 3 EVP ----
 * The AES-NI switch is read by libcrypto when it loads, so all we can do
 * is report what the environment asked for. */
#define OSSL_NO_AESNI_CAP "~0x200000200000000"

/* libgcrypt: initialised once in kuai_bench_main; its CPU feature list.
 * Without libgcrypt they do nothing / say so. */
void gcry_setup(void);
void gcry_hwflist(char *buf, size_t n);
#if KUAI_BENCH_GCRYPT
/* libgcrypt SM4 as an independent reference (bench_check.c) */
void gcry_sm4_ref(int mode, const uint8_t *key, const uint8_t *in, uint8_t *out, size_t len,
                  uint8_t *tag);
#endif

/* ---- What to measure (bench_peers.c) ---- */

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

/* Cipher c with its peers: those of its row in the peer table (per-cipher
 * facts, keyed by kuai name), none if it has no row. The ciphers measured
 * are kuai_ciphers()'s. */
bench_cipher bench_cipher_of(kuai_cipher c);
/* Whether c is one of the AES family (its kuai name is "aes-" + key bits). */
int bench_is_aes(kuai_cipher c);

/* ---- The scenarios (bench_scenarios.c, bench_sweep.c) ---- */

#define LONG_LEN (256u * 1024u) /* 2 Mbit, as in the uBlock paper */
#define GCM_SHORT_LEN 64u       /* gcm-enc-short: a small record's payload */
#define MAX_STREAMS 32

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
    kuai_gcm_ctx *gtmpl;       /* gcm-enc-short's template: its key's GHASH set-up */
    size_t n;                  /* streams (multi) or keys (short multi) in the current job */
    size_t len;                /* bytes per stream in the current job */
    /* peer of the current row, and its input (in, or &gct for gcm-dec) */
    const peer *pr;
    void *pstate;
    uint8_t **pin;
} ctx;

#define K(rc, call) kcheck((rc), (call), x->cname, x->backend)

void bench_backend(const bench_cipher *bc, const char *backend, const opts *o);
void bench_sweep(const bench_cipher *bc, const char *backend, const opts *o);

/* Never time a backend that computes something else (bench_check.c). */
void cross_check(kuai_cipher c, const char *cname, const char *backend);

/* ---- Rows and output (bench_report.c) ---- */

typedef struct row {
    char cipher[24], mode[40], backend[24], size[48], peer[80];
    size_t bytes; /* per call, all streams */
    int threads;
    double mbps, cpb, ns_call, peer_mbps, ratio; /* NAN: not applicable */
} row;

extern row *rows;
extern size_t nrows;
extern int row_fd; /* a child's pipe to the parent (--child-rows) */

/* A new zeroed row at the end of rows[]. */
row *row_new(void);
void print_header_row(void);
/* Turn measured jobs into a row, print it and keep it for the JSON. */
void add_row(const ctx *x, const char *mode, const job *a, const job *b, int short_msg,
             size_t streams, size_t len, int threads);
/* json_check before the run refuses a path the report cannot go to;
 * write_json after it writes the rows there. */
void json_check(const char *path);
void write_json(const char *path);

#endif
