/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Multi-threaded ECB, CTR and CBC decryption of one long buffer.
 *
 * The buffer is cut into contiguous, block-aligned pieces and each piece goes
 * through the ordinary single-threaded call, so the results are those of the
 * single-threaded code by construction; only the chaining values at the piece
 * boundaries (CTR counters, CBC previous-ciphertext blocks) are prepared here.
 *
 * The pool: worker threads are started on first need (and added when a later
 * call asks for more), then sleep on a condition variable between jobs, so a
 * call costs a wake-up, not a thread start. One job runs at a time (job_lock);
 * concurrent callers queue on that mutex. Pieces are handed out one at a time
 * from a shared index and the calling thread takes pieces too, so a job
 * finishes correctly whatever number of workers exists, even none (thread
 * creation failed).
 * Fork: only the forking thread exists in the child, so a lock another
 * thread held at the fork would stay locked there for ever. pthread_atfork
 * handlers (registered when the library is loaded) take both locks before the
 * fork, so it waits for a running job to end; the parent releases them, and
 * the child releases them, resets the condition variables its vanished
 * workers may have waited on and forgets those workers, so its first
 * parallel call starts a pool of its own.
 * Workers are detached and never touch the job after the last piece is
 * counted done, so process exit with sleeping workers neither hangs nor
 * needs a shutdown call. Nor does dlclose: libkuai.so is linked -z nodelete
 * (CMakeLists.txt says why), so the code they sleep in stays mapped.
 */
#define _POSIX_C_SOURCE 200809L

#include "parallel.h"

#include "modes/modes.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

enum job_kind { JOB_ECB_ENC, JOB_ECB_DEC, JOB_CTR, JOB_CBC_DEC };

typedef struct piece {
    size_t off, len;
    /* CTR: this piece's first counter; CBC: the ciphertext block before the
     * piece (the IV for the first). Advanced by the piece's call, unused. */
    uint8_t chain[KUAI_MAX_BLOCK];
} piece;

typedef struct job {
    enum job_kind kind;
    const kuai_key *k;
    const uint8_t *in;
    uint8_t *out;
    size_t npieces;
    size_t next; /* next piece to hand out; under pool_lock */
    size_t done; /* pieces finished; under pool_lock */
    int rc;      /* first non-zero piece result; under pool_lock */
    piece p[KUAI_PAR_MAX_THREADS];
} job;

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* guards current and job counters */
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;     /* a job with pieces left */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;     /* the last piece finished */
static job *current;
static unsigned nworkers; /* under job_lock */

static int run_piece(const job *j, piece *p)
{
    const uint8_t *in = j->in + p->off;
    uint8_t *out = j->out + p->off;
    switch (j->kind) {
    case JOB_ECB_ENC:
        return kuai_ecb_encrypt(j->k, in, out, p->len);
    case JOB_ECB_DEC:
        return kuai_ecb_decrypt(j->k, in, out, p->len);
    case JOB_CTR:
        return kuai_ctr_crypt(j->k, p->chain, in, out, p->len);
    case JOB_CBC_DEC:
        return kuai_cbc_decrypt(j->k, p->chain, in, out, p->len);
    }
    return KUAI_ERR_ARG;
}

/* Take and run pieces of j until none are left. Called with pool_lock held;
 * returns with it held. */
static void drain(job *j)
{
    while (j->next < j->npieces) {
        piece *p = &j->p[j->next++];
        pthread_mutex_unlock(&pool_lock);
        int r = run_piece(j, p);
        pthread_mutex_lock(&pool_lock);
        if (r && !j->rc)
            j->rc = r;
        if (++j->done == j->npieces)
            pthread_cond_signal(&done_cv);
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        while (!current || current->next >= current->npieces)
            pthread_cond_wait(&work_cv, &pool_lock);
        drain(current);
    }
    return NULL;
}

/* Grow the pool to n workers (called under job_lock). A failed start is not
 * an error: the caller and the workers that exist do the pieces. */
static void ensure_workers(unsigned n)
{
    if (nworkers >= n)
        return;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr))
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Workers inherit the creator's signal mask: block everything so the
     * application's signals go to its own threads, never into ours. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (nworkers < n) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker_main, NULL))
            break;
        nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&job_lock);
    pthread_mutex_lock(&pool_lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&job_lock);
}

static void atfork_child(void)
{
    static const pthread_cond_t fresh = PTHREAD_COND_INITIALIZER;
    memcpy(&work_cv, &fresh, sizeof fresh);
    memcpy(&done_cv, &fresh, sizeof fresh);
    current = NULL;
    nworkers = 0;
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&job_lock);
}

/*
 * Registered when the library is loaded, before any thread can be in a
 * call. Registering on first use (pthread_once) left a window: a fork by
 * another thread while the first caller was inside pthread_once copied the
 * once-control "in progress" into the child, and a pthread_once without
 * glibc's fork-generation check (ThreadSanitizer's; musl's) waited there
 * for ever at the child's first parallel call.
 */
