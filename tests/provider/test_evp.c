/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kuai provider through EVP only: no kuai header, the module loaded by
 * name from the directory given as argv[1] (default: the build directory).
 *
 * Every expected value is computed independently of the code under test's
 * modes: ECB is checked against the known-answer files in tests/vectors,
 * then CBC, CTR and GCM are rebuilt here from single ECB blocks (GHASH
 * bit by bit), and SM4/AES are also compared with OpenSSL's default
 * provider and SM4-GCM with libgcrypt and RFC 8998.
 */
#include "provider_test.h"
/* the provider's reason codes and texts, from their one list (no kuai
 * library header: kuai_prov_err.h has OpenSSL's alone) */
#include "kuai_prov_err.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <gcrypt.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int checks, failures;

static uint64_t rng = 0x6b756169ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static void rnd_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

enum { ECB, CBC, CTR, GCM };
static const char *const mode_names[] = {"ECB", "CBC", "CTR", "GCM"};

typedef struct family {
    const char *prefix; /* "UBLOCK-128-128" */
    size_t keylen, bs;
    const char *kat_file; /* tests/vectors/... */
    int has_gcm, default_ref, is_aes;
} family;

static const family families[] = {
    {"UBLOCK-128-128", 16, 16, "ublock-128-128.txt", 1, 0, 0},
    {"UBLOCK-128-256", 32, 16, "ublock-128-256.txt", 1, 0, 0},
    {"UBLOCK-256-256", 32, 32, "ublock-256-256.txt", 0, 0, 0},
    {"SM4", 16, 16, "sm4.txt", 1, 1, 0},
    {"AES-128", 16, 16, NULL, 1, 1, 1},
    {"AES-192", 24, 16, NULL, 1, 1, 1},
    {"AES-256", 32, 16, NULL, 1, 1, 1},
};

/* Every cipher the provider offers (it builds its table from kuai_ciphers())
 * is one of families[] in one of the provider's modes: a new cipher fails
 * here until it has its row, rather than go untested. */
static void name_covered(const char *name, void *arg)
{
    static const char *const modes[] = {"ECB", "CBC", "CTR", "GCM", "XTS", "CCM", "CFB", "OFB"};
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        size_t n = strlen(families[i].prefix);
        if (OPENSSL_strncasecmp(name, families[i].prefix, n) != 0 || name[n] != '-')
            continue;
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            if (OPENSSL_strcasecmp(name + n + 1, modes[m]) == 0)
                *(int *)arg = 1;
    }
}

static void check_covered(EVP_CIPHER *c, void *arg)
{
    int *offered = arg, covered = 0;
    if (strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(c)), "kuai") != 0)
        return;
    (*offered)++;
    EVP_CIPHER_names_do_all(c, name_covered, &covered);
    CHECK(covered, "the provider's %s has no row in test_evp.c's families[]",
          EVP_CIPHER_get0_name(c));
}

static EVP_CIPHER *fetch(const family *f, int mode, const char *props)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", f->prefix, mode_names[mode]);
    return EVP_CIPHER_fetch(NULL, name, props);
}

/* ---- one-shot and chunked runs ------------------------------------------ */

/* Random chunk sizes: empty, tiny, around the block size, and long runs. */
static size_t chunk_len(size_t left)
{
    size_t n;
    switch (rnd() % 4) {
    case 0:
        n = rnd() % 4;
        break;
    case 1:
        n = rnd() % 40;
        break;
    case 2:
        n = rnd() % 300;
        break;
    default:
        n = rnd() % 5000;
        break;
    }
    return n < left ? n : left;
}

/* Returns output length, or -1. chunked: random update sizes. */
static long run(const EVP_CIPHER *c, int enc, int pad, const uint8_t *key, const uint8_t *iv,
                const uint8_t *in, size_t len, uint8_t *out, int chunked)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    long total = -1;
    int outl;
    if (!EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL))
        goto done;
    EVP_CIPHER_CTX_set_padding(ctx, pad);
    size_t pos = 0;
    total = 0;
    do {
        size_t n = chunked ? chunk_len(len - pos) : len - pos;
        if (!EVP_CipherUpdate(ctx, out + total, &outl, in + pos, (int)n)) {
            total = -1;
            goto done;
        }
        total += outl;
        pos += n;
    } while (pos < len);
    if (!EVP_CipherFinal_ex(ctx, out + total, &outl))
        total = -1;
    else
        total += outl;
done:
    EVP_CIPHER_CTX_free(ctx);
    return total;
}

/* ---- references built from single ECB blocks ----------------------------- */

static void ecb_block(const EVP_CIPHER *ecb, const uint8_t *key, const uint8_t *in, uint8_t *out,
                      size_t bs)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl = 0;
    EVP_EncryptInit_ex2(ctx, ecb, key, NULL, NULL);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_EncryptUpdate(ctx, out, &outl, in, (int)bs);
    EVP_CIPHER_CTX_free(ctx);
}

static size_t ref_encrypt(const EVP_CIPHER *ecb, int mode, int pad, size_t bs, const uint8_t *key,
                          const uint8_t *iv, const uint8_t *in, size_t len, uint8_t *out)
{
    uint8_t *buf = malloc(len + bs);
    memcpy(buf, in, len);
    size_t n = len;
    if (pad && mode != CTR) {
        size_t p = bs - len % bs;
        memset(buf + len, (int)p, p);
        n = len + p;
    }
    uint8_t chain[32], ctr[32], ks[32];
    memcpy(chain, iv, bs);
    memcpy(ctr, iv, bs);
    for (size_t off = 0; off < n; off += bs) {
        size_t m = n - off < bs ? n - off : bs;
        if (mode == ECB) {
            ecb_block(ecb, key, buf + off, out + off, bs);
        } else if (mode == CBC) {
            for (size_t i = 0; i < bs; i++)
                chain[i] ^= buf[off + i];
            ecb_block(ecb, key, chain, chain, bs);
            memcpy(out + off, chain, bs);
        } else {
            ecb_block(ecb, key, ctr, ks, bs);
            for (size_t i = 0; i < m; i++)
                out[off + i] = buf[off + i] ^ ks[i];
            for (size_t i = bs; i-- > 0;) /* whole block, big-endian */
                if (++ctr[i] != 0)
                    break;
        }
    }
    free(buf);
    return n;
}

/* GF(2^128) multiply, bit by bit (SP 800-38D, Algorithm 1). */
static void gf_mul(uint8_t x[16], const uint8_t y[16])
{
    uint8_t z[16] = {0}, v[16];
    memcpy(v, y, 16);
    for (int i = 0; i < 128; i++) {
        if (x[i / 8] >> (7 - i % 8) & 1)
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

static void ghash_update(uint8_t y[16], const uint8_t h[16], const uint8_t *p, size_t n)
{
    for (size_t off = 0; off < n; off += 16) {
        for (size_t i = 0; i < 16 && off + i < n; i++)
            y[i] ^= p[off + i];
        gf_mul(y, h);
    }
}

static void ghash_lengths(uint8_t y[16], const uint8_t h[16], uint64_t a, uint64_t c)
{
    uint8_t l[16];
    for (int i = 0; i < 8; i++) {
        l[7 - i] = (uint8_t)(a * 8 >> (8 * i));
        l[15 - i] = (uint8_t)(c * 8 >> (8 * i));
    }
    ghash_update(y, h, l, 16);
}

static void ref_gcm(const EVP_CIPHER *ecb, const uint8_t *key, const uint8_t *iv, size_t ivlen,
                    const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len, uint8_t *out,
                    uint8_t tag[16])
{
    uint8_t h[16] = {0}, j0[16] = {0}, ctr[16], ks[16], y[16] = {0};
    ecb_block(ecb, key, h, h, 16);
    if (ivlen == 12) {
        memcpy(j0, iv, 12);
        j0[15] = 1;
    } else {
        ghash_update(j0, h, iv, ivlen);
        ghash_lengths(j0, h, 0, ivlen);
    }
    memcpy(ctr, j0, 16);
    for (size_t off = 0; off < len; off += 16) {
        for (int i = 15; i >= 12; i--) /* inc32 */
            if (++ctr[i] != 0)
                break;
        ecb_block(ecb, key, ctr, ks, 16);
        for (size_t i = 0; i < 16 && off + i < len; i++)
            out[off + i] = in[off + i] ^ ks[i];
    }
    ghash_update(y, h, aad, aadlen);
    ghash_update(y, h, out, len);
    ghash_lengths(y, h, aadlen, len);
    ecb_block(ecb, key, j0, ks, 16);
    for (int i = 0; i < 16; i++)
        tag[i] = y[i] ^ ks[i];
}

/* ---- ECB known answers ---------------------------------------------------- */

static size_t hex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    while (s[0] && s[1] && n < max) {
        unsigned v;
        if (sscanf(s, "%2x", &v) != 1)
            break;
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static void test_kat(const family *f, const EVP_CIPHER *ecb)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/%s", KUAI_SOURCE_DIR, f->kat_file);
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL, "cannot open %s", path);
    if (!fp)
        return;
    char line[4096];
    uint8_t key[32], pt[512], ct[512], out[600];
    size_t kn = 0, pn = 0, cn;
    int in_ecb = 0, n = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '[')
            in_ecb = strncmp(line, "[ECB", 4) == 0;
        char *eq = strchr(line, '=');
        if (!in_ecb || !eq)
            continue;
        const char *v = eq + 2;
        if (!strncmp(line, "key", 3))
            kn = hex(v, key, sizeof key);
        else if (!strncmp(line, "pt", 2))
            pn = hex(v, pt, sizeof pt);
        else if (!strncmp(line, "ct", 2)) {
            cn = hex(v, ct, sizeof ct);
            long r = run(ecb, 1, 0, key, NULL, pt, pn, out, 0);
            CHECK(kn == f->keylen && r == (long)cn && memcmp(out, ct, cn) == 0,
                  "%s-ECB known answer %d", f->prefix, n + 1);
            n++;
        }
    }
    fclose(fp);
    CHECK(n > 0, "no ECB vectors in %s", path);
}

/* ---- ECB / CBC / CTR ------------------------------------------------------- */

static void test_block_mode(const family *f, int mode, const EVP_CIPHER *c, const EVP_CIPHER *ecb)
{
    size_t bs = f->bs;
    const char *name = EVP_CIPHER_get0_name(c);
    CHECK((size_t)EVP_CIPHER_get_key_length(c) == f->keylen, "%s key length", name);
    CHECK((size_t)EVP_CIPHER_get_iv_length(c) == (mode == ECB ? 0 : bs), "%s IV length", name);
    CHECK((size_t)EVP_CIPHER_get_block_size(c) == (mode == CTR ? 1 : bs), "%s block size", name);
    CHECK(EVP_CIPHER_get_mode(c) == (mode == ECB   ? EVP_CIPH_ECB_MODE
                                     : mode == CBC ? EVP_CIPH_CBC_MODE
                                                   : EVP_CIPH_CTR_MODE),
          "%s mode", name);
    EVP_CIPHER *dflt = f->default_ref ? fetch(f, mode, "provider=default") : NULL;

    enum { MAXLEN = 20000 };
    uint8_t *pt = malloc(MAXLEN), *exp = malloc(MAXLEN + 64), *got = malloc(MAXLEN + 64),
            *back = malloc(MAXLEN + 64);
    for (int trial = 0; trial < 40; trial++) {
        uint8_t key[32], iv[32];
        rnd_bytes(key, sizeof key);
        rnd_bytes(iv, sizeof iv);
        int pad = mode == CTR ? 0 : (int)(rnd() & 1);
        size_t len = trial < 4 ? (size_t)trial * 7 : rnd() % (trial < 30 ? 700 : MAXLEN);
        if (!pad && mode != CTR)
            len -= len % bs;
        rnd_bytes(pt, len);
        size_t n = ref_encrypt(ecb, mode, pad, bs, key, iv, pt, len, exp);

        long r = run(c, 1, pad, key, iv, pt, len, got, 0);
        CHECK(r == (long)n && memcmp(got, exp, n) == 0, "%s one-shot, len %zu pad %d", name, len,
              pad);
        r = run(c, 1, pad, key, iv, pt, len, got, 1);
        CHECK(r == (long)n && memcmp(got, exp, n) == 0, "%s chunked, len %zu pad %d", name, len,
              pad);
        r = run(c, 0, pad, key, iv, exp, n, back, 1);
        CHECK(r == (long)len && memcmp(back, pt, len) == 0, "%s chunked decrypt, len %zu pad %d",
              name, len, pad);
        if (dflt) {
            r = run(dflt, 1, pad, key, iv, pt, len, got, 0);
            CHECK(r == (long)n && memcmp(got, exp, n) == 0, "%s = default provider, len %zu", name,
                  len);
        }

        /* A copy made mid-stream continues exactly as the original. */
        EVP_CIPHER_CTX *a = EVP_CIPHER_CTX_new(), *b = EVP_CIPHER_CTX_new();
        int la = 0, lb = 0, t;
        size_t cut = len ? rnd() % len : 0;
        EVP_EncryptInit_ex2(a, c, key, iv, NULL);
        EVP_CIPHER_CTX_set_padding(a, pad);
        EVP_EncryptUpdate(a, got, &la, pt, (int)cut);
        CHECK(EVP_CIPHER_CTX_copy(b, a), "%s copy", name);
        lb = la;
        memcpy(back, got, (size_t)la);
        EVP_EncryptUpdate(a, got + la, &t, pt + cut, (int)(len - cut));
        la += t;
        EVP_EncryptFinal_ex(a, got + la, &t);
        la += t;
        EVP_EncryptUpdate(b, back + lb, &t, pt + cut, (int)(len - cut));
        lb += t;
        EVP_EncryptFinal_ex(b, back + lb, &t);
        lb += t;
        CHECK(la == (int)n && lb == (int)n && memcmp(got, exp, n) == 0 && memcmp(back, exp, n) == 0,
              "%s copy at %zu of %zu", name, cut, len);
        if (mode == CBC && !pad && n >= bs) {
            uint8_t upd[32];
            CHECK(EVP_CIPHER_CTX_get_updated_iv(b, upd, bs) && memcmp(upd, exp + n - bs, bs) == 0,
                  "%s updated IV is the last ciphertext block", name);
            CHECK(EVP_CIPHER_CTX_get_original_iv(b, upd, bs) && memcmp(upd, iv, bs) == 0,
                  "%s original IV", name);
        }
        EVP_CIPHER_CTX_free(a);
        EVP_CIPHER_CTX_free(b);
    }

    if (mode != CTR) {
        /* A last block whose padding byte is 0 must be rejected. */
        uint8_t key[32], iv[32], blk[32];
        rnd_bytes(key, sizeof key);
        rnd_bytes(iv, sizeof iv);
        rnd_bytes(pt, 3 * bs);
        pt[3 * bs - 1] = 0;
        run(c, 1, 0, key, iv, pt, 3 * bs, got, 0);
        CHECK(run(c, 0, 1, key, iv, got, 3 * bs, back, 1) == -1, "%s bad padding rejected", name);
        /* and a partial block without padding is an error at final */
        CHECK(run(c, 1, 0, key, iv, pt, 3 * bs - 1, got, 0) == -1, "%s unpadded partial block",
              name);
        (void)blk;
    }
    free(pt);
    free(exp);
    free(got);
    free(back);
    EVP_CIPHER_free(dflt);
}

