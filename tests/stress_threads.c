/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai_stress: the library's thread-safety promises (include/kuai.h,
 * "Thread safety") under load, for ThreadSanitizer runs (make test-tsan)
 * and by hand. Public API only. Every result is compared with the same
 * work done by one thread on another key set up from the same bytes, so
 * a run checks results even without a sanitizer; exit status 0 = all equal.
 *
 *   1. Threads doing their first-ever key setups at once (the registry's
 *      build races).
 *   2. Per cipher and backend: threads sharing ONE fresh const key (and a
 *      fresh tweak key) calling every mode, short and bulk, from the first
 *      call on (uBlock's lazily built masks race), while another thread
 *      sets up and wipes keys of its own.
 *   3. *_parallel calls from several threads at once on one fresh key,
 *      while another thread forks; each child uses the library (a parallel
 *      call and a key setup) and must get the same bytes.
 *
 *   kuai_stress [ROUNDS]     (default 1; each round repeats 2 and 3)
 *
 * Under TSan: TSAN_OPTIONS=die_after_fork=0 (a child here starts the
 * thread pool again, which TSan refuses after a multi-threaded fork). Its
 * children then run TSan's own machinery after such a fork, which can hang
 * (google/sanitizers#453): a child that has not finished in 60 s is
 * reported as failed (status 14, SIGALRM) rather than left hanging.
 */
#define _POSIX_C_SOURCE 200809L

#include "kuai.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NT 4          /* threads sharing a key */
#define MAXOUT 400000 /* one workload's recorded outputs */

static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&fail_lock);
    failures++;
    printf("FAIL ");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    fflush(stdout);
    pthread_mutex_unlock(&fail_lock);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

/* ---- the workload: every mode, short and bulk -------------------------- */

/* A record of outputs and return codes, compared byte for byte. */
typedef struct rec {
    uint8_t *p;
    size_t n;
} rec;

static void put(rec *r, const void *p, size_t n)
{
    if (r->n + n > MAXOUT) {
        fprintf(stderr, "kuai_stress: MAXOUT too small\n");
        exit(2);
    }
    memcpy(r->p + r->n, p, n);
    r->n += n;
}

static void put_rc(rec *r, int rc)
{
    put(r, &rc, sizeof rc);
}

static const uint8_t *g_in; /* shared input, read-only */
#define IN_LEN (300 * 32 + 64)

enum { N_OPS = 14 };
/* Lengths in blocks: 1-3 take the short paths, 64 and 257 the bulk ones. */
static const size_t op_blocks[] = {1, 3, 64, 257};

/* Op i of the workload on key k (and tweak key tk). */
static void run_op(int op, const kuai_key *k, const kuai_key *tk, size_t bs, rec *r)
{
    uint8_t *out = malloc(IN_LEN), iv[KUAI_MAX_BLOCK], tag[16];
    for (size_t li = 0; li < sizeof op_blocks / sizeof op_blocks[0]; li++) {
        size_t len = op_blocks[li] * bs, odd = len + 5;
        memcpy(iv, g_in + 7, KUAI_MAX_BLOCK);
        int rc;
        switch (op) {
        case 0:
            rc = kuai_ecb_encrypt(k, g_in, out, len);
            break;
        case 1:
            rc = kuai_ecb_decrypt(k, g_in, out, len);
            break;
        case 2:
            rc = kuai_cbc_encrypt(k, iv, g_in, out, len);
            break;
        case 3:
            rc = kuai_cbc_decrypt(k, iv, g_in, out, len);
            break;
        case 4:
            rc = kuai_ctr_crypt(k, iv, g_in, out, odd);
            len = odd;
            break;
        case 5:
            rc = kuai_cfb_encrypt(k, iv, g_in, out, odd);
            len = odd;
            break;
        case 6:
            rc = kuai_cfb_decrypt(k, iv, g_in, out, odd);
            len = odd;
            break;
        case 7:
            rc = kuai_ofb_crypt(k, iv, g_in, out, odd);
            len = odd;
            break;
        case 8:
            rc = kuai_gcm_encrypt(k, iv, 12, g_in + 100, 20, g_in, out, odd, tag, 16);
            len = odd;
            break;
        case 9:
            rc = kuai_ccm_encrypt(k, iv, 12, g_in + 100, 20, g_in, out, odd, tag, 16);
            len = odd;
            break;
        case 10:
            memset(out, 0, len);
            rc = kuai_cmac(k, g_in, odd, out, 16);
            break;
        case 11:
            rc = kuai_xts_encrypt(k, tk, iv, g_in, out, odd, KUAI_XTS_IEEE1619);
            len = odd;
            break;
        case 12: {
            const kuai_key *keys[3] = {k, tk, k};
            const uint8_t *ins[3] = {g_in, g_in + 1, g_in + 2};
            uint8_t *o3 = malloc(3 * len), *outs[3] = {o3, o3 + len, o3 + 2 * len};
            rc = kuai_ecb_encrypt_multi(keys, ins, outs, 3, len);
            put(r, o3, 3 * len);
            free(o3);
            break;
        }
        default: {
            const kuai_key *keys[2] = {tk, k};
            uint8_t iv2[2][KUAI_MAX_BLOCK], *ivs[2] = {iv2[0], iv2[1]};
            memcpy(iv2[0], iv, KUAI_MAX_BLOCK);
            memcpy(iv2[1], g_in + 50, KUAI_MAX_BLOCK);
            const uint8_t *ins[2] = {g_in, g_in + 3};
            uint8_t *o2 = malloc(2 * len), *outs[2] = {o2, o2 + len};
            rc = kuai_cbc_encrypt_multi(keys, ivs, ins, outs, 2, len);
            put(r, o2, 2 * len);
            put(r, iv2, sizeof iv2);
            free(o2);
            break;
        }
        }
        put_rc(r, rc);
        if (rc == KUAI_OK && op < 12) {
            put(r, out, len);
            put(r, iv, KUAI_MAX_BLOCK);
            if (op == 8 || op == 9)
                put(r, tag, 16);
        }
    }
    free(out);
}

/* The whole workload, starting at op `first` (threads start at different
 * ops, so that short and bulk calls of different modes meet). The record
 * is kept in op order whatever the start. */
static void workload(const kuai_key *k, const kuai_key *tk, size_t bs, int first, rec *r)
{
    rec part[N_OPS];
    for (int i = 0; i < N_OPS; i++) {
        part[i].p = malloc(MAXOUT);
        part[i].n = 0;
    }
    for (int i = 0; i < N_OPS; i++) {
        int op = (first + i) % N_OPS;
        run_op(op, k, tk, bs, &part[op]);
    }
    for (int i = 0; i < N_OPS; i++) {
        put(r, part[i].p, part[i].n);
        free(part[i].p);
    }
}

/* ---- phase 1: first key setups at once --------------------------------- */

static pthread_barrier_t first_bar;
static kuai_key first_keys[NT];
static const kuai_cipher first_cipher[NT] = {KUAI_UBLOCK_128_128, KUAI_SM4, KUAI_AES_128,
                                             KUAI_UBLOCK_256_256};

static void *first_setup(void *arg)
{
    int t = (int)(intptr_t)arg;
    const kuai_cipher *c = first_cipher;
    uint8_t key[32];
    fill(key, sizeof key, 77);
    pthread_barrier_wait(&first_bar);
    int rc = kuai_key_init(&first_keys[t], c[t], key, kuai_key_size(c[t]));
    if (rc != KUAI_OK)
        fail("first key setup %s: rc %d", kuai_cipher_name(c[t]), rc);
    return NULL;
}

static void phase_first_setup(void)
{
    pthread_t th[NT];
    pthread_barrier_init(&first_bar, NULL, NT);
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, first_setup, (void *)(intptr_t)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&first_bar);
    /* Each key must equal one set up now, single-threaded. */
    for (int t = 0; t < NT; t++) {
        kuai_cipher c = first_cipher[t];
        uint8_t key[32], a[64], b[64];
        kuai_key k;
        fill(key, sizeof key, 77);
        kuai_key_init(&k, c, key, kuai_key_size(c));
        size_t bs = kuai_block_size(c);
        kuai_ecb_encrypt(&first_keys[t], g_in, a, 2 * bs);
        kuai_ecb_encrypt(&k, g_in, b, 2 * bs);
        if (memcmp(a, b, 2 * bs) != 0)
            fail("first key setup %s differs from one made alone", kuai_cipher_name(c));
        kuai_key_wipe(&k);
        kuai_key_wipe(&first_keys[t]);
    }
}

