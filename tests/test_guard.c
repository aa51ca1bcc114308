/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Buffers that touch unmapped memory: every backend and mode with its input
 * and output ending exactly at a PROT_NONE page, and starting exactly after
 * one. A wide kernel that reads a vector past the end of the data (or
 * before its start) faults here instead of silently reading a neighbour,
 * which byte guards and ASan's redzones can miss for reads that stay
 * inside an allocation.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "test_util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct pagebuf {
    uint8_t *map;     /* guard page, data pages, guard page */
    uint8_t *lo, *hi; /* first and one-past-last usable byte */
    size_t maplen;
} pagebuf;

static int pagebuf_new(pagebuf *b, size_t data_len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (data_len + pg - 1) / pg;
    b->maplen = (data_pages + 2) * pg;
    void *m = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!CHECK(m != MAP_FAILED, "mmap %zu bytes", b->maplen))
        return 0;
    b->map = m;
    b->lo = b->map + pg;
    b->hi = b->lo + data_pages * pg;
    CHECK(mprotect(b->map, pg, PROT_NONE) == 0 && mprotect(b->hi, pg, PROT_NONE) == 0,
          "mprotect guard pages");
    return 1;
}

static void pagebuf_free(pagebuf *b)
{
    munmap(b->map, b->maplen);
}

enum { GUARD_MAX = 8192 + 64 };

/* One mode over a buffer placed at p (input) and q (output, == p for in
 * place), against the same call on ordinary heap buffers. */
static void one(const kuai_key *k, size_t bs, int mode, const uint8_t *src, size_t len, uint8_t *p,
                uint8_t *q, const char *what)
{
    static uint8_t want[GUARD_MAX], iv0[32], iva[32], ivb[32], tag_a[16], tag_b[16];
    rng_fill(iv0, sizeof iv0);
    memcpy(iva, iv0, bs);
    memcpy(ivb, iv0, bs);
    memcpy(p, src, len);
    int ra = -1, rb = -2;
    switch (mode) {
    case 0:
        ra = kuai_ecb_encrypt(k, src, want, len);
        rb = kuai_ecb_encrypt(k, p, q, len);
        break;
    case 1:
        ra = kuai_ecb_decrypt(k, src, want, len);
        rb = kuai_ecb_decrypt(k, p, q, len);
        break;
    case 2:
        ra = kuai_cbc_encrypt(k, iva, src, want, len);
        rb = kuai_cbc_encrypt(k, ivb, p, q, len);
        break;
    case 3:
        ra = kuai_cbc_decrypt(k, iva, src, want, len);
        rb = kuai_cbc_decrypt(k, ivb, p, q, len);
        break;
    case 4:
        ra = kuai_ctr_crypt(k, iva, src, want, len);
        rb = kuai_ctr_crypt(k, ivb, p, q, len);
        break;
    case 5:
        ra = kuai_gcm_encrypt(k, iv0, 12, NULL, 0, src, want, len, tag_a, 16);
        rb = kuai_gcm_encrypt(k, iv0, 12, NULL, 0, p, q, len, tag_b, 16);
        break;
    }
    char w[160];
    snprintf(w, sizeof w, "%s, len %zu", what, len);
    if (CHECK_RC(rb, ra, w) && ra == KUAI_OK) {
        CHECK_MEM(q, want, len, w);
        if (mode == 5)
            CHECK_MEM(tag_b, tag_a, 16, w);
    }
}

/* Key bytes that end at a guard page or start right after one: key setup
 * of one key and of four (kuai_key_init_multi: the keys' bytes go into
 * vector lanes by loads of their own), and the one-shot calls, which set
 * up inside, against the same keys read from ordinary buffers. A load of
 * more than key_len bytes (a 128-bit key read as 32 bytes) faults here. */
