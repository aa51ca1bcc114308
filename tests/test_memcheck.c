/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make test-memcheck: what a user's program sees under valgrind's memcheck.
 *
 * Every public call, every mode, every backend usable here (under valgrind:
 * what valgrind's CPU offers), lengths 0, 1, bs-1, bs, bs+1, odd ones,
 * several internal chunks with a tail; in place and not, misaligned, in
 * one call and in pieces. All inputs are defined; after each call every
 * output (data, IV/counter, tag, return code) must be defined, checked
 * with VALGRIND_CHECK_MEM_IS_DEFINED, so a library value built from
 * uninitialised memory is reported at the call that produced it (with
 * --track-origins=yes, together with where the memory came from). Round
 * trips are compared with memcmp as well, the way a user's program would
 * branch on them.
 *
 *   kuai_memcheck [--backend NAME]   (every usable backend without)
 *   kuai_memcheck --list-backends
 *
 * Run it under valgrind --error-exitcode=1; alone it only checks the
 * round trips. Exit 1 on a failed round trip or call.
 */
#define _POSIX_C_SOURCE 200809L
#include "ghash/ghash.h"
#include "kuai.h"
#include "seam.h" /* kuai_registry_reload */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/memcheck.h>

#define DEFINED(p, n) ((void)VALGRIND_CHECK_MEM_IS_DEFINED((p), (n)))

/* The library's cipher list (kuai_ciphers), filled by main. */
static kuai_cipher ciphers[64];
static size_t nciphers;

static const char *only;
static unsigned long calls, failures;
static const char *cur_cipher = "-", *cur_backend = "-";

static uint64_t rng = 0x6d656d636865636bu;
static void fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        rng += 0x9e3779b97f4a7c15u;
        uint64_t z = rng;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        b[i] = (uint8_t)(z ^ (z >> 31));
    }
}

static void fail(const char *what, int rc)
{
    failures++;
    fprintf(stderr, "kuai_memcheck: %s/%s %s: %s\n", cur_cipher, cur_backend, what,
            rc ? kuai_strerror(rc) : "round trip differs");
}

/* A call's return code: defined, and what it should be. */
static int ok(int rc, int want, const char *what)
{
    calls++;
    DEFINED(&rc, sizeof rc);
    if (rc != want) {
        fail(what, rc ? rc : KUAI_ERR_ARG);
        return 0;
    }
    return 1;
}

static void same(const uint8_t *a, const uint8_t *b, size_t n, const char *what)
{
    DEFINED(a, n);
    if (n && memcmp(a, b, n) != 0)
        fail(what, 0);
}

#define MAXLEN (300 * 32 + 64)
#define PAR_LEN (4 * 64 * 1024 + 64)
static uint8_t *pt, *ct, *rt, *big_pt, *big_ct, *big_rt;

/* ---- ECB, CBC, CTR -------------------------------------------------------- */

enum { ECB, CBC, CTR };

static int mode_crypt(int mode, int enc, const kuai_key *k, uint8_t *iv, const uint8_t *in,
                      uint8_t *out, size_t len)
{
    switch (mode) {
    case ECB:
        return enc ? kuai_ecb_encrypt(k, in, out, len) : kuai_ecb_decrypt(k, in, out, len);
    case CBC:
        return enc ? kuai_cbc_encrypt(k, iv, in, out, len) : kuai_cbc_decrypt(k, iv, in, out, len);
    default:
        return kuai_ctr_crypt(k, iv, in, out, len);
    }
}

