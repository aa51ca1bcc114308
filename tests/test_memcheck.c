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
 * With the container built (KUAI_MEMCHECK_FILE), its calls too, once
 * (pseudo-backend "container"): every cipher, a raw key and a password,
 * chunk by chunk and as streams, tampered and cut files refused.
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
#ifdef KUAI_MEMCHECK_FILE
#include "kuai_file.h"
#endif
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

/* ---- the container (kuai_file) ------------------------------------------ */

#ifdef KUAI_MEMCHECK_FILE
/* The container's own code (headers, key derivation through libcrypto,
 * chunk framing, the failure paths that must zero their output) under the
 * default backend of each cipher: the ciphers themselves are covered per
 * backend above. Two chunks (one full, one short), so each file is a
 * little over 1 MiB: a few seconds under valgrind for all seven ciphers. */
#define C_PT (KUAI_FILE_CHUNK_SIZE + 1000)
#define C_CT (KUAI_FILE_HEADER_SIZE + C_PT + 2 * KUAI_FILE_TAG_SIZE)

typedef struct {
    const uint8_t *p;
    size_t len, off;
} mem_in;
typedef struct {
    uint8_t *p;
    size_t cap, len;
} mem_out;

static long mem_read(void *ctx, uint8_t *buf, size_t n)
{
    mem_in *m = ctx;
    size_t k = m->len - m->off < n ? m->len - m->off : n;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (long)k;
}

