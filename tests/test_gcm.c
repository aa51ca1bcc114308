/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GCM and GHASH.
 *
 *  - every GHASH backend against SP 800-38D's bitwise Algorithm 1 (written
 *    here) and against each other, selected directly through the seam;
 *  - kuai's GCM code against OpenSSL's AES-128-GCM: OpenSSL's AES is put
 *    under kuai's mode code as a stand-in backend (once with a fused CTR,
 *    once without), so the mode logic is checked against an independent
 *    GCM whatever ciphers kuai has; kuai itself contains no AES here;
 *  - the inc32 counter across the 2^32 wrap, against a model;
 *  - every 128-bit-block cipher and backend: backends agree, round trips,
 *    streaming in random pieces == one-shot, in place, tags 4..16, and
 *    forgeries give KUAI_ERR_AUTH with the output zeroed;
 *  - SM4-GCM against libgcrypt and RFC 8998 (when SM4 has a backend);
 *  - argument and state errors.
 */
#include "test_util.h"
#include "vectors.h"

#include "ghash/ghash.h"
#include "modes/modes.h"

#if KUAI_TEST_THIRD_PARTY
#include <gcrypt.h>
#include <openssl/evp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- GHASH -------------------------------------------------------------- */

/* SP 800-38D Algorithm 1, bit by bit: x = x * y in GF(2^128). */
static void model_gf_mul(uint8_t x[16], const uint8_t y[16])
{
    uint8_t z[16] = {0}, v[16];
    memcpy(v, y, 16);
    for (int i = 0; i < 128; i++) {
        if ((x[i / 8] >> (7 - i % 8)) & 1)
            for (int j = 0; j < 16; j++)
                z[j] ^= v[j];
        int lsb = v[15] & 1;
        for (int j = 15; j > 0; j--)
            v[j] = (uint8_t)(v[j] >> 1 | v[j - 1] << 7);
        v[0] >>= 1;
        if (lsb)
            v[0] ^= 0xe1;
    }
    memcpy(x, z, 16);
}

static void model_ghash(const uint8_t h[16], uint8_t y[16], const uint8_t *in, size_t nblocks)
{
    for (size_t i = 0; i < nblocks; i++) {
        for (int j = 0; j < 16; j++)
            y[j] ^= in[16 * i + j];
        model_gf_mul(y, h);
    }
}

static void test_gcm_ghash(void)
{
    group_begin("gcm ghash backends");
    const ghash_impl *const *impls = kuai_ghash_impls();
    /* The registry's order: highest priority first, and GCM's choice the
     * first usable one. */
    const ghash_impl *first_usable = NULL;
    for (size_t i = 0; impls[i]; i++) {
        const int prev = i ? impls[i - 1]->priority : impls[i]->priority;
        CHECK(prev >= impls[i]->priority, "ghash %s (priority %d) after one of priority %d",
              impls[i]->name, impls[i]->priority, prev);
        if (!first_usable && impls[i]->available())
            first_usable = impls[i];
    }
    CHECK(first_usable && kuai_ghash_best() == first_usable,
          "kuai_ghash_best is %s, the first usable backend %s", kuai_ghash_best()->name,
          first_usable ? first_usable->name : "(none)");
    static const size_t counts[] = {0,  1,  2,  3,  4,  5,  7,  8,  9,  15,  16,  17,  23, 24,
                                    31, 32, 33, 40, 47, 48, 63, 64, 65, 100, 255, 256, 257};
    const size_t ncounts = sizeof counts / sizeof counts[0];
    uint8_t *data = xmalloc(16 * 300);
    for (int trial = 0; trial < 24; trial++) {
        uint8_t h[16], y0[16];
        rng_fill(h, 16);
        rng_fill(y0, 16);
        /* Edge keys: zero, one (x^0), all ones, only the top bit of the
         * reflected form (x^127), which exercises the key's carry. */
        if (trial < 4) {
            memset(h, 0, 16);
            if (trial == 1)
                h[0] = 0x80;
            if (trial == 2)
                memset(h, 0xff, 16);
            if (trial == 3)
                h[15] = 0x01;
        }
        size_t n = counts[trial % ncounts];
        if (trial >= (int)ncounts)
            n = rng_below(300);
        rng_fill(data, 16 * n);
        uint8_t want[16];
        memcpy(want, y0, 16);
        model_ghash(h, want, data, n);
        for (size_t i = 0; impls[i]; i++) {
            if (!impls[i]->available())
                continue;
            _Alignas(64) unsigned char hkey[GHASH_KEY_BYTES];
            uint8_t y[16];
            memcpy(y, y0, 16);
            impls[i]->init(hkey, h);
            impls[i]->update(hkey, y, data, n);
            char what[96];
            snprintf(what, sizeof what, "ghash %s, %zu blocks, trial %d", impls[i]->name, n, trial);
            CHECK_MEM(y, want, 16, what);
        }
    }
    /* Every count up to 300 (all tail shapes of the wide backends), ref vs
     * each SIMD backend, and the same data fed in random splits. */
    uint8_t h[16];
    rng_fill(h, 16);
    for (size_t n = 0; n <= 300; n++) {
        rng_fill(data, 16 * n);
        _Alignas(64) unsigned char hkey[GHASH_KEY_BYTES];
        uint8_t want[16] = {0};
        ghash_ref.init(hkey, h);
        ghash_ref.update(hkey, want, data, n);
        for (size_t i = 0; impls[i]; i++) {
            if (!impls[i]->available())
                continue;
            uint8_t y[16] = {0}, ys[16] = {0};
            impls[i]->init(hkey, h);
            impls[i]->update(hkey, y, data, n);
            for (size_t done = 0; done < n;) {
                size_t m = 1 + rng_below(n - done);
                impls[i]->update(hkey, ys, data + 16 * done, m);
                done += m;
            }
            char what[96];
            snprintf(what, sizeof what, "ghash %s vs ref, %zu blocks", impls[i]->name, n);
            CHECK_MEM(y, want, 16, what);
            snprintf(what, sizeof what, "ghash %s split, %zu blocks", impls[i]->name, n);
            CHECK_MEM(ys, want, 16, what);
        }
    }
    free(data);
    group_end();
}

#if KUAI_TEST_THIRD_PARTY
/* ---- OpenSSL's AES as a stand-in backend -------------------------------- */

/* Lives in kuai_key.priv_sched of a key whose impl is one of the two below. */
typedef struct ossl_aes {
    EVP_CIPHER_CTX *ecb;
    uint8_t key[16];
} ossl_aes;

static ossl_aes ossl_of(const kuai_key *k)
{
    ossl_aes a;
    memcpy(&a, k->priv_sched, sizeof a);
    return a;
}

static void ossl_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    int outl;
    EVP_EncryptUpdate(ossl_of(k).ecb, out, &outl, in, (int)(16 * n));
}

/* OpenSSL's CTR counts over the whole block, big-endian: the seam's rule. */
static void ossl_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                            size_t n)
{
    ossl_aes a = ossl_of(k);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int outl;
    EVP_EncryptInit_ex(c, EVP_aes_128_ctr(), NULL, a.key, ctr);
    EVP_EncryptUpdate(c, out, &outl, in, (int)(16 * n));
    EVP_CIPHER_CTX_free(c);
    for (size_t i = 0; i < n; i++)
        ctr_inc(ctr, 16);
}

static int ossl_available(void)
{
    return 1;
}

static const kuai_impl ossl_aes_plain = {
    .name = "openssl-aes",
    .family = KUAI_FAMILY_AES,
    .available = ossl_available,
    .enc_blocks = ossl_enc_blocks,
};
static const kuai_impl ossl_aes_fused = {
    .name = "openssl-aes-fused",
    .family = KUAI_FAMILY_AES,
    .available = ossl_available,
    .enc_blocks = ossl_enc_blocks,
    .ctr_blocks = ossl_ctr_blocks,
};

/* A kuai_key that kuai_key_check accepts (set up as a uBlock key, then
 * re-pointed) running OpenSSL's AES-128. */