/* ---- GCM -------------------------------------------------------------------- */

/* AAD and data in random pieces; returns 1 on success. tag: in for decrypt. */
static int gcm_run(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
                   size_t ivlen, const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
                   uint8_t *out, uint8_t *tag, size_t taglen, int chunked)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = 0, outl;
    size_t pos = 0, total = 0;
    if (!EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, NULL) ||
        !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)ivlen, NULL) ||
        !EVP_CipherInit_ex2(ctx, NULL, key, iv, enc, NULL))
        goto done;
    do {
        size_t n = chunked ? chunk_len(aadlen - pos) : aadlen - pos;
        if (!EVP_CipherUpdate(ctx, NULL, &outl, aad + pos, (int)n))
            goto done;
        pos += n;
    } while (pos < aadlen);
    pos = 0;
    do {
        size_t n = chunked ? chunk_len(len - pos) : len - pos;
        if (!EVP_CipherUpdate(ctx, out + total, &outl, in + pos, (int)n))
            goto done;
        total += (size_t)outl;
        pos += n;
    } while (pos < len);
    if (!enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, tag))
        goto done;
    if (!EVP_CipherFinal_ex(ctx, out + total, &outl) || outl != 0 || total != len)
        goto done;
    if (enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)taglen, tag))
        goto done;
    ok = 1;
done:
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int gcrypt_sm4_gcm(const uint8_t *key, const uint8_t *iv, size_t ivlen, const uint8_t *aad,
                          size_t aadlen, const uint8_t *in, size_t len, uint8_t *out,
                          uint8_t tag[16])
{
    gcry_cipher_hd_t h;
    int ok = gcry_cipher_open(&h, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_GCM, 0) == 0;
    ok = ok && gcry_cipher_setkey(h, key, 16) == 0 && gcry_cipher_setiv(h, iv, ivlen) == 0 &&
         gcry_cipher_authenticate(h, aad, aadlen) == 0 &&
         gcry_cipher_encrypt(h, out, len ? len : 1, in, len) == 0 &&
         gcry_cipher_gettag(h, tag, 16) == 0;
    gcry_cipher_close(h);
    return ok;
}

/* A TLS-style sender (*s, encrypting) and receiver (*r) of c under key with
 * the 4-byte fixed IV part fixed; 1 when every call succeeded. */
static int fixed_iv_pair(const EVP_CIPHER *c, const uint8_t *key, const uint8_t fixed[4],
                         EVP_CIPHER_CTX **s, EVP_CIPHER_CTX **r)
{
    *s = EVP_CIPHER_CTX_new();
    *r = EVP_CIPHER_CTX_new();
    return EVP_CipherInit_ex(*s, c, NULL, key, NULL, 1) &&
           EVP_CIPHER_CTX_ctrl(*s, EVP_CTRL_GCM_SET_IV_FIXED, 4, (void *)fixed) &&
           EVP_CipherInit_ex(*r, c, NULL, key, NULL, 0) &&
           EVP_CIPHER_CTX_ctrl(*r, EVP_CTRL_GCM_SET_IV_FIXED, 4, (void *)fixed);
}

static void test_gcm(const family *f, const EVP_CIPHER *c, const EVP_CIPHER *ecb)
{
    const char *name = EVP_CIPHER_get0_name(c);
    CHECK((size_t)EVP_CIPHER_get_key_length(c) == f->keylen, "%s key length", name);
    CHECK(EVP_CIPHER_get_iv_length(c) == 12, "%s IV length", name);
    CHECK(EVP_CIPHER_get_mode(c) == EVP_CIPH_GCM_MODE, "%s mode", name);
    CHECK(EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_AEAD_CIPHER, "%s is AEAD", name);
    EVP_CIPHER *dflt = f->default_ref && f->is_aes ? fetch(f, GCM, "provider=default") : NULL;
    enum { MAXLEN = 6000 };
    uint8_t *pt = malloc(MAXLEN), *exp = malloc(MAXLEN), *got = malloc(MAXLEN), *aad = malloc(600);
    for (int trial = 0; trial < 40; trial++) {
        uint8_t key[32], iv[64], tag[16], etag[16];
        rnd_bytes(key, sizeof key);
        size_t ivlen = trial % 3 ? 12 : 1 + rnd() % 60;
        size_t taglen = trial % 5 ? 16 : 4 + rnd() % 13;
        size_t aadlen = trial < 3 ? 0 : rnd() % 600,
               len = trial < 2 ? (size_t)trial : rnd() % MAXLEN;
        rnd_bytes(iv, ivlen);
        rnd_bytes(aad, aadlen);
        rnd_bytes(pt, len);
        ref_gcm(ecb, key, iv, ivlen, aad, aadlen, pt, len, exp, etag);

        CHECK(gcm_run(c, 1, key, iv, ivlen, aad, aadlen, pt, len, got, tag, taglen, 0) &&
                  memcmp(got, exp, len) == 0 && memcmp(tag, etag, taglen) == 0,
              "%s one-shot, iv %zu aad %zu len %zu", name, ivlen, aadlen, len);
        CHECK(gcm_run(c, 1, key, iv, ivlen, aad, aadlen, pt, len, got, tag, taglen, 1) &&
                  memcmp(got, exp, len) == 0 && memcmp(tag, etag, taglen) == 0,
              "%s chunked, iv %zu aad %zu len %zu", name, ivlen, aadlen, len);
        CHECK(gcm_run(c, 0, key, iv, ivlen, aad, aadlen, exp, len, got, etag, taglen, 1) &&
                  memcmp(got, pt, len) == 0,
              "%s chunked decrypt, len %zu", name, len);
        uint8_t bad[16];
        memcpy(bad, etag, 16);
        bad[rnd() % taglen] ^= (uint8_t)(1u << (rnd() % 8));
        CHECK(!gcm_run(c, 0, key, iv, ivlen, aad, aadlen, exp, len, got, bad, taglen, 1),
              "%s wrong tag rejected", name);
        if (aadlen > 0) {
            aad[0] ^= 1;
            CHECK(!gcm_run(c, 0, key, iv, ivlen, aad, aadlen, exp, len, got, etag, taglen, 1),
                  "%s changed AAD rejected", name);
            aad[0] ^= 1;
        }
        if (dflt) {
            CHECK(gcm_run(dflt, 1, key, iv, ivlen, aad, aadlen, pt, len, got, tag, 16, 0) &&
                      memcmp(got, exp, len) == 0 && memcmp(tag, etag, 16) == 0,
                  "%s = default provider", name);
        }
        if (f->keylen == 16 && f->bs == 16 && !f->is_aes && strcmp(f->prefix, "SM4") == 0) {
            CHECK(gcrypt_sm4_gcm(key, iv, ivlen, aad, aadlen, pt, len, got, tag) &&
                      memcmp(got, exp, len) == 0 && memcmp(tag, etag, 16) == 0,
                  "SM4-GCM = libgcrypt, iv %zu aad %zu len %zu", ivlen, aadlen, len);
        }

        /* Copy mid-stream (after the AAD and part of the data). */
        EVP_CIPHER_CTX *a = EVP_CIPHER_CTX_new(), *b = EVP_CIPHER_CTX_new();
        int l, t;
        size_t cut = len ? rnd() % len : 0;
        EVP_EncryptInit_ex2(a, c, key, NULL, NULL);
        EVP_CIPHER_CTX_ctrl(a, EVP_CTRL_AEAD_SET_IVLEN, (int)ivlen, NULL);
        EVP_EncryptInit_ex2(a, NULL, NULL, iv, NULL);
        EVP_EncryptUpdate(a, NULL, &l, aad, (int)aadlen);
        EVP_EncryptUpdate(a, got, &l, pt, (int)cut);
        CHECK(EVP_CIPHER_CTX_copy(b, a), "%s copy", name);
        EVP_CIPHER_CTX_free(a); /* the copy must not depend on the original */
        EVP_EncryptUpdate(b, got + cut, &t, pt + cut, (int)(len - cut));
        int fin = EVP_EncryptFinal_ex(b, got + len, &t);
        CHECK(fin && EVP_CIPHER_CTX_ctrl(b, EVP_CTRL_AEAD_GET_TAG, 16, tag) &&
                  memcmp(got, exp, len) == 0 && memcmp(tag, etag, 16) == 0,
              "%s copy at %zu of %zu", name, cut, len);
        EVP_CIPHER_CTX_free(b);
    }

    /* SSH's nonce discipline: a fixed IV, then IV_GEN before each message,
     * EVP_Cipher for AAD, data and tag (OpenSSH's cipher.c). */
    {
        uint8_t key[32], iv[12], hdr[4], msg[64], out[64], tag[16], etag[16], exp2[64];
        rnd_bytes(key, sizeof key);
        rnd_bytes(iv, sizeof iv);
        rnd_bytes(hdr, sizeof hdr);
        rnd_bytes(msg, sizeof msg);
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        uint8_t last[1];
        int ok = EVP_CipherInit(x, c, NULL, iv, 1) &&
                 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv) &&
                 EVP_CipherInit(x, NULL, key, NULL, -1);
        for (int m = 0; m < 3 && ok; m++) {
            ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 1, last) &&
                 EVP_Cipher(x, NULL, hdr, sizeof hdr) >= 0 &&
                 EVP_Cipher(x, out, msg, sizeof msg) >= 0 && EVP_Cipher(x, NULL, NULL, 0) >= 0 &&
                 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag);
            ref_gcm(ecb, key, iv, 12, hdr, sizeof hdr, msg, sizeof msg, exp2, etag);
            CHECK(ok && memcmp(out, exp2, sizeof msg) == 0 && memcmp(tag, etag, 16) == 0,
                  "%s SSH-style message %d", name, m);
            for (int i = 11; i >= 4; i--) /* the invocation counter: last 8 bytes */
                if (++iv[i] != 0)
                    break;
        }
        CHECK(ok, "%s SSH-style sequence", name);
        EVP_CIPHER_CTX_free(x);
    }

    /* A 4-byte fixed IV on both sides: the sender's IV_GEN hands out the
     * invocation field, the receiver takes it by SET_IV_INV (OpenSSL's
     * EVP_CTRL_GCM_SET_IV_INV), which an encryption refuses. */
    {
        uint8_t key[32], fixed[4], inv[8], msg[40], ct[40], pt2[40], tag[16];
        rnd_bytes(key, sizeof key);
        rnd_bytes(fixed, sizeof fixed);
        rnd_bytes(msg, sizeof msg);
        EVP_CIPHER_CTX *s, *r;
        int ok = fixed_iv_pair(c, key, fixed, &s, &r);
        CHECK(ok && EVP_CIPHER_CTX_ctrl(s, EVP_CTRL_GCM_SET_IV_INV, 8, inv) <= 0,
              "%s SET_IV_INV refused when encrypting", name);
        for (int m = 0; m < 3 && ok; m++) {
            int t;
            ok = EVP_CIPHER_CTX_ctrl(s, EVP_CTRL_GCM_IV_GEN, 8, inv) > 0 &&
                 EVP_EncryptUpdate(s, ct, &t, msg, (int)sizeof msg) &&
                 EVP_EncryptFinal_ex(s, ct + t, &t) &&
                 EVP_CIPHER_CTX_ctrl(s, EVP_CTRL_GCM_GET_TAG, 16, tag) > 0;
            if (m == 2)
                tag[0] ^= 1;
            int opened = ok && EVP_CIPHER_CTX_ctrl(r, EVP_CTRL_GCM_SET_IV_INV, 8, inv) > 0 &&
                         EVP_DecryptUpdate(r, pt2, &t, ct, (int)sizeof ct) &&
                         EVP_CIPHER_CTX_ctrl(r, EVP_CTRL_GCM_SET_TAG, 16, tag) > 0 &&
                         EVP_DecryptFinal_ex(r, pt2 + t, &t) > 0;
            if (m == 2)
                CHECK(ok && !opened, "%s SET_IV_INV: a wrong tag rejected", name);
            else
                CHECK(opened && memcmp(pt2, msg, sizeof msg) == 0,
                      "%s SET_IV_INV message %d opened", name, m);
        }
        CHECK(ok, "%s fixed IV + SET_IV_INV setup", name);
        EVP_CIPHER_CTX_free(s);
        EVP_CIPHER_CTX_free(r);
    }

    /* TLS 1.2 records (libssl's calls): a 4-byte fixed IV, then per record
     * EVP_CTRL_AEAD_TLS1_AAD and one in-place EVP_Cipher over
     * explicit nonce || payload || tag. */
    {
        uint8_t key[32], fixed[4], hdr[13], rec[8 + 300 + 16], msg[300], exp2[300], etag[16],
            nonce[12];
        rnd_bytes(key, sizeof key);
        rnd_bytes(fixed, sizeof fixed);
        EVP_CIPHER_CTX *s, *r;
        int ok = fixed_iv_pair(c, key, fixed, &s, &r);
        for (int m = 0; m < 3 && ok; m++) {
            size_t plen = 1 + rnd() % 300, rlen = 8 + plen + 16;
            rnd_bytes(msg, plen);
            rnd_bytes(hdr, 11);
            hdr[11] = (uint8_t)((plen + 8) >> 8); /* sender: length without the tag */
            hdr[12] = (uint8_t)(plen + 8);
            memcpy(rec + 8, msg, plen);
            int pad = EVP_CIPHER_CTX_ctrl(s, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr);
            int n = EVP_Cipher(s, rec, rec, (unsigned)rlen);
            memcpy(nonce, fixed, 4);
            memcpy(nonce + 4, rec, 8);
            uint8_t aad2[13];
            memcpy(aad2, hdr, 13);
            aad2[11] = (uint8_t)(plen >> 8);
            aad2[12] = (uint8_t)plen;
            ref_gcm(ecb, key, nonce, 12, aad2, 13, msg, plen, exp2, etag);
            CHECK(pad == 16 && n == (int)rlen && memcmp(rec + 8, exp2, plen) == 0 &&
                      memcmp(rec + 8 + plen, etag, 16) == 0,
                  "%s TLS 1.2 record %d sealed", name, m);
            hdr[11] = (uint8_t)(rlen >> 8); /* receiver: the whole record */
            hdr[12] = (uint8_t)rlen;
            if (m == 2)
                rec[rlen - 1] ^= 1;
            pad = EVP_CIPHER_CTX_ctrl(r, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr);
            /* EVP_CipherUpdate: what libssl 3.0 calls for provided ciphers */
            if (!EVP_CipherUpdate(r, rec, &n, rec, (int)rlen))
                n = -1;
            if (m == 2)
                CHECK(n < 0, "%s TLS 1.2 record with a wrong tag rejected", name);
            else
                CHECK(pad == 16 && n == (int)plen && memcmp(rec + 8, msg, plen) == 0,
                      "%s TLS 1.2 record %d opened", name, m);
        }
        CHECK(ok, "%s TLS 1.2 setup", name);
        /* a record call without buffers fails (in == out == NULL passed
         * the in-place check) */
        for (int m = 0; m < 2 && ok; m++) {
            EVP_CIPHER_CTX *x = m ? r : s;
            memset(hdr, 0, sizeof hdr);
            hdr[12] = 40;
            int pad = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr);
            CHECK(pad > 0 && EVP_Cipher(x, NULL, NULL, 40) <= 0,
                  "%s TLS 1.2 record without buffers refused (%s)", name, m ? "open" : "seal");
        }
        EVP_CIPHER_CTX_free(s);
        EVP_CIPHER_CTX_free(r);
    }
    free(pt);
    free(exp);
    free(got);
    free(aad);
    EVP_CIPHER_free(dflt);
}

