/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench's single-thread scenarios for one (cipher, backend): the
 * uBlock paper's long single-key and multi-key rows, GCM, and the short
 * single-key and multi-key rows, each beside its peer. */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t stream_counts[] = {4, 8, 16, 32};

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
static void w_gcm_enc_with(void *p)
{
    ctx *x = p;
    K(kuai_gcm_encrypt_with(x->gtmpl, &x->keys[0], gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN,
                            x->in[0], x->out[0], x->len, x->etag, GCM_TAG_LEN),
      "kuai_gcm_encrypt_with");
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

void bench_backend(const bench_cipher *bc, const char *backend, const opts *o)
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
    /* GCM of one short message (the same IV, AAD and tag size) under a key
     * whose GHASH set-up (H, its powers) is made before timing, as the
     * peer's is (EVP_CipherInit_ex2 with the IV alone, gcry_cipher_setiv):
     * kuai_gcm_encrypt_with on a template made once */
    if (x->bs == 16 && mode_wanted(o, "gcm-enc-short")) {
        x->n = 1;
        x->len = GCM_SHORT_LEN;
        kuai_gcm_ctx tmpl;
        K(kuai_gcm_init(&tmpl, &x->keys[0], gcm_iv, GCM_IV_LEN), "kuai_gcm_init");
        x->gtmpl = &tmpl;
        a = (job){.fn = w_gcm_enc_with, .ctx = x, .bytes = GCM_SHORT_LEN};
        measure_row(x, pstates, bc, Y_GCM_ENC, "gcm-enc-short", &a, 1, 1, o);
        x->gtmpl = NULL;
        kuai_gcm_wipe(&tmpl);
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
