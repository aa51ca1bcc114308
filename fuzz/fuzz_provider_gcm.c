/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the provider's GCM (provider/kuai_provider.c, compiled
 * in and registered as a built-in provider) through EVP, against the
 * library's one-shot GCM.
 *
 * The input picks the cipher (the GCM name the provider registers for each
 * 128-bit-block cipher of kuai_ciphers()),
 * key, IV length (1..64, set by ctrl or by parameter before the IV), tag
 * length (4..16), AAD, data, the pieces both are fed in, a tag of its own,
 * and for each of the four messages below how it runs: key and IV in one
 * init or two, the tag by ctrl or by parameter (for a decryption: set
 * before the data or just before final), in place or not, on a fresh
 * context or on the previous message's one re-initialised, and whether the
 * context is copied (EVP_CIPHER_CTX_copy) somewhere mid-message; then the
 * original and the copy both finish (or the original is freed at once and
 * the copy finishes alone) and must agree. Properties:
 *
 *  (a) encryption in pieces gives kuai_gcm_encrypt's ciphertext and tag;
 *  (b) decryption in other pieces with that tag gives the plaintext back
 *      and EVP_CipherFinal_ex succeeds;
 *  (c) decryption with a wrong tag, the right one with the input's tag as
 *      the difference (one bit when that is zero), fails at
 *      EVP_CipherFinal_ex: near misses anywhere in the tag, not only random
 *      tags, must be refused;
 *  (d) the input's data as ciphertext under the input's tag: final
 *      succeeds exactly when kuai_gcm_decrypt does, and then with its
 *      plaintext.
 *
 * Any violation, or an EVP call that fails where it must not, aborts.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <openssl/core.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <stdlib.h>
#include <string.h>

#define MAXDATA 4096
#define NCUTS 8

/* How one message runs: bits of a flags byte, piece sizes, copy point. */
enum {
    F_IVLEN_PARAM = 1, /* IV length by OSSL_CIPHER_PARAM_AEAD_IVLEN, else ctrl */
    F_SPLIT_INIT = 2,  /* key and IV in two inits (re-used context: IV only) */
    F_TAG_PARAM = 4,   /* tag by OSSL_CIPHER_PARAM_AEAD_TAG, else ctrl */
    F_TAG_EARLY = 8,   /* decryption: tag set before the AAD, else before final */
    F_IN_PLACE = 16,   /* data updates with out == in */
    F_COPY = 32,       /* copy the context mid-message */
    F_FREE_ORIG = 64,  /* and free the original there: the copy goes on alone */
    F_REUSE_CTX = 128  /* the previous message's context, re-initialised */
};

typedef struct how {
    unsigned flags;
    uint8_t cuts[NCUTS]; /* piece sizes in turn; 0: an empty update, then the rest */
    size_t copy_at;      /* the update after which to copy (at final if never reached) */
} how;

typedef struct msg {
    const EVP_CIPHER *cipher;
    const uint8_t *key, *iv;
    size_t ivlen;
    const uint8_t *aad;
    size_t aad_len;
    const uint8_t *in;
    size_t len;
    size_t tag_len;
} msg;

static void set_tag(EVP_CIPHER_CTX *c, const how *h, const uint8_t *tag, size_t len)
{
    if (h->flags & F_TAG_PARAM) {
        OSSL_PARAM p[] = {
            OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, (void *)tag, len),
            OSSL_PARAM_construct_end()};
        must(EVP_CIPHER_CTX_set_params(c, p) == 1);
    } else {
        must(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)len, (void *)tag) == 1);
    }
}

static void get_tag(EVP_CIPHER_CTX *c, const how *h, uint8_t *tag, size_t len)
{
    if (h->flags & F_TAG_PARAM) {
        OSSL_PARAM p[] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, len),
                          OSSL_PARAM_construct_end()};
        must(EVP_CIPHER_CTX_get_params(c, p) == 1);
    } else {
        must(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)len, tag) == 1);
    }
}

/* One run's contexts: cx[0] the original (NULL once freed), cx[1] the copy. */
typedef struct run {
    EVP_CIPHER_CTX *cx[2];
    uint8_t *out[2];
    size_t len, step;
    const how *h;
} run;

static void maybe_copy(run *r, int at_final)
{
    if (!(r->h->flags & F_COPY) || r->cx[1] || (!at_final && r->step != r->h->copy_at))
        return;
    must((r->cx[1] = EVP_CIPHER_CTX_new()) != NULL);
    must(EVP_CIPHER_CTX_copy(r->cx[1], r->cx[0]) == 1);
    /* What the original has written so far; the copy writes the rest. */
    memcpy(r->out[1], r->out[0], r->len);
    if (r->h->flags & F_FREE_ORIG) {
        EVP_CIPHER_CTX_free(r->cx[0]);
        r->cx[0] = NULL;
    }
}