static int mem_write(void *ctx, const uint8_t *buf, size_t n)
{
    mem_out *m = ctx;
    /* what the library hands a caller must be defined, chunk by chunk */
    DEFINED(buf, n);
    if (n > m->cap - m->len)
        return -1;
    memcpy(m->p + m->len, buf, n);
    m->len += n;
    return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    DEFINED(p, n);
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

/* Chunk by chunk, as the kuai tool does: a raw key. */
static void container_chunks(kuai_cipher c, const uint8_t *fpt, uint8_t *fct, uint8_t *frt)
{
    const size_t ks = kuai_key_size(c), CH = KUAI_FILE_CHUNK_SIZE, TG = KUAI_FILE_TAG_SIZE;
    const size_t HD = KUAI_FILE_HEADER_SIZE, tail = C_PT - CH;
    uint8_t key[32];
    kuai_file_params p, q;
    kuai_file_header_error why;
    kuai_file_keys k;
    fill(key, sizeof key);
    if (!ok(kuai_file_params_new(&p, c, KUAI_FILE_KDF_KEY, 0), KUAI_OK, "file params"))
        return;
    if (!ok(kuai_file_seal_begin(&k, &p, key, ks, fct), KUAI_OK, "file seal_begin"))
        return;
    DEFINED(fct, HD);
    ok(kuai_file_seal_chunk(&k, 0, 0, fpt, CH, fct + HD), KUAI_OK, "file seal chunk 0");
    ok(kuai_file_seal_chunk(&k, 1, 1, fpt + CH, tail, fct + HD + CH + TG), KUAI_OK,
       "file seal chunk 1");
    DEFINED(fct, C_CT);
    kuai_file_keys_wipe(&k);

    /* a header cut short, and the whole one */
    ok(kuai_file_header_parse(fct, 40, &q, &why), KUAI_ERR_FORMAT, "file header cut");
    DEFINED(&why, sizeof why);
    if (!ok(kuai_file_header_parse(fct, HD, &q, &why), KUAI_OK, "file header_parse"))
        return;
    DEFINED(&q, sizeof q);
    DEFINED(&why, sizeof why);
    /* a wrong key: the header tag refuses it */
    key[0] ^= 1;
    ok(kuai_file_open_begin(&k, fct, &q, key, ks), KUAI_ERR_AUTH, "file open_begin wrong key");
    key[0] ^= 1;
    if (!ok(kuai_file_open_begin(&k, fct, &q, key, ks), KUAI_OK, "file open_begin"))
        return;
    uint8_t *c0 = fct + HD, *c1 = fct + HD + CH + TG;
    ok(kuai_file_open_chunk(&k, 0, 0, c0, CH + TG, frt), KUAI_OK, "file open chunk 0");
    ok(kuai_file_open_chunk(&k, 1, 1, c1, tail + TG, frt + CH), KUAI_OK, "file open chunk 1");
    same(frt, fpt, C_PT, "file chunks round trip");
    /* A tampered chunk is refused and its output zeroed, out of place
     * (a ciphertext byte) and in place (a tag byte); on the short last
     * chunk, so that every cipher pays little for it. */
    c1[tail / 2] ^= 0x20;
    memset(frt, 0xa5, tail);
    ok(kuai_file_open_chunk(&k, 1, 1, c1, tail + TG, frt), KUAI_ERR_AUTH, "file tampered chunk 1");
    if (!all_zero(frt, tail))
        fail("file tampered chunk 1: output not zeroed", 0);
    c1[tail / 2] ^= 0x20;
    c1[tail + 3] ^= 1;
    memcpy(frt, c1, tail + TG);
    ok(kuai_file_open_chunk(&k, 1, 1, frt, tail + TG, frt), KUAI_ERR_AUTH,
       "file tampered tag, in place");
    if (!all_zero(frt, tail))
        fail("file tampered tag, in place: output not zeroed", 0);
    c1[tail + 3] ^= 1;
    /* The full chunk tampered, and read as the last one (a file cut at
     * the chunk boundary), take other paths in the open (GCM: a failed
     * open, then the tag checked without output; uBlock-256/256: its HMAC
     * twice), one per construction: 1 MiB each is most of the time here. */
    if (c == KUAI_SM4 || c == KUAI_UBLOCK_256_256) {
        c0[77] ^= 0x20;
        memset(frt, 0xa5, CH);
        ok(kuai_file_open_chunk(&k, 0, 0, c0, CH + TG, frt), KUAI_ERR_AUTH,
           "file tampered chunk 0");
        if (!all_zero(frt, CH))
            fail("file tampered chunk 0: output not zeroed", 0);
        c0[77] ^= 0x20;
        ok(kuai_file_open_chunk(&k, 0, 1, c0, CH + TG, frt), KUAI_ERR_TRUNCATED,
           "file cut at a chunk boundary");
        if (!all_zero(frt, CH))
            fail("file cut at a chunk boundary: output not zeroed", 0);
    }
    kuai_file_keys_wipe(&k);
}

/* Whole streams through callbacks, as the Python binding does: a file
 * sealed, opened, then opened with its last chunk tampered. */
static void container_stream(kuai_cipher c, kuai_file_kdf kdf, const uint8_t *secret, size_t slen,
                             const uint8_t *fpt, uint8_t *fct, uint8_t *frt)
{
    kuai_file_params p, q;
    /* the smallest scrypt cost the format takes (2^10, r = 8: 1 MiB) */
    if (!ok(kuai_file_params_new(&p, c, kdf, KUAI_FILE_SCRYPT_LOG2N_MIN), KUAI_OK, "file params"))
        return;
    mem_in in = {fpt, C_PT, 0};
    mem_out out = {fct, C_CT, 0};
    if (!ok(kuai_file_encrypt_stream(&p, secret, slen, mem_read, &in, mem_write, &out), KUAI_OK,
            "file encrypt_stream"))
        return;
    if (out.len != C_CT) {
        fail("file encrypt_stream: length", 0);
        return;
    }
    mem_in ci = {fct, C_CT, 0};
    mem_out ro = {frt, C_PT, 0};
    if (ok(kuai_file_decrypt_stream(kdf, secret, slen, mem_read, &ci, mem_write, &ro, &q), KUAI_OK,
           "file decrypt_stream"))
        DEFINED(&q, sizeof q);
    if (ro.len != C_PT)
        fail("file decrypt_stream: length", 0);
    same(frt, fpt, C_PT, "file stream round trip");
    /* the last chunk tampered: the first, verified, chunk is all that is
     * written */
    fct[C_CT - 100] ^= 4;
    ci.off = 0;
    ro.len = 0;
    ok(kuai_file_decrypt_stream(kdf, secret, slen, mem_read, &ci, mem_write, &ro, NULL),
       KUAI_ERR_AUTH, "file decrypt_stream tampered");
    if (ro.len != KUAI_FILE_CHUNK_SIZE)
        fail("file decrypt_stream tampered: output is not the verified chunk alone", 0);
    fct[C_CT - 100] ^= 4;
}

static void container(void)
{
    uint8_t *fpt = malloc(C_PT), *fct = malloc(C_CT), *frt = malloc(C_CT);
    if (!fpt || !fct || !frt) {
        fail("file buffers", KUAI_ERR_EXTERNAL);
        free(fpt);
        free(fct);
        free(frt);
        return;
    }
    fill(fpt, C_PT);
    /* every cipher the format names (kuai_file.h: ids 1..7) */
    for (int ci = KUAI_UBLOCK_128_128; ci <= KUAI_AES_256; ci++) {
        kuai_cipher c = (kuai_cipher)ci;
        uint8_t key[32];
        fill(key, sizeof key);
        cur_cipher = kuai_cipher_name(c);
        container_chunks(c, fpt, fct, frt);
        /* the stream calls' own code is the same for every cipher: one
         * per construction (GCM, uBlock-256/256's CTR + HMAC) */
        if (c == KUAI_AES_128 || c == KUAI_UBLOCK_256_256)
            container_stream(c, KUAI_FILE_KDF_KEY, key, kuai_key_size(c), fpt, fct, frt);
    }
    /* a password (scrypt): one cipher is enough, the KDF is not per cipher */
    cur_cipher = kuai_cipher_name(KUAI_SM4);
    static const uint8_t pw[] = "correct horse";
    container_stream(KUAI_SM4, KUAI_FILE_KDF_SCRYPT, pw, sizeof pw - 1, fpt, fct, frt);
    mem_in ci = {fct, C_CT, 0};
    mem_out ro = {frt, C_PT, 0};
    ok(kuai_file_decrypt_stream(KUAI_FILE_KDF_SCRYPT, (const uint8_t *)"wrong", 5, mem_read, &ci,
                                mem_write, &ro, NULL),
       KUAI_ERR_AUTH, "file wrong password");
    if (ro.len != 0)
        fail("file wrong password: wrote output", 0);
    free(fpt);
    free(fct);
    free(frt);
}
#endif

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
#ifdef KUAI_MEMCHECK_FILE
    printf("container\n"); /* kuai_file, once, under the default backends */
#endif
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
#ifdef KUAI_MEMCHECK_FILE
    if (!only || strcmp(only, "container") == 0) {
        cur_backend = "container";
        container();
        runs++;
    }
#endif
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