static void ossl_key(kuai_key *k, const uint8_t key[16], const kuai_impl *impl)
{
    static const uint8_t zero[16];
    kuai_key_init_backend(k, KUAI_UBLOCK_128_128, zero, 16, "ref");
    k->priv_cipher = KUAI_AES_128;
    k->priv_impl = impl;
    ossl_aes a;
    a.ecb = EVP_CIPHER_CTX_new();
    EVP_EncryptInit_ex(a.ecb, EVP_aes_128_ecb(), NULL, key, NULL);
    EVP_CIPHER_CTX_set_padding(a.ecb, 0);
    memcpy(a.key, key, 16);
    memcpy(k->priv_sched, &a, sizeof a);
}

static void ossl_key_free(kuai_key *k)
{
    EVP_CIPHER_CTX_free(ossl_of(k).ecb);
    kuai_key_wipe(k);
}

/* OpenSSL's own AES-128-GCM: the independent implementation. */
static void ossl_gcm(int enc, const uint8_t key[16], const uint8_t *iv, size_t iv_len,
                     const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                     size_t len, uint8_t tag[16])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int outl;
    EVP_CipherInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL, enc);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len, NULL);
    EVP_CipherInit_ex(c, NULL, NULL, key, iv, enc);
    if (aad_len)
        EVP_CipherUpdate(c, NULL, &outl, aad, (int)aad_len);
    if (len)
        EVP_CipherUpdate(c, out, &outl, in, (int)len);
    if (!enc)
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag);
    EVP_CipherFinal_ex(c, out, &outl);
    if (enc)
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
    EVP_CIPHER_CTX_free(c);
}
#endif /* KUAI_TEST_THIRD_PARTY */

/* Encrypt in random pieces through the streaming calls (AAD in pieces too). */
/* A started message on c: the AAD and the data in random pieces, then
 * final. */
static int stream_run(kuai_gcm_ctx *c, int enc, const uint8_t *aad, size_t aad_len,
                      const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag, size_t tag_len)
{
    int rc = 0;
    for (size_t done = 0; !rc && done < aad_len;) {
        size_t m = 1 + rng_below(aad_len - done < 40 ? aad_len - done : 40);
        rc = kuai_gcm_aad(c, aad + done, m);
        done += m;
    }
    for (size_t done = 0; !rc && done < len;) {
        size_t cap = rng_below(3) == 0 ? 5000 : 40;
        size_t m = rng_below((len - done < cap ? len - done : cap) + 1); /* 0 allowed */
        rc = enc ? kuai_gcm_encrypt_update(c, in + done, out + done, m)
                 : kuai_gcm_decrypt_update(c, in + done, out + done, m);
        done += m;
    }
    if (rc)
        return rc;
    return enc ? kuai_gcm_encrypt_final(c, tag, tag_len) : kuai_gcm_decrypt_final(c, tag, tag_len);
}

static int stream_crypt(int enc, const kuai_key *k, const uint8_t *iv, size_t iv_len,
                        const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                        size_t len, uint8_t *tag, size_t tag_len)
{
    kuai_gcm_ctx c;
    int rc = kuai_gcm_init(&c, k, iv, iv_len);
    return rc ? rc : stream_run(&c, enc, aad, aad_len, in, out, len, tag, tag_len);
}

static size_t pick_iv_len(int t)
{
    static const size_t l[] = {12, 1, 8, 12, 16, 60, 12, 17, 32};
    return t % 10 == 9 ? 1 + rng_below(100) : l[t % 9];
}

static size_t pick_len(int t)
{
    static const size_t l[] = {0,   1,    15,   16,   17,   31,   32,    33,    255,  256,
                               257, 4095, 4096, 4097, 4111, 8192, 12345, 65536, 70001};
    const size_t n = sizeof l / sizeof l[0];
    return t % (int)(n + 3) < (int)n ? l[t % (int)(n + 3)] : rng_below(20000);
}

#if KUAI_TEST_THIRD_PARTY
static void test_gcm_vs_openssl(void)
{
    group_begin("gcm vs openssl aes");
    const size_t maxlen = 70001;
    uint8_t *pt = xmalloc(maxlen), *ct = xmalloc(maxlen), *want = xmalloc(maxlen),
            *back = xmalloc(maxlen), *aad = xmalloc(600);
    kuai_key *k = key_alloc(1);
    const kuai_impl *variants[2] = {&ossl_aes_plain, &ossl_aes_fused};
    for (int v = 0; v < 2; v++) {
        for (int t = 0; t < 120; t++) {
            uint8_t key[16], iv[128], tag[16], wtag[16];
            rng_fill(key, 16);
            size_t iv_len = pick_iv_len(t), len = pick_len(t);
            static const size_t al[] = {0, 1, 15, 16, 17, 20, 64, 100, 513};
            size_t aad_len = al[(t / 3) % 9], tag_len = 4 + rng_below(13);
            rng_fill(iv, iv_len);
            rng_fill(aad, aad_len);
            rng_fill(pt, len);
            ossl_key(k, key, variants[v]);
            ossl_gcm(1, key, iv, iv_len, aad, aad_len, pt, want, len, wtag);
            char what[160];
            snprintf(what, sizeof what, "%s: iv %zu, aad %zu, len %zu, tag %zu", variants[v]->name,
                     iv_len, aad_len, len, tag_len);
            int ok =
                CHECK_RC(kuai_gcm_encrypt(k, iv, iv_len, aad, aad_len, pt, ct, len, tag, tag_len),
                         KUAI_OK, what);
            ok = ok && CHECK_MEM(ct, want, len, what) && CHECK_MEM(tag, wtag, tag_len, what);
            if (ok)
                ok = CHECK_RC(
                         kuai_gcm_decrypt(k, iv, iv_len, aad, aad_len, ct, back, len, tag, tag_len),
                         KUAI_OK, what) &&
                     CHECK_MEM(back, pt, len, what);
            /* Streaming, both directions; and OpenSSL decrypting ours. */
            uint8_t stag[16];
            if (CHECK_RC(stream_crypt(1, k, iv, iv_len, aad, aad_len, pt, back, len, stag, 16),
                         KUAI_OK, what)) {
                CHECK_MEM(back, want, len, what);
                CHECK_MEM(stag, wtag, 16, what);
            }
            CHECK_RC(stream_crypt(0, k, iv, iv_len, aad, aad_len, want, back, len, wtag, 16),
                     KUAI_OK, what);
            CHECK_MEM(back, pt, len, what);
            ossl_key_free(k);
        }
    }
    free(k);
    free(pt);
    free(ct);
    free(want);
    free(back);
    free(aad);
    group_end();
}
#else
static void test_gcm_vs_openssl(void)
{
    printf("  GCM vs OpenSSL AES-GCM: SKIPPED (built without OpenSSL: cross build)\n");
}
#endif

/* ---- the inc32 counter across its wrap ---------------------------------- */

static void check_ctr32_wrap(const kuai_key *k, const kuai_key *ref, const char *name)
{
    uint8_t ctr[16], ctr0[16], in[16 * 40], out[16 * 40], want[16 * 40];
    for (int t = 0; t < 4; t++) {
        rng_fill(ctr0, 16);
        uint32_t start = 0xffffffffu - (uint32_t)rng_below(20);
        if (t == 0)
            start = 0xffffffffu;
        ctr0[12] = (uint8_t)(start >> 24);
        ctr0[13] = (uint8_t)(start >> 16);
        ctr0[14] = (uint8_t)(start >> 8);
        ctr0[15] = (uint8_t)start;
        size_t n = 1 + rng_below(40);
        rng_fill(in, 16 * n);
        /* Model: counter blocks built with inc32, one ECB call each. */
        memcpy(ctr, ctr0, 16);
        for (size_t i = 0; i < n; i++) {
            uint8_t ks[16];
            kuai_ecb_encrypt(ref, ctr, ks, 16);
            for (int j = 0; j < 16; j++)
                want[16 * i + j] = in[16 * i + j] ^ ks[j];
            ctr_inc(ctr + 12, 4);
        }
        uint8_t want_ctr[16];
        memcpy(want_ctr, ctr, 16);
        memcpy(ctr, ctr0, 16);
        /* Both paths: the public counter (fused backend CTR, cut at the
         * wrap) and the key-derived one (built branch-free). */
        int secret = (int)(rng_u64() & 1);
        kuai_gcm_ctr32(k, ctr, in, out, n, secret);
        char what[112];
        snprintf(what, sizeof what, "inc32 wrap, %s, start %08x, %zu blocks, %s counter", name,
                 start, n, secret ? "secret" : "public");
        CHECK_MEM(out, want, 16 * n, what);
        CHECK_MEM(ctr, want_ctr, 16, what);
    }
}