/* One update on every live context: AAD (data_out 0) or data at offset off
 * of src. The copy goes first: with F_IN_PLACE the original overwrites src. */
static void update(run *r, int data_out, const uint8_t *src, size_t off, size_t n)
{
    for (int j = 1; j >= 0; j--) {
        if (!r->cx[j])
            continue;
        int outl = -1;
        must(EVP_CipherUpdate(r->cx[j], data_out ? r->out[j] + off : NULL, &outl, src + off,
                              (int)n) == 1);
        must(!data_out || (size_t)outl == n);
    }
    r->step++;
    maybe_copy(r, 0);
}

/* Feeds len bytes of src in the run's pieces. */
static void feed(run *r, int data_out, const uint8_t *src, size_t len)
{
    size_t off = 0, i = 0;
    while (off < len) {
        size_t n = r->h->cuts[i++ % NCUTS];
        if (n == 0) {
            update(r, data_out, src, off, 0);
            n = len - off;
        }
        if (n > len - off)
            n = len - off;
        update(r, data_out, src, off, n);
        off += n;
    }
}

/*
 * Runs m through EVP on *ctx (a fresh context when NULL or without
 * F_REUSE_CTX; on return the surviving context, for the caller to free or
 * re-use): encryption (enc) writes out and the tag; decryption checks tag.
 * out2 receives the copy's data. Returns final's verdict, the same for
 * original and copy.
 */
static int run_msg(EVP_CIPHER_CTX **ctx, int enc, const msg *m, const how *h, uint8_t *out,
                   uint8_t *out2, uint8_t *tag)
{
    run r = {.out = {out, out2}, .len = m->len, .h = h};
    int reuse = *ctx && (h->flags & F_REUSE_CTX);
    if (!reuse) {
        EVP_CIPHER_CTX_free(*ctx);
        must((*ctx = EVP_CIPHER_CTX_new()) != NULL);
        must(EVP_CipherInit_ex2(*ctx, m->cipher, NULL, NULL, enc, NULL) == 1);
        if (h->flags & F_IVLEN_PARAM) {
            size_t ivlen = m->ivlen;
            OSSL_PARAM p[] = {OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
                              OSSL_PARAM_construct_end()};
            must(EVP_CIPHER_CTX_set_params(*ctx, p) == 1);
        } else {
            must(EVP_CIPHER_CTX_ctrl(*ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)m->ivlen, NULL) == 1);
        }
    }
    r.cx[0] = *ctx;
    if (reuse && (h->flags & F_SPLIT_INIT)) {
        /* The key stays from the previous message. */
        must(EVP_CipherInit_ex2(r.cx[0], NULL, NULL, m->iv, enc, NULL) == 1);
    } else if (h->flags & F_SPLIT_INIT) {
        must(EVP_CipherInit_ex2(r.cx[0], NULL, m->key, NULL, enc, NULL) == 1);
        must(EVP_CipherInit_ex2(r.cx[0], NULL, NULL, m->iv, enc, NULL) == 1);
    } else {
        must(EVP_CipherInit_ex2(r.cx[0], NULL, m->key, m->iv, enc, NULL) == 1);
    }
    must(EVP_CIPHER_CTX_get_iv_length(r.cx[0]) == (int)m->ivlen);
    if (!enc && (h->flags & F_TAG_EARLY))
        set_tag(r.cx[0], h, tag, m->tag_len);
    maybe_copy(&r, 0);

    feed(&r, 0, m->aad, m->aad_len);
    const uint8_t *src = m->in;
    if (h->flags & F_IN_PLACE) {
        memmove(out, m->in, m->len);
        src = out;
    }
    feed(&r, 1, src, m->len);
    maybe_copy(&r, 1);

    int verdict = -1;
    uint8_t tag2[16];
    for (int j = 0; j < 2; j++) {
        if (!r.cx[j])
            continue;
        if (!enc && !(h->flags & F_TAG_EARLY))
            set_tag(r.cx[j], h, tag, m->tag_len);
        uint8_t fin[32];
        int outl = -1;
        int ok = EVP_CipherFinal_ex(r.cx[j], fin, &outl) == 1;
        must(!ok || outl == 0);
        must(verdict < 0 || ok == verdict);
        verdict = ok;
        if (enc) {
            must(ok);
            get_tag(r.cx[j], h, j == 0 || !r.cx[0] ? tag : tag2, m->tag_len);
        }
    }
    if (r.cx[0] && r.cx[1]) {
        /* Both finished: the copy's results are the original's. */
        must(memcmp(out, out2, m->len) == 0);
        must(!enc || memcmp(tag, tag2, m->tag_len) == 0);
    } else if (r.cx[1]) {
        memcpy(out, out2, m->len);
    }
    /* Keep one context for the caller. */
    *ctx = r.cx[0] ? r.cx[0] : r.cx[1];
    if (r.cx[0] && r.cx[1])
        EVP_CIPHER_CTX_free(r.cx[1]);
    return verdict;
}

