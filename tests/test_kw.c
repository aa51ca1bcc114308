/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Key wrap (KW, KWP; NIST SP 800-38F, RFC 3394, RFC 5649):
 *  - the RFCs' own examples (RFC 3394 section 4: six; RFC 5649 section 6:
 *    two), on every AES backend; Wycheproof's sets are in test_wycheproof.c;
 *  - every 128-bit-block cipher and backend against a model written here
 *    from RFC 3394's index form (2.2.1 and 2.2.2, one ECB block at a time
 *    on a `ref` key), and AES against OpenSSL's wrap ciphers and SM4 and AES
 *    against libgcrypt's AESWRAP mode, over every length 16..264 (KW) and
 *    1..264 (KWP) and random longer ones, in place and out of place;
 *  - unwrapping refuses a wrapped key with any one bit flipped, a KWP
 *    block whose length or padding is wrong (made with the model's
 *    cipher, so that only that field is wrong), with KUAI_ERR_AUTH and out
 *    zeroed;
 *  - the lengths each call refuses, uBlock-256/256, a NULL out_len.
 * The misuse table (test_misuse.c) covers NULLs, overlaps, wrapping
 * lengths and bad keys for the four calls.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if KUAI_TEST_THIRD_PARTY
#include <gcrypt.h>
#include <openssl/evp.h>
#endif