static void test_rfc8998(const EVP_CIPHER *c)
{
    const char *dir = getenv("KUAI_CRYPTOGRAPHY_VECTORS");
    if (!dir || !*dir) {
        printf("SKIP RFC 8998 SM4-GCM vector (KUAI_CRYPTOGRAPHY_VECTORS not set)\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/ciphers/SM4/rfc8998.txt", dir);
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL, "cannot open %s", path);
    if (!fp)
        return;
    uint8_t key[16], iv[64], aad[256], tag[16], pt[512], ct[512], out[512], t[16];
    size_t kn = 0, ivn = 0, an = 0, tn = 0, pn = 0, cn, n = 0;
    char line[2048];
    while (fgets(line, sizeof line, fp)) {
        char *eq = strstr(line, " = ");
        if (!eq)
            continue;
        const char *v = eq + 3;
        if (!strncmp(line, "KEY", 3))
            kn = hex(v, key, sizeof key);
        else if (!strncmp(line, "IV", 2))
            ivn = hex(v, iv, sizeof iv);
        else if (!strncmp(line, "AAD", 3))
            an = hex(v, aad, sizeof aad);
        else if (!strncmp(line, "TAG", 3))
            tn = hex(v, tag, sizeof tag);
        else if (!strncmp(line, "PLAINTEXT", 9))
            pn = hex(v, pt, sizeof pt);
        else if (!strncmp(line, "CIPHERTEXT", 10)) {
            cn = hex(v, ct, sizeof ct);
            CHECK(kn == 16 && tn == 16 && pn == cn &&
                      gcm_run(c, 1, key, iv, ivn, aad, an, pt, pn, out, t, 16, 1) &&
                      memcmp(out, ct, cn) == 0 && memcmp(t, tag, 16) == 0,
                  "RFC 8998 SM4-GCM vector %zu", n + 1);
            n++;
        }
    }
    fclose(fp);
    CHECK(n > 0, "no vectors in %s", path);
    printf("RFC 8998 SM4-GCM: %zu vector(s) from %s\n", n, path);
}

/* One context re-keyed several times (the provider sets a sole owner's key
 * up in place, and keeps it when the same key comes again) must give what
 * a fresh context gives under each key, and a copy taken before a re-key
 * must keep the old key. The keys: a random one, then that one with its
 * last byte changed, then with its first byte changed too, the same again,
 * and the first again. GCM: the tag too. */
static void test_rekey(const family *f, int mode, const EVP_CIPHER *c)
{
    size_t kl = (size_t)EVP_CIPHER_get_key_length(c), il = (size_t)EVP_CIPHER_get_iv_length(c);
    uint8_t key[5][32], iv[32], in[333], out[400], want[400], tag[16], want_tag[16];
    size_t len = mode == ECB || mode == CBC ? 320 : sizeof in;
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(in, sizeof in);
    rnd_bytes(key[0], kl);
    memcpy(key[1], key[0], kl);
    key[1][kl - 1] ^= 1;
    memcpy(key[2], key[1], kl);
    key[2][0] ^= 0x80;
    memcpy(key[3], key[2], kl);
    memcpy(key[4], key[0], kl);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *copy = EVP_CIPHER_CTX_new();
    int outl = 0;
    for (int r = 0; r < 5; r++) {
        /* no cipher after the first: EVP keeps the provider's context */
        CHECK(EVP_EncryptInit_ex2(ctx, r ? NULL : c, key[r], il ? iv : NULL, NULL),
              "%s-%s re-key %d", f->prefix, mode_names[mode], r);
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        if (r == 1)
            CHECK(EVP_CIPHER_CTX_copy(copy, ctx), "%s-%s copy", f->prefix, mode_names[mode]);
        CHECK(EVP_EncryptUpdate(ctx, out, &outl, in, (int)len) && outl == (int)len,
              "%s-%s update after re-key %d", f->prefix, mode_names[mode], r);
        EVP_CIPHER_CTX *fresh = EVP_CIPHER_CTX_new();
        int wl = 0;
        CHECK(EVP_EncryptInit_ex2(fresh, c, key[r], il ? iv : NULL, NULL), "fresh init");
        EVP_CIPHER_CTX_set_padding(fresh, 0);
        CHECK(EVP_EncryptUpdate(fresh, want, &wl, in, (int)len) && wl == (int)len, "fresh update");
        CHECK(memcmp(out, want, len) == 0, "%s-%s re-key %d differs from a fresh context",
              f->prefix, mode_names[mode], r);
        if (mode == GCM) {
            CHECK(EVP_EncryptFinal_ex(ctx, out, &outl) && EVP_EncryptFinal_ex(fresh, want, &wl),
                  "final");
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
            EVP_CIPHER_CTX_ctrl(fresh, EVP_CTRL_AEAD_GET_TAG, 16, want_tag);
            CHECK(memcmp(tag, want_tag, 16) == 0, "%s-GCM re-key %d tag", f->prefix, r);
        }
        EVP_CIPHER_CTX_free(fresh);
    }
    /* the copy was taken under key[1] and must still run under it */
    CHECK(EVP_EncryptUpdate(copy, out, &outl, in, (int)len) && outl == (int)len, "copy update");
    EVP_CIPHER_CTX *fresh = EVP_CIPHER_CTX_new();
    int wl = 0;
    CHECK(EVP_EncryptInit_ex2(fresh, c, key[1], il ? iv : NULL, NULL), "fresh init");
    EVP_CIPHER_CTX_set_padding(fresh, 0);
    CHECK(EVP_EncryptUpdate(fresh, want, &wl, in, (int)len) && wl == (int)len, "fresh update");
    CHECK(memcmp(out, want, len) == 0, "%s-%s copy lost its key after the original re-keyed",
          f->prefix, mode_names[mode]);
    EVP_CIPHER_CTX_free(fresh);
    EVP_CIPHER_CTX_free(copy);
    EVP_CIPHER_CTX_free(ctx);
}

/* ---- issue 15: defects found by adversarial testing ---------------------- */

/* Defect 1: after a finished GCM encryption the context must refuse to
 * encrypt again until a new IV is set, however the IV came (init, the
 * fixed-IV parameter, or generated): a second message under the same key
 * and IV gives away c1 ^ c2 = p1 ^ p2 and the GHASH key. As OpenSSL's
 * default provider: a re-init without an IV (with or without a key) keeps
 * the refusal; a new IV lifts it. */
static void test_gcm_nonce_reuse(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], iv[12], iv2[12], pt[40], out[64], tag[16];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    memcpy(iv2, iv, sizeof iv);
    iv2[11] ^= 1;
    rnd_bytes(pt, sizeof pt);
    static const char *const how[] = {"init", "fixed-IV parameter", "generated"};
    for (int h = 0; h < 3; h++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int l, ok = EVP_EncryptInit_ex2(x, c, key, h == 0 ? iv : NULL, NULL);
        if (h == 1)
            ok = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv);
        ok = ok && EVP_EncryptUpdate(x, NULL, &l, pt, 5) && EVP_EncryptUpdate(x, out, &l, pt, 40) &&
             EVP_EncryptFinal_ex(x, out + 40, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag);
        CHECK(ok, "%s first message (IV by %s)", name, how[h]);
        CHECK(EVP_EncryptInit_ex(x, NULL, NULL, NULL, NULL), "%s re-init", name);
        CHECK(!EVP_EncryptUpdate(x, out, &l, pt, 40),
              "%s: a second message under the same key and IV (IV by %s, re-init without IV)", name,
              how[h]);
        CHECK(!EVP_EncryptUpdate(x, NULL, &l, pt, 5), "%s: AAD after re-init without IV (%s)", name,
              how[h]);
        CHECK(!EVP_EncryptFinal_ex(x, out, &l), "%s: final after re-init without IV (%s)", name,
              how[h]);
        CHECK(EVP_EncryptInit_ex(x, NULL, NULL, key, NULL), "%s re-init with the key", name);
        CHECK(!EVP_EncryptUpdate(x, out, &l, pt, 40),
              "%s: a second message after re-init with the key only (IV by %s)", name, how[h]);
        CHECK(EVP_EncryptInit_ex(x, NULL, NULL, NULL, iv2) &&
                  EVP_EncryptUpdate(x, out, &l, pt, 40) && EVP_EncryptFinal_ex(x, out + 40, &l),
              "%s: a new IV lifts the refusal (%s)", name, how[h]);
        EVP_CIPHER_CTX_free(x);
    }
}

/* EVP_CTRL_GCM_SET_IV_FIXED with a length that leaves no 8-byte invocation
 * field, or a negative one other than -1 (a huge size_t once EVP converts
 * it: -4 and -8 used to wrap the length check and copy that much into the
 * IV): refused, with the context's IV and its next message unharmed. Only
 * on kuai: OpenSSL 3.0's default provider overruns its IV on -4 too. */
static void test_gcm_iv_fixed_length(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], fixed[64], iv[12], got[12], pt[32], out[48], ref[48];
    rnd_bytes(key, sizeof key);
    rnd_bytes(fixed, sizeof fixed);
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(pt, sizeof pt);
    int l;
    EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(r, c, key, iv, NULL) && EVP_EncryptUpdate(r, ref, &l, pt, 32) &&
              EVP_EncryptFinal_ex(r, ref + 32, &l) &&
              EVP_CIPHER_CTX_ctrl(r, EVP_CTRL_AEAD_GET_TAG, 16, ref + 32) > 0,
          "%s: reference message", name);
    EVP_CIPHER_CTX_free(r);
    static const int lens[] = {-2, -4, -8, -12, 0, 2, 9, 13, 64};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        CHECK(EVP_EncryptInit_ex2(x, c, key, iv, NULL), "%s init", name);
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, lens[i], fixed) <= 0,
              "%s: a fixed IV of length %d accepted", name, lens[i]);
        ERR_clear_error();
        CHECK(EVP_CIPHER_CTX_get_original_iv(x, got, sizeof got) > 0 &&
                  memcmp(got, iv, sizeof iv) == 0,
              "%s: the IV changed by a refused fixed IV of length %d", name, lens[i]);
        CHECK(EVP_EncryptUpdate(x, out, &l, pt, 32) && EVP_EncryptFinal_ex(x, out + 32, &l) &&
                  EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, out + 32) > 0 &&
                  memcmp(out, ref, sizeof ref) == 0,
              "%s: the message after a refused fixed IV of length %d", name, lens[i]);
        EVP_CIPHER_CTX_free(x);
    }
}

/* EVP_CTRL_GCM_IV_GEN with a NULL buffer (it used to write through it):
 * refused, and the context's IV does not move, so the next IV_GEN with a
 * buffer hands out the IV the fixed part set up. */