/* The library's 128-bit-block ciphers (kuai_ciphers()), each fetched from
 * the provider under its GCM name: the kuai name in upper case + "-GCM". */
#define MAX_CIPHERS 64
static kuai_cipher kciphers[MAX_CIPHERS];
static EVP_CIPHER *ciphers[MAX_CIPHERS];
static size_t nciphers;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    must(OSSL_PROVIDER_add_builtin(NULL, "kuai", OSSL_provider_init) == 1);
    must(OSSL_PROVIDER_load(NULL, "kuai") != NULL);
    /* NULL for a cipher this build lacks (the provider leaves it out). */
    kuai_cipher all[MAX_CIPHERS];
    size_t n = kuai_ciphers(all, MAX_CIPHERS);
    for (size_t i = 0; i < n && i < MAX_CIPHERS; i++) {
        if (kuai_block_size(all[i]) != 16)
            continue;
        char name[64];
        fuzz_provider_name(all[i], "GCM", name, sizeof name);
        kciphers[nciphers] = all[i];
        ciphers[nciphers++] = EVP_CIPHER_fetch(NULL, name, "provider=kuai");
    }
    must(nciphers > 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t aad[MAXDATA], pt[MAXDATA], ct[MAXDATA], out[MAXDATA], out2[MAXDATA],
        ref[MAXDATA];
    reader rd = {data, size};
    size_t ci = take_u8(&rd) % nciphers;
    if (!ciphers[ci])
        return 0;
    msg m = {.cipher = ciphers[ci]};
    m.ivlen = 1 + take_u8(&rd) % 64;
    m.tag_len = 4 + take_u8(&rd) % 13;
    how hw[4];
    for (int i = 0; i < 4; i++) {
        hw[i].flags = take_u8(&rd);
        take(&rd, hw[i].cuts, NCUTS);
        hw[i].copy_at = take_u8(&rd) % 16;
    }
    hw[0].flags &= ~(unsigned)F_REUSE_CTX; /* nothing to re-use yet */
    size_t aad_len = take_u8(&rd) | (size_t)take_u8(&rd) << 8;
    uint8_t key[32], iv[64], tag_in[16];
    size_t ks = kuai_key_size(kciphers[ci]);
    take(&rd, key, ks);
    take(&rd, iv, m.ivlen);
    take(&rd, tag_in, m.tag_len);
    aad_len = aad_len % MAXDATA < rd.n ? aad_len % MAXDATA : rd.n;
    take(&rd, aad, aad_len);
    size_t len = rd.n < MAXDATA ? rd.n : MAXDATA;
    take(&rd, pt, len);
    m.key = key;
    m.iv = iv;
    m.aad = aad;
    m.aad_len = aad_len;

    kuai_key k;
    must(kuai_key_init(&k, kciphers[ci], key, ks) == KUAI_OK);
    uint8_t ref_tag[16], tag[16];
    must(kuai_gcm_encrypt(&k, iv, m.ivlen, aad, aad_len, pt, ref, len, ref_tag, m.tag_len) ==
         KUAI_OK);

    /* (a) encryption */
    EVP_CIPHER_CTX *ctx = NULL;
    m.in = pt;
    m.len = len;
    must(run_msg(&ctx, 1, &m, &hw[0], ct, out2, tag) == 1);
    must(memcmp(ct, ref, len) == 0 && memcmp(tag, ref_tag, m.tag_len) == 0);

    /* (b) decryption with the right tag */
    m.in = ct;
    must(run_msg(&ctx, 0, &m, &hw[1], out, out2, tag) == 1);
    must(memcmp(out, pt, len) == 0);

    /* (c) with a wrong tag: the right one with the input's tag as the
     * difference (a difference of zero made one bit), so that near misses
     * in every byte and bit are tried, not only random tags. */
    uint8_t wrong[16], diff = 0;
    for (size_t i = 0; i < m.tag_len; i++) {
        wrong[i] = ref_tag[i] ^ tag_in[i];
        diff |= tag_in[i];
    }
    if (!diff)
        wrong[m.tag_len - 1] ^= 1;
    must(run_msg(&ctx, 0, &m, &hw[2], out, out2, wrong) == 0);

    /* (d) the input's data as a ciphertext, under the input's tag */
    int want = kuai_gcm_decrypt(&k, iv, m.ivlen, aad, aad_len, pt, ref, len, tag_in, m.tag_len);
    must(want == KUAI_OK || want == KUAI_ERR_AUTH);
    m.in = pt;
    int got = run_msg(&ctx, 0, &m, &hw[3], out, out2, tag_in);
    must(got == (want == KUAI_OK));
    must(!got || memcmp(out, ref, len) == 0);

    EVP_CIPHER_CTX_free(ctx);
    kuai_key_wipe(&k);
    return 0;
}