/* ---- phase 2: one shared fresh key, every mode ------------------------- */

typedef struct share_arg {
    const kuai_key *k, *tk;
    size_t bs;
    int first;
    const rec *want;
    const char *cn, *be;
    pthread_barrier_t *bar;
} share_arg;

static void *share_main(void *p)
{
    share_arg *a = p;
    rec r = {malloc(MAXOUT), 0};
    pthread_barrier_wait(a->bar);
    workload(a->k, a->tk, a->bs, a->first, &r);
    if (r.n != a->want->n || memcmp(r.p, a->want->p, r.n) != 0)
        fail("%s/%s shared fresh key: thread starting at op %d differs from one thread", a->cn,
             a->be, a->first);
    free(r.p);
    return NULL;
}

/* Key setups and wipes of its own keys, all the while (phase 2 and 3). */
typedef struct churn_arg {
    kuai_cipher c;
    int stop; /* under lock */
    pthread_mutex_t lock;
} churn_arg;

static int churn_stop(churn_arg *a)
{
    pthread_mutex_lock(&a->lock);
    int s = a->stop;
    pthread_mutex_unlock(&a->lock);
    return s;
}

static void *churn_main(void *p)
{
    churn_arg *a = p;
    const size_t bs = kuai_block_size(a->c);
    const char *be[16];
    size_t nbe = kuai_backends(a->c, be, 16);
    uint8_t key[32], x[64], y[64];
    fill(key, sizeof key, 5);
    kuai_key ref;
    kuai_key_init_backend(&ref, a->c, key, kuai_key_size(a->c), "ref");
    kuai_ecb_encrypt(&ref, g_in, x, 2 * bs);
    for (unsigned i = 0; !churn_stop(a); i++) {
        kuai_key k;
        kuai_key_init_backend(&k, a->c, key, kuai_key_size(a->c), be[i % nbe]);
        kuai_ecb_encrypt(&k, g_in, y, 2 * bs);
        if (memcmp(x, y, 2 * bs) != 0)
            fail("churn %s/%s: %d", kuai_cipher_name(a->c), be[i % nbe], (int)i);
        kuai_key_wipe(&k);
    }
    kuai_key_wipe(&ref);
    return NULL;
}