static void test_gcm_iv_gen_null(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], fixed[12], iv[12];
    rnd_bytes(key, sizeof key);
    rnd_bytes(fixed, sizeof fixed);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, -1, fixed) > 0,
          "%s: fixed IV", name);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 8, NULL) <= 0,
          "%s: IV_GEN into a NULL buffer accepted", name);
    ERR_clear_error();
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 12, iv) > 0 &&
              memcmp(iv, fixed, sizeof iv) == 0,
          "%s: IV_GEN after a refused one hands out the fixed IV", name);
    EVP_CIPHER_CTX_free(x);
}

/* Increments the last 8 bytes of a 12-byte IV (GCM's invocation field). */
static void iv_inc(uint8_t iv[12])
{
    for (int i = 11; i >= 4; i--)
        if (++iv[i] != 0)
            break;
}

/* A fixed IV (4-byte fixed part, or OpenSSH's whole IV), a message
 * encrypted without EVP_CTRL_GCM_IV_GEN, then IV_GEN and a second message:
 * IV_GEN handed out the first message's IV again (two messages, one nonce).
 * It must hand out the next one, and both messages must be GCM under the
 * IVs the context reports. */
static void test_gcm_iv_gen_after_message(const char *name, const EVP_CIPHER *c,
                                          const EVP_CIPHER *ecb)
{
    uint8_t key[32], fixed[12], p1[32], p2[32], c1[48], c2[48], t1[16], t2[16], iv1[12], iv2[12],
        exp[32], etag[16];
    for (int variant = 0; variant < 2; variant++) {
        int flen = variant == 0 ? 4 : -1;
        rnd_bytes(key, sizeof key);
        rnd_bytes(fixed, sizeof fixed);
        rnd_bytes(p1, sizeof p1);
        rnd_bytes(p2, sizeof p2);
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int l;
        int ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
                 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, flen, fixed) > 0 &&
                 EVP_EncryptUpdate(x, c1, &l, p1, 32) && EVP_EncryptFinal_ex(x, c1 + 32, &l) &&
                 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t1) > 0 &&
                 EVP_CIPHER_CTX_get_updated_iv(x, iv1, sizeof iv1) > 0;
        CHECK(ok, "%s: fixed IV %d, first message without IV_GEN", name, flen);
        ok = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 12, iv2) > 0 &&
             EVP_EncryptUpdate(x, c2, &l, p2, 32) && EVP_EncryptFinal_ex(x, c2 + 32, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t2) > 0;
        CHECK(ok, "%s: fixed IV %d, IV_GEN and a second message", name, flen);
        CHECK(ok && memcmp(iv1, iv2, sizeof iv1) != 0,
              "%s: fixed IV %d: IV_GEN handed out the IV a message already used", name, flen);
        uint8_t want[12];
        memcpy(want, iv1, sizeof want);
        iv_inc(want);
        CHECK(ok && memcmp(iv2, want, sizeof want) == 0,
              "%s: fixed IV %d: IV_GEN hands out the next invocation value", name, flen);
        ref_gcm(ecb, key, iv1, 12, NULL, 0, p1, 32, exp, etag);
        CHECK(ok && memcmp(c1, exp, 32) == 0 && memcmp(t1, etag, 16) == 0,
              "%s: fixed IV %d: first message under the IV reported", name, flen);
        ref_gcm(ecb, key, iv2, 12, NULL, 0, p2, 32, exp, etag);
        CHECK(ok && memcmp(c2, exp, 32) == 0 && memcmp(t2, etag, 16) == 0,
              "%s: fixed IV %d: second message under the IV IV_GEN handed out", name, flen);
        /* and IV_GEN before each message from then on: consecutive values */
        for (int m = 0; m < 2 && ok; m++) {
            uint8_t iv3[12];
            iv_inc(want);
            ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 12, iv3) > 0 &&
                 EVP_EncryptUpdate(x, c2, &l, p2, 32) && EVP_EncryptFinal_ex(x, c2 + 32, &l);
            CHECK(ok && memcmp(iv3, want, sizeof want) == 0,
                  "%s: fixed IV %d: IV_GEN message %d after", name, flen, m);
        }
        EVP_CIPHER_CTX_free(x);
    }
}

/* A fixed IV, a message encrypted without EVP_CTRL_GCM_IV_GEN, then a TLS
 * 1.2 record (EVP_CTRL_AEAD_TLS1_AAD and EVP_Cipher) on the same context:
 * the record was sealed under the IV the message had just used (its
 * explicit nonce was that IV's invocation field), the nonce reuse IV_GEN
 * no longer allows. The record must run under the next invocation value,
 * and be GCM under that nonce. */
static void test_gcm_tls_record_after_message(const char *name, const EVP_CIPHER *c,
                                              const EVP_CIPHER *ecb)
{
    uint8_t key[32], fixed[12], p1[32], c1[48], iv1[12], hdr[13], rec[8 + 32 + 16], msg[32],
        exp[32], etag[16], nonce[12];
    for (int variant = 0; variant < 2; variant++) {
        int flen = variant == 0 ? 4 : -1;
        rnd_bytes(key, sizeof key);
        rnd_bytes(fixed, sizeof fixed);
        rnd_bytes(p1, sizeof p1);
        rnd_bytes(msg, sizeof msg);
        rnd_bytes(hdr, 11);
        hdr[11] = 0; /* sender: the length with the explicit nonce, without the tag */
        hdr[12] = 8 + 32;
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int l;
        int ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
                 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, flen, fixed) > 0 &&
                 EVP_EncryptUpdate(x, c1, &l, p1, 32) && EVP_EncryptFinal_ex(x, c1 + 32, &l) &&
                 EVP_CIPHER_CTX_get_updated_iv(x, iv1, sizeof iv1) > 0;
        CHECK(ok, "%s: fixed IV %d, a message without IV_GEN", name, flen);
        memcpy(rec + 8, msg, 32);
        ok = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr) == 16 &&
             EVP_Cipher(x, rec, rec, sizeof rec) == (int)sizeof rec;
        CHECK(ok, "%s: fixed IV %d, a TLS record after the message", name, flen);
        CHECK(ok && memcmp(rec, iv1 + 4, 8) != 0,
              "%s: fixed IV %d: the TLS record reused the IV the message ran under", name, flen);
        uint8_t want[12];
        memcpy(want, iv1, sizeof want);
        iv_inc(want);
        CHECK(ok && memcmp(rec, want + 4, 8) == 0,
              "%s: fixed IV %d: the TLS record runs under the next invocation value", name, flen);
        memcpy(nonce, iv1, 4);
        memcpy(nonce + 4, rec, 8);
        uint8_t aad[13];
        memcpy(aad, hdr, 13);
        aad[12] = 32;
        ref_gcm(ecb, key, nonce, 12, aad, 13, msg, 32, exp, etag);
        CHECK(ok && memcmp(rec + 8, exp, 32) == 0 && memcmp(rec + 40, etag, 16) == 0,
              "%s: fixed IV %d: the TLS record is GCM under its explicit nonce", name, flen);
        EVP_CIPHER_CTX_free(x);
    }
}

/* One context under a 4-byte fixed IV seals a TLS 1.2 record, opens that
 * record after a re-init for decryption, and seals another after a re-init
 * for encryption: opening the record had set the fixed IV's invocation
 * field to the record's explicit nonce, so the second record was sealed
 * under the first one's nonce. A received nonce (the peer's, or anyone's)
 * must not become the next one sent. */
static void test_gcm_tls_record_opened_then_sealed(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], fixed[4], hdr[13], rec1[8 + 32 + 16], rec2[8 + 32 + 16], msg[32];
    rnd_bytes(key, sizeof key);
    rnd_bytes(fixed, sizeof fixed);
    rnd_bytes(msg, sizeof msg);
    rnd_bytes(hdr, 11);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    hdr[11] = 0;
    hdr[12] = 8 + 32; /* sealing: with the explicit nonce, without the tag */
    memcpy(rec1 + 8, msg, 32);
    int ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, 4, fixed) > 0 &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr) == 16 &&
             EVP_Cipher(x, rec1, rec1, sizeof rec1) == (int)sizeof rec1;
    CHECK(ok, "%s: first TLS record sealed", name);
    uint8_t opened[sizeof rec1];
    memcpy(opened, rec1, sizeof rec1);
    hdr[12] = 8 + 32 + 16; /* opening: the whole record */
    ok = ok && EVP_DecryptInit_ex2(x, NULL, NULL, NULL, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr) == 16 &&
         EVP_Cipher(x, opened, opened, sizeof opened) == 32 && memcmp(opened + 8, msg, 32) == 0;
    CHECK(ok, "%s: the record opened on the same context", name);
    hdr[12] = 8 + 32;
    memcpy(rec2 + 8, msg, 32);
    ok = ok && EVP_EncryptInit_ex2(x, NULL, NULL, NULL, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, hdr) == 16 &&
         EVP_Cipher(x, rec2, rec2, sizeof rec2) == (int)sizeof rec2;
    CHECK(ok, "%s: second TLS record sealed", name);
    CHECK(ok && memcmp(rec1, rec2, 8) != 0,
          "%s: the second record was sealed under the nonce of the record opened", name);
    EVP_CIPHER_CTX_free(x);
}

/* A 4-byte fixed IV, a message under it, then the IV length changed to 16
 * and back to 12 with IV_GEN and a message in between: the 16-byte IV_GEN
 * counted on in bytes 8..15, so back at 12 bytes IV_GEN (and a TLS record)
 * handed out the first message's IV again. A fixed IV belongs to its
 * length: after the length changes, IV_GEN and records are refused until a
 * new fixed IV. */
static void test_gcm_iv_gen_after_ivlen_change(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], fixed[4], p1[32], c1[48], iv1[12], iv2[16], iv3[12];
    rnd_bytes(key, sizeof key);
    rnd_bytes(fixed, sizeof fixed);
    rnd_bytes(p1, sizeof p1);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int l;
    int ok = EVP_EncryptInit_ex2(x, c, key, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, 4, fixed) > 0 &&
             EVP_EncryptUpdate(x, c1, &l, p1, 32) && EVP_EncryptFinal_ex(x, c1 + 32, &l) &&
             EVP_CIPHER_CTX_get_updated_iv(x, iv1, sizeof iv1) > 0 &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 16, NULL) > 0;
    CHECK(ok, "%s: a message under a fixed IV, then the IV length set to 16", name);
    int gen16 = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 16, iv2) > 0;
    if (gen16)
        gen16 = EVP_EncryptUpdate(x, c1, &l, p1, 32) && EVP_EncryptFinal_ex(x, c1 + 32, &l);
    CHECK(ok && !gen16, "%s: IV_GEN accepted after the IV length changed", name);
    ERR_clear_error();
    ok = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0;
    int gen12 = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 12, iv3) > 0;
    CHECK(ok && (!gen12 || memcmp(iv3, iv1, sizeof iv1) != 0),
          "%s: IV_GEN handed out a used IV again after the IV length went 12, 16, 12", name);
    ERR_clear_error();
    /* a new fixed IV of the new length brings IV_GEN back */
    ok = ok && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IV_FIXED, 4, fixed) > 0 &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_IV_GEN, 12, iv3) > 0;
    CHECK(ok, "%s: IV_GEN after a new fixed IV", name);
    EVP_CIPHER_CTX_free(x);
}

/* A decryption's final needs a tag set for that message: not the tag an
 * encryption on the same context made, nor the one the previous
 * decryption checked. A tag set before the key and IV (OpenSSL's evp_test
 * order) still counts. */
static void test_gcm_stale_tag(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], iv[12], pt[20], ct[20], out[36], tag[16];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(pt, sizeof pt);
    int l;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int ok = EVP_EncryptInit_ex2(x, c, key, iv, NULL) && EVP_EncryptUpdate(x, ct, &l, pt, 20) &&
             EVP_EncryptFinal_ex(x, out, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
    CHECK(ok, "%s: encryption", name);
    CHECK(ok && EVP_DecryptInit_ex2(x, NULL, NULL, iv, NULL) &&
              EVP_DecryptUpdate(x, out, &l, ct, 20) && EVP_DecryptFinal_ex(x, out, &l) <= 0,
          "%s: decryption without a tag accepted (the encryption's tag)", name);
    ERR_clear_error();
    CHECK(EVP_DecryptInit_ex2(x, NULL, NULL, iv, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0 &&
              EVP_DecryptUpdate(x, out, &l, ct, 20) && EVP_DecryptFinal_ex(x, out, &l) > 0 &&
              memcmp(out, pt, 20) == 0,
          "%s: decryption with its tag", name);
    CHECK(EVP_DecryptInit_ex2(x, NULL, NULL, iv, NULL) && EVP_DecryptUpdate(x, out, &l, ct, 20) &&
              EVP_DecryptFinal_ex(x, out, &l) <= 0,
          "%s: second decryption accepted under the previous decryption's tag", name);
    ERR_clear_error();
    EVP_CIPHER_CTX_free(x);
    /* the tag first, then key and IV */
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_DecryptInit_ex2(x, c, NULL, NULL, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0 &&
              EVP_DecryptInit_ex2(x, NULL, key, iv, NULL) &&
              EVP_DecryptUpdate(x, out, &l, ct, 20) && EVP_DecryptFinal_ex(x, out, &l) > 0 &&
              memcmp(out, pt, 20) == 0,
          "%s: tag set before key and IV", name);
    /* a tag set for a decryption does not survive a switch to encrypting
     * and back */
    CHECK(EVP_DecryptInit_ex2(x, NULL, NULL, iv, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0 &&
              EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) &&
              EVP_DecryptInit_ex2(x, NULL, NULL, iv, NULL) &&
              EVP_DecryptUpdate(x, out, &l, ct, 20) && EVP_DecryptFinal_ex(x, out, &l) <= 0,
          "%s: a tag set before an encryption init checked a later decryption", name);
    ERR_clear_error();
    EVP_CIPHER_CTX_free(x);
}

/* Whether list names key. */
static int param_listed(const OSSL_PARAM *list, const char *key)
{
    for (; list != NULL && list->key != NULL; list++)
        if (strcmp(list->key, key) == 0)
            return 1;
    return 0;
}

/* The block modes other than CBC take no TLS record parameters (no record
 * layer uses them; taken and ignored, they would make records libssl cannot
 * read) and do not list them; CBC lists them. Names nobody knows are still
 * ignored. */
static void test_tls_record_params(const char *name, const EVP_CIPHER *c, int cbc)
{
    uint8_t key[32], iv[32];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    const OSSL_PARAM *settable = EVP_CIPHER_settable_ctx_params(c);
    CHECK(param_listed(settable, OSSL_CIPHER_PARAM_TLS_VERSION) == cbc &&
              param_listed(settable, OSSL_CIPHER_PARAM_TLS_MAC_SIZE) == cbc,
          "%s: the TLS record parameters %s", name, cbc ? "not listed" : "listed");
    for (int which = 0; which < 4; which++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int ok = EVP_EncryptInit_ex2(x, c, key, iv, NULL);
        unsigned ver = which == 3 ? 0x0300 : 0x0303; /* SSL 3.0: never */
        size_t macsize = 20;
        OSSL_PARAM p[2] = {OSSL_PARAM_END, OSSL_PARAM_END};
        if (which == 0 || which == 3)
            p[0] = OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &ver);
        else if (which == 1)
            p[0] = OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize);
        else
            p[0] = OSSL_PARAM_construct_uint("kuai-no-such-parameter", &ver);
        int r = EVP_CIPHER_CTX_set_params(x, p);
        ERR_clear_error();
        if (which == 2)
            CHECK(ok && r > 0, "%s: an unknown parameter refused", name);
        else if (which == 3 || !cbc)
            CHECK(ok && r <= 0, "%s: TLS record parameter %s (version %#x) accepted", name,
                  p[0].key, ver);
        else
            CHECK(ok && r > 0, "%s: TLS record parameter %s refused", name, p[0].key);
        EVP_CIPHER_CTX_free(x);
    }
}

