/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The multi-threaded calls (src/parallel.c) against the single-threaded ones:
 * same output, same IV/counter afterwards, same errors, for thread counts
 * that do and do not divide the block count, lengths on both sides of the
 * split threshold, in place and out of place; then several application
 * threads calling at once, the first calls on a fresh key racing each
 * other, and failing calls that must write nothing.
 *
 * The single-threaded calls are the reference because test_modes checks
 * them against the independent oracle; this file checks only the split.
 */
#include "test_util.h"

#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum par_mode { PM_ECB_ENC, PM_ECB_DEC, PM_CTR, PM_CBC_DEC, PM_COUNT };
static const char *const par_mode_name[PM_COUNT] = {"ecb-enc", "ecb-dec", "ctr", "cbc-dec"};

/* Sanitizers slow the kernels ten- to fifty-fold; a smaller "long" buffer
 * still has several pieces per thread count. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PAR_SLOW_BUILD 1
#else
#define PAR_SLOW_BUILD t_short /* emulated: as slow as a sanitizer build */
#endif
#define PAR_BIG_BLOCKS                                                                             \
    (PAR_SLOW_BUILD ? 48 * 1024 + 7 : 3 * 65536 + 7) /* 3 MiB of 16-byte blocks, odd count */

static int single_call(enum par_mode m, const kuai_key *k, uint8_t *iv, const uint8_t *in,
                       uint8_t *out, size_t len)
{
    switch (m) {
    case PM_ECB_ENC:
        return kuai_ecb_encrypt(k, in, out, len);
    case PM_ECB_DEC:
        return kuai_ecb_decrypt(k, in, out, len);
    case PM_CTR:
        return kuai_ctr_crypt(k, iv, in, out, len);
    default:
        return kuai_cbc_decrypt(k, iv, in, out, len);
    }
}

static int parallel_call(enum par_mode m, const kuai_key *k, uint8_t *iv, const uint8_t *in,
                         uint8_t *out, size_t len, unsigned threads)
{
    switch (m) {
    case PM_ECB_ENC:
        return kuai_ecb_encrypt_parallel(k, in, out, len, threads);
    case PM_ECB_DEC:
        return kuai_ecb_decrypt_parallel(k, in, out, len, threads);
    case PM_CTR:
        return kuai_ctr_crypt_parallel(k, iv, in, out, len, threads);
    default:
        return kuai_cbc_decrypt_parallel(k, iv, in, out, len, threads);
    }
}

/* One case: parallel vs single-threaded on the same random input and IV.
 * ctr_hi_ones sets the counter just below a 2^64 carry so that a carry
 * happens inside some piece and across piece starts. */
static void one_case(enum par_mode m, kuai_cipher c, const kuai_key *k, const char *be, size_t len,
                     unsigned threads, int in_place, int ctr_near_carry)
{
    const size_t bs = kuai_block_size(c);
    char what[160];
    snprintf(what, sizeof what, "%s/%s %s len=%zu threads=%u %s%s", kuai_cipher_name(c), be,
             par_mode_name[m], len, threads, in_place ? "in place" : "out of place",
             ctr_near_carry ? " ctr near carry" : "");
    uint8_t *src = xmalloc(len), *want = xmalloc(len);
    uint8_t iv0[KUAI_MAX_BLOCK], iv_want[KUAI_MAX_BLOCK], iv_got[KUAI_MAX_BLOCK];
    rng_fill(src, len);
    rng_fill(iv0, bs);
    if (ctr_near_carry) { /* low 8 bytes = 2^64 - 3: the carry lands 3 blocks in */
        memset(iv0 + bs - 8, 0xff, 7);
        iv0[bs - 1] = 0xfd;
    }
    memcpy(iv_want, iv0, bs);
    memcpy(iv_got, iv0, bs);
    CHECK_RC(single_call(m, k, iv_want, src, want, len), KUAI_OK, what);

    gbuf out = gbuf_new(len, rng_below(4) * 8);
    gbuf in = gbuf_new(in_place ? 0 : len, 0);
    const uint8_t *inp = in_place ? out.p : in.p;
    memcpy(in_place ? out.p : in.p, src, len);
    CHECK_RC(parallel_call(m, k, iv_got, len ? inp : NULL, len ? out.p : NULL, len, threads),
             KUAI_OK, what);
    CHECK_MEM(out.p, want, len, what);
    if (m == PM_CTR || m == PM_CBC_DEC)
        CHECK_MEM(iv_got, iv_want, bs, what);
    if (!in_place)
        CHECK_MEM(in.p, src, len, what);
    GBUF_CHECK(&out, what);
    gbuf_free(&out);
    gbuf_free(&in);
    free(src);
    free(want);
}