static void modes(const kuai_key *k, size_t bs)
{
    static const char *const names[] = {"ecb", "cbc", "ctr"};
    /* in blocks: 1 to past KUAI_CHUNK_BLOCKS (128) and past the widest
     * kernels; tails for CTR */
    static const size_t nblk[] = {0, 1, 2, 3, 4, 7, 8, 9, 16, 17, 31, 33, 64, 129, 300};
    for (int mode = ECB; mode <= CTR; mode++) {
        for (size_t li = 0; li < sizeof nblk / sizeof nblk[0]; li++) {
            for (size_t tail = 0; tail < (mode == CTR ? bs : 1); tail += tail ? bs - 2 : 1) {
                const size_t len = nblk[li] * bs + tail;
                const size_t off = (li + tail) % 4; /* misaligned now and then */
                uint8_t iv0[KUAI_MAX_BLOCK], iv[KUAI_MAX_BLOCK], iv2[KUAI_MAX_BLOCK];
                fill(iv0, sizeof iv0);
                fill(pt + off, len);
                char what[64];
                snprintf(what, sizeof what, "%s len %zu", names[mode], len);
                /* one call, out of place */
                memcpy(iv, iv0, sizeof iv);
                if (!ok(mode_crypt(mode, 1, k, iv, pt + off, ct, len), KUAI_OK, what))
                    continue;
                DEFINED(ct, len);
                DEFINED(iv, bs);
                /* in two calls, the second in place */
                size_t cut = mode == CTR ? (len / 2 / bs) * bs : (len / 2 / bs) * bs;
                memcpy(iv2, iv0, sizeof iv2);
                memcpy(rt, pt + off, len);
                ok(mode_crypt(mode, 1, k, iv2, rt, rt, cut), KUAI_OK, what);
                ok(mode_crypt(mode, 1, k, iv2, rt + cut, rt + cut, len - cut), KUAI_OK, what);
                same(rt, ct, len, what);
                same(iv2, iv, bs, what);
                /* back */
                memcpy(iv, iv0, sizeof iv);
                ok(mode_crypt(mode, 0, k, iv, ct, rt + 1, len), KUAI_OK, what);
                same(rt + 1, pt + off, len, what);
                DEFINED(iv, bs);
            }
        }
    }
}

/* ---- one-shot and multi-key ---------------------------------------------- */

static void oneshot(kuai_cipher c, size_t bs)
{
    const size_t ks = kuai_key_size(c);
    uint8_t keys[40][32];
    fill(keys, sizeof keys);
    static const size_t nblk[] = {0, 1, 2, 5, 33};
    for (size_t li = 0; li < sizeof nblk / sizeof nblk[0]; li++) {
        size_t len = nblk[li] * bs;
        fill(pt, len);
        ok(kuai_ecb_encrypt_oneshot(c, keys[0], ks, pt, ct, len), KUAI_OK, "ecb oneshot enc");
        DEFINED(ct, len);
        ok(kuai_ecb_decrypt_oneshot(c, keys[0], ks, ct, rt, len), KUAI_OK, "ecb oneshot dec");
        same(rt, pt, len, "ecb oneshot");
        const uint8_t *kp[3] = {keys[0], keys[1], keys[2]};
        const uint8_t *in[3] = {pt, pt + len, pt + 2 * len};
        uint8_t *out[3] = {ct, ct + len, ct + 2 * len};
        fill(pt, 3 * len);
        ok(kuai_ecb_encrypt_oneshot_multi(c, kp, ks, in, out, 3, len), KUAI_OK,
           "ecb oneshot multi enc");
        DEFINED(ct, 3 * len);
        ok(kuai_ecb_decrypt_oneshot_multi(c, kp, ks, (const uint8_t *const *)out, out, 3, len),
           KUAI_OK, "ecb oneshot multi dec");
        same(ct, pt, 3 * len, "ecb oneshot multi");
    }
}