static void unhex(const char *h, uint8_t *out, size_t *n)
{
    size_t i = 0;
    for (; h[2 * i]; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    *n = i;
}

/* ---- the model ----------------------------------------------------------- */

/* RFC 3394 2.2.1 in its index form: A, R[1..n], t = n*j + i. */
static void model_wrap(const kuai_key *ref, const uint8_t iv[8], const uint8_t *p, size_t n,
                       uint8_t *c)
{
    uint8_t a[8], *r = xmalloc(8 * (n + 1)), b[16];
    memcpy(a, iv, 8);
    memcpy(r + 8, p, 8 * n);
    for (size_t j = 0; j <= 5; j++)
        for (size_t i = 1; i <= n; i++) {
            memcpy(b, a, 8);
            memcpy(b + 8, r + 8 * i, 8);
            model_ecb(ref, 16, 1, b, b, 16);
            uint64_t t = (uint64_t)(n * j + i);
            for (int x = 0; x < 8; x++)
                a[x] = b[x] ^ (uint8_t)(t >> (56 - 8 * x));
            memcpy(r + 8 * i, b + 8, 8);
        }
    memcpy(c, a, 8);
    memcpy(c + 8, r + 8, 8 * n);
    free(r);
}

/* RFC 5649 section 4.1 on an integrity value and n padded semiblocks as
 * given: one block for n = 1, else RFC 3394's wrap. */
static void model_kwp_raw(const kuai_key *ref, const uint8_t aiv[8], const uint8_t *padded,
                          size_t n, uint8_t *c)
{
    if (n == 1) {
        memcpy(c, aiv, 8);
        memcpy(c + 8, padded, 8);
        model_ecb(ref, 16, 1, c, c, 16);
    } else {
        model_wrap(ref, aiv, padded, n, c);
    }
}

/* RFC 5649 section 4.1: the AIV and the padding. */
static size_t model_kwp_wrap(const kuai_key *ref, const uint8_t *p, size_t len, uint8_t *c)
{
    size_t n = (len + 7) / 8;
    uint8_t aiv[8] = {0xa6,
                      0x59,
                      0x59,
                      0xa6,
                      (uint8_t)(len >> 24),
                      (uint8_t)(len >> 16),
                      (uint8_t)(len >> 8),
                      (uint8_t)len};
    uint8_t *padded = xmalloc(8 * n + 8);
    memset(padded, 0, 8 * n + 8);
    memcpy(padded, p, len);
    model_kwp_raw(ref, aiv, padded, n, c);
    free(padded);
    return 8 * n + 8;
}

/* ---- third parties ------------------------------------------------------- */

#if KUAI_TEST_THIRD_PARTY
/* OpenSSL's wrap ciphers (AES only): 1 when it gave an answer. */
static int ossl_wrap(kuai_cipher c, int pad, const uint8_t *key, const uint8_t *in, size_t len,
                     uint8_t *out, size_t *out_len)
{
    const EVP_CIPHER *ci = NULL;
    if (c == KUAI_AES_128)
        ci = pad ? EVP_aes_128_wrap_pad() : EVP_aes_128_wrap();
    else if (c == KUAI_AES_192)
        ci = pad ? EVP_aes_192_wrap_pad() : EVP_aes_192_wrap();
    else if (c == KUAI_AES_256)
        ci = pad ? EVP_aes_256_wrap_pad() : EVP_aes_256_wrap();
    if (!ci)
        return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl = 0, ok = ctx != NULL;
    if (ok) {
        EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
        ok = EVP_EncryptInit_ex(ctx, ci, NULL, key, NULL) &&
             EVP_EncryptUpdate(ctx, out, &outl, in, (int)len) > 0;
    }
    EVP_CIPHER_CTX_free(ctx);
    *out_len = (size_t)outl;
    return ok;
}

/* libgcrypt's AESWRAP mode (any 16-byte-block cipher; KWP with
 * GCRY_CIPHER_EXTENDED): 1 when it gave an answer. */
static int gcry_wrap(kuai_cipher c, int pad, const uint8_t *key, const uint8_t *in, size_t len,
                     uint8_t *out, size_t *out_len)
{
    int algo = c == KUAI_SM4       ? GCRY_CIPHER_SM4
               : c == KUAI_AES_128 ? GCRY_CIPHER_AES128
               : c == KUAI_AES_192 ? GCRY_CIPHER_AES192
               : c == KUAI_AES_256 ? GCRY_CIPHER_AES256
                                   : 0;
    if (!algo || !gcry_check_version(NULL))
        return 0;
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    gcry_cipher_hd_t h;
    if (gcry_cipher_open(&h, algo, GCRY_CIPHER_MODE_AESWRAP, pad ? GCRY_CIPHER_EXTENDED : 0))
        return 0;
    size_t ol = pad ? 8 + ((len + 7) & ~(size_t)7) : len + 8;
    int ok =
        !gcry_cipher_setkey(h, key, kuai_key_size(c)) && !gcry_cipher_encrypt(h, out, ol, in, len);
    gcry_cipher_close(h);
    *out_len = ol;
    return ok;
}
#endif

/* ---- the RFCs' examples -------------------------------------------------- */

static void test_kw_rfc(void)
{
    group_begin("key wrap RFC 3394/5649 examples");
    static const struct {
        int pad;
        const char *kek, *key, *wrapped;
    } v[] = {
        /* RFC 3394 4.1-4.6 */
        {0, "000102030405060708090A0B0C0D0E0F", "00112233445566778899AABBCCDDEEFF",
         "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"},
        {0, "000102030405060708090A0B0C0D0E0F1011121314151617", "00112233445566778899AABBCCDDEEFF",
         "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"},
        {0, "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
         "00112233445566778899AABBCCDDEEFF", "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"},
        {0, "000102030405060708090A0B0C0D0E0F1011121314151617",
         "00112233445566778899AABBCCDDEEFF0001020304050607",
         "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"},
        {0, "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
         "00112233445566778899AABBCCDDEEFF0001020304050607",
         "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"},
        {0, "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
         "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
         "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"},
        /* RFC 5649 section 6 */
        {1, "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8",
         "c37b7e6492584340bed12207808941155068f738",
         "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a"},
        {1, "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8", "466f7250617369",
         "afbeb0f07dfbf5419200f2ccb50bb24f"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t kek[32], key[32], wrapped[40], out[48];
        size_t kl, dl, wl, got = 0;
        unhex(v[i].kek, kek, &kl);
        unhex(v[i].key, key, &dl);
        unhex(v[i].wrapped, wrapped, &wl);
        kuai_cipher c = kl == 16 ? KUAI_AES_128 : kl == 24 ? KUAI_AES_192 : KUAI_AES_256;
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        for (size_t b = 0; b < nbe; b++) {
            kuai_key k;
            if (!key_init_ok(&k, c, kek, be[b]))
                continue;
            char what[128];
            snprintf(what, sizeof what, "%s %s example %zu wrap", kuai_cipher_name(c), be[b], i);
            int rc = v[i].pad ? kuai_kwp_wrap(&k, key, dl, out) : kuai_kw_wrap(&k, key, dl, out);
            if (CHECK_RC(rc, KUAI_OK, what))
                CHECK_MEM(out, wrapped, wl, what);
            snprintf(what, sizeof what, "%s %s example %zu unwrap", kuai_cipher_name(c), be[b], i);
            rc = v[i].pad ? kuai_kwp_unwrap(&k, wrapped, wl, out, &got)
                          : kuai_kw_unwrap(&k, wrapped, wl, out);
            if (CHECK_RC(rc, KUAI_OK, what)) {
                CHECK_MEM(out, key, dl, what);
                CHECK(!v[i].pad || got == dl, "%s: length %zu, want %zu", what, got, dl);
            }
            kuai_key_wipe(&k);
        }
    }
    group_end();
}

/* ---- against the model and the third parties ----------------------------- */

typedef struct kw_stats {
    long model, third, third_due, tampered; /* third_due: AES and SM4 wraps */
} kw_stats;

/* One key of cipher c on backend be: wrap and unwrap len bytes (KW or
 * KWP), out of place and in place, against the model and a third party;
 * then a flipped bit refused. */
static void kw_one(kuai_cipher c, const char *be, const kuai_key *ref, const kuai_key *k,
                   const uint8_t *kek, int pad, size_t len, kw_stats *st)
{
    char what[160];
    snprintf(what, sizeof what, "%s %s %s len %zu", kuai_cipher_name(c), be, pad ? "KWP" : "KW",
             len);
    const size_t wl = pad ? kuai_kwp_wrapped_len(len) : len + 8;
    uint8_t *key = xmalloc(len + 1), *want = xmalloc(wl + 8);
    rng_fill(key, len);
    if (pad)
        model_kwp_wrap(ref, key, len, want);
    else
        model_wrap(ref, (const uint8_t[8]){0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}, key,
                   len / 8, want);
    st->model++;
#if KUAI_TEST_THIRD_PARTY
    {
        uint8_t *tp = xmalloc(wl + 16);
        size_t tl = 0;
        int got = c == KUAI_SM4 || !(rng_u64() & 1) ? gcry_wrap(c, pad, kek, key, len, tp, &tl)
                                                    : ossl_wrap(c, pad, kek, key, len, tp, &tl);
        st->third_due +=
            c == KUAI_SM4 || c == KUAI_AES_128 || c == KUAI_AES_192 || c == KUAI_AES_256;
        if (got) {
            CHECK(tl == wl, "%s: the third party wrapped to %zu bytes, want %zu", what, tl, wl);
            CHECK_MEM(tp, want, wl, what);
            st->third++;
        }
        free(tp);
    }
#else
    (void)kek;
#endif
    gbuf g = gbuf_new(wl + 8, rng_below(64));
    for (int inplace = 0; inplace < 2; inplace++) {
        memset(g.p, GUARD_FILL, g.len);
        if (inplace)
            memcpy(g.p, key, len);
        int rc = pad ? kuai_kwp_wrap(k, inplace ? g.p : key, len, g.p)
                     : kuai_kw_wrap(k, inplace ? g.p : key, len, g.p);
        if (CHECK_RC(rc, KUAI_OK, what))
            CHECK_MEM(g.p, want, wl, what);
        CHECK(g.p[wl] == GUARD_FILL, "%s: wrote past the wrapped key", what);
        memset(g.p, GUARD_FILL, g.len);
        if (inplace)
            memcpy(g.p, want, wl);
        size_t got = 0;
        rc = pad ? kuai_kwp_unwrap(k, inplace ? g.p : want, wl, g.p, &got)
                 : kuai_kw_unwrap(k, inplace ? g.p : want, wl, g.p);
        if (CHECK_RC(rc, KUAI_OK, what)) {
            CHECK_MEM(g.p, key, len, what);
            CHECK(!pad || got == len, "%s: unwrapped length %zu", what, got);
            /* KWP: the padding comes out as zeros in the room after it */
            for (size_t i = len; i < wl - 8; i++)
                CHECK(g.p[i] == 0, "%s: padding byte %zu not zero", what, i);
        }
        if (!inplace)
            CHECK(g.p[wl - 8] == GUARD_FILL, "%s: unwrap wrote past its room", what);
    }
    /* One bit flipped anywhere: refused, out zeroed. */
    uint8_t *bad = xmalloc(wl);
    memcpy(bad, want, wl);
    size_t bit = rng_below(8 * wl);
    bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    memset(g.p, GUARD_FILL, g.len);
    size_t got = 12345;
    int rc = pad ? kuai_kwp_unwrap(k, bad, wl, g.p, &got) : kuai_kw_unwrap(k, bad, wl, g.p);
    CHECK_RC(rc, KUAI_ERR_AUTH, what);
    int zeros = 1;
    for (size_t i = 0; i < wl - 8; i++)
        zeros &= g.p[i] == 0;
    CHECK(zeros && g.p[wl - 8] == GUARD_FILL, "%s: bit %zu flipped: out not zeros", what, bit);
    CHECK(got == 12345, "%s: a refused unwrap set out_len", what);
    GBUF_CHECK(&g, what);
    st->tampered++;
    gbuf_free(&g);
    free(bad);
    free(key);
    free(want);
}

/* KWP blocks whose integrity value is right but for one field, made with
 * the raw cipher: each must be refused. */
static void kwp_crafted(kuai_cipher c, const char *be, const kuai_key *ref, const kuai_key *k)
{
    char what[160];
    static const struct {
        uint32_t mli;
        size_t n;     /* semiblocks */
        int pad_byte; /* -1: padding zeros; else index of a non-zero one */
        int ok;
        const char *desc;
    } t[] = {
        {9, 2, -1, 1, "length 9 in 2 semiblocks"},
        {16, 2, -1, 1, "length 16 in 2 semiblocks"},
        {8, 2, -1, 0, "length 8 in 2 semiblocks (one too many)"},
        {17, 2, -1, 0, "length 17 in 2 semiblocks"},
        {0, 2, -1, 0, "length 0"},
        {0xffffffffu, 2, -1, 0, "length 2^32 - 1"},
        {0x80000010u, 2, -1, 0, "length 2^31 + 16"},
        {12, 2, 12, 0, "a non-zero padding byte (first)"},
        {12, 2, 15, 0, "a non-zero padding byte (last)"},
        {15, 2, 15, 0, "a non-zero padding byte (the only one)"},
        {1, 1, -1, 1, "length 1 in 1 semiblock"},
        {8, 1, -1, 1, "length 8 in 1 semiblock"},
        {0, 1, -1, 0, "length 0 in 1 semiblock"},
        {9, 1, -1, 0, "length 9 in 1 semiblock"},
        {3, 1, 3, 0, "one semiblock, a non-zero padding byte"},
        {17, 3, -1, 1, "length 17 in 3 semiblocks"},
        {16, 3, -1, 0, "length 16 in 3 semiblocks"},
        {20, 3, 23, 0, "3 semiblocks, a non-zero last padding byte"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(what, sizeof what, "%s %s KWP crafted: %s", kuai_cipher_name(c), be, t[i].desc);
        const size_t n = t[i].n, wl = 8 * n + 8;
        uint8_t p[24], aiv[8] = {0xa6, 0x59, 0x59, 0xa6}, w[32], out[25];
        rng_fill(p, sizeof p);
        for (size_t j = (t[i].mli <= 8 * n ? t[i].mli : 8 * n); j < 8 * n; j++)
            p[j] = 0;
        if (t[i].pad_byte >= 0)
            p[t[i].pad_byte] = (uint8_t)(1 + rng_below(255));
        for (int x = 0; x < 4; x++)
            aiv[4 + x] = (uint8_t)(t[i].mli >> (24 - 8 * x));
        model_kwp_raw(ref, aiv, p, n, w);
        memset(out, GUARD_FILL, sizeof out);
        size_t got = 777;
        int rc = kuai_kwp_unwrap(k, w, wl, out, &got);
        if (t[i].ok) {
            if (CHECK_RC(rc, KUAI_OK, what)) {
                CHECK(got == t[i].mli, "%s: length %zu", what, got);
                CHECK_MEM(out, p, 8 * n, what);
            }
        } else {
            CHECK_RC(rc, KUAI_ERR_AUTH, what);
            int zeros = got == 777;
            for (size_t j = 0; j < 8 * n; j++)
                zeros &= out[j] == 0;
            CHECK(zeros && out[8 * n] == GUARD_FILL, "%s: out not zeros or out_len set", what);
        }
    }
}

static void test_kw_diff(void)
{
    group_begin("key wrap");
    kw_stats st = {0, 0, 0, 0};
    const size_t longest = t_short ? 96 : 264;
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        if (kuai_block_size(c) != 16 || !kuai_backends(c, NULL, 0))
            continue;
        uint8_t kek[32];
        rng_fill(kek, sizeof kek);
        kuai_key ref;
        if (!key_init_ok(&ref, c, kek, "ref"))
            continue;
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        for (size_t b = 0; b < nbe; b++) {
            kuai_key k;
            if (!key_init_ok(&k, c, kek, be[b]))
                continue;
            for (size_t len = 16; len <= longest; len += 8)
                kw_one(c, be[b], &ref, &k, kek, 0, len, &st);
            for (size_t len = 1; len <= longest; len++)
                kw_one(c, be[b], &ref, &k, kek, 1, len, &st);
            for (int r = 0; r < (t_short ? 2 : 8); r++) {
                size_t len = 8 * (2 + rng_below(t_short ? 256 : 1024));
                kw_one(c, be[b], &ref, &k, kek, 0, len, &st);
                kw_one(c, be[b], &ref, &k, kek, 1, len - rng_below(8), &st);
            }
            kwp_crafted(c, be[b], &ref, &k);
            kuai_key_wipe(&k);
        }
        kuai_key_wipe(&ref);
    }
    t_note("  %ld wraps against the model, %ld against OpenSSL/libgcrypt, %ld tampered refused",
           st.model, st.third, st.tampered);
#if KUAI_TEST_THIRD_PARTY
    /* Every AES and SM4 wrap this run made (none when --backend names a
     * uBlock-only backend) has a third party's answer. */
    CHECK(st.third == st.third_due,
          "%ld of %ld AES and SM4 wraps compared with OpenSSL or libgcrypt", st.third,
          st.third_due);
#endif
    group_end();
}

/* ---- refusals ------------------------------------------------------------ */

static void test_kw_refusals(void)
{
    group_begin("key wrap refusals");
    uint8_t kek[32] = {1}, in[64] = {2}, out[80];
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        if (!kuai_backends(c, NULL, 0))
            continue;
        kuai_key k;
        const char *cn = kuai_cipher_name(c);
        if (!CHECK_RC(kuai_key_init(&k, c, kek, kuai_key_size(c)), KUAI_OK, cn))
            continue;
        size_t got = 99;
        if (kuai_block_size(c) != 16) {
            CHECK_RC(kuai_kw_wrap(&k, in, 16, out), KUAI_ERR_UNSUPPORTED, cn);
            CHECK_RC(kuai_kw_unwrap(&k, in, 24, out), KUAI_ERR_UNSUPPORTED, cn);
            CHECK_RC(kuai_kwp_wrap(&k, in, 5, out), KUAI_ERR_UNSUPPORTED, cn);
            CHECK_RC(kuai_kwp_unwrap(&k, in, 16, out, &got), KUAI_ERR_UNSUPPORTED, cn);
            kuai_key_wipe(&k);
            continue;
        }
        /* KW: multiples of 8, at least 16 to wrap and 24 to unwrap. */
        static const size_t kw_bad[] = {0, 1, 7, 8, 15, 17, 23, 33};
        for (size_t i = 0; i < sizeof kw_bad / sizeof kw_bad[0]; i++) {
            char what[96];
            memset(out, GUARD_FILL, sizeof out);
            snprintf(what, sizeof what, "%s KW wrap of %zu bytes", cn, kw_bad[i]);
            CHECK_RC(kuai_kw_wrap(&k, in, kw_bad[i], out), KUAI_ERR_LENGTH, what);
            snprintf(what, sizeof what, "%s KW unwrap of %zu bytes", cn, kw_bad[i] + 8 * (i < 4));
            CHECK_RC(kuai_kw_unwrap(&k, in, kw_bad[i] + 8 * (i < 4), out), KUAI_ERR_LENGTH, what);
            CHECK(out[0] == GUARD_FILL, "%s: wrote", what);
        }
        /* KWP: 1 .. 2^32 - 1 to wrap; multiples of 8, at least 16, to
         * unwrap. */
        CHECK_RC(kuai_kwp_wrap(&k, in, 0, out), KUAI_ERR_LENGTH, "KWP wrap of 0 bytes");
        CHECK_RC(kuai_kwp_wrap(&k, NULL, 0, out), KUAI_ERR_LENGTH, "KWP wrap of 0 bytes, NULL");
#if SIZE_MAX > UINT32_MAX
        {
            /* A length over the 32-bit field, refused before any read:
             * in is a real buffer of 64 bytes, so nothing may be read. */
            CHECK_RC(kuai_kwp_wrap(&k, in, (size_t)UINT32_MAX + 1, out), KUAI_ERR_LENGTH,
                     "KWP wrap of 2^32 bytes");
        }
#endif
        static const size_t kwp_bad[] = {0, 8, 9, 15, 17, 31};
        for (size_t i = 0; i < sizeof kwp_bad / sizeof kwp_bad[0]; i++) {
            char what[96];
            snprintf(what, sizeof what, "%s KWP unwrap of %zu bytes", cn, kwp_bad[i]);
            CHECK_RC(kuai_kwp_unwrap(&k, in, kwp_bad[i], out, &got), KUAI_ERR_LENGTH, what);
        }
        CHECK_RC(kuai_kwp_unwrap(&k, in, 16, out, NULL), KUAI_ERR_ARG, "KWP unwrap, out_len NULL");
        CHECK(got == 99, "%s: a refused KWP unwrap set out_len", cn);
        /* in and out overlapping other than at the same start */
        memcpy(out, in, 32);
        CHECK_RC(kuai_kw_wrap(&k, out, 16, out + 8), KUAI_ERR_ARG, "KW wrap, out 8 bytes on");
        CHECK_RC(kuai_kw_wrap(&k, out + 20, 16, out), KUAI_ERR_ARG,
                 "KW wrap, in 20 bytes on (in the 24 out needs)");
        CHECK_RC(kuai_kwp_wrap(&k, out + 12, 5, out), KUAI_ERR_ARG,
                 "KWP wrap, in 12 bytes on (in the 16 out needs)");
        CHECK_RC(kuai_kw_unwrap(&k, out + 8, 24, out), KUAI_ERR_ARG, "KW unwrap, in 8 bytes on");
        kuai_key_wipe(&k);
    }
    group_end();
}

void test_kw(void)
{
    test_kw_rfc();
    test_kw_diff();
    test_kw_refusals();
}