static const unsigned thread_counts[] = {1, 2, 3, 4, 7};
#define N_THREAD_COUNTS (sizeof thread_counts / sizeof thread_counts[0])

static void test_parallel_equal(void)
{
    group_begin("parallel = single");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        if (test_backends(c, be, MAX_BACKENDS) == 0)
            continue;
        const size_t bs = kuai_block_size(c);
        uint8_t keybytes[32];
        rng_fill(keybytes, sizeof keybytes);
        /* The default backend (the fast path users get) and ref (no fused
         * CTR kernel: counters are built by the mode code). */
        kuai_key keys[2];
        const char *key_be[2] = {NULL, "ref"};
        CHECK_RC(kuai_key_init(&keys[0], c, keybytes, kuai_key_size(c)), KUAI_OK, "kuai_key_init");
        key_be[0] = kuai_key_backend(&keys[0]);
        if (!key_init_ok(&keys[1], c, keybytes, "ref"))
            continue;
        const size_t two = 2 * KUAI_PAR_MIN_PIECE; /* the smallest input that splits */
        const size_t lens[] = {0,
                               bs,
                               bs + 5,
                               two - bs,
                               two,
                               two + bs,
                               3 * KUAI_PAR_MIN_PIECE + 3 * bs + 5,
                               7 * KUAI_PAR_MIN_PIECE - bs,
                               (size_t)PAR_BIG_BLOCKS * 16,
                               (size_t)PAR_BIG_BLOCKS * 16 + 11};
        for (size_t ki = 0; ki < 2; ki++) {
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                size_t len = lens[li];
                /* Emulated (short): 7 pieces already split every thread
                 * count; the big buffers add only time. */
                if (t_short && len > 7 * KUAI_PAR_MIN_PIECE)
                    continue;
                /* The portable ref kernels are slow; the threshold cases
                 * already exercise the split for them. */
                if (ki == 1 && len > (PAR_SLOW_BUILD ? two + bs : 4 * KUAI_PAR_MIN_PIECE))
                    continue;
                for (int m = 0; m < PM_COUNT; m++) {
                    if (m != PM_CTR && len % bs)
                        continue; /* ECB/CBC: whole blocks only (errors below) */
                    for (size_t ti = 0; ti < N_THREAD_COUNTS; ti++) {
                        /* Slow builds: split inputs with 1, 3 and 7 threads
                         * only (no split, uneven pieces, more threads than
                         * CPUs); 3 and 7 still make 2 pieces at the threshold. */
                        if (PAR_SLOW_BUILD && len >= two && thread_counts[ti] % 2 == 0)
                            continue;
                        for (int in_place = 0; in_place < 2; in_place++)
                            one_case((enum par_mode)m, c, &keys[ki], key_be[ki], len,
                                     thread_counts[ti], in_place,
                                     m == PM_CTR && ti == 2 && len > two);
                    }
                }
            }
            /* 0 = all online CPUs, and more than the cap. */
            one_case(PM_CTR, c, &keys[ki], key_be[ki], 5 * KUAI_PAR_MIN_PIECE + 9, 0, 1, 0);
            one_case(PM_CBC_DEC, c, &keys[ki], key_be[ki], 5 * KUAI_PAR_MIN_PIECE, 0, 1, 0);
            if (ki == 0)
                one_case(PM_ECB_ENC, c, &keys[ki], key_be[ki],
                         (t_short ? 17 : 70) * KUAI_PAR_MIN_PIECE, 1000, 0, 0);
        }
        kuai_key_wipe(&keys[0]);
        kuai_key_wipe(&keys[1]);
    }
    group_end();
}