static void test_gcm_ctr32(void)
{
    group_begin("gcm inc32 wrap");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        if (kuai_block_size(c) != 16 || nbe == 0)
            continue;
        uint8_t keybytes[32];
        rng_fill(keybytes, sizeof keybytes);
        kuai_key *keys = key_alloc(2);
        if (!key_init_ok(&keys[1], c, keybytes, "ref")) {
            free(keys);
            continue;
        }
        for (size_t b = 0; b < nbe; b++) {
            if (!key_init_ok(&keys[0], c, keybytes, be[b]))
                continue;
            char name[64];
            snprintf(name, sizeof name, "%s/%s", kuai_cipher_name(c), be[b]);
            check_ctr32_wrap(&keys[0], &keys[1], name);
            kuai_key_wipe(&keys[0]);
        }
        kuai_key_wipe(&keys[1]);
        free(keys);
    }
#if KUAI_TEST_THIRD_PARTY
    /* And with the stand-in AES, fused and not. */
    uint8_t key[16];
    rng_fill(key, 16);
    kuai_key *k = key_alloc(2);
    ossl_key(&k[1], key, &ossl_aes_plain);
    ossl_key(&k[0], key, &ossl_aes_fused);
    /* The model's ECB goes through kuai_ecb_encrypt on the plain key. */
    check_ctr32_wrap(&k[0], &k[1], "openssl-aes-fused");
    check_ctr32_wrap(&k[1], &k[1], "openssl-aes");
    ossl_key_free(&k[0]);
    ossl_key_free(&k[1]);
    free(k);
#endif
    group_end();
}

/* ---- every 128-bit-block cipher and backend ----------------------------- */

static int all_zero(const uint8_t *p, size_t n)
{
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= p[i];
    return d == 0;
}

/* Decryption that must fail: KUAI_ERR_AUTH and the output all zeros. */
static void expect_forgery(const kuai_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                           size_t aad_len, const uint8_t *ct, size_t len, const uint8_t *tag,
                           size_t tag_len, const char *what, const char *how)
{
    gbuf out = gbuf_new(len, 0);
    memset(out.p, 0x5c, len);
    char w[256];
    snprintf(w, sizeof w, "%s, %s", what, how);
    CHECK_RC(kuai_gcm_decrypt(k, iv, iv_len, aad, aad_len, ct, out.p, len, tag, tag_len),
             KUAI_ERR_AUTH, w);
    CHECK(all_zero(out.p, len), "%s: output not zeroed", w);
    GBUF_CHECK(&out, w);
    gbuf_free(&out);
    /* Streaming decryption reaches the same verdict. */
    uint8_t *tmp = xmalloc(len);
    CHECK_RC(stream_crypt(0, k, iv, iv_len, aad, aad_len, ct, tmp, len, (uint8_t *)tag, tag_len),
             KUAI_ERR_AUTH, w);
    free(tmp);
}

static void test_gcm_ciphers(void)
{
    group_begin("gcm ciphers x backends");
    const size_t maxlen = 70001;
    uint8_t *pt = xmalloc(maxlen), *want = xmalloc(maxlen), *back = xmalloc(maxlen),
            *aad = xmalloc(600);
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        if (nbe == 0)
            continue;
        uint8_t keybytes[32];
        rng_fill(keybytes, sizeof keybytes);
        kuai_key *keys = key_alloc(2);
        kuai_key *ref = &keys[1], *k = &keys[0];
        if (!key_init_ok(ref, c, keybytes, "ref")) {
            free(keys);
            continue;
        }
        if (kuai_block_size(c) != 16) {
            uint8_t iv[12] = {0}, tag[16], x[32] = {0};
            kuai_gcm_ctx ctx;
            CHECK_RC(kuai_gcm_encrypt(ref, iv, 12, NULL, 0, x, x, 32, tag, 16),
                     KUAI_ERR_UNSUPPORTED, "gcm on a 256-bit block cipher");
            CHECK_RC(kuai_gcm_decrypt(ref, iv, 12, NULL, 0, x, x, 32, tag, 16),
                     KUAI_ERR_UNSUPPORTED, "gcm decrypt on a 256-bit block cipher");
            CHECK_RC(kuai_gcm_init(&ctx, ref, iv, 12), KUAI_ERR_UNSUPPORTED,
                     "gcm init on a 256-bit block cipher");
            kuai_key_wipe(ref);
            free(keys);
            continue;
        }
        for (int t = 0; t < (t_short ? 12 : 40); t++) {
            uint8_t iv[128], wtag[16];
            size_t iv_len = pick_iv_len(t), len = pick_len(t);
            static const size_t al[] = {0, 1, 15, 16, 17, 33, 300, 513};
            size_t aad_len = al[t % 8], tag_len = 4 + (size_t)(t % 13);
            rng_fill(iv, iv_len);
            rng_fill(aad, aad_len);
            rng_fill(pt, len);
            CHECK_RC(kuai_gcm_encrypt(ref, iv, iv_len, aad, aad_len, pt, want, len, wtag, 16),
                     KUAI_OK, "gcm encrypt, ref");
            for (size_t b = 0; b < nbe; b++) {
                if (!key_init_ok(k, c, keybytes, be[b]))
                    continue;
                char what[160];
                snprintf(what, sizeof what, "%s/%s: iv %zu, aad %zu, len %zu, tag %zu",
                         kuai_cipher_name(c), be[b], iv_len, aad_len, len, tag_len);
                /* One-shot, out of place, odd alignment, guarded. */
                gbuf ct = gbuf_new(len, 1 + rng_below(63));
                uint8_t tag[16];
                if (CHECK_RC(
                        kuai_gcm_encrypt(k, iv, iv_len, aad, aad_len, pt, ct.p, len, tag, tag_len),
                        KUAI_OK, what)) {
                    CHECK_MEM(ct.p, want, len, what);
                    CHECK_MEM(tag, wtag, tag_len, what);
                    GBUF_CHECK(&ct, what);
                }
                CHECK_RC(
                    kuai_gcm_decrypt(k, iv, iv_len, aad, aad_len, ct.p, back, len, tag, tag_len),
                    KUAI_OK, what);
                CHECK_MEM(back, pt, len, what);
                /* In place, both ways. */
                memcpy(back, pt, len);
                uint8_t itag[16];
                CHECK_RC(kuai_gcm_encrypt(k, iv, iv_len, aad, aad_len, back, back, len, itag, 16),
                         KUAI_OK, what);
                CHECK_MEM(back, want, len, what);
                CHECK_MEM(itag, wtag, 16, what);
                CHECK_RC(kuai_gcm_decrypt(k, iv, iv_len, aad, aad_len, back, back, len, itag, 16),
                         KUAI_OK, what);
                CHECK_MEM(back, pt, len, what);
                /* Streaming in random pieces. */
                uint8_t stag[16];
                CHECK_RC(stream_crypt(1, k, iv, iv_len, aad, aad_len, pt, back, len, stag, tag_len),
                         KUAI_OK, what);
                CHECK_MEM(back, want, len, what);
                CHECK_MEM(stag, wtag, tag_len, what);
                CHECK_RC(
                    stream_crypt(0, k, iv, iv_len, aad, aad_len, want, back, len, wtag, tag_len),
                    KUAI_OK, what);
                CHECK_MEM(back, pt, len, what);

                /* Forgeries (on the first backend, plus every fifth trial on the others). */
                if (b == 0 || t % 5 == 0) {
                    uint8_t bad[16];
                    memcpy(bad, tag, 16);
                    bad[rng_below(tag_len)] ^= (uint8_t)(1u << rng_below(8));
                    expect_forgery(k, iv, iv_len, aad, aad_len, ct.p, len, bad, tag_len, what,
                                   "flipped tag bit");
                    if (aad_len) {
                        size_t at = rng_below(aad_len);
                        aad[at] ^= 0x01;
                        expect_forgery(k, iv, iv_len, aad, aad_len, ct.p, len, tag, tag_len, what,
                                       "wrong aad");
                        aad[at] ^= 0x01;
                        expect_forgery(k, iv, iv_len, aad, aad_len - 1, ct.p, len, tag, tag_len,
                                       what, "aad cut short");
                    } else {
                        uint8_t one = 0;
                        expect_forgery(k, iv, iv_len, &one, 1, ct.p, len, tag, tag_len, what,
                                       "aad added");
                    }
                    if (len) {
                        size_t at = rng_below(len);
                        uint8_t saved = ct.p[at];
                        ct.p[at] ^= (uint8_t)(1u << rng_below(8));
                        expect_forgery(k, iv, iv_len, aad, aad_len, ct.p, len, tag, tag_len, what,
                                       "flipped ciphertext bit");
                        ct.p[at] = saved;
                        /* A truncated message under the same tag. */
                        expect_forgery(k, iv, iv_len, aad, aad_len, ct.p, len - 1, tag, tag_len,
                                       what, "truncated ciphertext");
                    }
                    /* A tag cut short is checked as a shorter tag: its own
                     * prefix passes, a longer claim with garbage fails. */
                    if (tag_len > 4) {
                        CHECK_RC(kuai_gcm_decrypt(k, iv, iv_len, aad, aad_len, ct.p, back, len, tag,
                                                  tag_len - 1),
                                 KUAI_OK, what);
                        uint8_t longer[16];
                        memcpy(longer, tag, 16);
                        longer[tag_len - 1] ^= 0x80;
                        expect_forgery(k, iv, iv_len, aad, aad_len, ct.p, len, longer, tag_len,
                                       what, "altered last tag byte");
                    }
                    uint8_t iv2[128];
                    memcpy(iv2, iv, iv_len);
                    iv2[rng_below(iv_len)] ^= 0x40;
                    expect_forgery(k, iv2, iv_len, aad, aad_len, ct.p, len, tag, tag_len, what,
                                   "wrong iv");
                }
                gbuf_free(&ct);
                kuai_key_wipe(k);
            }
        }
        kuai_key_wipe(ref);
        free(keys);
    }
    free(pt);
    free(want);
    free(back);
    free(aad);
    group_end();
}