/* A CBC context as libssl sets one up for a record layer: the parameters
 * as tls_provider_set_tls_params passes them (the version an int). */
static EVP_CIPHER_CTX *tls_ctx(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv, int enc,
                               int version, size_t mac_size)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    OSSL_PARAM p[3] = {OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
                       OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &mac_size),
                       OSSL_PARAM_END};
    if (x == NULL || !EVP_CipherInit_ex2(x, c, key, iv, enc, NULL) ||
        !EVP_CIPHER_CTX_set_params(x, p)) {
        EVP_CIPHER_CTX_free(x);
        return NULL;
    }
    return x;
}

/* One record through a record layer's decryption: 1 and the data length and
 * MAC, or 0. */
static int tls_open(EVP_CIPHER_CTX *x, uint8_t *rec, size_t len, size_t mac_size, int *outl,
                    uint8_t *mac)
{
    if (EVP_DecryptUpdate(x, rec, outl, rec, (int)len) <= 0) {
        ERR_clear_error();
        return 0;
    }
    if (mac_size > 0) {
        uint8_t *m = NULL;
        OSSL_PARAM p[2] = {
            OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, (void **)&m, mac_size),
            OSSL_PARAM_END};
        if (!EVP_CIPHER_CTX_get_params(x, p) || m == NULL)
            return 0;
        memcpy(mac, m, mac_size);
    }
    return 1;
}

/*
 * libssl's TLS 1.0-1.2 and DTLS CBC record mode (OSSL_CIPHER_PARAM_TLS_VERSION,
 * TLS_MAC_SIZE and TLS_MAC): kuai pads records it encrypts and takes the
 * padding and MAC off those it decrypts. Records sealed by kuai open on
 * kuai, and on OpenSSL's default provider where it has the cipher, and the
 * other way round, with the same data length and MAC; records with a bad
 * padding (any byte of it, or longer than the record) give the length and a
 * MAC other than the record's bytes (random: libssl's MAC check then fails)
 * with a MAC, and fail without one (encrypt-then-MAC), as on the default
 * provider; publicly wrong lengths fail on both. TLS 1.0's records chain
 * their IVs from one record to the next.
 */
static void test_tls_cbc_records(const char *name, const EVP_CIPHER *c, const EVP_CIPHER *ref,
                                 size_t bs)
{
    static const int versions[] = {0x0301, 0x0302, 0x0303, 0xfefd};
    static const size_t macs[] = {0, 20, 32, 48};
    uint8_t key[32], iv[32], rec[1024], copy[1024], want[1024], mac[64], mac2[64];
    int bad_checks = 0;
    for (size_t vi = 0; vi < sizeof versions / sizeof versions[0]; vi++)
        for (size_t mi = 0; mi < sizeof macs / sizeof macs[0]; mi++) {
            const int v = versions[vi];
            const size_t ms = macs[mi], skip = v == 0x0301 ? 0 : bs;
            rnd_bytes(key, sizeof key);
            rnd_bytes(iv, sizeof iv);
            const EVP_CIPHER *sealers[2] = {c, ref}, *openers[2] = {c, ref};
            for (int si = 0; si < 2; si++) {
                if (sealers[si] == NULL)
                    continue;
                EVP_CIPHER_CTX *e = tls_ctx(sealers[si], key, iv, 1, v, ms);
                EVP_CIPHER_CTX *d[2] = {tls_ctx(c, key, iv, 0, v, ms),
                                        ref ? tls_ctx(ref, key, iv, 0, v, ms) : NULL};
                CHECK(e && d[0] && (!ref || d[1]), "%s: TLS %#x record contexts", name, v);
                /* several records: TLS 1.0's chain their IVs */
                for (int r = 0; e && d[0] && (!ref || d[1]) && r < 6; r++) {
                    size_t data = (size_t)(rand() % 300);
                    if (r == 0)
                        data = 0;
                    size_t len = skip + data + ms;
                    rnd_bytes(want, len);
                    memcpy(rec, want, len);
                    int outl = 0;
                    CHECK(EVP_EncryptUpdate(e, rec, &outl, rec, (int)len) > 0 &&
                              (size_t)outl == len + bs - len % bs,
                          "%s: TLS %#x, MAC %zu: a %zu-byte record sealed to %d bytes (%s)", name,
                          v, ms, len, outl, si ? "default provider" : "kuai");
                    for (int oi = 0; oi < 2; oi++) {
                        if (openers[oi] == NULL)
                            continue;
                        memcpy(copy, rec, (size_t)outl);
                        int dl = -1;
                        int ok = tls_open(d[oi], copy, (size_t)outl, ms, &dl, mac);
                        CHECK(ok && (size_t)dl == data &&
                                  memcmp(copy + skip, want + skip, data) == 0 &&
                                  memcmp(mac, want + skip + data, ms) == 0,
                              "%s: TLS %#x, MAC %zu: record %d of %zu data bytes sealed by %s, "
                              "opened by %s: ok %d, %d bytes",
                              name, v, ms, r, data, si ? "default provider" : "kuai",
                              oi ? "default provider" : "kuai", ok, dl);
                    }
                }
                EVP_CIPHER_CTX_free(e);
                EVP_CIPHER_CTX_free(d[0]);
                EVP_CIPHER_CTX_free(d[1]);
            }
            /* Records with a bad padding, made by plain CBC (padding off),
             * each opened by a fresh context of kuai's and the default's. */
            EVP_CIPHER_CTX *p = EVP_CIPHER_CTX_new();
            for (int t = 0; p && t < 40; t++) {
                size_t len = bs * (size_t)(1 + rand() % 24);
                rnd_bytes(want, len);
                uint8_t padv = (uint8_t)(rand() % 40);
                if (t % 4 == 3)
                    padv = (uint8_t)(200 + rand() % 56); /* often longer than the record */
                for (size_t i = 0; i <= padv && i < len; i++)
                    want[len - 1 - i] = padv;
                if (t % 2 == 1) /* a padding byte wrong (at padding 0, the byte before it) */
                    want[len - 1 - (padv == 0 ? 1 : (size_t)(rand() % padv) + 1) % len] ^= 1;
                int outl = 0;
                if (!EVP_EncryptInit_ex2(p, c, key, iv, NULL) ||
                    !EVP_CIPHER_CTX_set_padding(p, 0) ||
                    EVP_EncryptUpdate(p, rec, &outl, want, (int)len) <= 0 || (size_t)outl != len) {
                    CHECK(0, "%s: plain CBC of a crafted record", name);
                    break;
                }
                const int valid_pub = len >= skip + 1 + ms;
                const size_t rl = len - skip; /* the record after its explicit IV */
                const int pad_ok = (t % 2 == 0 || padv == 0 ? 0 : 1) == 0 && rl >= ms + 1u + padv;
                int ok[2] = {0, 0}, dl[2] = {-1, -1};
                for (int oi = 0; oi < 2; oi++) {
                    if (openers[oi] == NULL)
                        continue;
                    EVP_CIPHER_CTX *d = tls_ctx(openers[oi], key, iv, 0, v, ms);
                    memcpy(copy, rec, len);
                    ok[oi] = d && tls_open(d, copy, len, ms, &dl[oi], oi ? mac2 : mac);
                    EVP_CIPHER_CTX_free(d);
                }
                /* what every opener must do, from the record's bytes */
                int want_ok = valid_pub && (ms > 0 || pad_ok);
                size_t want_len = pad_ok ? rl - padv - 1 - ms : rl - ms;
                CHECK(ok[0] == want_ok && (!want_ok || (size_t)dl[0] == want_len),
                      "%s: TLS %#x, MAC %zu: %zu-byte record, padding %u (%s): ok %d, %d bytes",
                      name, v, ms, len, padv, pad_ok ? "good" : "bad", ok[0], dl[0]);
                if (ok[0] && ms > 0)
                    CHECK(pad_ok == (memcmp(mac, want + skip + want_len, ms) == 0),
                          "%s: TLS %#x: the MAC of a record with a %s padding", name, v,
                          pad_ok ? "good" : "bad");
                if (ref)
                    CHECK(ok[1] == ok[0] && dl[1] == dl[0],
                          "%s: TLS %#x, MAC %zu: %zu-byte record, padding %u: default provider "
                          "ok %d, %d bytes; kuai ok %d, %d bytes",
                          name, v, ms, len, padv, ok[1], dl[1], ok[0], dl[0]);
                bad_checks += !pad_ok;
            }
            EVP_CIPHER_CTX_free(p);
            /* publicly wrong: not whole blocks, too short for the explicit
             * IV, a padding byte and the MAC */
            for (int oi = 0; oi < 2; oi++) {
                if (openers[oi] == NULL)
                    continue;
                /* not whole blocks; whole blocks, too short */
                const size_t lens[2] = {bs + 1, (skip + ms) / bs * bs};
                for (int li = 0; li < 2; li++) {
                    if (lens[li] == 0)
                        continue;
                    EVP_CIPHER_CTX *d = tls_ctx(openers[oi], key, iv, 0, v, ms);
                    int dl = -1;
                    rnd_bytes(copy, lens[li]);
                    CHECK(d && !tls_open(d, copy, lens[li], ms, &dl, mac),
                          "%s: TLS %#x, MAC %zu: a %zu-byte record opened by %s", name, v, ms,
                          lens[li], oi ? "default provider" : "kuai");
                    EVP_CIPHER_CTX_free(d);
                }
            }
        }
    CHECK(bad_checks > 0, "%s: no record with a bad padding was tried", name);
}

/* Defect 11: padding turned off after a padded decryption's update; final
 * then returns the held-back last block as it is (the default provider's
 * behaviour), never fails and never loses it. */
static void test_padding_off_at_final(const char *name, const EVP_CIPHER *c, size_t bs)
{
    uint8_t key[32], iv[32], pt[64], ct[128], out[128];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(pt, sizeof pt);
    size_t n = 2 * bs; /* padded: one more block of bs bytes of value bs */
    long cl = run(c, 1, 1, key, iv, pt, n, ct, 0);
    CHECK(cl == (long)(3 * bs), "%s padded encryption", name);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int l1 = 0, l2 = -1;
    int ok = EVP_DecryptInit_ex2(x, c, key, iv, NULL) &&
             EVP_DecryptUpdate(x, out, &l1, ct, (int)(3 * bs)) &&
             EVP_CIPHER_CTX_set_padding(x, 0) && EVP_DecryptFinal_ex(x, out + l1, &l2);
    int pad_block = 1;
    for (size_t i = 0; ok && l1 + l2 == (int)(3 * bs) && i < bs; i++)
        pad_block &= out[n + i] == bs;
    CHECK(ok && l1 == (int)n && l2 == (int)bs && memcmp(out, pt, n) == 0 && pad_block,
          "%s: padding off after a padded decrypt update: final %d, %d + %d bytes", name, ok, l1,
          l2);
    EVP_CIPHER_CTX_free(x);
}

/* Defect 12: `openssl enc` keeps IVs in a 16-byte buffer, so with a 32-byte
 * IV cipher the provider gets the IV's first 16 bytes followed by the first
 * 16 bytes of the key (the buffer after it). An IV whose second half is the
 * key's first half is refused; any other 32-byte IV works. */
static void test_iv_half_key(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], iv[32], pt[64], out[96];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(pt, sizeof pt);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, c, key, iv, NULL), "%s: a random 32-byte IV", name);
    memcpy(iv + 16, key, 16);
    for (int enc = 0; enc < 2; enc++)
        CHECK(!EVP_CipherInit_ex2(x, c, key, iv, enc, NULL),
              "%s: IV = 16 bytes || the key's first 16 (openssl enc's buffer) accepted (%s)", name,
              enc ? "encrypt" : "decrypt");
    int l;
    CHECK(!EVP_EncryptUpdate(x, out, &l, pt, 64), "%s: update after the refused init", name);
    EVP_CIPHER_CTX_free(x);
}