/* ---- several application threads at once -------------------------------- */

typedef struct app_job {
    const kuai_key *k;
    size_t bs, len;
    unsigned threads;
    const uint8_t *pt, *ctr0, *iv0;
    const uint8_t *want_ctr, *want_ecb, *want_cbc_pt; /* expected outputs */
    const uint8_t *ctr_end, *cbc_ct;                  /* CTR end counter, CBC input */
    uint8_t *buf;
    int bad, rc_bad;
} app_job;

#define APP_THREADS 3
#define APP_ROUNDS 6

static void *app_main(void *arg)
{
    app_job *j = arg;
    uint8_t ctr[KUAI_MAX_BLOCK], iv[KUAI_MAX_BLOCK];
    for (int r = 0; r < APP_ROUNDS; r++) {
        memcpy(ctr, j->ctr0, j->bs);
        j->rc_bad += kuai_ctr_crypt_parallel(j->k, ctr, j->pt, j->buf, j->len, j->threads) != 0;
        j->bad += memcmp(j->buf, j->want_ctr, j->len) != 0 || memcmp(ctr, j->ctr_end, j->bs) != 0;
        size_t whole = j->len - j->len % j->bs;
        memcpy(j->buf, j->pt, whole);
        j->rc_bad += kuai_ecb_encrypt_parallel(j->k, j->buf, j->buf, whole, j->threads) != 0;
        j->bad += memcmp(j->buf, j->want_ecb, whole) != 0;
        memcpy(iv, j->iv0, j->bs);
        memcpy(j->buf, j->cbc_ct, whole);
        j->rc_bad += kuai_cbc_decrypt_parallel(j->k, iv, j->buf, j->buf, whole, j->threads) != 0;
        j->bad += memcmp(j->buf, j->want_cbc_pt, whole) != 0 ||
                  memcmp(iv, j->cbc_ct + whole - j->bs, j->bs) != 0;
    }
    return NULL;
}