static void multi(kuai_cipher c, const char *backend, size_t bs)
{
    static kuai_key keys[33];
    const kuai_key *kp[33];
    uint8_t kb[32];
    const char *all[16];
    size_t nall = kuai_backends(c, all, 16);
    for (int i = 0; i < 33; i++) {
        fill(kb, sizeof kb);
        /* most under the backend under test, a few under others: keys of
         * any backend may join */
        const char *b = i % 5 == 4 && nall ? all[(size_t)i % nall] : backend;
        if (!ok(kuai_key_init_backend(&keys[i], c, kb, kuai_key_size(c), b), KUAI_OK,
                "multi key setup"))
            return;
        kp[i] = &keys[i];
    }
    /* the first three again in one call (a pair and one alone) */
    uint8_t kb3[3][32];
    fill(kb3, sizeof kb3);
    kuai_key *ko[3] = {&keys[0], &keys[1], &keys[2]};
    const uint8_t *kbp[3] = {kb3[0], kb3[1], kb3[2]};
    if (!ok(kuai_key_init_multi_backend(ko, c, kbp, kuai_key_size(c), 3, backend), KUAI_OK,
            "multi key setup, one call"))
        return;
    static const size_t ns[] = {1, 3, 8, 9, 17, 33};
    static const size_t nblk[] = {0, 1, 2, 5, 40};
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        for (size_t li = 0; li < sizeof nblk / sizeof nblk[0]; li++) {
            size_t n = ns[ni], len = nblk[li] * bs;
            if (n * len > MAXLEN)
                continue;
            const uint8_t *in[33];
            uint8_t *out[33], *back[33], *ivs[33], *ivs2[33];
            static uint8_t ivbuf[33][KUAI_MAX_BLOCK], ivbuf2[33][KUAI_MAX_BLOCK];
            fill(pt, n * len);
            fill(ivbuf, sizeof ivbuf);
            memcpy(ivbuf2, ivbuf, sizeof ivbuf);
            for (size_t i = 0; i < n; i++) {
                in[i] = pt + i * len;
                out[i] = ct + i * len;
                back[i] = rt + i * len;
                ivs[i] = ivbuf[i];
                ivs2[i] = ivbuf2[i];
            }
            ok(kuai_ecb_encrypt_multi(kp, in, out, n, len), KUAI_OK, "ecb multi enc");
            DEFINED(ct, n * len);
            ok(kuai_ecb_decrypt_multi(kp, (const uint8_t *const *)out, back, n, len), KUAI_OK,
               "ecb multi dec");
            same(rt, pt, n * len, "ecb multi");
            ok(kuai_cbc_encrypt_multi(kp, ivs, in, out, n, len), KUAI_OK, "cbc multi enc");
            DEFINED(ct, n * len);
            DEFINED(ivbuf, sizeof ivbuf);
            ok(kuai_cbc_decrypt_multi(kp, ivs2, (const uint8_t *const *)out, back, n, len), KUAI_OK,
               "cbc multi dec");
            same(rt, pt, n * len, "cbc multi");
            DEFINED(ivbuf2, sizeof ivbuf2);
        }
    }
    for (int i = 0; i < 33; i++)
        kuai_key_wipe(&keys[i]);
    (void)bs;
}

/* ---- GCM ----------------------------------------------------------------- */

static void gcm(const kuai_key *k)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 64, 255, 4096 + 13, 2 * 4096 + 48};
    static const size_t ivls[] = {12, 1, 16, 60};
    static const size_t aadls[] = {0, 1, 17, 64};
    uint8_t iv[64], aad[80], tag[16], tag2[16];
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        for (size_t vi = 0; vi < sizeof ivls / sizeof ivls[0]; vi++) {
            size_t len = lens[li], ivl = ivls[vi], aadl = aadls[(li + vi) % 4];
            fill(iv, sizeof iv);
            fill(aad, sizeof aad);
            fill(pt, len);
            char what[64];
            snprintf(what, sizeof what, "gcm len %zu iv %zu aad %zu", len, ivl, aadl);
            if (!ok(kuai_gcm_encrypt(k, iv, ivl, aad, aadl, pt, ct, len, tag, 16), KUAI_OK, what))
                continue;
            DEFINED(ct, len);
            DEFINED(tag, 16);
            ok(kuai_gcm_decrypt(k, iv, ivl, aad, aadl, ct, rt, len, tag, 16), KUAI_OK, what);
            same(rt, pt, len, what);
            /* a wrong tag: KUAI_ERR_AUTH, out zeroed */
            tag[3] ^= 1;
            ok(kuai_gcm_decrypt(k, iv, ivl, aad, aadl, ct, rt, len, tag, 16), KUAI_ERR_AUTH, what);
            DEFINED(rt, len);
            tag[3] ^= 1;
            /* streaming, in pieces, in place */
            kuai_gcm_ctx cx;
            memcpy(rt, pt, len);
            ok(kuai_gcm_init(&cx, k, iv, ivl), KUAI_OK, what);
            size_t a1 = aadl / 3;
            ok(kuai_gcm_aad(&cx, aad, a1), KUAI_OK, what);
            ok(kuai_gcm_aad(&cx, aad + a1, aadl - a1), KUAI_OK, what);
            for (size_t off = 0, step = 1; off < len; off += step, step = step * 3 + 5) {
                size_t n = len - off < step ? len - off : step;
                ok(kuai_gcm_encrypt_update(&cx, rt + off, rt + off, n), KUAI_OK, what);
            }
            ok(kuai_gcm_encrypt_final(&cx, tag2, 13), KUAI_OK, what);
            same(rt, ct, len, what);
            same(tag2, tag, 13, what);
            ok(kuai_gcm_init(&cx, k, iv, ivl), KUAI_OK, what);
            ok(kuai_gcm_aad(&cx, aad, aadl), KUAI_OK, what);
            for (size_t off = 0, step = 7; off < len; off += step, step = step * 2 + 9) {
                size_t n = len - off < step ? len - off : step;
                ok(kuai_gcm_decrypt_update(&cx, ct + off, rt + off, n), KUAI_OK, what);
            }
            ok(kuai_gcm_decrypt_final(&cx, tag, 16), KUAI_OK, what);
            same(rt, pt, len, what);
            /* the one-shot calls under a template (its own IV 12 bytes) */
            ok(kuai_gcm_init(&cx, k, iv + 1, 12), KUAI_OK, what);
            ok(kuai_gcm_encrypt_with(&cx, k, iv, ivl, aad, aadl, pt, rt, len, tag2, 16), KUAI_OK,
               what);
            same(rt, ct, len, what);
            same(tag2, tag, 16, what);
            ok(kuai_gcm_decrypt_with(&cx, k, iv, ivl, aad, aadl, ct, rt, len, tag, 16), KUAI_OK,
               what);
            same(rt, pt, len, what);
            kuai_gcm_wipe(&cx);
        }
    }
}