/* ---- SM4-GCM against libgcrypt and RFC 8998 ----------------------------- */

/* One RFC 8998 record (the file is in the NIST record format). */
static void rfc8998_record(const nist_rec *r, void *arg)
{
    const char *path = arg;
    if (!CHECK(r->key && r->key_len == 16 && r->iv && r->tag && r->tag_len == 16 && r->pt &&
                   r->ct && r->pt_len == r->ct_len,
               "RFC 8998: malformed vector at %s:%d", path, r->line))
        return;
    const char *be[MAX_BACKENDS];
    size_t nbe = test_backends(KUAI_SM4, be, MAX_BACKENDS);
    kuai_key *k = key_alloc(1);
    uint8_t *out = xmalloc(r->pt_len + 1), t[16];
    for (size_t b = 0; b < nbe; b++) {
        if (!key_init_ok(k, KUAI_SM4, r->key, be[b]))
            continue;
        char what[96];
        snprintf(what, sizeof what, "RFC 8998 SM4-GCM, sm4/%s", be[b]);
        CHECK_RC(
            kuai_gcm_encrypt(k, r->iv, r->iv_len, r->aad, r->aad_len, r->pt, out, r->pt_len, t, 16),
            KUAI_OK, what);
        CHECK_MEM(out, r->ct, r->ct_len, what);
        CHECK_MEM(t, r->tag, 16, what);
        CHECK_RC(kuai_gcm_decrypt(k, r->iv, r->iv_len, r->aad, r->aad_len, r->ct, out, r->ct_len,
                                  r->tag, 16),
                 KUAI_OK, what);
        CHECK_MEM(out, r->pt, r->pt_len, what);
        kuai_key_wipe(k);
    }
    free(out);
    free(k);
}

static void test_rfc8998(void)
{
    const char *dir = getenv("KUAI_CRYPTOGRAPHY_VECTORS");
    if (!dir || !*dir) {
        printf("  RFC 8998 SM4-GCM vector: SKIPPED (KUAI_CRYPTOGRAPHY_VECTORS not set)\n");
        return;
    }
    static const char *const tails[] = {"/ciphers/SM4/rfc8998.txt",
                                        "/cryptography_vectors/ciphers/SM4/rfc8998.txt"};
    char path[1024];
    long vectors = -1;
    for (size_t i = 0; i < 2 && vectors < 0; i++) {
        snprintf(path, sizeof path, "%s%s", dir, tails[i]);
        vectors = nist_file_read(path, "rfc8998.txt", 0, rfc8998_record, path);
    }
    if (!CHECK(vectors >= 0, "RFC 8998: no ciphers/SM4/rfc8998.txt under %s", dir))
        return;
    CHECK(vectors > 0, "RFC 8998: no vectors in %s", path);
    t_note("  RFC 8998 SM4-GCM: %ld vector(s) from %s", vectors, path);
}

static void test_gcm_sm4(void)
{
    if (kuai_backends(KUAI_SM4, NULL, 0) == 0) {
        printf("  SM4-GCM vs libgcrypt: SKIPPED (no SM4 backend yet)\n");
        return;
    }
#if !KUAI_TEST_THIRD_PARTY
    printf("  SM4-GCM vs libgcrypt: SKIPPED (built without libgcrypt: cross build)\n");
    group_begin("gcm sm4 rfc 8998");
    test_rfc8998();
    group_end();
#else
    group_begin("gcm sm4 vs libgcrypt");
    if (!gcry_check_version(NULL))
        CHECK(0, "libgcrypt initialisation failed");
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    const size_t maxlen = 70001;
    uint8_t *pt = xmalloc(maxlen), *want = xmalloc(maxlen), *got = xmalloc(maxlen),
            *aad = xmalloc(600);
    const char *be[MAX_BACKENDS];
    size_t nbe = test_backends(KUAI_SM4, be, MAX_BACKENDS);
    kuai_key *k = key_alloc(1);
    for (int t = 0; t < 60; t++) {
        uint8_t key[16], iv[128], wtag[16];
        rng_fill(key, 16);
        size_t iv_len = pick_iv_len(t), len = pick_len(t), aad_len = rng_below(t % 4 ? 40 : 600);
        rng_fill(iv, iv_len);
        rng_fill(aad, aad_len);
        rng_fill(pt, len);
        gcry_cipher_hd_t h;
        gcry_error_t e = gcry_cipher_open(&h, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_GCM, 0);
        if (!CHECK(e == 0, "gcry_cipher_open(SM4, GCM): %s", gcry_strerror(e)))
            break;
        gcry_cipher_setkey(h, key, 16);
        gcry_cipher_setiv(h, iv, iv_len);
        gcry_cipher_authenticate(h, aad, aad_len);
        gcry_cipher_final(h);
        gcry_cipher_encrypt(h, want, len, pt, len);
        gcry_cipher_gettag(h, wtag, 16);
        gcry_cipher_close(h);
        for (size_t b = 0; b < nbe; b++) {
            if (!key_init_ok(k, KUAI_SM4, key, be[b]))
                continue;
            uint8_t tag[16];
            char what[160];
            snprintf(what, sizeof what, "sm4/%s: iv %zu, aad %zu, len %zu", be[b], iv_len, aad_len,
                     len);
            CHECK_RC(kuai_gcm_encrypt(k, iv, iv_len, aad, aad_len, pt, got, len, tag, 16), KUAI_OK,
                     what);
            CHECK_MEM(got, want, len, what);
            CHECK_MEM(tag, wtag, 16, what);
            CHECK_RC(kuai_gcm_decrypt(k, iv, iv_len, aad, aad_len, want, got, len, wtag, 16),
                     KUAI_OK, what);
            CHECK_MEM(got, pt, len, what);
            kuai_key_wipe(k);
        }
    }
    free(k);
    test_rfc8998();
    free(pt);
    free(want);
    free(got);
    free(aad);
    group_end();
#endif
}

/* ---- argument and state errors ------------------------------------------ */