static void test_parallel_concurrent(void)
{
    group_begin("parallel, 3 callers");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        if (test_backends(c, be, MAX_BACKENDS) == 0)
            continue;
        const size_t bs = kuai_block_size(c);
        uint8_t keybytes[32];
        rng_fill(keybytes, sizeof keybytes);
        kuai_key k;
        if (!CHECK_RC(kuai_key_init(&k, c, keybytes, kuai_key_size(c)), KUAI_OK, "kuai_key_init"))
            continue;
        app_job jobs[APP_THREADS];
        uint8_t ctr0[APP_THREADS][KUAI_MAX_BLOCK], ctr_end[APP_THREADS][KUAI_MAX_BLOCK];
        uint8_t iv0[APP_THREADS][KUAI_MAX_BLOCK], iv_tmp[KUAI_MAX_BLOCK];
        for (int t = 0; t < APP_THREADS; t++) {
            app_job *j = &jobs[t];
            /* Different lengths and thread counts per caller, so their pieces
             * differ and a mixed-up job would show. */
            j->len = (4 + 3 * (size_t)t) * KUAI_PAR_MIN_PIECE + (2 * (size_t)t + 1) * bs + 3;
            j->threads = (unsigned)(t + 2);
            j->k = &k;
            j->bs = bs;
            size_t whole = j->len - j->len % bs;
            uint8_t *pt = xmalloc(j->len), *wc = xmalloc(j->len), *we = xmalloc(whole);
            uint8_t *ct = xmalloc(whole), *wp = xmalloc(whole);
            rng_fill(pt, j->len);
            rng_fill(ct, whole);
            rng_fill(ctr0[t], bs);
            rng_fill(iv0[t], bs);
            memcpy(ctr_end[t], ctr0[t], bs);
            CHECK_RC(kuai_ctr_crypt(&k, ctr_end[t], pt, wc, j->len), KUAI_OK, "ctr reference");
            CHECK_RC(kuai_ecb_encrypt(&k, pt, we, whole), KUAI_OK, "ecb reference");
            memcpy(iv_tmp, iv0[t], bs);
            CHECK_RC(kuai_cbc_decrypt(&k, iv_tmp, ct, wp, whole), KUAI_OK, "cbc reference");
            j->pt = pt;
            j->want_ctr = wc;
            j->want_ecb = we;
            j->cbc_ct = ct;
            j->want_cbc_pt = wp;
            j->ctr0 = ctr0[t];
            j->ctr_end = ctr_end[t];
            j->iv0 = iv0[t];
            j->buf = xmalloc(j->len);
            j->bad = j->rc_bad = 0;
        }
        pthread_t th[APP_THREADS];
        int started[APP_THREADS];
        for (int t = 0; t < APP_THREADS; t++) {
            started[t] = pthread_create(&th[t], NULL, app_main, &jobs[t]) == 0;
            CHECK(started[t], "pthread_create failed");
        }
        for (int t = 0; t < APP_THREADS; t++) {
            if (!started[t])
                continue;
            pthread_join(th[t], NULL);
            CHECK(jobs[t].bad == 0 && jobs[t].rc_bad == 0,
                  "%s/%s: caller %d (len %zu, %u threads): %d wrong results, %d non-zero returns "
                  "of %d calls",
                  kuai_cipher_name(c), kuai_key_backend(&k), t, jobs[t].len, jobs[t].threads,
                  jobs[t].bad, jobs[t].rc_bad, 3 * APP_ROUNDS);
        }
        for (int t = 0; t < APP_THREADS; t++) {
            free((void *)jobs[t].pt);
            free((void *)jobs[t].want_ctr);
            free((void *)jobs[t].want_ecb);
            free((void *)jobs[t].cbc_ct);
            free((void *)jobs[t].want_cbc_pt);
            free(jobs[t].buf);
        }
        kuai_key_wipe(&k);
    }
    group_end();
}

/* ---- one fresh key, first calls at once ------------------------------- */

/*
 * Application threads start together on a fresh shared key: a parallel ECB
 * call (its workers take pieces too), long CTR and CBC-decryption calls and
 * a short call. uBlock's wide backends build their masks inside the key on
 * its first long call (ublock_bs.h: one thread claims the build, the others
 * make their own meanwhile), so this is where a lost or torn build would
 * show; every result must be the single-threaded one on another key.
 */
enum { FR_CALLERS = 4 };

typedef struct fresh_arg {
    const kuai_key *k;
    int role; /* 0 parallel ECB, 1 CTR, 2 CBC decryption, 3 short ECB */
    size_t bs, len;
    const uint8_t *in, *iv0;
    uint8_t *out;
    atomic_int *ready, *go;
    int rc;
} fresh_arg;

static int fresh_call(const fresh_arg *a, const kuai_key *k, uint8_t *out)
{
    uint8_t iv[KUAI_MAX_BLOCK];
    memcpy(iv, a->iv0, a->bs);
    switch (a->role) {
    case 0:
        return kuai_ecb_encrypt_parallel(k, a->in, out, a->len, 3);
    case 1:
        return kuai_ctr_crypt(k, iv, a->in, out, a->len);
    case 2:
        return kuai_cbc_decrypt(k, iv, a->in, out, a->len);
    default:
        return kuai_ecb_encrypt(k, a->in, out, a->len);
    }
}