static void phase_shared_key(kuai_cipher c, const char *be)
{
    const size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    uint8_t key[32], tkey[32];
    fill(key, sizeof key, 1 + (uint32_t)c);
    fill(tkey, sizeof tkey, 100 + (uint32_t)c);
    /* the single-threaded answer, from keys of their own */
    kuai_key *rk = malloc(sizeof *rk), *rtk = malloc(sizeof *rtk);
    kuai_key *k = malloc(sizeof *k), *tk = malloc(sizeof *tk);
    if (kuai_key_init_backend(rk, c, key, kl, be) || kuai_key_init_backend(rtk, c, tkey, kl, be) ||
        kuai_key_init_backend(k, c, key, kl, be) || kuai_key_init_backend(tk, c, tkey, kl, be)) {
        fail("%s/%s key setup failed", kuai_cipher_name(c), be);
        return;
    }
    rec want = {malloc(MAXOUT), 0};
    workload(rk, rtk, bs, 0, &want);

    churn_arg ch = {.c = c, .stop = 0};
    pthread_mutex_init(&ch.lock, NULL);
    pthread_t cth;
    pthread_create(&cth, NULL, churn_main, &ch);

    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, NT);
    share_arg args[NT];
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) {
        /* half of the threads start with a bulk ECB call, the others with
         * short or bulk calls of other modes */
        args[t] = (share_arg){k, tk, bs, (t * 5) % N_OPS, &want, kuai_cipher_name(c), be, &bar};
        pthread_create(&th[t], NULL, share_main, &args[t]);
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_lock(&ch.lock);
    ch.stop = 1;
    pthread_mutex_unlock(&ch.lock);
    pthread_join(cth, NULL);
    pthread_mutex_destroy(&ch.lock);
    pthread_barrier_destroy(&bar);
    free(want.p);
    kuai_key_wipe(k);
    kuai_key_wipe(tk);
    kuai_key_wipe(rk);
    kuai_key_wipe(rtk);
    free(k);
    free(tk);
    free(rk);
    free(rtk);
}

/* ---- phase 3: parallel calls from several threads, and fork ------------ */

#define PAR_LEN (3 * 64 * 1024 + 5 * 32 + 3)

typedef struct par_arg {
    const kuai_key *k;
    size_t bs;
    unsigned threads;
    const uint8_t *want_ecb, *want_ctr, *want_cbc; /* cbc: decryption of g_par */
    const char *cn;
    pthread_barrier_t *bar;
} par_arg;

static uint8_t *g_par; /* PAR_LEN bytes of input */

static int par_run(const kuai_key *k, size_t bs, unsigned threads, const uint8_t *we,
                   const uint8_t *wc, const uint8_t *wd)
{
    const size_t whole = PAR_LEN - PAR_LEN % bs;
    uint8_t *buf = malloc(PAR_LEN), ctr[KUAI_MAX_BLOCK], iv[KUAI_MAX_BLOCK];
    int bad = 0;
    bad += kuai_ecb_encrypt_parallel(k, g_par, buf, whole, threads) != 0 ||
           memcmp(buf, we, whole) != 0;
    memcpy(ctr, g_in, bs);
    bad += kuai_ctr_crypt_parallel(k, ctr, g_par, buf, PAR_LEN, threads) != 0 ||
           memcmp(buf, wc, PAR_LEN) != 0;
    memcpy(iv, g_in + 40, bs);
    memcpy(buf, g_par, whole);
    bad += kuai_cbc_decrypt_parallel(k, iv, buf, buf, whole, threads) != 0 ||
           memcmp(buf, wd, whole) != 0;
    free(buf);
    return bad;
}