/* ECB/CBC in place while bytes of an earlier update are buffered: the
 * output runs behind the input, so each block written would land on input
 * not yet read. kuai refuses that update (OpenSSL's block modes write
 * garbage, its legacy EVP refuses), and the refusal must leave the context
 * as it was: the same data given out of place then continues the message
 * (it had consumed the buffered block and moved the CBC chain). The caller
 * who passes out = in - buffered (the output's lag) is served in place. */
static void test_inplace_buffered(const char *name, const EVP_CIPHER *c, size_t bs)
{
    uint8_t key[32], iv[32], in[160], whole[192], part[192], buf[192];
    int enc = 1, l, n;
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(in, sizeof in);
    for (int pass = 0; pass < 2; pass++, enc = !enc) {
        size_t first = bs + 3, len = 3 * bs + 1; /* 3 bytes buffered, then more */
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        EVP_CipherInit_ex2(x, c, key, iv, enc, NULL);
        int wl = 0;
        CHECK(EVP_CipherUpdate(x, whole, &l, in, (int)(first + len)) > 0, "%s: update", name);
        wl = l;
        EVP_CipherInit_ex2(x, NULL, NULL, iv, enc, NULL);
        CHECK(EVP_CipherUpdate(x, part, &l, in, (int)first) > 0, "%s: first update", name);
        memcpy(buf, in + first, len);
        CHECK(EVP_CipherUpdate(x, buf, &n, buf, (int)len) <= 0,
              "%s (%s): in-place update over buffered bytes accepted", name, enc ? "enc" : "dec");
        ERR_clear_error();
        CHECK(EVP_CipherUpdate(x, part + l, &n, in + first, (int)len) > 0 && l + n == wl &&
                  memcmp(part, whole, (size_t)wl) == 0,
              "%s (%s): a refused in-place update changed the context", name, enc ? "enc" : "dec");
        /* in place with the output lagging by the 3 buffered bytes */
        EVP_CipherInit_ex2(x, NULL, NULL, iv, enc, NULL);
        memcpy(buf, in, first + len);
        CHECK(EVP_CipherUpdate(x, buf, &l, buf, (int)first) > 0 && (size_t)l == first - 3 &&
                  EVP_CipherUpdate(x, buf + l, &n, buf + first, (int)len) > 0 && l + n == wl &&
                  memcmp(buf, whole, (size_t)wl) == 0,
              "%s (%s): in place with the output's lag", name, enc ? "enc" : "dec");
        EVP_CIPHER_CTX_free(x);
    }
}

/* ECB/CBC with nothing buffered, the output starting inside the bytes the
 * update keeps for later (its partial last block, or a padded decryption's
 * held-back last block): the whole blocks written before those bytes are
 * kept would overwrite them, and the next update or the final would work
 * on the output instead (wrong bytes, or a bad decrypt). kuai refuses it,
 * leaving the context as it was (it used to check only the blocks' own
 * input and take such an update). */
static void test_overlap_kept_tail(const char *name, const EVP_CIPHER *c, size_t bs)
{
    uint8_t key[32], iv[32], in[3 * 32], whole[5 * 32], part[5 * 32], buf[5 * 32];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    for (int k = 0; k < 3; k++) {
        /* 0: encryption keeping 5 bytes; 1: unpadded decryption keeping 5;
         * 2: padded decryption holding its last block back */
        int enc = k == 0, pad = k == 2, wl, l, n, fl;
        size_t len = k == 2 ? 2 * bs : 2 * bs + 5, kept = k == 2 ? bs : 5;
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        rnd_bytes(in, sizeof in);
        if (k == 2) { /* a ciphertext with a valid padding */
            EVP_CipherInit_ex2(x, c, key, iv, 1, NULL);
            CHECK(EVP_CipherUpdate(x, buf, &l, in, (int)len - 1) > 0 &&
                      EVP_CipherFinal_ex(x, buf + l, &n) > 0 && (size_t)(l + n) == len,
                  "%s: padded encryption", name);
            memcpy(in, buf, len);
        }
        EVP_CipherInit_ex2(x, c, key, iv, enc, NULL);
        EVP_CIPHER_CTX_set_padding(x, pad);
        CHECK(EVP_CipherUpdate(x, whole, &wl, in, (int)len) > 0, "%s: update", name);
        if (k < 2) { /* to end on a whole block */
            CHECK(EVP_CipherUpdate(x, whole + wl, &l, in, (int)(bs - 5)) > 0, "%s: update", name);
            wl += l;
        }
        CHECK(EVP_CipherFinal_ex(x, whole + wl, &fl) > 0, "%s: final", name);
        EVP_CipherInit_ex2(x, NULL, key, iv, enc, NULL);
        memcpy(buf, in, len);
        CHECK(EVP_CipherUpdate(x, buf + len - kept, &l, buf, (int)len) <= 0,
              "%s (%s): an update written over the %zu bytes it keeps was accepted", name,
              k == 0   ? "enc"
              : k == 1 ? "dec"
                       : "dec, padded",
              kept);
        ERR_clear_error();
        CHECK(EVP_CipherUpdate(x, part, &l, in, (int)len) > 0, "%s: update", name);
        if (k < 2) {
            CHECK(EVP_CipherUpdate(x, part + l, &n, in, (int)(bs - 5)) > 0, "%s: update", name);
            l += n;
        }
        CHECK(EVP_CipherFinal_ex(x, part + l, &n) > 0 && l == wl && n == fl &&
                  memcmp(part, whole, (size_t)(wl + fl)) == 0,
              "%s (%s): the update refused left the context changed", name,
              k == 0   ? "enc"
              : k == 1 ? "dec"
                       : "dec, padded");
        EVP_CIPHER_CTX_free(x);
    }
}

/* ---- calls that may crash, each run in a child process ------------------ */

/* fn(arg) in a child process: what it returned (0..255), or -1 if the
 * child did not exit (killed by a signal: a crash). */
static int in_child(int (*fn)(const void *), const void *arg)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(arg) & 0xff);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* One call with a missing buffer: which call (update, EVP_Cipher, final),
 * which buffer is NULL, after how many bytes buffered by an update. */
typedef struct null_case {
    const EVP_CIPHER *c;
    int enc, padding;
    enum { NC_UPDATE, NC_CIPHER, NC_FINAL } call;
    int null_in, null_out;
    int pre; /* bytes given by an update before the call */
    int len; /* the call's length */
} null_case;

/* 0: the call was refused with an error raised; 1: it succeeded; 2:
 * refused with nothing raised; 3: the set-up failed. */
static int null_case_run(const void *arg)
{
    const null_case *nc = arg;
    uint8_t key[32] = {1}, iv[32] = {2}, in[96] = {3}, out[128] = {4};
    int l = 0, r;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    if (nc->call == NC_FINAL && !nc->enc && nc->padding && nc->pre > 0) {
        /* a padded decryption's input: a padded message's ciphertext (a
         * whole number of blocks), so that its final gets to the output */
        int l2 = 0;
        if (x == NULL || !EVP_EncryptInit_ex2(x, nc->c, key, iv, NULL) ||
            !EVP_EncryptUpdate(x, in, &l, out, nc->pre - 1) ||
            !EVP_EncryptFinal_ex(x, in + l, &l2) || l + l2 != nc->pre)
            return 3;
    }
    if (x == NULL || !EVP_CipherInit_ex2(x, nc->c, key, iv, nc->enc, NULL) ||
        !EVP_CIPHER_CTX_set_padding(x, nc->padding) ||
        (nc->pre > 0 && !EVP_CipherUpdate(x, out, &l, in, nc->pre)))
        return 3;
    ERR_clear_error();
    const uint8_t *i = nc->null_in ? NULL : in;
    uint8_t *o = nc->null_out ? NULL : out;
    if (nc->call == NC_UPDATE)
        r = EVP_CipherUpdate(x, o, &l, i, nc->len) > 0;
    else if (nc->call == NC_CIPHER)
        r = EVP_Cipher(x, o, i, (unsigned)nc->len) > 0;
    else
        r = EVP_CipherFinal_ex(x, o, &l) > 0;
    r = r ? 1 : ERR_peek_error() != 0 ? 0 : 2;
    EVP_CIPHER_CTX_free(x);
    return r;
}

/* An update or EVP_Cipher of bytes with no input or no output buffer is
 * refused, an error raised: ECB, CBC and CTR dereferenced the NULL pointer
 * (or memcpy'd from it into the partial block). Each call runs in a child,
 * so that a crash fails its check instead of the whole test. */
static void test_null_buffers(const char *name, const EVP_CIPHER *c, size_t bs)
{
    static const struct {
        int call, null_in, null_out, pre, len;
    } cases[] = {
        {NC_UPDATE, 1, 0, 0, 32}, {NC_UPDATE, 0, 1, 0, 32}, {NC_UPDATE, 1, 1, 0, 32},
        {NC_UPDATE, 1, 0, 5, 7},  {NC_UPDATE, 0, 1, 5, 64}, {NC_UPDATE, 1, 0, 0, 5},
        {NC_CIPHER, 1, 0, 0, 32}, {NC_CIPHER, 0, 1, 0, 32},
    };
    for (int enc = 0; enc < 2; enc++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            null_case nc = {c,
                            enc,
                            1,
                            (int)cases[i].call,
                            cases[i].null_in,
                            cases[i].null_out,
                            cases[i].pre,
                            cases[i].len};
            if (nc.call == NC_CIPHER)
                nc.len = (int)(2 * bs);
            int r = in_child(null_case_run, &nc);
            CHECK(r == 0, "%s %s: %s of %d bytes (%d buffered) with a NULL %s: %s", name,
                  enc ? "encrypt" : "decrypt", nc.call == NC_CIPHER ? "EVP_Cipher" : "update",
                  nc.len, nc.pre, nc.null_in ? "input" : "output",
                  r < 0    ? "crashed"
                  : r == 1 ? "accepted"
                  : r == 2 ? "refused with no error raised"
                           : "set-up failed");
        }
}

/* CCM: an update or EVP_Cipher of bytes with a NULL input and an output
 * is refused, an error raised; it was taken as the final's call (success,
 * nothing written, and EVP_Cipher answered the whole length). XTS, CFB and
 * OFB refuse a missing buffer already; checked here too. */
static void test_modes_null_input(void)
{
    static const char *const names[] = {"SM4-CCM", "UBLOCK-128-256-CCM", "SM4-XTS", "SM4-CFB",
                                        "SM4-OFB"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, names[n], "provider=kuai");
        CHECK(c != NULL, "%s from kuai", names[n]);
        if (c == NULL)
            continue;
        for (int enc = 0; enc < 2; enc++)
            for (int call = NC_UPDATE; call <= NC_CIPHER; call++) {
                null_case nc = {c, enc, 1, call, 1, 0, 0, 32};
                int r = in_child(null_case_run, &nc);
                CHECK(r == 0, "%s %s: %s of 32 bytes with a NULL input: %s", names[n],
                      enc ? "encrypt" : "decrypt", call == NC_CIPHER ? "EVP_Cipher" : "update",
                      r < 0    ? "crashed"
                      : r == 1 ? "accepted"
                      : r == 2 ? "refused with no error raised"
                               : "set-up failed");
            }
        EVP_CIPHER_free(c);
    }
}

/* A final into no output buffer, where it has a block to write (a padded
 * encryption) or one held back (a padded decryption), is refused, an error
 * raised: ECB and CBC wrote the padding block, or the decryption's
 * plaintext, through the NULL pointer. A final with nothing to write still
 * takes NULL. */
static void test_final_null_output(const char *name, const EVP_CIPHER *c, size_t bs)
{
    static const struct {
        int enc, padding, blocks, pre, want;
    } cases[] = {
        {1, 1, 0, 0, 0}, {1, 1, 0, 5, 0}, {1, 1, 1, 0, 0}, {0, 1, 1, 0, 0},
        {0, 1, 2, 0, 0}, {1, 0, 1, 0, 1}, {0, 0, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int pre = cases[i].blocks * (int)bs + cases[i].pre;
        null_case nc = {c, cases[i].enc, cases[i].padding, NC_FINAL, 0, 1, pre, 0};
        int r = in_child(null_case_run, &nc);
        CHECK(r == cases[i].want, "%s %s final into NULL (padding %d, %d bytes given): %s", name,
              nc.enc ? "encrypt" : "decrypt", nc.padding, nc.pre,
              r < 0    ? "crashed"
              : r == 1 ? "accepted"
              : r == 0 ? "refused"
              : r == 2 ? "refused with no error raised"
                       : "set-up failed");
    }
}

/* One settable integer parameter of a cipher, given with no data. */
typedef struct null_param_case {
    const EVP_CIPHER *c;
    OSSL_PARAM p;
} null_param_case;

/* 0: refused with an error raised; 1: taken; 2: refused with nothing
 * raised; 3: the set-up failed. */
static int null_param_run(const void *arg)
{
    const null_param_case *nc = arg;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    if (x == NULL || !EVP_CipherInit_ex2(x, nc->c, NULL, NULL, 1, NULL))
        return 3;
    ERR_clear_error();
    OSSL_PARAM ps[2] = {nc->p, OSSL_PARAM_END};
    int r = EVP_CIPHER_CTX_set_params(x, ps) > 0 ? 1 : ERR_peek_error() != 0 ? 0 : 2;
    EVP_CIPHER_CTX_free(x);
    return r;
}

/* Every integer parameter each of the provider's modes lists as settable
 * (key length, padding, num, IV length, TLS version and MAC size), given
 * with a NULL data pointer, is refused with an error raised, each in a
 * child process: OpenSSL 3.0's OSSL_PARAM_get_uint and get_size_t read
 * through the pointer, and the provider handed it to them as it came. */
static void test_int_params_null_data(void)
{
    static const char *const names[] = {"SM4-ECB", "SM4-CBC", "SM4-CTR", "SM4-GCM",
                                        "SM4-XTS", "SM4-CCM", "SM4-CFB", "SM4-OFB"};
    int f0 = failures, c0 = checks;
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, names[n], "provider=kuai");
        CHECK(c != NULL, "%s from kuai", names[n]);
        if (c == NULL)
            continue;
        int seen = 0;
        for (const OSSL_PARAM *q = EVP_CIPHER_settable_ctx_params(c); q && q->key; q++) {
            if (q->data_type != OSSL_PARAM_INTEGER && q->data_type != OSSL_PARAM_UNSIGNED_INTEGER)
                continue;
            seen++;
            null_param_case nc = {c, {q->key, q->data_type, NULL, q->data_size, 0}};
            int r = in_child(null_param_run, &nc);
            CHECK(r == 0, "%s: the integer parameter %s with no data: %s", names[n], q->key,
                  r < 0    ? "crashed"
                  : r == 1 ? "taken"
                  : r == 2 ? "refused with no error raised"
                           : "set-up failed");
        }
        CHECK(seen > 0, "%s lists no settable integer parameter", names[n]);
        EVP_CIPHER_free(c);
    }
    printf("%-15s %d checks, %d failed\n", "int params", checks - c0, failures - f0);
}