static void *fresh_main(void *p)
{
    fresh_arg *a = p;
    /* Spinning, not a barrier: a barrier's wake-ups come microseconds
     * apart, longer than a build of the masks, and the calls would rarely
     * meet. The yield lets callers that share a core all get here. */
    atomic_fetch_add(a->ready, 1);
    while (!atomic_load(a->go))
        sched_yield();
    a->rc = fresh_call(a, a->k, a->out);
    return NULL;
}

static void test_parallel_fresh_key(void)
{
    static const char *const role_name[FR_CALLERS] = {"ecb-enc parallel", "ctr", "cbc-dec",
                                                      "ecb-enc short"};
    group_begin("fresh key, first calls");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        const size_t nbe = test_backends(c, be, MAX_BACKENDS), bs = kuai_block_size(c);
        const size_t len[FR_CALLERS] = {2 * KUAI_PAR_MIN_PIECE + 3 * bs, 64 * bs + 5, 64 * bs,
                                        2 * bs};
        uint8_t *in = xmalloc(len[0]), *want[FR_CALLERS], *got[FR_CALLERS];
        for (int r = 0; r < FR_CALLERS; r++) {
            want[r] = xmalloc(len[r]);
            got[r] = xmalloc(len[r]);
        }
        kuai_key *k = xmalloc(sizeof *k), *ref = xmalloc(sizeof *ref);
        for (size_t b = 0; b < nbe; b++) {
            /* uBlock's builds race only some of the time: more rounds */
            for (int round = 0; round < (t_short ? 2 : 4) * (is_ublock(c) ? 6 : 1); round++) {
                uint8_t keybytes[32], iv0[KUAI_MAX_BLOCK];
                rng_fill(keybytes, sizeof keybytes);
                rng_fill(iv0, bs);
                rng_fill(in, len[0]);
                if (!CHECK_RC(kuai_key_init_backend(k, c, keybytes, kuai_key_size(c), be[b]),
                              KUAI_OK, "kuai_key_init_backend") ||
                    !CHECK_RC(kuai_key_init_backend(ref, c, keybytes, kuai_key_size(c), be[b]),
                              KUAI_OK, "kuai_key_init_backend"))
                    break;
                atomic_int ready = 0, go = 0;
                fresh_arg args[FR_CALLERS];
                for (int r = 0; r < FR_CALLERS; r++) {
                    args[r] = (fresh_arg){k, r, bs, len[r], in, iv0, got[r], &ready, &go, KUAI_OK};
                    CHECK_RC(fresh_call(&args[r], ref, want[r]), KUAI_OK, "reference");
                }
                pthread_t th[FR_CALLERS];
                int started[FR_CALLERS];
                for (int r = 0; r < FR_CALLERS; r++) {
                    started[r] = pthread_create(&th[r], NULL, fresh_main, &args[r]) == 0;
                    CHECK(started[r], "pthread_create failed");
                    atomic_fetch_add(&ready, !started[r]);
                }
                while (atomic_load(&ready) < FR_CALLERS)
                    sched_yield();
                atomic_store(&go, 1);
                for (int r = 0; r < FR_CALLERS; r++) {
                    if (!started[r])
                        continue;
                    pthread_join(th[r], NULL);
                    char what[160];
                    snprintf(what, sizeof what, "%s/%s fresh key, %s beside %d other first calls",
                             kuai_cipher_name(c), be[b], role_name[r], FR_CALLERS - 1);
                    CHECK_RC(args[r].rc, KUAI_OK, what);
                    CHECK_MEM(got[r], want[r], len[r], what);
                }
            }
        }
        kuai_key_wipe(k);
        kuai_key_wipe(ref);
        free(k);
        free(ref);
        free(in);
        for (int r = 0; r < FR_CALLERS; r++) {
            free(want[r]);
            free(got[r]);
        }
    }
    group_end();
}

/* ---- errors ------------------------------------------------------------ */

/* Expect rc and no write to out or iv. The lengths are above the split
 * threshold, so a check made only inside the pieces would be caught. */