static void test_gcm_api_errors(void)
{
    group_begin("gcm api errors");
    uint8_t key[32] = {1}, iv[16] = {2}, buf[64] = {0}, tag[16] = {0}, out[64];
    kuai_key *keys = key_alloc(1);
    kuai_key *k = keys;
    kuai_key_init(k, KUAI_UBLOCK_128_128, key, 16);
    kuai_gcm_ctx c;

    CHECK_RC(kuai_gcm_encrypt(NULL, iv, 12, NULL, 0, buf, out, 16, tag, 16), KUAI_ERR_ARG,
             "NULL key");
    CHECK_RC(kuai_gcm_encrypt(k, NULL, 12, NULL, 0, buf, out, 16, tag, 16), KUAI_ERR_ARG,
             "NULL iv");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 0, NULL, 0, buf, out, 16, tag, 16), KUAI_ERR_ARG, "iv_len 0");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 5, buf, out, 16, tag, 16), KUAI_ERR_ARG, "NULL aad");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, NULL, out, 16, tag, 16), KUAI_ERR_ARG, "NULL in");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, out, 16, NULL, 16), KUAI_ERR_ARG,
             "NULL tag");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, out, 16, tag, 3), KUAI_ERR_ARG, "tag_len 3");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, out, 16, tag, 17), KUAI_ERR_ARG,
             "tag_len 17");
    CHECK_RC(kuai_gcm_decrypt(k, iv, 12, NULL, 0, buf, out, 16, tag, 3), KUAI_ERR_ARG, "tag_len 3");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, buf + 1, 16, tag, 16), KUAI_ERR_ARG,
             "overlapping buffers");
    /* Length limits are checked before anything is touched, so a small
     * buffer in place stands for a huge one. */
    if (sizeof(size_t) > 4) {
        size_t too_long = (size_t)((UINT64_C(1) << 36) - 31);
        memset(tag, 0x77, 16);
        CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, buf, too_long, tag, 16), KUAI_ERR_LENGTH,
                 "plaintext over 2^36 - 32 bytes");
        CHECK_RC(kuai_gcm_decrypt(k, iv, 12, NULL, 0, buf, buf, too_long, tag, 16), KUAI_ERR_LENGTH,
                 "ciphertext over 2^36 - 32 bytes");
        CHECK(tag[0] == 0x77 && all_zero(buf, sizeof buf), "failed call wrote its outputs");
        CHECK_RC(
            kuai_gcm_encrypt(k, iv, 12, buf, (size_t)(UINT64_C(1) << 61), buf, buf, 16, tag, 16),
            KUAI_ERR_LENGTH, "aad of 2^61 bytes");
        CHECK_RC(kuai_gcm_init(&c, k, iv, 12), KUAI_OK, "init");
        CHECK_RC(kuai_gcm_encrypt_update(&c, buf, buf, too_long), KUAI_ERR_LENGTH,
                 "stream over limit");
        CHECK_RC(kuai_gcm_encrypt_update(&c, buf, buf, 48), KUAI_OK, "stream 48 bytes");
        CHECK_RC(kuai_gcm_encrypt_update(&c, buf, buf, too_long - 48), KUAI_ERR_LENGTH,
                 "stream over limit in total");
        kuai_gcm_wipe(&c);
        memset(buf, 0, sizeof buf);
    }
    /* Wrong order, directions, reuse after final. */
    CHECK_RC(kuai_gcm_init(NULL, k, iv, 12), KUAI_ERR_ARG, "init NULL ctx");
    CHECK_RC(kuai_gcm_init(&c, k, iv, 0), KUAI_ERR_ARG, "init iv_len 0");
    CHECK_RC(kuai_gcm_init(&c, k, iv, 12), KUAI_OK, "init");
    CHECK_RC(kuai_gcm_aad(&c, NULL, 3), KUAI_ERR_ARG, "aad NULL");
    CHECK_RC(kuai_gcm_aad(&c, buf, 3), KUAI_OK, "aad");
    CHECK_RC(kuai_gcm_encrypt_update(&c, buf, out, 5), KUAI_OK, "update");
    CHECK_RC(kuai_gcm_aad(&c, buf, 3), KUAI_ERR_ARG, "aad after data");
    CHECK_RC(kuai_gcm_decrypt_update(&c, buf, out, 5), KUAI_ERR_ARG, "direction switch");
    CHECK_RC(kuai_gcm_decrypt_final(&c, tag, 16), KUAI_ERR_ARG, "decrypt final after encrypt");
    CHECK_RC(kuai_gcm_encrypt_final(&c, tag, 2), KUAI_ERR_ARG, "final tag_len 2");
    CHECK_RC(kuai_gcm_encrypt_final(&c, tag, 16), KUAI_OK, "final");
    CHECK(all_zero((const uint8_t *)&c, sizeof c), "context not wiped by final");
    CHECK_RC(kuai_gcm_encrypt_update(&c, buf, out, 5), KUAI_ERR_ARG, "update after final");
    CHECK_RC(kuai_gcm_encrypt_final(&c, tag, 16), KUAI_ERR_ARG, "final after final");
    /* A wiped key under a live context. */
    CHECK_RC(kuai_gcm_init(&c, k, iv, 12), KUAI_OK, "init");
    kuai_key_wipe(k);
    CHECK_RC(kuai_gcm_encrypt_update(&c, buf, out, 5), KUAI_ERR_KEY, "update with a wiped key");
    CHECK_RC(kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, out, 16, tag, 16), KUAI_ERR_KEY,
             "wiped key");
    kuai_gcm_wipe(&c);
    /* The tag where the plaintext goes (ciphertext then tag in one buffer,
     * the plaintext written over the tag): in and out do not overlap, so
     * the call is valid and the tag must be read before out is written. */
    CHECK_RC(kuai_key_init(k, KUAI_UBLOCK_128_128, key, 16), KUAI_OK, "key");
    {
        uint8_t pt[48], ct[128];
        for (size_t i = 0; i < sizeof pt; i++)
            pt[i] = (uint8_t)(3 * i + 1);
        CHECK_RC(kuai_gcm_encrypt(k, iv, 12, iv, 5, pt, ct, sizeof pt, ct + sizeof pt, 16), KUAI_OK,
                 "encrypt");
        CHECK_RC(
            kuai_gcm_decrypt(k, iv, 12, iv, 5, ct, ct + sizeof pt, sizeof pt, ct + sizeof pt, 16),
            KUAI_OK, "decrypt with the tag inside out");
        CHECK_MEM(ct + sizeof pt, pt, sizeof pt, "decrypt with the tag inside out");
    }
    kuai_key_wipe(k);
    free(keys);
    group_end();
}

/*
 * No data (GMAC): in and out may be NULL when len is 0 (kuai.h). The
 * one-shot calls' short path once copied the partial block from them
 * (memcpy of 0 bytes from NULL: undefined; make test-sanitize's UBSan
 * aborted). The tag is the one of an empty buffer's message.
 */
static void test_gcm_null_empty(void)
{
    group_begin("gcm one-shot, no data, NULL buffers");
    static const kuai_cipher cs[] = {KUAI_SM4, KUAI_AES_128, KUAI_UBLOCK_128_128};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kuai_key k;
        uint8_t key[16], iv[12], aad[7], empty[1], want[16], tag[16];
        rng_fill(key, sizeof key);
        rng_fill(iv, sizeof iv);
        rng_fill(aad, sizeof aad);
        if (kuai_key_init(&k, cs[i], key, 16) != 0)
            continue; /* not built */
        for (int a = 0; a < 2; a++) {
            const uint8_t *ap = a ? aad : NULL;
            const size_t al = a ? sizeof aad : 0;
            CHECK_RC(kuai_gcm_encrypt(&k, iv, 12, ap, al, empty, empty, 0, want, 16), KUAI_OK,
                     "encrypt, empty buffers");
            CHECK_RC(kuai_gcm_encrypt(&k, iv, 12, ap, al, NULL, NULL, 0, tag, 16), KUAI_OK,
                     "encrypt, NULL buffers");
            CHECK_MEM(tag, want, 16, "the tag of no data");
            CHECK_RC(kuai_gcm_decrypt(&k, iv, 12, ap, al, NULL, NULL, 0, tag, 16), KUAI_OK,
                     "decrypt, NULL buffers");
            tag[0] ^= 1;
            CHECK_RC(kuai_gcm_decrypt(&k, iv, 12, ap, al, NULL, NULL, 0, tag, 16), KUAI_ERR_AUTH,
                     "decrypt, NULL buffers, wrong tag");
        }
        kuai_key_wipe(&k);
    }
    group_end();
}

/*
 * A streaming context may be copied mid-message to memory of another
 * alignment (EVP_CIPHER_CTX_copy does): the copy must carry on exactly as
 * the original would. Every 8-byte offset of a 64-byte line is tried.
 */