/* Every GHASH backend usable here, driven directly (GCM uses the best
 * one only), against ghash_ref. */
static void ghash_all(void)
{
    static _Alignas(64) unsigned char hk[GHASH_KEY_BYTES], hr[GHASH_KEY_BYTES];
    uint8_t h[16], data[16 * 40], y[16], yr[16];
    for (const ghash_impl *const *g = kuai_ghash_impls(); *g; g++) {
        if (!(*g)->available())
            continue;
        cur_backend = (*g)->name;
        for (size_t nb = 1; nb <= 40; nb += nb < 10 ? 1 : 7) {
            fill(h, sizeof h);
            fill(data, sizeof data);
            fill(y, sizeof y);
            memcpy(yr, y, 16);
            (*g)->init(hk, h);
            (*g)->update(hk, y, data, nb);
            ghash_ref.init(hr, h);
            ghash_ref.update(hr, yr, data, nb);
            calls++;
            same(y, yr, 16, "ghash");
        }
    }
}

/* ---- threads ------------------------------------------------------------- */

static void parallel(const kuai_key *k, size_t bs)
{
    uint8_t iv0[KUAI_MAX_BLOCK], iv[KUAI_MAX_BLOCK], iv2[KUAI_MAX_BLOCK];
    size_t len = PAR_LEN - 64, lctr = len - bs + 3;
    fill(big_pt, len);
    fill(iv0, sizeof iv0);
    ok(kuai_ecb_encrypt_parallel(k, big_pt, big_ct, len, 4), KUAI_OK, "ecb parallel enc");
    DEFINED(big_ct, len);
    ok(kuai_ecb_decrypt_parallel(k, big_ct, big_rt, len, 3), KUAI_OK, "ecb parallel dec");
    same(big_rt, big_pt, len, "ecb parallel");
    memcpy(iv, iv0, sizeof iv);
    memcpy(iv2, iv0, sizeof iv);
    ok(kuai_ctr_crypt_parallel(k, iv, big_pt, big_ct, lctr, 4), KUAI_OK, "ctr parallel");
    DEFINED(big_ct, lctr);
    DEFINED(iv, bs);
    ok(kuai_ctr_crypt(k, iv2, big_ct, big_rt, lctr), KUAI_OK, "ctr");
    same(big_rt, big_pt, lctr, "ctr parallel");
    memcpy(iv, iv0, sizeof iv);
    memcpy(iv2, iv0, sizeof iv);
    ok(kuai_cbc_encrypt(k, iv, big_pt, big_ct, len), KUAI_OK, "cbc enc");
    ok(kuai_cbc_decrypt_parallel(k, iv2, big_ct, big_ct, len, 4), KUAI_OK, "cbc parallel dec");
    same(big_ct, big_pt, len, "cbc parallel in place");
    DEFINED(iv2, bs);
}

/* ---- the small calls ------------------------------------------------------ */