/* A cipher's functions as the provider hands them to the core, called
 * directly (EVP takes int lengths): under the loaded provider's own
 * context, so that what they raise reaches this thread's error queue. */
typedef struct direct_cipher {
    void *provctx;
    OSSL_FUNC_cipher_newctx_fn *newctx;
    OSSL_FUNC_cipher_freectx_fn *freectx;
    OSSL_FUNC_cipher_encrypt_init_fn *einit;
    OSSL_FUNC_cipher_update_fn *update;
    OSSL_FUNC_cipher_cipher_fn *cipher;
} direct_cipher;

static OSSL_PROVIDER *kuai_prov;

static int direct_get(const char *name, direct_cipher *dc)
{
    memset(dc, 0, sizeof *dc);
    OSSL_FUNC_provider_query_operation_fn *query = NULL;
    for (const OSSL_DISPATCH *d = OSSL_PROVIDER_get0_dispatch(kuai_prov); d && d->function_id; d++)
        if (d->function_id == OSSL_FUNC_PROVIDER_QUERY_OPERATION)
            query = OSSL_FUNC_provider_query_operation(d);
    dc->provctx = OSSL_PROVIDER_get0_provider_ctx(kuai_prov);
    int no_cache;
    const OSSL_ALGORITHM *a = query != NULL ? query(dc->provctx, OSSL_OP_CIPHER, &no_cache) : NULL;
    size_t n = strlen(name);
    for (; a != NULL && a->algorithm_names != NULL; a++)
        if (strncmp(a->algorithm_names, name, n) == 0 &&
            (a->algorithm_names[n] == '\0' || a->algorithm_names[n] == ':'))
            break;
    if (a == NULL || a->algorithm_names == NULL)
        return 0;
    for (const OSSL_DISPATCH *d = a->implementation; d->function_id; d++) {
        if (d->function_id == OSSL_FUNC_CIPHER_NEWCTX)
            dc->newctx = OSSL_FUNC_cipher_newctx(d);
        if (d->function_id == OSSL_FUNC_CIPHER_FREECTX)
            dc->freectx = OSSL_FUNC_cipher_freectx(d);
        if (d->function_id == OSSL_FUNC_CIPHER_ENCRYPT_INIT)
            dc->einit = OSSL_FUNC_cipher_encrypt_init(d);
        if (d->function_id == OSSL_FUNC_CIPHER_UPDATE)
            dc->update = OSSL_FUNC_cipher_update(d);
        if (d->function_id == OSSL_FUNC_CIPHER_CIPHER)
            dc->cipher = OSSL_FUNC_cipher_cipher(d);
    }
    return dc->newctx && dc->freectx && dc->einit && dc->update && dc->cipher;
}

/* An update or cipher call of len bytes (in place, the output's size
 * given as SIZE_MAX), after pre bytes given by an update. */
typedef struct huge_case {
    const char *name;
    int use_cipher;
    size_t pre, len;
} huge_case;

/* 0: refused as an invalid input length; 1: taken; 2: refused for
 * another reason; 3: the set-up failed. */
static int huge_case_run(const void *arg)
{
    const huge_case *hc = arg;
    direct_cipher dc;
    if (!direct_get(hc->name, &dc))
        return 3;
    uint8_t key[64], iv[16] = {7}, buf[256] = {0};
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i * 37 + 1); /* XTS: halves that differ */
    size_t keylen = strstr(hc->name, "XTS") != NULL ? 32 : 16;
    size_t ivlen = strstr(hc->name, "CCM") != NULL   ? 7
                   : strstr(hc->name, "GCM") != NULL ? 12
                   : strstr(hc->name, "ECB") != NULL ? 0
                                                     : 16;
    void *x = dc.newctx(dc.provctx);
    size_t outl = 0;
    if (x == NULL || !dc.einit(x, key, keylen, ivlen ? iv : NULL, ivlen, NULL) ||
        (hc->pre > 0 && !dc.update(x, buf, &outl, sizeof buf, buf + 128, hc->pre)))
        return 3;
    ERR_clear_error();
    int r = hc->use_cipher ? dc.cipher(x, buf, &outl, SIZE_MAX, buf, hc->len)
                           : dc.update(x, buf, &outl, SIZE_MAX, buf, hc->len);
    unsigned long e = ERR_peek_last_error();
    dc.freectx(x);
    return r ? 1 : ERR_GET_REASON(e) == KP_R_INVALID_INPUT_LENGTH ? 0 : 2;
}

/* An update or EVP_Cipher of more than PTRDIFF_MAX bytes, a length no
 * buffer has, is refused as such in every mode before anything moves;
 * ECB and CBC with bytes buffered used to wrap the output size they
 * checked (buffered + len) and copy from far past the input (a crash),
 * the other modes were refused by the library, or by malloc (CCM's AAD),
 * for other reasons, some after moving their state. */
static void test_huge_lengths(void)
{
    static const char *const names[] = {"SM4-ECB", "SM4-CBC", "SM4-CTR", "SM4-GCM",
                                        "SM4-XTS", "SM4-CCM", "SM4-CFB", "SM4-OFB"};
    const size_t lens[] = {(size_t)PTRDIFF_MAX + 1, SIZE_MAX - 2, SIZE_MAX};
    int f0 = failures, c0 = checks;
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
        for (int use_cipher = 0; use_cipher < 2; use_cipher++)
            for (size_t pre = 0; pre <= 5; pre += 5)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    /* XTS and CCM take one update per message or data unit */
                    if (pre > 0 && (strstr(names[n], "XTS") || strstr(names[n], "CCM") ||
                                    strstr(names[n], "GCM")))
                        continue;
                    huge_case hc = {names[n], use_cipher, pre, lens[li]};
                    int r = in_child(huge_case_run, &hc);
                    CHECK(r == 0, "%s: %s of %zu bytes (%zu given before): %s", names[n],
                          use_cipher ? "cipher" : "update", hc.len, pre,
                          r < 0    ? "crashed"
                          : r == 1 ? "taken"
                          : r == 2 ? "refused, but not as an invalid input length"
                                   : "set-up failed");
                }
    printf("%-15s %d checks, %d failed\n", "huge lengths", checks - c0, failures - f0);
}

/* EVP_CIPHER_CTX_set_num: taken by every block mode, as by OpenSSL's
 * (ECB and CBC keep it unused; kuai refused it there), read back by
 * get_num, and reset by a re-init. */
static void test_num_param(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32] = {1}, iv[32] = {2};
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, c, key, iv, NULL) > 0, "%s: init", name);
    CHECK(EVP_CIPHER_CTX_set_num(x, 5) > 0 && EVP_CIPHER_CTX_get_num(x) == 5,
          "%s: num 5 not taken (%d)", name, EVP_CIPHER_CTX_get_num(x));
    CHECK(EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL) > 0 && EVP_CIPHER_CTX_get_num(x) == 0,
          "%s: num not 0 after a re-init", name);
    ERR_clear_error();
    EVP_CIPHER_CTX_free(x);
}

/* A GCM context that was never given an IV has none to read back: OpenSSL's
 * default provider refuses OSSL_CIPHER_PARAM_IV and UPDATED_IV then (kuai
 * answered zeros, as if an all-zero IV were set); once an IV is set, or
 * generated by an encryption's first update, it reads back. */
static void test_gcm_iv_before_set(const char *name, const EVP_CIPHER *c)
{
    uint8_t key[32], iv[12], got[12], in[16] = {0}, out[16];
    int outl;
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(EVP_EncryptInit_ex2(x, c, key, NULL, NULL) > 0, "%s: init without IV", name);
    CHECK(EVP_CIPHER_CTX_get_original_iv(x, got, sizeof got) <= 0,
          "%s: an IV read back before any was set", name);
    CHECK(EVP_CIPHER_CTX_get_updated_iv(x, got, sizeof got) <= 0,
          "%s: an updated IV read back before any was set", name);
    ERR_clear_error();
    CHECK(EVP_EncryptUpdate(x, out, &outl, in, sizeof in) > 0 &&
              EVP_CIPHER_CTX_get_original_iv(x, got, sizeof got) > 0,
          "%s: the IV an encryption generated does not read back", name);
    CHECK(EVP_DecryptInit_ex2(x, NULL, NULL, iv, NULL) > 0 &&
              EVP_CIPHER_CTX_get_updated_iv(x, got, sizeof got) > 0 &&
              memcmp(got, iv, sizeof iv) == 0,
          "%s: the IV set does not read back", name);
    EVP_CIPHER_CTX_free(x);
    x = EVP_CIPHER_CTX_new();
    CHECK(EVP_DecryptInit_ex2(x, c, key, NULL, NULL) > 0 &&
              EVP_CIPHER_CTX_get_updated_iv(x, got, sizeof got) <= 0,
          "%s: a decryption without IV reads one back", name);
    ERR_clear_error();
    EVP_CIPHER_CTX_free(x);
}

/* The text KP_REASONS gives reason r. */
static const char *reason_text(int r)
{
#define KP_REASON_CASE(name, code, text)                                                           \
    case name:                                                                                     \
        return text;
    switch (r) {
        KP_REASONS(KP_REASON_CASE)
    default:
        return "?";
    }
#undef KP_REASON_CASE
}

/* The error a failed call through kuai left last on the queue is kuai's
 * (its library named after the provider) with reason want, whose text is
 * the list's and which ERR_error_string prints; the queue is cleared. */
static void check_reason(const char *what, int want)
{
    unsigned long e = ERR_peek_last_error();
    const char *lib = ERR_lib_error_string(e);
    const char *text = ERR_reason_error_string(e);
    char line[256];
    ERR_error_string_n(e, line, sizeof line);
    char expect[96];
    snprintf(expect, sizeof expect, ":%s", reason_text(want));
    CHECK(e != 0 && lib != NULL && strcmp(lib, "kuai") == 0 && ERR_GET_REASON(e) == want &&
              text != NULL && strcmp(text, reason_text(want)) == 0 && strstr(line, ":kuai:") &&
              strstr(line, expect),
          "%s: the last error is \"%s\" (library %s, reason %d), not kuai's \"%s\" (%d)", what,
          e ? line : "none", lib ? lib : "-", e ? ERR_GET_REASON(e) : 0, reason_text(want), want);
    ERR_clear_error();
}

/* Failed EVP calls through kuai leave kuai's reason on OpenSSL's error
 * queue (they left none, or libcrypto's generic one). */