static void test_gcm_ctx_copy(void)
{
    group_begin("gcm context copy");
    static _Alignas(64) unsigned char area[sizeof(kuai_gcm_ctx) + 64];
    kuai_key k;
    uint8_t key[16], iv[12], aad[20], msg[1000], want[1000], got[1000], tag[16], tag2[16];
    rng_fill(key, sizeof key);
    rng_fill(iv, sizeof iv);
    rng_fill(aad, sizeof aad);
    rng_fill(msg, sizeof msg);
    /* the default backend of a 128-bit-block cipher (SM4 if it is built) */
    if (kuai_key_init(&k, KUAI_SM4, key, 16) != 0)
        CHECK_RC(kuai_key_init(&k, KUAI_UBLOCK_128_128, key, 16), 0, "key");
    CHECK_RC(kuai_gcm_encrypt(&k, iv, sizeof iv, aad, sizeof aad, msg, want, sizeof msg, tag, 16),
             0, "one-shot");
    for (size_t from = 0; from < 64; from += 8) {
        for (size_t to = 0; to < 64; to += 8) {
            kuai_gcm_ctx *a = (kuai_gcm_ctx *)(void *)(area + from), b;
            CHECK_RC(kuai_gcm_init(a, &k, iv, sizeof iv), 0, "init");
            CHECK_RC(kuai_gcm_aad(a, aad, sizeof aad), 0, "aad");
            CHECK_RC(kuai_gcm_encrypt_update(a, msg, got, 333), 0, "update 1");
            memcpy(&b, a, sizeof b); /* park it, wipe the original spot */
            kuai_gcm_wipe(a);
            kuai_gcm_ctx *c = (kuai_gcm_ctx *)(void *)(area + to);
            memcpy(c, &b, sizeof b);
            CHECK_RC(kuai_gcm_encrypt_update(c, msg + 333, got + 333, sizeof msg - 333), 0,
                     "update 2");
            CHECK_RC(kuai_gcm_encrypt_final(c, tag2, 16), 0, "final");
            CHECK(memcmp(got, want, sizeof msg) == 0 && memcmp(tag, tag2, 16) == 0,
                  "context moved from offset %zu to %zu: output differs", from, to);
        }
    }
    kuai_key_wipe(&k);
    group_end();
}

/* The backends of all_ciphers[ci] (into be, its cipher into c) where it
 * has GCM's 128-bit block, else 0. */
static size_t gcm_backends(size_t ci, kuai_cipher *c, const char **be)
{
    *c = all_ciphers[ci];
    const size_t nbe = test_backends(*c, be, MAX_BACKENDS);
    return kuai_block_size(*c) == 16 ? nbe : 0;
}

/* k[0] and k[1] set up on backend be from fresh random bytes kb (1), or
 * the failure reported (0). */
static int two_keys(kuai_key *k, kuai_cipher c, uint8_t kb[2][32], const char *be)
{
    rng_fill(kb, 2 * 32);
    return key_init_ok(&k[0], c, kb[0], be) && key_init_ok(&k[1], c, kb[1], be);
}

/*
 * kuai_gcm_restart: a context set up once (the template), copied to a
 * place of another alignment and restarted for each message, agrees with
 * the one-shot calls for every 128-bit-block cipher and backend, 12-byte
 * and other IVs, many data lengths, both directions. Some messages go
 * under another key struct, some under the template's key set up again in
 * place with new bytes (the kept GHASH material must then be made anew:
 * its H is checked, not trusted), some after a restart that abandoned a
 * message half-way. After final, or on a context never set up: KUAI_ERR_ARG.
 */
static void test_gcm_restart(void)
{
    group_begin("gcm restart");
    static _Alignas(64) unsigned char area[sizeof(kuai_gcm_ctx) + 64];
    enum { MAXLEN = 5000 };
    uint8_t *pt = xmalloc(MAXLEN), *want = xmalloc(MAXLEN), *got = xmalloc(MAXLEN);
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c;
        const char *be[MAX_BACKENDS];
        const size_t nbe = gcm_backends(ci, &c, be);
        if (nbe == 0)
            continue;
        kuai_key *k = key_alloc(2);
        uint8_t kb[2][32], iv[100], aad[40], wtag[16], tag[16];
        for (size_t b = 0; b < nbe; b++) {
            if (!two_keys(k, c, kb, be[b]))
                continue;
            kuai_gcm_ctx tmpl;
            rng_fill(iv, 12);
            if (!CHECK_RC(kuai_gcm_init(&tmpl, &k[0], iv, 12), KUAI_OK, "init"))
                continue;
            const int rounds = t_short ? 12 : 40;
            for (int t = 0; t < rounds; t++) {
                const size_t iv_len = pick_iv_len(t), aad_len = rng_below(sizeof aad + 1);
                size_t len = pick_len(t);
                len = len > MAXLEN ? rng_below(MAXLEN + 1) : len;
                const kuai_key *key = &k[t % 4 == 3];
                if (t % 7 == 5) { /* the template's key set up again, new bytes */
                    rng_fill(kb[0], sizeof kb[0]);
                    if (!key_init_ok(&k[0], c, kb[0], be[b]))
                        break;
                }
                rng_fill(iv, iv_len);
                rng_fill(aad, aad_len);
                rng_fill(pt, len);
                char what[160];
                snprintf(what, sizeof what, "%s/%s: message %d, iv %zu, aad %zu, len %zu",
                         kuai_cipher_name(c), be[b], t, iv_len, aad_len, len);
                if (!CHECK_RC(
                        kuai_gcm_encrypt(key, iv, iv_len, aad, aad_len, pt, want, len, wtag, 16),
                        KUAI_OK, what))
                    continue;
                kuai_gcm_ctx *cx = (kuai_gcm_ctx *)(void *)(area + 8 * (size_t)(t % 8));
                for (int dec = 0; dec <= 1; dec++) {
                    memcpy(cx, &tmpl, sizeof tmpl);
                    if (t % 5 == 2) { /* a message begun, then abandoned */
                        CHECK_RC(kuai_gcm_restart(cx, &k[1], iv, 12), KUAI_OK, what);
                        CHECK_RC(kuai_gcm_aad(cx, aad, 3), KUAI_OK, what);
                        CHECK_RC(kuai_gcm_encrypt_update(cx, pt, got, 17), KUAI_OK, what);
                    }
                    CHECK_RC(kuai_gcm_restart(cx, key, iv, iv_len), KUAI_OK, what);
                    if (dec) {
                        CHECK_RC(stream_run(cx, 0, aad, aad_len, want, got, len, wtag, 16), KUAI_OK,
                                 what);
                        CHECK_MEM(got, pt, len, what);
                    } else {
                        CHECK_RC(stream_run(cx, 1, aad, aad_len, pt, got, len, tag, 16), KUAI_OK,
                                 what);
                        CHECK_MEM(got, want, len, what);
                        CHECK_MEM(tag, wtag, 16, what);
                    }
                    /* final wiped it */
                    CHECK_RC(kuai_gcm_restart(cx, key, iv, iv_len), KUAI_ERR_ARG, what);
                }
            }
            kuai_gcm_wipe(&tmpl);
        }
        kuai_gcm_ctx zero;
        memset(&zero, 0, sizeof zero);
        CHECK_RC(kuai_gcm_restart(&zero, &k[1], iv, 12), KUAI_ERR_ARG, "never set up");
        CHECK_RC(kuai_gcm_restart(NULL, &k[1], iv, 12), KUAI_ERR_ARG, "NULL context");
        kuai_key_wipe(&k[0]);
        kuai_key_wipe(&k[1]);
        free(k);
    }
    free(pt);
    free(want);
    free(got);
    group_end();
}

/*
 * A restart with a 12-byte IV makes its cipher call (H, E(J0), and the
 * first data blocks' keystream) at the message's first data, final, or
 * AAD past one block; until then up to a block of AAD waits unhashed
 * (gcm.c's gcm_settle). Every way into that call: AAD totals on both
 * sides of a block, in one piece or two; data on both sides of the
 * batch's 224 bytes (and of 96, its old size), whole or cut after its
 * first 1, 15, 16 or 17 bytes
 * (a partial block carried on from the batch's keystream); the template's
 * key or another (whose H differs: the material made anew at that call);
 * both directions, decryption in place too; against the one-shot calls.
 */