static void guard_keys(kuai_cipher c, const char *backend, pagebuf *in, pagebuf *out)
{
    const size_t kl = kuai_key_size(c), bs = kuai_block_size(c);
    char what[96];
    snprintf(what, sizeof what, "%s %s key bytes at a guard page", kuai_cipher_name(c), backend);
    uint8_t heap[4][32], blk[4][32], want[4][32], got[4][32];
    /* ending at the upper guard pages, starting after the lower ones */
    const uint8_t *at[4] = {in->hi - kl, out->hi - kl, in->lo, out->lo};
    for (int j = 0; j < 4; j++) {
        rng_fill(heap[j], kl);
        memcpy((uint8_t *)at[j], heap[j], kl);
        rng_fill(blk[j], bs);
    }
    kuai_key want_k[4], got_k[4];
    kuai_key *gp[4] = {&got_k[0], &got_k[1], &got_k[2], &got_k[3]};
    for (int j = 0; j < 4; j++) {
        if (!key_init_ok(&want_k[j], c, heap[j], backend))
            return;
        kuai_ecb_encrypt(&want_k[j], blk[j], want[j], bs);
    }
    for (int j = 0; j < 4; j++) {
        CHECK(kuai_key_init_backend(&got_k[j], c, at[j], kl, backend) == KUAI_OK, "%s: init", what);
        kuai_ecb_encrypt(&got_k[j], blk[j], got[j], bs);
        CHECK(memcmp(got[j], want[j], bs) == 0, "%s: key %d", what, j);
    }
    CHECK(kuai_key_init_multi_backend(gp, c, at, kl, 4, backend) == KUAI_OK, "%s: init_multi",
          what);
    for (int j = 0; j < 4; j++) {
        kuai_ecb_encrypt(&got_k[j], blk[j], got[j], bs);
        CHECK(memcmp(got[j], want[j], bs) == 0, "%s: init_multi key %d", what, j);
    }
    /* the one-shot calls run the default backend: with it only */
    kuai_key d;
    const int is_default =
        kuai_key_init(&d, c, heap[0], kl) == KUAI_OK && strcmp(kuai_key_backend(&d), backend) == 0;
    kuai_key_wipe(&d);
    if (is_default) {
        const uint8_t *ip[4] = {blk[0], blk[1], blk[2], blk[3]};
        uint8_t *op[4] = {got[0], got[1], got[2], got[3]};
        for (int j = 0; j < 4; j++) {
            memset(got[j], 0, sizeof got[j]);
            CHECK(kuai_ecb_encrypt_oneshot(c, at[j], kl, blk[j], got[j], bs) == KUAI_OK &&
                      memcmp(got[j], want[j], bs) == 0,
                  "%s: one-shot key %d", what, j);
            memset(got[j], 0, sizeof got[j]);
        }
        CHECK(kuai_ecb_encrypt_oneshot_multi(c, at, kl, ip, op, 4, bs) == KUAI_OK,
              "%s: one-shot multi", what);
        for (int j = 0; j < 4; j++)
            CHECK(memcmp(got[j], want[j], bs) == 0, "%s: one-shot multi key %d", what, j);
    }
    for (int j = 0; j < 4; j++) {
        kuai_key_wipe(&want_k[j]);
        kuai_key_wipe(&got_k[j]);
    }
}

void test_guard_pages(void)
{
    static const char *const mode_names[] = {"ecb-enc", "ecb-dec", "cbc-enc",
                                             "cbc-dec", "ctr",     "gcm-enc"};
    static uint8_t src[GUARD_MAX];
    pagebuf in, out;
    if (!pagebuf_new(&in, GUARD_MAX) || !pagebuf_new(&out, GUARD_MAX))
        return;
    group_begin("guard pages");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        size_t bs = kuai_block_size(c);
        const char *names[MAX_BACKENDS];
        size_t nb = test_backends(c, names, MAX_BACKENDS);
        for (size_t b = 0; b < nb && b < MAX_BACKENDS; b++) {
            uint8_t key[32];
            kuai_key k;
            rng_fill(key, sizeof key);
            if (!key_init_ok(&k, c, key, names[b]))
                continue;
            for (int mode = 0; mode < 6; mode++) {
                if (mode == 5 && bs != 16)
                    continue;
                int blocky = mode < 4;
                static const size_t counts[] = {1, 2, 7, 8, 9, 16, 31, 33, 64, 255};
                static const size_t bytes[] = {1, 15, 17, 31, 100, 1000, 4097, 8191};
                size_t nlen =
                    blocky ? sizeof counts / sizeof counts[0] : sizeof bytes / sizeof bytes[0];
                for (size_t li = 0; li < nlen; li++) {
                    size_t len = blocky ? counts[li] * bs : bytes[li];
                    if (len > GUARD_MAX - 64)
                        continue;
                    rng_fill(src, len);
                    char what[96];
                    snprintf(what, sizeof what, "%s %s %s", kuai_cipher_name(c), names[b],
                             mode_names[mode]);
                    /* Ending at the guard page, out of place and in place. */
                    one(&k, bs, mode, src, len, in.hi - len, out.hi - len, what);
                    one(&k, bs, mode, src, len, in.hi - len, in.hi - len, what);
                    /* Starting right after the lower guard page. */
                    one(&k, bs, mode, src, len, in.lo, out.lo, what);
                    one(&k, bs, mode, src, len, out.lo, out.lo, what);
                }
            }
            kuai_key_wipe(&k);
            guard_keys(c, names[b], &in, &out);
        }
    }
    group_end();
    pagebuf_free(&in);
    pagebuf_free(&out);
}