static void test_error_reasons(void)
{
    uint8_t key[32], iv[16], pt[48] = {0}, ct[64], out[96], tag[16];
    int l, n;
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    ERR_clear_error();

    EVP_CIPHER *cbc = EVP_CIPHER_fetch(NULL, "SM4-CBC", "provider=kuai");
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    CHECK(cbc != NULL && x != NULL, "SM4-CBC from kuai");
    /* 32 zero bytes unpadded: the last block decrypts to a 0 padding byte */
    CHECK(EVP_EncryptInit_ex2(x, cbc, key, iv, NULL) && EVP_CIPHER_CTX_set_padding(x, 0) &&
              EVP_EncryptUpdate(x, ct, &l, pt, 32) && EVP_EncryptFinal_ex(x, ct + l, &n) &&
              l + n == 32,
          "SM4-CBC unpadded encryption");
    /* padding back on: EVP keeps a context's setting across inits */
    CHECK(EVP_DecryptInit_ex2(x, cbc, key, iv, NULL) && EVP_CIPHER_CTX_set_padding(x, 1) &&
              EVP_DecryptUpdate(x, out, &l, ct, 32) && !EVP_DecryptFinal_ex(x, out + l, &n),
          "SM4-CBC: a bad padding decrypted");
    check_reason("SM4-CBC bad padding", KP_R_BAD_DECRYPT);
    CHECK(EVP_EncryptInit_ex2(x, cbc, key, iv, NULL) && EVP_CIPHER_CTX_set_padding(x, 0) &&
              EVP_EncryptUpdate(x, ct, &l, pt, 5) && !EVP_EncryptFinal_ex(x, ct + l, &n),
          "SM4-CBC: 5 bytes unpadded encrypted");
    check_reason("SM4-CBC unpadded partial block", KP_R_WRONG_FINAL_BLOCK_LENGTH);
    CHECK(EVP_DecryptInit_ex2(x, cbc, key, iv, NULL) && EVP_DecryptUpdate(x, out, &l, ct, 20) &&
              !EVP_DecryptFinal_ex(x, out + l, &n),
          "SM4-CBC: 20 bytes decrypted");
    check_reason("SM4-CBC decryption of a partial block", KP_R_WRONG_FINAL_BLOCK_LENGTH);
    CHECK(EVP_EncryptInit_ex2(x, cbc, key, iv, NULL) && EVP_CIPHER_CTX_set_key_length(x, 15) <= 0,
          "SM4-CBC took a 15-byte key length");
    check_reason("SM4-CBC key length 15", KP_R_INVALID_KEY_LENGTH);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(cbc);

    EVP_CIPHER *gcm = EVP_CIPHER_fetch(NULL, "SM4-GCM", "provider=kuai");
    x = EVP_CIPHER_CTX_new();
    CHECK(gcm != NULL && x != NULL, "SM4-GCM from kuai");
    CHECK(EVP_EncryptInit_ex2(x, gcm, NULL, NULL, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 129, NULL) <= 0,
          "SM4-GCM took a 129-byte IV length");
    check_reason("SM4-GCM IV length 129", KP_R_INVALID_IV_LENGTH);
    CHECK(EVP_EncryptInit_ex2(x, gcm, key, iv, NULL) && EVP_EncryptUpdate(x, ct, &l, pt, 20) &&
              EVP_EncryptFinal_ex(x, ct + l, &n) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0,
          "SM4-GCM encryption");
    tag[0] ^= 1;
    CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0 &&
              EVP_DecryptUpdate(x, out, &l, ct, 20) && !EVP_DecryptFinal_ex(x, out + l, &n),
          "SM4-GCM: a wrong tag verified");
    check_reason("SM4-GCM wrong tag", KP_R_TAG_VERIFY_FAILED);
    CHECK(EVP_DecryptInit_ex2(x, gcm, key, iv, NULL) && EVP_DecryptUpdate(x, out, &l, ct, 20) &&
              !EVP_DecryptFinal_ex(x, out + l, &n),
          "SM4-GCM: a decryption without a tag verified");
    check_reason("SM4-GCM no tag", KP_R_TAG_NOT_SET);
    CHECK(EVP_EncryptInit_ex2(x, gcm, key, iv, NULL) &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) <= 0,
          "SM4-GCM: an encryption took an expected tag");
    check_reason("SM4-GCM tag on an encryption", KP_R_TAG_NOT_NEEDED);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(gcm);

    /* get_params has no provider context: a parameter that cannot take
     * its answer failed the call and raised nothing */
    static const char *const algs[] = {"SM4-CBC", "SM4-CCM"};
    for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, algs[i], "provider=kuai");
        char str[16];
        OSSL_PARAM bad[] = {OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_KEYLEN, str, sizeof str),
                            OSSL_PARAM_END};
        CHECK(c != NULL && !EVP_CIPHER_get_params(c, bad),
              "%s: a key length answered into a string", algs[i]);
        check_reason(algs[i], KP_R_FAILED_TO_GET_PARAMETER);
        EVP_CIPHER_free(c);
    }
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "kuai");
    int status_str[1];
    OSSL_PARAM pbad[] = {
        OSSL_PARAM_utf8_string(OSSL_PROV_PARAM_STATUS, (char *)status_str, sizeof status_str),
        OSSL_PARAM_END};
    CHECK(prov != NULL && !OSSL_PROVIDER_get_params(prov, pbad),
          "the provider's status answered into a string");
    check_reason("provider get_params", KP_R_FAILED_TO_GET_PARAMETER);
    OSSL_PROVIDER_unload(prov);

    EVP_CIPHER *xts = EVP_CIPHER_fetch(NULL, "SM4-XTS", "provider=kuai");
    x = EVP_CIPHER_CTX_new();
    CHECK(xts != NULL && x != NULL, "SM4-XTS from kuai");
    memcpy(key + 16, key, 16);
    CHECK(!EVP_EncryptInit_ex2(x, xts, key, iv, NULL), "SM4-XTS: equal halves took to encrypt");
    check_reason("SM4-XTS equal halves", KP_R_XTS_DUPLICATED_KEYS);
    rnd_bytes(key + 16, 16);
    CHECK(EVP_EncryptInit_ex2(x, xts, key, iv, NULL) && !EVP_EncryptUpdate(x, out, &l, pt, 15),
          "SM4-XTS: a 15-byte data unit encrypted");
    check_reason("SM4-XTS 15 bytes", KP_R_INVALID_INPUT_LENGTH);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(xts);
}

/* Input and output overlapping other than in place: XTS, CCM and GCM
 * refuse it as 'overlapping buffers' (as CTR, CFB and OFB), before the
 * message moves: the same context then encrypts the same message under the
 * same nonce with proper buffers, as a fresh one. CCM used to spend its
 * nonce on the refusal (and GCM started its message), and all three raised
 * only the library's 'cipher operation failed'. */
static void test_aead_overlap(void)
{
    static const char *const names[] = {"SM4-XTS", "SM4-CCM", "SM4-GCM"};
    uint8_t key[32], iv[16], buf[96], pt[64], ref[64], out[64];
    rnd_bytes(key, sizeof key);
    rnd_bytes(iv, sizeof iv);
    rnd_bytes(pt, sizeof pt);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, names[i], "provider=kuai");
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *y = EVP_CIPHER_CTX_new();
        int ccm = i == 1, l = 0;
        CHECK(c != NULL && x != NULL && y != NULL, "%s from kuai", names[i]);
        if (c == NULL || x == NULL || y == NULL) {
            EVP_CIPHER_free(c);
            EVP_CIPHER_CTX_free(x);
            EVP_CIPHER_CTX_free(y);
            continue;
        }
        int ok = EVP_EncryptInit_ex2(y, c, key, iv, NULL) &&
                 (!ccm || EVP_EncryptUpdate(y, NULL, &l, NULL, 64)) &&
                 EVP_EncryptUpdate(y, ref, &l, pt, 64);
        CHECK(ok, "%s: the reference encryption", names[i]);
        memcpy(buf, pt, 64);
        ERR_clear_error();
        ok = EVP_EncryptInit_ex2(x, c, key, iv, NULL) &&
             (!ccm || EVP_EncryptUpdate(x, NULL, &l, NULL, 64));
        CHECK(ok && !EVP_EncryptUpdate(x, buf + 16, &l, buf, 64),
              "%s: output 16 bytes into the input taken", names[i]);
        check_reason(names[i], KP_R_OVERLAPPING_BUFFERS);
        CHECK(EVP_EncryptUpdate(x, out, &l, pt, 64) && l == 64 && memcmp(out, ref, 64) == 0,
              "%s: the message after a refused overlapping update failed or differs", names[i]);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_CTX_free(y);
        EVP_CIPHER_free(c);
    }
}

/* The module under a core that offers none of the error upcalls (nor
 * anything else): it still loads, serves and fails as before, raising
 * nothing, rather than call through a NULL pointer. */
static void test_no_core_errors(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/kuai.so", dir);
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(so != NULL, "dlopen %s: %s", path, dlerror());
    if (so == NULL)
        return;
    OSSL_provider_init_fn *init;
    *(void **)&init = dlsym(so, "OSSL_provider_init");
    static const OSSL_DISPATCH none[] = {{0, NULL}};
    const OSSL_DISPATCH *out = NULL, *d;
    void *provctx = NULL;
    CHECK(init != NULL && init(NULL, none, &out, &provctx) == 1 && out != NULL,
          "OSSL_provider_init with an empty core table");
    OSSL_FUNC_provider_query_operation_fn *query = NULL;
    OSSL_FUNC_provider_teardown_fn *teardown = NULL;
    for (d = out; d != NULL && d->function_id != 0; d++) {
        if (d->function_id == OSSL_FUNC_PROVIDER_QUERY_OPERATION)
            query = OSSL_FUNC_provider_query_operation(d);
        if (d->function_id == OSSL_FUNC_PROVIDER_TEARDOWN)
            teardown = OSSL_FUNC_provider_teardown(d);
    }
    int no_cache;
    const OSSL_ALGORITHM *a = query != NULL ? query(provctx, OSSL_OP_CIPHER, &no_cache) : NULL;
    for (; a != NULL && a->algorithm_names != NULL; a++)
        if (strncmp(a->algorithm_names, "SM4-CBC", 7) == 0)
            break;
    CHECK(a != NULL && a->algorithm_names != NULL, "SM4-CBC in the provider's table");
    OSSL_FUNC_cipher_newctx_fn *newctx = NULL;
    OSSL_FUNC_cipher_freectx_fn *freectx = NULL;
    OSSL_FUNC_cipher_final_fn *final = NULL;
    for (d = a != NULL && a->algorithm_names ? a->implementation : NULL; d && d->function_id; d++) {
        if (d->function_id == OSSL_FUNC_CIPHER_NEWCTX)
            newctx = OSSL_FUNC_cipher_newctx(d);
        if (d->function_id == OSSL_FUNC_CIPHER_FREECTX)
            freectx = OSSL_FUNC_cipher_freectx(d);
        if (d->function_id == OSSL_FUNC_CIPHER_FINAL)
            final = OSSL_FUNC_cipher_final(d);
    }
    if (newctx != NULL && freectx != NULL && final != NULL) {
        ERR_clear_error();
        void *c = newctx(provctx);
        uint8_t buf[16];
        size_t outl;
        CHECK(c != NULL && final(c, buf, &outl, sizeof buf) == 0 && ERR_peek_error() == 0,
              "a final with no key and no core upcalls: refused, nothing raised");
        freectx(c);
    } else {
        CHECK(0, "SM4-CBC's newctx, freectx, final");
    }
    if (teardown != NULL)
        teardown(provctx);
    dlclose(so);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    if (!OSSL_PROVIDER_set_default_search_path(NULL, dir)) {
        printf("FAIL: cannot set the provider search path\n");
        return 1;
    }
    OSSL_PROVIDER *kuai = OSSL_PROVIDER_load(NULL, "kuai");
    OSSL_PROVIDER *dflt = OSSL_PROVIDER_load(NULL, "default");
    if (!kuai || !dflt) {
        printf("FAIL: cannot load the kuai provider from %s\n", dir);
        ERR_print_errors_fp(stdout);
        return 1;
    }
    if (!gcry_check_version(NULL))
        return 1;
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);

    int offered = 0;
    EVP_CIPHER_do_all_provided(NULL, check_covered, &offered);
    CHECK(offered > 0, "the kuai provider offers no cipher");

    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        const family *f = &families[i];
        EVP_CIPHER *ecb = fetch(f, ECB, "provider=kuai");
        if (!ecb) {
            CHECK(f->is_aes, "%s not offered by the provider", f->prefix);
            printf("SKIP %s: the kuai provider does not list it (no AES in this kuai build)\n",
                   f->prefix);
            ERR_clear_error();
            continue;
        }
        if (f->kat_file)
            test_kat(f, ecb);
        int tests_before = checks, failures_before = failures;
        for (int m = ECB; m <= GCM; m++) {
            if (m == GCM && !f->has_gcm)
                continue;
            EVP_CIPHER *c = fetch(f, m, "provider=kuai");
            CHECK(c != NULL, "%s-%s missing", f->prefix, mode_names[m]);
            if (!c)
                continue;
            CHECK(strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(c)), "kuai") == 0,
                  "%s-%s comes from kuai", f->prefix, mode_names[m]);
            char nm[64];
            snprintf(nm, sizeof nm, "%s-%s", f->prefix, mode_names[m]);
            EVP_CIPHER *ref = f->default_ref ? fetch(f, m, "provider=default") : NULL;
            if (m == GCM) {
                test_gcm(f, c, ecb);
                test_gcm_nonce_reuse(nm, c);
                test_gcm_iv_fixed_length(nm, c);
                test_gcm_iv_gen_null(nm, c);
                test_gcm_iv_gen_after_message(nm, c, ecb);
                test_gcm_tls_record_after_message(nm, c, ecb);
                test_gcm_tls_record_opened_then_sealed(nm, c);
                test_gcm_iv_gen_after_ivlen_change(nm, c);
                test_gcm_stale_tag(nm, c);
                CHECK(param_listed(EVP_CIPHER_settable_ctx_params(c),
                                   OSSL_CIPHER_PARAM_AEAD_TLS1_AAD),
                      "%s does not list %s, which it takes", nm, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD);
                test_gcm_iv_before_set(nm, c);
                if (ref) { /* the same expectations hold on OpenSSL's own provider */
                    test_gcm_nonce_reuse("default provider's", ref);
                    test_gcm_iv_before_set("default provider's", ref);
                }
            } else {
                test_block_mode(f, m, c, ecb);
                test_tls_record_params(nm, c, m == CBC);
                if (m == CBC)
                    test_tls_cbc_records(nm, c, ref, f->bs);
                test_num_param(nm, c);
                test_null_buffers(nm, c, f->bs);
                if (m != CTR)
                    test_final_null_output(nm, c, f->bs);
                if (m != CTR) {
                    test_inplace_buffered(nm, c, f->bs);
                    test_overlap_kept_tail(nm, c, f->bs);
                }
                if (ref)
                    test_num_param("default provider's", ref);
                if (f->bs > 16 && m != ECB)
                    test_iv_half_key(nm, c);
                if (m != CTR) {
                    test_padding_off_at_final(nm, c, f->bs);
                    if (ref)
                        test_padding_off_at_final("default provider's", ref, f->bs);
                }
            }
            EVP_CIPHER_free(ref);
            test_rekey(f, m, c);
            if (m == GCM && strcmp(f->prefix, "SM4") == 0)
                test_rfc8998(c);
            EVP_CIPHER_free(c);
        }
        printf("%-15s %d checks, %d failed\n", f->prefix, checks - tests_before,
               failures - failures_before);
        EVP_CIPHER_free(ecb);
    }
    test_error_reasons();
    test_aead_overlap();
    test_int_params_null_data();
    test_modes_null_input();
    kuai_prov = kuai;
    test_huge_lengths();
    test_no_core_errors(dir);
    test_libssl(dir);
    test_evp_model();
    test_evp_diff();
    test_modes();
    test_openssl_data(KUAI_SOURCE_DIR "/tests/provider/openssl-data");
    OSSL_PROVIDER_unload(kuai);
    OSSL_PROVIDER_unload(dflt);
    printf("provider EVP test: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