static void *par_main(void *p)
{
    par_arg *a = p;
    pthread_barrier_wait(a->bar);
    for (int r = 0; r < 2; r++)
        if (par_run(a->k, a->bs, a->threads, a->want_ecb, a->want_ctr, a->want_cbc))
            fail("%s parallel from several threads: round %d wrong", a->cn, r);
    return NULL;
}

/* Forks while the others run parallel calls: the child must be able to
 * use the library (its pool is gone; it starts one of its own). */
static void *fork_main(void *p)
{
    par_arg *a = p;
    pthread_barrier_wait(a->bar);
    for (int i = 0; i < 3; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(60); /* a hang in the child is a failure, not a stuck run */
            int bad = par_run(a->k, a->bs, 3, a->want_ecb, a->want_ctr, a->want_cbc);
            kuai_key k2;
            uint8_t key[32], x[64];
            fill(key, sizeof key, 9);
            bad += kuai_key_init(&k2, KUAI_SM4, key, 16) != 0 ||
                   kuai_ecb_encrypt(&k2, g_in, x, 64) != 0;
            _exit(bad ? 1 : 0);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail("%s fork during parallel calls: child failed (status %d)", a->cn, st);
    }
    return NULL;
}

static void phase_parallel(kuai_cipher c)
{
    const size_t bs = kuai_block_size(c), kl = kuai_key_size(c), whole = PAR_LEN - PAR_LEN % bs;
    uint8_t key[32], ctr[KUAI_MAX_BLOCK], iv[KUAI_MAX_BLOCK];
    fill(key, sizeof key, 3 + (uint32_t)c);
    kuai_key *rk = malloc(sizeof *rk), *k = malloc(sizeof *k);
    kuai_key_init(rk, c, key, kl);
    kuai_key_init(k, c, key, kl);
    uint8_t *we = malloc(PAR_LEN), *wc = malloc(PAR_LEN), *wd = malloc(PAR_LEN);
    kuai_ecb_encrypt(rk, g_par, we, whole);
    memcpy(ctr, g_in, bs);
    kuai_ctr_crypt(rk, ctr, g_par, wc, PAR_LEN);
    memcpy(iv, g_in + 40, bs);
    kuai_cbc_decrypt(rk, iv, g_par, wd, whole);

    churn_arg ch = {.c = c, .stop = 0};
    pthread_mutex_init(&ch.lock, NULL);
    pthread_t cth;
    pthread_create(&cth, NULL, churn_main, &ch);

    enum { NP = 3 };
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, NP + 1);
    par_arg args[NP + 1];
    pthread_t th[NP + 1];
    for (int t = 0; t <= NP; t++) {
        args[t] = (par_arg){k, bs, (unsigned)(t + 2), we, wc, wd, kuai_cipher_name(c), &bar};
        pthread_create(&th[t], NULL, t == NP ? fork_main : par_main, &args[t]);
    }
    for (int t = 0; t <= NP; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_lock(&ch.lock);
    ch.stop = 1;
    pthread_mutex_unlock(&ch.lock);
    pthread_join(cth, NULL);
    pthread_mutex_destroy(&ch.lock);
    pthread_barrier_destroy(&bar);
    kuai_key_wipe(rk);
    kuai_key_wipe(k);
    free(rk);
    free(k);
    free(we);
    free(wc);
    free(wd);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    uint8_t *in = malloc(IN_LEN);
    fill(in, IN_LEN, 42);
    g_in = in;
    g_par = malloc(PAR_LEN);
    fill(g_par, PAR_LEN, 43);

    phase_first_setup(); /* before any other key setup of this process */
    for (int r = 0; r < rounds; r++) {
        kuai_cipher cs[16];
        size_t nc = kuai_ciphers(cs, 16);
        for (size_t i = 0; i < nc; i++) {
            const char *be[16];
            size_t nbe = kuai_backends(cs[i], be, 16);
            for (size_t b = 0; b < nbe && b < 16; b++)
                phase_shared_key(cs[i], be[b]);
            if (nbe)
                phase_parallel(cs[i]);
            printf("%s: %zu backends done\n", kuai_cipher_name(cs[i]), nbe);
            fflush(stdout);
        }
    }
    printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
    free(in);
    free(g_par);
    return failures ? 1 : 0;
}