__attribute__((constructor)) static void atfork_register(void)
{
    /* On failure (ENOMEM) a fork during a call could hang the child's next
     * call; there is nothing better to do here. */
    (void)pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static int run_job(job *j)
{
    pthread_mutex_lock(&job_lock);
    ensure_workers((unsigned)j->npieces - 1);
    pthread_mutex_lock(&pool_lock);
    current = j;
    pthread_cond_broadcast(&work_cv);
    drain(j);
    while (j->done < j->npieces)
        pthread_cond_wait(&done_cv, &pool_lock);
    current = NULL;
    int rc = j->rc;
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&job_lock);
    return rc;
}

static unsigned resolve_threads(unsigned threads)
{
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)(n < (long)KUAI_PAR_MAX_THREADS ? n : KUAI_PAR_MAX_THREADS) : 1;
    }
    return threads < KUAI_PAR_MAX_THREADS ? threads : KUAI_PAR_MAX_THREADS;
}

/* How many pieces len bytes should become; 1 means run on the caller. */
static size_t piece_count(size_t len, unsigned threads)
{
    size_t by_size = len / KUAI_PAR_MIN_PIECE;
    size_t t = resolve_threads(threads);
    return by_size < t ? by_size : t;
}

/* Cut nblocks whole blocks (plus tail bytes, which go to the last piece)
 * into j->npieces contiguous pieces whose sizes differ by at most a block. */
static void cut(job *j, size_t bs, size_t nblocks, size_t tail)
{
    size_t per = nblocks / j->npieces, extra = nblocks % j->npieces, off = 0;
    for (size_t i = 0; i < j->npieces; i++) {
        j->p[i].off = off;
        j->p[i].len = (per + (i < extra)) * bs;
        off += j->p[i].len;
    }
    j->p[j->npieces - 1].len += tail;
}

static void job_init(job *j, enum job_kind kind, const kuai_key *k, const uint8_t *in, uint8_t *out,
                     size_t npieces)
{
    j->kind = kind;
    j->k = k;
    j->in = in;
    j->out = out;
    j->npieces = npieces;
    j->next = j->done = 0;
    j->rc = KUAI_OK;
}

static int ecb_parallel(enum job_kind kind, const kuai_key *k, const uint8_t *in, uint8_t *out,
                        size_t len, unsigned threads)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_ECB, NULL, &bs);
    if (r)
        return r;
    size_t npieces = piece_count(len, threads);
    if (npieces < 2)
        return kind == JOB_ECB_ENC ? kuai_ecb_encrypt(k, in, out, len)
                                   : kuai_ecb_decrypt(k, in, out, len);
    job j;
    job_init(&j, kind, k, in, out, npieces);
    cut(&j, bs, kuai_blocks_in(len, bs), 0);
    return run_job(&j);
}

int kuai_ecb_encrypt_parallel(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t len,
                              unsigned threads)
{
    return ecb_parallel(JOB_ECB_ENC, k, in, out, len, threads);
}

int kuai_ecb_decrypt_parallel(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t len,
                              unsigned threads)
{
    return ecb_parallel(JOB_ECB_DEC, k, in, out, len, threads);
}

int kuai_ctr_crypt_parallel(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                            size_t len, unsigned threads)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CTR, ctr, &bs);
    if (r)
        return r;
    size_t npieces = piece_count(len, threads);
    if (npieces < 2)
        return kuai_ctr_crypt(k, ctr, in, out, len);
    job j;
    job_init(&j, JOB_CTR, k, in, out, npieces);
    size_t nblocks = kuai_blocks_in(len, bs), tail = kuai_tail_of(len, bs);
    cut(&j, bs, nblocks, tail);
    for (size_t i = 0; i < npieces; i++) {
        memcpy(j.p[i].chain, ctr, bs);
        ctr_add(j.p[i].chain, bs, kuai_blocks_in(j.p[i].off, bs));
    }
    r = run_job(&j);
    /* As the single-threaded call: one counter per block, the partial last
     * block included. */
    if (r == KUAI_OK)
        ctr_add(ctr, bs, nblocks + (tail != 0));
    return r;
}

int kuai_cbc_decrypt_parallel(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t len, unsigned threads)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CBC, iv, &bs);
    if (r)
        return r;
    size_t npieces = piece_count(len, threads);
    if (npieces < 2)
        return kuai_cbc_decrypt(k, iv, in, out, len);
    job j;
    job_init(&j, JOB_CBC_DEC, k, in, out, npieces);
    cut(&j, bs, kuai_blocks_in(len, bs), 0);
    /* Each piece chains from the ciphertext block just before it, which
     * belongs to the previous piece and, with in == out, is overwritten by
     * it: copy all of them, and the last block (the next IV), before any
     * thread writes. */
    uint8_t next_iv[KUAI_MAX_BLOCK];
    memcpy(j.p[0].chain, iv, bs);
    for (size_t i = 1; i < npieces; i++)
        memcpy(j.p[i].chain, in + j.p[i].off - bs, bs);
    memcpy(next_iv, in + len - bs, bs);
    r = run_job(&j);
    if (r == KUAI_OK)
        memcpy(iv, next_iv, bs);
    return r;
}
