/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench's multi-threaded rows: the ECB size sweep (the SM4 report's
 * table) on its own worker pool, and the library's kuai_ctr_crypt_parallel. */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void bench_sweep(const bench_cipher *bc, const char *backend, const opts *o)
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