static void test_gcm_restart_first_call(void)
{
    group_begin("gcm restart's first cipher call");
    static const size_t aads[] = {0, 1, 5, 13, 15, 16, 17, 31, 32, 33};
    static const size_t lens[] = {0, 1, 15, 16, 17, 95, 96, 97, 112, 200, 223, 224, 225, 240};
    static const size_t cuts[] = {0, 1, 15, 16, 17};
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c;
        const char *be[MAX_BACKENDS];
        const size_t nbe = gcm_backends(ci, &c, be);
        if (nbe == 0)
            continue;
        kuai_key *k = key_alloc(2);
        uint8_t kb[2][32], iv[12], aad[40], pt[240], want[240], got[240], wtag[16], tag[16];
        for (size_t b = 0; b < nbe; b++) {
            if (!two_keys(k, c, kb, be[b]))
                continue;
            kuai_gcm_ctx tmpl, cx;
            rng_fill(iv, sizeof iv);
            if (!CHECK_RC(kuai_gcm_init(&tmpl, &k[0], iv, 12), KUAI_OK, "init"))
                continue;
            for (size_t ai = 0; ai < sizeof aads / sizeof aads[0]; ai++) {
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    for (size_t xi = 0; xi < sizeof cuts / sizeof cuts[0]; xi++) {
                        const size_t aad_len = aads[ai], len = lens[li], cut = cuts[xi];
                        if (cut > len || (t_short && xi > 1 && (ai + li) % 3))
                            continue;
                        const int other = (int)((ai + li + xi) % 2), inplace = (int)(xi % 2);
                        const kuai_key *key = &k[other];
                        /* AAD in two pieces when it has two: a block first
                         * where it is longer than one */
                        const size_t a1 = aad_len > 16 ? 16 : aad_len / 2;
                        rng_fill(iv, sizeof iv);
                        rng_fill(aad, aad_len);
                        rng_fill(pt, len);
                        char what[160];
                        snprintf(what, sizeof what,
                                 "%s/%s: aad %zu (%zu + %zu), len %zu cut %zu, %s key%s",
                                 kuai_cipher_name(c), be[b], aad_len, a1, aad_len - a1, len, cut,
                                 other ? "another" : "the template's", inplace ? ", in place" : "");
                        if (!CHECK_RC(kuai_gcm_encrypt(key, iv, 12, aad, aad_len, pt, want, len,
                                                       wtag, 16),
                                      KUAI_OK, what))
                            continue;
                        for (int dec = 0; dec <= 1; dec++) {
                            memcpy(&cx, &tmpl, sizeof cx);
                            int rc = kuai_gcm_restart(&cx, key, iv, 12);
                            if (!rc && a1)
                                rc = kuai_gcm_aad(&cx, aad, a1);
                            if (!rc && aad_len > a1)
                                rc = kuai_gcm_aad(&cx, aad + a1, aad_len - a1);
                            const uint8_t *in = dec ? want : pt;
                            uint8_t *out = got;
                            if (dec && inplace) {
                                memcpy(got, want, len);
                                in = got;
                            }
                            if (!rc && cut)
                                rc = dec ? kuai_gcm_decrypt_update(&cx, in, out, cut)
                                         : kuai_gcm_encrypt_update(&cx, in, out, cut);
                            if (!rc && len > cut)
                                rc = dec ? kuai_gcm_decrypt_update(&cx, in + cut, out + cut,
                                                                   len - cut)
                                         : kuai_gcm_encrypt_update(&cx, in + cut, out + cut,
                                                                   len - cut);
                            if (!rc)
                                rc = dec ? kuai_gcm_decrypt_final(&cx, wtag, 16)
                                         : kuai_gcm_encrypt_final(&cx, tag, 16);
                            if (dec)
                                strcat(what, ", dec");
                            if (!CHECK_RC(rc, KUAI_OK, what))
                                continue;
                            CHECK_MEM(got, dec ? pt : want, len, what);
                            if (!dec)
                                CHECK_MEM(tag, wtag, 16, what);
                        }
                    }
                }
            }
            kuai_gcm_wipe(&tmpl);
        }
        kuai_key_wipe(&k[0]);
        kuai_key_wipe(&k[1]);
        free(k);
    }
    group_end();
}

/*
 * The one-shot calls under a template (kuai_gcm_encrypt_with and
 * kuai_gcm_decrypt_with) against the plain one-shot calls: three
 * templates (fresh from init with a 12-byte IV; a copy of it at another
 * alignment modulo 64, whose material is out of place; one half-way
 * through a message begun with an 8-byte IV); the template's key or
 * another (H differs: the material made for the call); IVs of 12 bytes
 * and others; AAD on both sides of a block; every length 0-100, both
 * sides of the 224-byte short path, and longer ones; tags of 16 and 12
 * bytes; in place and out (guarded); a wrong tag (KUAI_ERR_AUTH, zeros
 * out). The templates must not change: they are only read.
 */