static void expect_error(enum par_mode m, const kuai_key *k, int use_iv, const uint8_t *in,
                         uint8_t *out, uint8_t *out_area, size_t area_len, size_t len, int want,
                         const char *what)
{
    uint8_t iv[KUAI_MAX_BLOCK], iv_before[KUAI_MAX_BLOCK];
    rng_fill(iv, sizeof iv);
    memcpy(iv_before, iv, sizeof iv);
    uint8_t *snapshot = xmalloc(area_len);
    memcpy(snapshot, out_area, area_len);
    char msg[160];
    snprintf(msg, sizeof msg, "%s %s", par_mode_name[m], what);
    CHECK_RC(parallel_call(m, k, use_iv ? iv : NULL, in, out, len, 4), want, msg);
    CHECK_MEM(out_area, snapshot, area_len, msg);
    CHECK_MEM(iv, iv_before, sizeof iv, msg);
    free(snapshot);
}

static void test_parallel_errors(void)
{
    group_begin("parallel errors");
    kuai_cipher c = KUAI_SM4;
    const char *be[MAX_BACKENDS];
    if (test_backends(c, be, MAX_BACKENDS) == 0)
        c = KUAI_UBLOCK_128_128;
    const size_t bs = kuai_block_size(c), len = 8 * KUAI_PAR_MIN_PIECE;
    uint8_t keybytes[32];
    rng_fill(keybytes, sizeof keybytes);
    kuai_key k, wiped;
    CHECK_RC(kuai_key_init(&k, c, keybytes, kuai_key_size(c)), KUAI_OK, "kuai_key_init");
    CHECK_RC(kuai_key_init(&wiped, c, keybytes, kuai_key_size(c)), KUAI_OK, "kuai_key_init");
    kuai_key_wipe(&wiped);
    /* One area: input in the first half, output in the second, so the
     * partial-overlap case can reuse it. */
    uint8_t *area = xmalloc(2 * len + bs);
    rng_fill(area, 2 * len + bs);
    uint8_t *in = area, *out = area + len;
    const size_t alen = 2 * len + bs;
    for (int m = 0; m < PM_COUNT; m++) {
        int iv = m == PM_CTR || m == PM_CBC_DEC;
        if (m != PM_CTR)
            expect_error((enum par_mode)m, &k, iv, in, out, area, alen, len - 1, KUAI_ERR_LENGTH,
                         "length not a block multiple");
        expect_error((enum par_mode)m, &k, iv, NULL, out, area, alen, len, KUAI_ERR_ARG, "in NULL");
        expect_error((enum par_mode)m, &k, iv, in, NULL, area, alen, len, KUAI_ERR_ARG, "out NULL");
        expect_error((enum par_mode)m, NULL, iv, in, out, area, alen, len, KUAI_ERR_ARG,
                     "key NULL");
        expect_error((enum par_mode)m, &wiped, iv, in, out, area, alen, len, KUAI_ERR_KEY,
                     "wiped key");
        expect_error((enum par_mode)m, &k, iv, in, in + bs, area, alen, len, KUAI_ERR_ARG,
                     "partly overlapping buffers");
        if (iv)
            expect_error((enum par_mode)m, &k, 0, in, out, area, alen, len, KUAI_ERR_ARG,
                         "iv/ctr NULL");
    }
    /* len 0 with NULL buffers is fine and changes nothing. */
    uint8_t ctr[KUAI_MAX_BLOCK] = {0};
    CHECK_RC(kuai_ctr_crypt_parallel(&k, ctr, NULL, NULL, 0, 2), KUAI_OK, "ctr len 0");
    CHECK(ctr[bs - 1] == 0, "ctr len 0 moved the counter");
    free(area);
    kuai_key_wipe(&k);
    group_end();
}

void test_parallel(void)
{
    test_parallel_equal();
    test_parallel_concurrent();
    test_parallel_fresh_key();
    test_parallel_errors();
}