static void helpers(kuai_cipher c, const kuai_key *k)
{
    const char *names[16];
    size_t n = kuai_backends(c, names, 16);
    DEFINED(&n, sizeof n);
    for (size_t i = 0; i < n && i < 16; i++) {
        DEFINED(names[i], strlen(names[i]) + 1);
        (void)kuai_backend_leaky(names[i]);
    }
    const char *b = kuai_key_backend(k);
    DEFINED(b, strlen(b) + 1);
    const char *cn = kuai_cipher_name(c);
    DEFINED(cn, strlen(cn) + 1);
    size_t s = kuai_block_size(c) + kuai_key_size(c);
    DEFINED(&s, sizeof s);
    for (int e = 0; e >= -8; e--) {
        const char *m = kuai_strerror(e);
        DEFINED(m, strlen(m) + 1);
    }
}

static int list_backends(void)
{
    const char *seen[64];
    size_t nseen = 0;
    for (size_t ci = 0; ci < nciphers; ci++) {
        const char *names[16];
        size_t n = kuai_backends(ciphers[ci], names, 16);
        for (size_t i = 0; i < n && i < 16; i++) {
            size_t j = 0;
            while (j < nseen && strcmp(seen[j], names[i]) != 0)
                j++;
            if (j == nseen && nseen < 64) {
                seen[nseen++] = names[i];
                printf("%s\n", names[i]);
            }
        }
    }
    printf("ghash\n"); /* every GHASH backend, driven directly */
    return 0;
}

int main(int argc, char **argv)
{
    nciphers = kuai_ciphers(ciphers, 64);
    if (nciphers > 64)
        nciphers = 64;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--list-backends") == 0)
            return list_backends();
        else {
            fprintf(stderr, "usage: kuai_memcheck [--backend NAME] | --list-backends\n");
            return 2;
        }
    }
    pt = malloc(MAXLEN);
    ct = malloc(MAXLEN);
    rt = malloc(MAXLEN);
    big_pt = malloc(PAR_LEN);
    big_ct = malloc(PAR_LEN);
    big_rt = malloc(PAR_LEN);
    if (!pt || !ct || !rt || !big_pt || !big_ct || !big_rt)
        return 2;
    unsigned runs = 0;
    for (size_t ci = 0; ci < nciphers; ci++) {
        kuai_cipher c = ciphers[ci];
        const char *names[16];
        size_t nb = kuai_backends(c, names, 16);
        for (size_t b = 0; b < nb && b < 16; b++) {
            if (only && strcmp(only, names[b]) != 0)
                continue;
            cur_cipher = kuai_cipher_name(c);
            cur_backend = names[b];
            runs++;
            size_t bs = kuai_block_size(c);
            uint8_t kb[32];
            fill(kb, sizeof kb);
            kuai_key *k = malloc(sizeof *k);
            if (!k || !ok(kuai_key_init_backend(k, c, kb, kuai_key_size(c), names[b]), KUAI_OK,
                          "key setup"))
                return 2;
            helpers(c, k);
            modes(k, bs);
            multi(c, names[b], bs);
            if (bs == 16)
                gcm(k);
            parallel(k, bs);
            kuai_key_wipe(k);
            free(k);
            /* The one-shot calls choose their backend as kuai_key_init
             * does: through KUAI_BACKEND (and the leaky opt-in), which the
             * library reads once per process, and again after the
             * registry's test hook. */
            setenv("KUAI_BACKEND", names[b], 1);
            setenv("KUAI_ALLOW_LEAKY_BACKENDS", "1", 1);
            kuai_registry_reload();
            kuai_key k2;
            if (ok(kuai_key_init(&k2, c, kb, kuai_key_size(c)), KUAI_OK, "key setup (env)")) {
                const char *got = kuai_key_backend(&k2);
                if (strcmp(got, names[b]) != 0)
                    fail("KUAI_BACKEND not followed", KUAI_ERR_BACKEND);
                kuai_key_wipe(&k2);
            }
            oneshot(c, bs);
            unsetenv("KUAI_BACKEND");
            unsetenv("KUAI_ALLOW_LEAKY_BACKENDS");
            kuai_registry_reload();
        }
    }
    if (!only || strcmp(only, "ghash") == 0) {
        cur_cipher = "ghash";
        ghash_all();
        runs++;
    }
    printf("kuai_memcheck%s%s: %u cipher/backend runs, %lu calls, %lu failures\n",
           only ? " --backend " : "", only ? only : "", runs, calls, failures);
    free(pt);
    free(ct);
    free(rt);
    free(big_pt);
    free(big_ct);
    free(big_rt);
    return failures || runs == 0 ? 1 : 0;
}