static void test_gcm_with(void)
{
    group_begin("gcm one-shot with a template");
    static _Alignas(64) unsigned char area[sizeof(kuai_gcm_ctx) + 64];
    static const size_t aads[] = {0, 1, 13, 16, 17, 32, 33};
    static const size_t longer[] = {112, 200, 223, 224, 225, 240, 1000};
    enum { NT = 3, MAXLEN = 1000 };
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c;
        const char *be[MAX_BACKENDS];
        const size_t nbe = gcm_backends(ci, &c, be);
        if (nbe == 0)
            continue;
        kuai_key *k = key_alloc(2);
        uint8_t kb[2][32], iv[20], aad[40], pt[MAXLEN], want[MAXLEN], scratch[MAXLEN];
        uint8_t wtag[16], tag[16];
        for (size_t b = 0; b < nbe; b++) {
            if (!two_keys(k, c, kb, be[b]))
                continue;
            kuai_gcm_ctx t0, t2, snap[NT];
            rng_fill(iv, sizeof iv);
            if (!CHECK_RC(kuai_gcm_init(&t0, &k[0], iv, 12), KUAI_OK, "init") ||
                !CHECK_RC(kuai_gcm_init(&t2, &k[0], iv, 8), KUAI_OK, "init, 8-byte IV") ||
                !CHECK_RC(kuai_gcm_aad(&t2, aad, 5), KUAI_OK, "aad") ||
                !CHECK_RC(kuai_gcm_encrypt_update(&t2, pt, scratch, 7), KUAI_OK, "update"))
                continue;
            /* t1: t0 copied to an address 8 or 16 bytes off t0's modulo 64 */
            const size_t shift = ((uintptr_t)&t0 + 8) & 63 ? 8 : 16;
            kuai_gcm_ctx *t1 = (kuai_gcm_ctx *)(void *)(area + (((uintptr_t)&t0 + shift) & 63));
            memcpy(t1, &t0, sizeof t0);
            const kuai_gcm_ctx *tm[NT] = {&t0, t1, &t2};
            for (int i = 0; i < NT; i++)
                memcpy(&snap[i], tm[i], sizeof snap[i]);
            const size_t nlen = 101 + sizeof longer / sizeof longer[0];
            for (size_t ai = 0; ai < sizeof aads / sizeof aads[0]; ai++) {
                for (size_t li = 0; li < nlen; li++) {
                    const size_t len = li <= 100 ? li : longer[li - 101];
                    const size_t m = ai * nlen + li;
                    if (t_short && m % 3 && li <= 100)
                        continue;
                    const size_t aad_len = aads[ai], tag_len = m % 4 == 1 ? 12 : 16;
                    const size_t iv_len = m % 7 == 3 ? 16 : m % 11 == 5 ? 8 : 12;
                    const int ti = (int)(m % NT), other = m % 5 == 4;
                    const kuai_key *key = &k[other];
                    rng_fill(iv, iv_len);
                    rng_fill(aad, aad_len);
                    rng_fill(pt, len);
                    char what[200];
                    snprintf(what, sizeof what,
                             "%s/%s: template %d, %s key, iv %zu, aad %zu, len %zu, tag %zu",
                             kuai_cipher_name(c), be[b], ti, other ? "another" : "its", iv_len,
                             aad_len, len, tag_len);
                    if (!CHECK_RC(kuai_gcm_encrypt(key, iv, iv_len, aad, aad_len, pt, want, len,
                                                   wtag, tag_len),
                                  KUAI_OK, what))
                        continue;
                    gbuf out = gbuf_new(len, m % 16);
                    CHECK_RC(kuai_gcm_encrypt_with(tm[ti], key, iv, iv_len, aad, aad_len, pt, out.p,
                                                   len, tag, tag_len),
                             KUAI_OK, what);
                    CHECK_MEM(out.p, want, len, what);
                    CHECK_MEM(tag, wtag, tag_len, what);
                    GBUF_CHECK(&out, what);
                    memset(out.p, 0x33, len);
                    CHECK_RC(kuai_gcm_decrypt_with(tm[ti], key, iv, iv_len, aad, aad_len, want,
                                                   out.p, len, wtag, tag_len),
                             KUAI_OK, what);
                    CHECK_MEM(out.p, pt, len, what);
                    GBUF_CHECK(&out, what);
                    gbuf_free(&out);
                    char w2[240];
                    snprintf(w2, sizeof w2, "%s, in place", what);
                    memcpy(scratch, pt, len);
                    CHECK_RC(kuai_gcm_encrypt_with(tm[ti], key, iv, iv_len, aad, aad_len, scratch,
                                                   scratch, len, tag, tag_len),
                             KUAI_OK, w2);
                    CHECK_MEM(scratch, want, len, w2);
                    CHECK_MEM(tag, wtag, tag_len, w2);
                    CHECK_RC(kuai_gcm_decrypt_with(tm[ti], key, iv, iv_len, aad, aad_len, scratch,
                                                   scratch, len, wtag, tag_len),
                             KUAI_OK, w2);
                    CHECK_MEM(scratch, pt, len, w2);
                    /* a wrong tag: refused, and no plaintext out */
                    snprintf(w2, sizeof w2, "%s, wrong tag", what);
                    memcpy(tag, wtag, tag_len);
                    tag[m % tag_len] ^= (uint8_t)(1u << (m % 8));
                    memset(scratch, 0x5c, len);
                    CHECK_RC(kuai_gcm_decrypt_with(tm[ti], key, iv, iv_len, aad, aad_len, want,
                                                   scratch, len, tag, tag_len),
                             KUAI_ERR_AUTH, w2);
                    CHECK(all_zero(scratch, len), "%s: output not zeroed", w2);
                }
            }
            for (int i = 0; i < NT; i++)
                CHECK(memcmp(&snap[i], tm[i], sizeof snap[i]) == 0,
                      "%s/%s: template %d changed by the calls that read it", kuai_cipher_name(c),
                      be[b], i);
            /* after final (which wipes it), or none: refused, nothing written */
            memset(scratch, 0x77, 16);
            CHECK_RC(kuai_gcm_encrypt_final(&t2, tag, 16), KUAI_OK, "final");
            CHECK_RC(kuai_gcm_encrypt_with(&t2, &k[0], iv, 12, aad, 3, pt, scratch, 16, tag, 16),
                     KUAI_ERR_ARG, "template after final");
            CHECK_RC(kuai_gcm_decrypt_with(NULL, &k[0], iv, 12, aad, 3, pt, scratch, 16, tag, 16),
                     KUAI_ERR_ARG, "no template");
            CHECK(scratch[0] == 0x77 && scratch[15] == 0x77, "refused call wrote its output");
            kuai_gcm_wipe(&t0);
            kuai_gcm_wipe(t1);
        }
        kuai_key_wipe(&k[0]);
        kuai_key_wipe(&k[1]);
        free(k);
    }
    group_end();
}

/* ---- short messages: the one-shot calls' single batch ------------------ */

/* With a 12-byte IV and at most 224 bytes of data the one-shot calls make
 * H, E(J0) and the keystream in one call of the cipher (gcm.c's
 * gcm_oneshot_short); the streaming calls never do. Every length from 0 to
 * 240 (both sides of the limit), several AAD lengths, every 128-bit-block
 * cipher and backend: the one-shot calls, out of place (guarded) and in
 * place, against the streaming calls over the same key. */
static void test_gcm_short(void)
{
    group_begin("gcm short one-shot");
    const ghash_impl *gs = kuai_ghash_short();
    CHECK(gs && gs->available(), "kuai_ghash_short: a usable backend");
    /* The rule (ghash.h): the fewest powers among the usable ones but ref,
     * the first (higher priority) among equals; ref only when alone. */
    for (const ghash_impl *const *g = kuai_ghash_impls(); gs && *g; g++) {
        if (!(*g)->available() || *g == &ghash_ref || *g == gs)
            continue;
        CHECK(gs != &ghash_ref, "kuai_ghash_short is ref, where %s is usable", (*g)->name);
        CHECK((*g)->powers > gs->powers ||
                  ((*g)->powers == gs->powers && (*g)->priority <= gs->priority),
              "kuai_ghash_short is %s (%u powers, priority %d), where %s has %u (priority %d)",
              gs->name, gs->powers, gs->priority, (*g)->name, (*g)->powers, (*g)->priority);
    }
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        if (nbe == 0 || kuai_block_size(c) != 16)
            continue;
        kuai_key *k = key_alloc(1);
        uint8_t keybytes[32], iv[12], aad[40], pt[240], want[240], back[240];
        rng_fill(keybytes, sizeof keybytes);
        for (size_t b = 0; b < nbe; b++) {
            if (!key_init_ok(k, c, keybytes, be[b]))
                continue;
            for (size_t len = 0; len <= 240; len += t_short && len > 20 && len < 218 ? 7 : 1) {
                static const size_t al[] = {0, 5, 16, 37};
                const size_t aad_len = al[len % 4], tag_len = 12 + len % 5;
                uint8_t wtag[16], tag[16], itag[16];
                rng_fill(iv, sizeof iv);
                rng_fill(aad, aad_len);
                rng_fill(pt, len);
                char what[160];
                snprintf(what, sizeof what, "%s/%s: len %zu, aad %zu", kuai_cipher_name(c), be[b],
                         len, aad_len);
                if (!CHECK_RC(stream_crypt(1, k, iv, 12, aad, aad_len, pt, want, len, wtag, 16),
                              KUAI_OK, what))
                    continue;
                gbuf ct = gbuf_new(len, 1 + rng_below(63));
                if (CHECK_RC(kuai_gcm_encrypt(k, iv, 12, aad, aad_len, pt, ct.p, len, tag, tag_len),
                             KUAI_OK, what)) {
                    CHECK_MEM(ct.p, want, len, what);
                    CHECK_MEM(tag, wtag, tag_len, what);
                    GBUF_CHECK(&ct, what);
                }
                CHECK_RC(kuai_gcm_decrypt(k, iv, 12, aad, aad_len, ct.p, back, len, tag, tag_len),
                         KUAI_OK, what);
                CHECK_MEM(back, pt, len, what);
                gbuf_free(&ct);
                memcpy(back, pt, len);
                CHECK_RC(kuai_gcm_encrypt(k, iv, 12, aad, aad_len, back, back, len, itag, 16),
                         KUAI_OK, what);
                CHECK_MEM(back, want, len, what);
                CHECK_MEM(itag, wtag, 16, what);
                CHECK_RC(kuai_gcm_decrypt(k, iv, 12, aad, aad_len, back, back, len, itag, 16),
                         KUAI_OK, what);
                CHECK_MEM(back, pt, len, what);
                /* a forged tag: KUAI_ERR_AUTH and nothing handed back */
                itag[len % 16] ^= 1;
                memcpy(back, want, len);
                CHECK_RC(kuai_gcm_decrypt(k, iv, 12, aad, aad_len, back, back, len, itag, 16),
                         KUAI_ERR_AUTH, what);
                CHECK(len == 0 || all_zero(back, len), "%s: forged, output not wiped", what);
            }
        }
        kuai_key_wipe(k);
        free(k);
    }
    group_end();
}

void test_gcm(void)
{
    test_gcm_ctx_copy();
    test_gcm_null_empty();
    test_gcm_ghash();
    test_gcm_vs_openssl();
    test_gcm_ctr32();
    test_gcm_ciphers();
    test_gcm_short();
    test_gcm_restart();
    test_gcm_restart_first_call();
    test_gcm_with();
    test_gcm_sm4();
    test_gcm_api_errors();
}
