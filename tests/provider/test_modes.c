/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider's XTS, CCM, CFB, OFB and CMAC (provider/kuai_prov_modes.c)
 * against OpenSSL's default provider through the same EVP calls, on random
 * keys, IVs and lengths (0, 1, 15, 16, 17, 31, 32, 33 and larger): the same
 * success or refusal at the same step, the same bytes, IV, num and tag.
 * CFB/OFB run in random pieces on one side and whole on the other. SM4-XTS
 * (IEEE) and SM4-CCM, which OpenSSL 3.0 lacks, are checked against
 * libgcrypt; uBlock (in no other library) by round trip and by split
 * against whole. Misuse: wrong key lengths, XTS equal halves, XTS data
 * under 16 bytes or over 2^24, CCM nonce/tag lengths, length mismatches,
 * AAD before the length, decryption without a tag, wrong tags.
 */
#include "provider_test.h"

#include <gcrypt.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mrs = 0x6d6f646573ULL;
static uint32_t rn(void)
{
    mrs ^= mrs << 13;
    mrs ^= mrs >> 7;
    mrs ^= mrs << 17;
    return (uint32_t)(mrs >> 11);
}
static void rbytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rn();
}

static const size_t lens[] = {0, 1, 15, 16, 17, 31, 32, 33, 100, 4096 + 5, 70001};
#define NLENS (sizeof lens / sizeof lens[0])
#define MAXLEN 70001

static EVP_CIPHER *get(const char *name, int kuai)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, kuai ? "provider=kuai" : "provider=default");
    ERR_clear_error();
    return c;
}

/* kuai's cipher name, counted as a failure where it is missing (the
 * tests that need nothing else to start) */
static EVP_CIPHER *get_present(const char *name)
{
    EVP_CIPHER *c = get(name, 1);
    CHECK(c != NULL, "%s missing", name);
    return c;
}

/* A piece length: mostly short ones across block boundaries, some long. */
static size_t piece(size_t left)
{
    size_t n = rn() % 8 == 0 ? rn() % (left + 1) : rn() % 40;
    return n < left ? n : left;
}

/* CFB/OFB: returns the output length, or -1 with the step that failed
 * negated further (-1 init, -2 update, -3 final). iv_out/num_out: the
 * context's updated IV and num after final. */
static long stream_run(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
                       const uint8_t *in, size_t len, uint8_t *out, int split, uint8_t iv_out[16],
                       unsigned *num_out)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    long r = -1;
    int l = 0;
    size_t off = 0, total = 0;
    if (!EVP_CipherInit_ex2(x, c, key, iv, enc, NULL))
        goto done;
    r = -2;
    do {
        size_t n = split ? piece(len - off) : len - off;
        if (!EVP_CipherUpdate(x, out + total, &l, in + off, (int)n))
            goto done;
        off += n;
        total += (size_t)l;
    } while (off < len);
    r = -3;
    if (!EVP_CipherFinal_ex(x, out + total, &l))
        goto done;
    total += (size_t)l;
    if (!EVP_CIPHER_CTX_get_updated_iv(x, iv_out, 16))
        goto done;
    *num_out = (unsigned)EVP_CIPHER_CTX_get_num(x);
    r = (long)total;
done:
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return r;
}

static uint8_t in_buf[MAXLEN], o1[MAXLEN], o2[MAXLEN], o3[MAXLEN];

static void test_stream(const char *name, size_t keylen, int has_ref)
{
    EVP_CIPHER *k = get(name, 1), *d = has_ref ? get(name, 0) : NULL;
    CHECK(k != NULL, "%s not offered by kuai", name);
    if (k == NULL)
        return;
    for (size_t li = 0; li < NLENS; li++) {
        for (int rep = 0; rep < 3; rep++) {
            size_t len = lens[li];
            uint8_t key[32], iv[16], iv1[16], iv2[16];
            unsigned n1 = 99, n2 = 98;
            rbytes(key, keylen);
            rbytes(iv, 16);
            rbytes(in_buf, len);
            const EVP_CIPHER *ref = d ? d : k;
            /* reference whole (kuai whole for uBlock), kuai in pieces */
            long r1 = stream_run(ref, 1, key, iv, in_buf, len, o1, 0, iv1, &n1);
            long r2 = stream_run(k, 1, key, iv, in_buf, len, o2, 1, iv2, &n2);
            CHECK(r1 == (long)len && r2 == r1 && memcmp(o1, o2, len) == 0,
                  "%s encrypt len %zu: %ld/%ld, output differs", name, len, r1, r2);
            CHECK(memcmp(iv1, iv2, 16) == 0 && n1 == n2, "%s len %zu: updated IV/num %u/%u", name,
                  len, n1, n2);
            if (d) { /* and the other way round: the reference in pieces */
                long r3 = stream_run(d, 1, key, iv, in_buf, len, o3, 1, iv1, &n1);
                long r4 = stream_run(k, 1, key, iv, in_buf, len, o2, 0, iv2, &n2);
                CHECK(r3 == r4 && memcmp(o3, o2, len) == 0 && memcmp(iv1, iv2, 16) == 0 && n1 == n2,
                      "%s encrypt whole on kuai, len %zu", name, len);
            }
            /* decrypt in pieces, both sides */
            r1 = stream_run(ref, 0, key, iv, o1, len, o3, 1, iv1, &n1);
            r2 = stream_run(k, 0, key, iv, o1, len, o2, 1, iv2, &n2);
            CHECK(r1 == (long)len && r2 == r1 && memcmp(o2, in_buf, len) == 0 &&
                      memcmp(o3, in_buf, len) == 0 && memcmp(iv1, iv2, 16) == 0 && n1 == n2,
                  "%s decrypt len %zu", name, len);
        }
    }
    /* A wrong key length is refused by both. */
    uint8_t key[64] = {0}, iv[16] = {0};
    EVP_CIPHER *sides[2] = {d, k};
    int rs[2];
    for (int s = 0; s < 2; s++) {
        if (sides[s] == NULL) {
            rs[s] = 0;
            continue;
        }
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        rs[s] = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 1, NULL) &&
                EVP_CIPHER_CTX_set_key_length(x, (int)keylen + 8) > 0 &&
                EVP_CipherInit_ex2(x, NULL, key, iv, 1, NULL);
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
    }
    CHECK(rs[0] == 0 && rs[1] == 0, "%s: key length %zu accepted", name, keylen + 8);
    /* An empty update with a NULL input or output (a caller's empty
     * message) succeeds and writes nothing, both ways, as on the default
     * provider, and the stream goes on as if it had not been made. */
    rbytes(key, keylen);
    rbytes(iv, 16);
    rbytes(in_buf, 40);
    for (int enc = 0; enc < 2; enc++) {
        for (int s = 0; s < 2; s++) {
            if (sides[s] == NULL)
                continue;
            EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
            int l1 = -1, l2 = -1, l3 = -1, l4 = 0, l5 = 0;
            int ok = EVP_CipherInit_ex2(x, sides[s], key, iv, enc, NULL) &&
                     EVP_CipherUpdate(x, o1, &l1, NULL, 0) &&
                     EVP_CipherUpdate(x, NULL, &l2, in_buf, 0) &&
                     EVP_CipherUpdate(x, o1, &l4, in_buf, 5) &&
                     EVP_CipherUpdate(x, NULL, &l3, NULL, 0) &&
                     EVP_CipherUpdate(x, o1 + 5, &l5, in_buf + 5, 35);
            CHECK(ok && l1 == 0 && l2 == 0 && l3 == 0 && l4 + l5 == 40,
                  "%s (%s) enc=%d: empty updates with NULL buffers: %d, lengths %d %d %d", name,
                  s ? "kuai" : "default", enc, ok, l1, l2, l3);
            EVP_CIPHER_CTX_free(x);
            ERR_clear_error();
            uint8_t iv_after[16];
            unsigned num_after;
            long r = stream_run(sides[s], enc, key, iv, in_buf, 40, o2, 0, iv_after, &num_after);
            CHECK(r == 40 && memcmp(o1, o2, 40) == 0,
                  "%s (%s) enc=%d: empty updates changed the output", name, s ? "kuai" : "default",
                  enc);
        }
    }
    EVP_CIPHER_free(k);
    EVP_CIPHER_free(d);
}

/* A stream mode (CTR, CFB, OFB) refuses an update whose input and output
 * overlap other than in place, and refuses it whole: after the refused
 * call, made inside a keystream block, the stream goes on as if it had not
 * been made (the keystream bytes left in the block were consumed before
 * the refusal once). */
static void test_stream_overlap(const char *name, size_t keylen)
{
    EVP_CIPHER *k = get(name, 1);
    if (k == NULL)
        return;
    uint8_t key[32], iv[16], scratch[64], whole[40];
    rbytes(key, keylen);
    rbytes(iv, 16);
    rbytes(in_buf, 40);
    for (int enc = 0; enc < 2; enc++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int l1 = 0, l2 = 0, l3 = 0, lw = 0;
        int ok =
            EVP_CipherInit_ex2(x, k, key, iv, enc, NULL) && EVP_CipherUpdate(x, o1, &l1, in_buf, 5);
        memcpy(scratch, in_buf + 5, 35);
        int refused = EVP_CipherUpdate(x, scratch + 1, &l2, scratch, 20) <= 0;
        ERR_clear_error();
        ok = ok && EVP_CipherUpdate(x, o1 + l1, &l3, in_buf + 5, 35);
        EVP_CIPHER_CTX_free(x);
        x = EVP_CIPHER_CTX_new();
        int okw = EVP_CipherInit_ex2(x, k, key, iv, enc, NULL) &&
                  EVP_CipherUpdate(x, whole, &lw, in_buf, 40);
        EVP_CIPHER_CTX_free(x);
        CHECK(ok && okw && refused && l1 + l3 == 40 && lw == 40 && memcmp(o1, whole, 40) == 0,
              "%s enc=%d: a partially overlapping update refused (%d), the stream unmoved (%d)",
              name, enc, refused, ok && memcmp(o1, whole, 40) == 0);
    }
    EVP_CIPHER_free(k);
}

/* XTS: 0 and the output in out, or the step that failed: 1 init (key), 2 update, 3 final. */
static int xts_run(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
                   const char *std, const uint8_t *in, size_t len, uint8_t *out)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int st = 1, l = 0, l2 = 0;
    if (!EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL))
        goto done;
    if (std != NULL) {
        OSSL_PARAM p[] = {OSSL_PARAM_utf8_string("xts_standard", (char *)std, 0), OSSL_PARAM_END};
        if (!EVP_CIPHER_CTX_set_params(x, p))
            goto done;
    }
    if (!EVP_CipherInit_ex2(x, NULL, key, iv, enc, NULL))
        goto done;
    st = 2;
    if (!EVP_CipherUpdate(x, out, &l, in, (int)len) || (size_t)l != len)
        goto done;
    st = 3;
    if (!EVP_CipherFinal_ex(x, out + l, &l2) || l2 != 0)
        goto done;
    st = 0;
done:
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return st;
}

static int gcry_xts(int algo, int enc, const uint8_t *key, size_t keylen, const uint8_t *iv,
                    const uint8_t *in, size_t len, uint8_t *out)
{
    gcry_cipher_hd_t h;
    int ok = gcry_cipher_open(&h, algo, GCRY_CIPHER_MODE_XTS, 0) == 0;
    ok = ok && gcry_cipher_setkey(h, key, keylen) == 0 && gcry_cipher_setiv(h, iv, 16) == 0 &&
         (enc ? gcry_cipher_encrypt(h, out, len, in, len)
              : gcry_cipher_decrypt(h, out, len, in, len)) == 0;
    gcry_cipher_close(h);
    return ok;
}

static void test_xts(const char *name, size_t keylen, int has_ref, int gcry_algo)
{
    EVP_CIPHER *k = get(name, 1), *d = has_ref ? get(name, 0) : NULL;
    CHECK(k != NULL, "%s not offered by kuai", name);
    if (k == NULL)
        return;
    static const size_t xlens[] = {0, 1, 15, 16, 17, 31, 32, 33, 100, 4096 + 5, 70001};
    for (size_t li = 0; li < sizeof xlens / sizeof xlens[0]; li++) {
        size_t len = xlens[li];
        uint8_t key[64], iv[16];
        rbytes(key, keylen);
        rbytes(iv, 16);
        rbytes(in_buf, len);
        int want = len < 16 ? 2 : 0;
        int s1 = xts_run(k, 1, key, iv, NULL, in_buf, len, o1);
        CHECK(s1 == want, "%s encrypt %zu bytes: step %d, expected %d", name, len, s1, want);
        if (d) {
            int s2 = xts_run(d, 1, key, iv, NULL, in_buf, len, o2);
            CHECK(s2 == s1 && (s1 || memcmp(o1, o2, len) == 0),
                  "%s encrypt %zu: kuai %d, OpenSSL %d", name, len, s1, s2);
        }
        if (gcry_algo && len >= 16) { /* libgcrypt's XTS is IEEE 1619 */
            int s3 = xts_run(k, 1, key, iv, "IEEE", in_buf, len, o1);
            CHECK(s3 == 0 && gcry_xts(gcry_algo, 1, key, keylen, iv, in_buf, len, o2) &&
                      memcmp(o1, o2, len) == 0,
                  "%s (IEEE) %zu bytes vs libgcrypt", name, len);
        }
        if (s1 == 0) {
            int s4 = xts_run(k, 0, key, iv, gcry_algo ? "IEEE" : NULL, o1, len, o3);
            CHECK(s4 == 0 && memcmp(o3, in_buf, len) == 0, "%s decrypt %zu bytes", name, len);
            if (!d && !gcry_algo) { /* uBlock: the two standards differ past the first block */
                int s5 = xts_run(k, 1, key, iv, "IEEE", in_buf, len, o2);
                int s6 = xts_run(k, 1, key, iv, "GB", in_buf, len, o3);
                CHECK(s5 == 0 && s6 == 0 && (len <= 16) == (memcmp(o2, o3, len) == 0),
                      "%s GB vs IEEE at %zu bytes", name, len);
            }
        }
    }
    /* Equal halves: encryption refused (as OpenSSL's AES-XTS), decryption not. */
    uint8_t key[64], iv[16];
    rbytes(key, keylen / 2);
    memcpy(key + keylen / 2, key, keylen / 2);
    rbytes(iv, 16);
    rbytes(in_buf, 64);
    CHECK(xts_run(k, 1, key, iv, NULL, in_buf, 64, o1) == 1, "%s: equal halves encrypt", name);
    int s1 = xts_run(k, 0, key, iv, NULL, in_buf, 64, o1);
    CHECK(s1 == 0, "%s: equal halves decrypt refused", name);
    {
        /* Nor does such a key, set up for decryption, encrypt after a
         * re-init for encryption without a key. */
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int l = 0;
        CHECK(EVP_DecryptInit_ex2(x, k, key, iv, NULL), "%s: equal halves decrypt init", name);
        CHECK(!EVP_EncryptInit_ex2(x, NULL, NULL, iv, NULL),
              "%s: equal halves kept for a re-init to encrypt", name);
        CHECK(!EVP_EncryptUpdate(x, o2, &l, in_buf, 64),
              "%s: equal halves encrypt after a re-init without key", name);
        uint8_t good[64];
        rbytes(good, keylen);
        CHECK(EVP_EncryptInit_ex2(x, NULL, good, iv, NULL) &&
                  EVP_EncryptUpdate(x, o2, &l, in_buf, 64) && l == 64,
              "%s: a proper key after equal halves", name);
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
    }
    if (d) {
        CHECK(xts_run(d, 1, key, iv, NULL, in_buf, 64, o2) == 1,
              "%s: OpenSSL encrypts with equal halves", name);
        CHECK(xts_run(d, 0, key, iv, NULL, in_buf, 64, o2) == 0 && memcmp(o1, o2, 64) == 0,
              "%s: equal halves decrypt differs from OpenSSL", name);
    }
    /* 2^24 bytes is one data unit's limit; 16 more is refused. */
    size_t big = ((size_t)1 << 24) + 16;
    uint8_t *bin = calloc(1, big), *bout = malloc(big), *bout2 = malloc(big);
    rbytes(key, keylen);
    if (bin && bout && bout2) {
        CHECK(xts_run(k, 1, key, iv, NULL, bin, big, bout) == 2, "%s: %zu bytes accepted", name,
              big);
        int sk = xts_run(k, 1, key, iv, NULL, bin, big - 16, bout);
        CHECK(sk == 0, "%s: 2^24 bytes refused", name);
        if (d) {
            CHECK(xts_run(d, 1, key, iv, NULL, bin, big, bout2) == 2, "%s: OpenSSL %zu", name, big);
            CHECK(xts_run(d, 1, key, iv, NULL, bin, big - 16, bout2) == 0 &&
                      memcmp(bout, bout2, big - 16) == 0,
                  "%s: 2^24 bytes differ from OpenSSL", name);
        }
    }
    free(bin);
    free(bout);
    free(bout2);
    /* An unknown xts_standard is refused (SM4, uBlock: AES-XTS ignores it). */
    if (!d) {
        CHECK(xts_run(k, 1, key, iv, "XYZ", in_buf, 32, o1) == 1, "%s: xts_standard XYZ", name);
    }
    EVP_CIPHER_free(k);
    EVP_CIPHER_free(d);
}

/* CCM as OpenSSL's evp_test runs it; returns 0 or the step that failed:
 * 1 init, 2 ivlen, 3 tag (length or value), 4 key/IV, 5 length, 6 AAD,
 * 7 data, 8 final, 9 get tag. tag: in for decryption, out for encryption.
 * announce: the length announced (-1: none). */
typedef struct ccm_args {
    const uint8_t *key, *nonce, *aad, *in;
    size_t nlen, alen, len, tlen;
    long announce;
    int no_tag, late_tag;
} ccm_args;

static int ccm_run(const EVP_CIPHER *c, int enc, const ccm_args *a, uint8_t *out, uint8_t *tag)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int st = 1, l = 0;
    memset(out, 0xa5, a->len);
    if (!EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL))
        goto done;
    st = 2;
    if (EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)a->nlen, NULL) <= 0)
        goto done;
    st = 3;
    if (!a->no_tag && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)a->tlen,
                                          enc || a->late_tag ? NULL : tag) <= 0)
        goto done;
    st = 4;
    if (!EVP_CipherInit_ex2(x, NULL, a->key, a->nonce, enc, NULL))
        goto done;
    st = 5;
    if (a->announce >= 0 && !EVP_CipherUpdate(x, NULL, &l, NULL, (int)a->announce))
        goto done;
    st = 6;
    if (a->alen > 0 && !EVP_CipherUpdate(x, NULL, &l, a->aad, (int)a->alen))
        goto done;
    st = 3;
    if (a->late_tag && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)a->tlen, tag) <= 0)
        goto done;
    st = 7;
    if (!EVP_CipherUpdate(x, out, &l, a->in, (int)a->len) || (size_t)l != a->len)
        goto done;
    st = 8;
    if (!EVP_CipherFinal_ex(x, out + l, &l) || l != 0)
        goto done;
    st = 9;
    if (enc && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, (int)a->tlen, tag) <= 0)
        goto done;
    st = 0;
done:
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return st;
}

static int gcry_sm4_ccm(const ccm_args *a, uint8_t *out, uint8_t *tag)
{
    gcry_cipher_hd_t h;
    uint64_t p[3] = {a->len, a->alen, a->tlen};
    int ok = gcry_cipher_open(&h, GCRY_CIPHER_SM4, GCRY_CIPHER_MODE_CCM, 0) == 0;
    ok = ok && gcry_cipher_setkey(h, a->key, 16) == 0 &&
         gcry_cipher_setiv(h, a->nonce, a->nlen) == 0 &&
         gcry_cipher_ctl(h, GCRYCTL_SET_CCM_LENGTHS, p, sizeof p) == 0 &&
         gcry_cipher_authenticate(h, a->aad, a->alen) == 0 &&
         gcry_cipher_encrypt(h, out, a->len ? a->len : 1, a->in, a->len) == 0 &&
         gcry_cipher_gettag(h, tag, a->tlen) == 0;
    gcry_cipher_close(h);
    return ok;
}

static void test_ccm(const char *name, size_t keylen, int has_ref, int gcry_sm4)
{
    EVP_CIPHER *k = get(name, 1), *d = has_ref ? get(name, 0) : NULL;
    CHECK(k != NULL, "%s not offered by kuai", name);
    if (k == NULL)
        return;
    static uint8_t aad[300];
    uint8_t key[32], nonce[16], t1[32], t2[32], t3[32];
    for (size_t li = 0; li < NLENS; li++) {
        for (int rep = 0; rep < 2; rep++) {
            ccm_args a = {key,
                          nonce,
                          aad,
                          in_buf,
                          7 + rn() % 7,
                          0,
                          lens[li],
                          4 + 2 * (rn() % 7),
                          (long)lens[li],
                          0,
                          0};
            static const size_t alens[] = {0, 1, 16, 24, 300};
            a.alen = alens[rn() % 5];
            if (a.len > 0xffff && a.nlen == 13)
                a.nlen = 12; /* a 2-byte length field holds at most 65535 */
            if (a.alen == 0 && rn() % 2)
                a.announce = -1; /* without AAD the length need not be announced */
            rbytes(key, keylen);
            rbytes(nonce, a.nlen);
            rbytes(aad, a.alen);
            rbytes(in_buf, a.len);
            int s1 = ccm_run(k, 1, &a, o1, t1);
            CHECK(s1 == 0, "%s encrypt len %zu nonce %zu tag %zu aad %zu: step %d", name, a.len,
                  a.nlen, a.tlen, a.alen, s1);
            if (d) {
                int s2 = ccm_run(d, 1, &a, o2, t2);
                CHECK(s2 == s1 && memcmp(o1, o2, a.len) == 0 && memcmp(t1, t2, a.tlen) == 0,
                      "%s encrypt len %zu vs OpenSSL (steps %d/%d)", name, a.len, s1, s2);
            }
            if (gcry_sm4) {
                CHECK(gcry_sm4_ccm(&a, o2, t2) && memcmp(o1, o2, a.len) == 0 &&
                          memcmp(t1, t2, a.tlen) == 0,
                      "%s len %zu vs libgcrypt", name, a.len);
            }
            /* decrypt: right tag, then (tag early or late) a wrong one */
            ccm_args b = a;
            b.in = o1;
            b.late_tag = rn() % 2;
            CHECK(ccm_run(k, 0, &b, o3, t1) == 0 && memcmp(o3, in_buf, a.len) == 0,
                  "%s decrypt len %zu", name, a.len);
            memcpy(t3, t1, 16);
            t3[rn() % a.tlen] ^= (uint8_t)(1 + rn() % 255);
            int s3 = ccm_run(k, 0, &b, o3, t3);
            size_t nz = 0;
            for (size_t i = 0; i < a.len; i++)
                nz += o3[i] != 0;
            CHECK(s3 == 7 && nz == 0, "%s wrong tag, len %zu: step %d, %zu nonzero bytes out", name,
                  a.len, s3, nz);
            if (d) {
                int s4 = ccm_run(d, 0, &b, o2, t3);
                CHECK(s4 == s3 && memcmp(o2, o3, a.len) == 0, "%s wrong tag vs OpenSSL: %d/%d",
                      name, s3, s4);
            }
        }
    }
    /* Misuse, step for step as OpenSSL's default provider (or, without one
     * for the name, the step OpenSSL's CCM fails at). */
    rbytes(key, keylen);
    rbytes(nonce, 13);
    rbytes(in_buf, 64);
    rbytes(aad, 16);
    memset(t1, 0x11, 16);
    struct {
        const char *what;
        int enc;
        ccm_args a;
        int want;
    } cases[] = {
        {"nonce 6", 1, {key, nonce, aad, in_buf, 6, 0, 32, 12, 32, 0, 0}, 2},
        {"nonce 14", 1, {key, nonce, aad, in_buf, 14, 0, 32, 12, 32, 0, 0}, 2},
        {"tag 3", 1, {key, nonce, aad, in_buf, 12, 0, 32, 3, 32, 0, 0}, 3},
        {"tag 5", 1, {key, nonce, aad, in_buf, 12, 0, 32, 5, 32, 0, 0}, 3},
        {"tag 18", 0, {key, nonce, aad, in_buf, 12, 0, 32, 18, 32, 0, 0}, 3},
        {"length announced 31, 32 given",
         1,
         {key, nonce, aad, in_buf, 12, 16, 32, 12, 31, 0, 0},
         7},
        {"length announced 33, 32 given",
         0,
         {key, nonce, aad, in_buf, 12, 16, 32, 12, 33, 0, 0},
         7},
        {"AAD before the length", 1, {key, nonce, aad, in_buf, 12, 16, 32, 12, -1, 0, 0}, 6},
        {"decrypt without a tag", 0, {key, nonce, aad, in_buf, 12, 16, 32, 12, 32, 1, 0}, 7},
        {"2^16 under a 2-byte length", 1, {key, nonce, aad, in_buf, 13, 0, 32, 12, 65536, 0, 0}, 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int sk = ccm_run(k, cases[i].enc, &cases[i].a, o1, t1);
        CHECK(sk == cases[i].want, "%s %s: step %d, expected %d", name, cases[i].what, sk,
              cases[i].want);
        if (d) {
            int sd = ccm_run(d, cases[i].enc, &cases[i].a, o2, t1);
            CHECK(sd == sk, "%s %s: kuai step %d, OpenSSL %d", name, cases[i].what, sk, sd);
        }
    }
    /* Wrong key length; tag read back at another length than made. */
    ccm_args a = {key, nonce, aad, in_buf, 12, 0, 32, 12, 32, 0, 0};
    EVP_CIPHER *sides[2] = {k, d};
    for (int s = 0; s < 2 && sides[s]; s++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int r = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 1, NULL) &&
                EVP_CIPHER_CTX_set_key_length(x, (int)keylen + 8) > 0 &&
                EVP_CipherInit_ex2(x, NULL, key, nonce, 1, NULL);
        CHECK(!r, "%s (%s): key length %zu accepted", name, s ? "OpenSSL" : "kuai", keylen + 8);
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
        CHECK(ccm_run(sides[s], 1, &a, o1, t1) == 0, "%s CCM encrypt", name);
        x = EVP_CIPHER_CTX_new();
        int l;
        r = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 1, NULL) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
            EVP_CipherInit_ex2(x, NULL, key, nonce, 1, NULL) &&
            EVP_CipherUpdate(x, o1, &l, in_buf, 32) && EVP_CipherFinal_ex(x, o1, &l);
        CHECK(r && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t2) <= 0,
              "%s (%s): 16-byte tag read of a 12-byte tag", name, s ? "OpenSSL" : "kuai");
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, t2) > 0,
              "%s (%s): 12-byte tag not read", name, s ? "OpenSSL" : "kuai");
        /* The nonce is spent: a second message under it is refused. */
        CHECK(!EVP_CipherUpdate(x, o1, &l, in_buf, 32), "%s (%s): second message, same nonce", name,
              s ? "OpenSSL" : "kuai");
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
        /* EVP_CIPHER_CTX_copy after the AAD: both copies finish the same message. */
        x = EVP_CIPHER_CTX_new();
        EVP_CIPHER_CTX *y = EVP_CIPHER_CTX_new();
        uint8_t ty[16];
        r = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 1, NULL) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
            EVP_CipherInit_ex2(x, NULL, key, nonce, 1, NULL) &&
            EVP_CipherUpdate(x, NULL, &l, NULL, 32) && EVP_CipherUpdate(x, NULL, &l, aad, 16) &&
            EVP_CIPHER_CTX_copy(y, x) && EVP_CipherUpdate(x, o1, &l, in_buf, 32) &&
            EVP_CipherUpdate(y, o2, &l, in_buf, 32) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, t2) > 0 &&
            EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_GET_TAG, 12, ty) > 0;
        CHECK(r && memcmp(o1, o2, 32) == 0 && memcmp(t2, ty, 12) == 0,
              "%s (%s): copy after the AAD", name, s ? "OpenSSL" : "kuai");
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_CTX_free(y);
        ERR_clear_error();
        /* A second data update before the tag is read (the same nonce
         * again); then the same ciphertext decrypted twice, the second time
         * with no tag set (the first one's is spent): both refused. */
        x = EVP_CIPHER_CTX_new();
        r = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 1, NULL) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
            EVP_CipherInit_ex2(x, NULL, key, nonce, 1, NULL) &&
            EVP_CipherUpdate(x, o1, &l, in_buf, 32) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, t2) > 0;
        CHECK(r, "%s (%s): encrypt", name, s ? "OpenSSL" : "kuai");
        EVP_CIPHER_CTX_free(x);
        x = EVP_CIPHER_CTX_new();
        r = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 1, NULL) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
            EVP_CipherInit_ex2(x, NULL, key, nonce, 1, NULL) &&
            EVP_CipherUpdate(x, o2, &l, in_buf, 32);
        CHECK(r && !EVP_CipherUpdate(x, o2, &l, in_buf, 32),
              "%s (%s): second data update under one nonce", name, s ? "OpenSSL" : "kuai");
        /* ... and after that failure there is no tag to read: a caller
         * that missed the failed update must not get a tag it may send
         * with what it takes for the second message (kuai handed out the
         * first message's tag; OpenSSL's default provider fails here). */
        ERR_clear_error();
        CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, t2) <= 0,
              "%s (%s): a tag read after a refused data update", name, s ? "OpenSSL" : "kuai");
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
        x = EVP_CIPHER_CTX_new();
        r = EVP_CipherInit_ex2(x, sides[s], NULL, NULL, 0, NULL) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 12, t2) > 0 &&
            EVP_CipherInit_ex2(x, NULL, key, nonce, 0, NULL) &&
            EVP_CipherUpdate(x, o3, &l, o1, 32) && memcmp(o3, in_buf, 32) == 0;
        CHECK(r, "%s (%s): decrypt", name, s ? "OpenSSL" : "kuai");
        r = EVP_CipherInit_ex2(x, NULL, NULL, nonce, 0, NULL);
        CHECK(r && !EVP_CipherUpdate(x, o3, &l, o1, 32),
              "%s (%s): a second decryption without a tag", name, s ? "OpenSSL" : "kuai");
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
        /* A tag set for a decryption that never ran, then an encryption:
         * a decryption after it, with no tag set for it, is refused (kuai
         * checked it against the tag the encryption had just made, and
         * took its own ciphertext; OpenSSL checks the stale tag). */
        x = EVP_CIPHER_CTX_new();
        memset(t3, 0x5a, 16);
        r = EVP_CipherInit_ex2(x, sides[s], key, nonce, 0, NULL) &&
            EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 12, t3) > 0 &&
            EVP_CipherInit_ex2(x, NULL, NULL, nonce, 1, NULL) &&
            EVP_CipherUpdate(x, o1, &l, in_buf, 32) && EVP_CipherFinal_ex(x, o1 + 32, &l) &&
            EVP_CipherInit_ex2(x, NULL, NULL, nonce, 0, NULL);
        CHECK(r && !EVP_CipherUpdate(x, o3, &l, o1, 32),
              "%s (%s): a decryption checked against the encryption's own tag", name,
              s ? "OpenSSL" : "kuai");
        EVP_CIPHER_CTX_free(x);
        ERR_clear_error();
    }
    EVP_CIPHER_free(k);
    EVP_CIPHER_free(d);
}

/* TLS 1.2 CCM records as libssl makes them (fixed IV, EVP_CTRL_AEAD_TLS1_AAD,
 * one in-place EVP_Cipher, or EVP_CipherUpdate as libssl 3's, per record):
 * *ret the EVP_Cipher result or the update's length (-1: refused); 0 if a
 * set-up step failed. */
static int ccm_tls_record(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t fixed[4],
                          int taglen, uint64_t seq, uint8_t *buf, size_t reclen, int *ret,
                          int update)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t aad[EVP_AEAD_TLS1_AAD_LEN];
    for (int i = 0; i < 8; i++)
        aad[i] = (uint8_t)(seq >> (56 - 8 * i));
    aad[8] = 23, aad[9] = 3, aad[10] = 3;
    size_t hdrlen = enc ? reclen - (size_t)taglen : reclen; /* a sender's: without the tag */
    aad[11] = (uint8_t)(hdrlen >> 8), aad[12] = (uint8_t)hdrlen;
    int ok = EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, taglen, NULL) > 0 &&
             EVP_CipherInit_ex2(x, NULL, key, NULL, enc, NULL) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IV_FIXED, 4, (void *)fixed) > 0 &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, EVP_AEAD_TLS1_AAD_LEN, aad) == taglen;
    int l = -1;
    if (!ok)
        *ret = -99;
    else if (update)
        *ret = EVP_CipherUpdate(x, buf, &l, buf, (int)reclen) ? l : -1;
    else
        *ret = EVP_Cipher(x, buf, buf, (unsigned)reclen);
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

static void test_ccm_tls(const char *name, size_t keylen)
{
    EVP_CIPHER *k = get(name, 1), *d = get(name, 0);
    if (k == NULL || d == NULL) {
        CHECK(0, "%s missing", name);
        EVP_CIPHER_free(k);
        EVP_CIPHER_free(d);
        return;
    }
    static uint8_t b1[2100], b2[2100];
    for (int i = 0; i < 24; i++) {
        int taglen = i % 2 ? 8 : 16; /* the CCM and CCM_8 suites */
        int up = i % 4 >= 2;
        size_t plen = i < 4 ? (size_t)i : rn() % 2000;
        size_t reclen = 8 + plen + (size_t)taglen;
        uint8_t key[32], fixed[4];
        uint64_t seq = rn();
        rbytes(key, keylen);
        rbytes(fixed, 4);
        rbytes(b1, reclen);
        memcpy(b2, b1, reclen);
        int r1, r2;
        int ok1 = ccm_tls_record(k, 1, key, fixed, taglen, seq, b1, reclen, &r1, up);
        int ok2 = ccm_tls_record(d, 1, key, fixed, taglen, seq, b2, reclen, &r2, up);
        (void)ok2;
        CHECK(ok1 && r1 == r2 && r1 > 0 && memcmp(b1, b2, reclen) == 0,
              "%s TLS record of %zu bytes, tag %d: kuai %d, OpenSSL %d", name, plen, taglen, r1,
              r2);
        /* received, on both; then damaged, on kuai */
        uint8_t rec[2100];
        memcpy(rec, b1, reclen);
        ok1 = ccm_tls_record(k, 0, key, fixed, taglen, seq, b1, reclen, &r1, up);
        ccm_tls_record(d, 0, key, fixed, taglen, seq, b2, reclen, &r2, up);
        CHECK(ok1 && r1 == r2 && r1 > 0 && memcmp(b1 + 8, b2 + 8, plen) == 0,
              "%s TLS record open, %zu bytes: kuai %d, OpenSSL %d", name, plen, r1, r2);
        rec[8 + rn() % (plen + (size_t)taglen)] ^= 1;
        ccm_tls_record(k, 0, key, fixed, taglen, seq, rec, reclen, &r1, up);
        CHECK(r1 <= 0, "%s damaged TLS record opened: %d", name, r1);
    }
    EVP_CIPHER_free(k);
    EVP_CIPHER_free(d);
}

/* A CCM decryption of 32 bytes of ct, the tag steps first: set (tag
 * length alone) if set > 0, then the tag at given bytes, then the length
 * alone again if reset > 0: whether it all went through and the data
 * update passed. */
static int ccm_tag_steps(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *nonce,
                         const uint8_t *ct, int set, const uint8_t *tag, int given, int reset)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t out[32];
    int l = 0;
    int ok = EVP_DecryptInit_ex2(x, c, NULL, NULL, NULL) &&
             (set == 0 || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, set, NULL) > 0) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, given, (void *)tag) > 0 &&
             (reset == 0 || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, reset, NULL) > 0) &&
             EVP_DecryptInit_ex2(x, NULL, key, nonce, NULL) &&
             EVP_DecryptUpdate(x, out, &l, ct, 32) && l == 32;
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

/* A CCM decryption compares its tag at the tag length M the context was
 * set up with (SET_TAG with a length alone): a tag given at another length
 * is refused, not taken as a new M (a 4-byte tag then authenticated a
 * message a context set up for 16 received); and a length set after the
 * tag drops the tag given at the old length instead of comparing part of
 * it (its first 4 bytes, for a length of 4). Without a length set up, the
 * tag given sets it, as in OpenSSL's one call. */
static void test_ccm_tag_length(const char *name)
{
    EVP_CIPHER *c = get_present(name);
    if (c == NULL)
        return;
    uint8_t key[32], nonce[7], msg[32], ct4[32], ct16[32], tag4[16], tag16[16];
    rbytes(key, sizeof key);
    rbytes(nonce, sizeof nonce);
    rbytes(msg, sizeof msg);
    rbytes(tag4, sizeof tag4);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int l = 0;
    int ok = EVP_EncryptInit_ex2(x, c, NULL, NULL, NULL) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 4, NULL) > 0 &&
             EVP_EncryptInit_ex2(x, NULL, key, nonce, NULL) &&
             EVP_EncryptUpdate(x, ct4, &l, msg, 32) && EVP_EncryptFinal_ex(x, ct4, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 4, tag4) > 0 &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0 &&
             EVP_EncryptInit_ex2(x, NULL, NULL, nonce, NULL) &&
             EVP_EncryptUpdate(x, ct16, &l, msg, 32) && EVP_EncryptFinal_ex(x, ct16, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag16) > 0;
    EVP_CIPHER_CTX_free(x);
    CHECK(ok, "%s: messages with 4- and 16-byte tags", name);
    /* tag4's bytes 4..15 are random: a 16-byte tag whose first 4 are the
     * 4-byte message's */
    CHECK(ccm_tag_steps(c, key, nonce, ct4, 0, tag4, 4, 0), "%s: a 4-byte tag given alone refused",
          name);
    CHECK(ccm_tag_steps(c, key, nonce, ct16, 16, tag16, 16, 0),
          "%s: a 16-byte tag after the length 16 refused", name);
    CHECK(ccm_tag_steps(c, key, nonce, ct4, 4, tag4, 4, 0),
          "%s: a 4-byte tag after the length 4 refused", name);
    CHECK(ccm_tag_steps(c, key, nonce, ct16, 16, tag16, 16, 16),
          "%s: the length 16 set again after a 16-byte tag: refused", name);
    CHECK(!ccm_tag_steps(c, key, nonce, ct16, 16, tag16, 8, 0),
          "%s: set up for 16, a 16-byte tag given as 8 bytes: accepted", name);
    CHECK(!ccm_tag_steps(c, key, nonce, ct4, 16, tag4, 4, 0),
          "%s: set up for 16-byte tags, a 4-byte tag authenticated the message", name);
    CHECK(!ccm_tag_steps(c, key, nonce, ct4, 0, tag4, 16, 4),
          "%s: a 16-byte tag compared at its first 4 bytes (the length set to 4 after it)", name);
    CHECK(!ccm_tag_steps(c, key, nonce, ct4, 16, tag4, 16, 4),
          "%s: set up for 16, a 16-byte tag given, the length set to 4: compared at 4 bytes", name);
    /* A tag made at one length is not read at another: set to 16 after a
     * 4-byte tag was made, GET_TAG handed out its 4 bytes followed by 12
     * of the previous message's 16-byte tag, a tag that verifies nothing.
     * (OpenSSL's default provider hands out the previous message's tag.) */
    uint8_t got[16];
    x = EVP_CIPHER_CTX_new();
    ok = EVP_EncryptInit_ex2(x, c, NULL, NULL, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0 &&
         EVP_EncryptInit_ex2(x, NULL, key, nonce, NULL) &&
         EVP_EncryptUpdate(x, ct16, &l, msg, 32) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag16) > 0 &&
         EVP_EncryptInit_ex2(x, NULL, NULL, nonce, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 4, NULL) > 0 &&
         EVP_EncryptUpdate(x, ct4, &l, msg, 32) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0;
    CHECK(ok, "%s: a 4-byte tag made, then the length 16", name);
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, got) <= 0 && ERR_peek_error() != 0,
          "%s: a tag made at 4 bytes read at 16", name);
    ERR_clear_error();
    CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 4, NULL) > 0 &&
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 4, got) <= 0,
          "%s: a tag dropped by a length change came back with the old length", name);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(c);
    ERR_clear_error();
}

/* A CCM decryption on nonce, with the 12-byte tag (NULL: none set), the
 * length announced first when announce >= 0, aad (aadlen bytes), then
 * straight to the final: its result. */
static int ccm_final_only(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *nonce,
                          const uint8_t *tag, int announce, const uint8_t *aad, int aadlen)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t out[16];
    int l = 0;
    int ok = EVP_DecryptInit_ex2(x, c, NULL, NULL, NULL) &&
             (tag == NULL || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 12, (void *)tag) > 0) &&
             EVP_DecryptInit_ex2(x, NULL, key, nonce, NULL) &&
             (announce < 0 || EVP_DecryptUpdate(x, NULL, &l, NULL, announce)) &&
             (aadlen == 0 || EVP_DecryptUpdate(x, NULL, &l, aad, aadlen)) &&
             EVP_DecryptFinal_ex(x, out, &l) && l == 0;
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

/* A CCM decryption whose data never came (the AAD, or nothing, then the
 * final) is the empty message's: the final checks its tag, the tag of the
 * AAD and no plaintext. It used to succeed with any tag, or none (as
 * OpenSSL's CCM does: its final checks nothing, and only a data update,
 * of 0 bytes, checks an empty message's tag). */
static void test_ccm_empty_final(const char *name)
{
    EVP_CIPHER *c = get_present(name);
    if (c == NULL)
        return;
    uint8_t key[32], nonce[7], aad[40], tag[12], tag0[12], bad[12], out[16];
    rbytes(key, sizeof key);
    rbytes(nonce, sizeof nonce);
    rbytes(aad, sizeof aad);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int l = 0;
    /* the tags of the empty message with and without the AAD */
    int ok = EVP_EncryptInit_ex2(x, c, key, nonce, NULL) &&
             EVP_EncryptUpdate(x, NULL, &l, NULL, 0) &&
             EVP_EncryptUpdate(x, NULL, &l, aad, sizeof aad) &&
             EVP_EncryptUpdate(x, out, &l, aad, 0) && EVP_EncryptFinal_ex(x, out, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, tag) > 0 &&
             EVP_EncryptInit_ex2(x, NULL, NULL, nonce, NULL) &&
             EVP_EncryptUpdate(x, out, &l, aad, 0) && EVP_EncryptFinal_ex(x, out, &l) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, tag0) > 0;
    EVP_CIPHER_CTX_free(x);
    CHECK(ok, "%s: the empty message's tags", name);
    memcpy(bad, tag, sizeof bad);
    bad[rn() % 12] ^= (uint8_t)(1 + rn() % 255);
    CHECK(ccm_final_only(c, key, nonce, tag, 0, aad, sizeof aad),
          "%s: AAD, then the final, under the right tag: refused", name);
    CHECK(!ccm_final_only(c, key, nonce, bad, 0, aad, sizeof aad),
          "%s: AAD, then the final, under a wrong tag: accepted", name);
    CHECK(!ccm_final_only(c, key, nonce, NULL, 0, aad, sizeof aad),
          "%s: AAD, then the final, with no tag set: accepted", name);
    CHECK(!ccm_final_only(c, key, nonce, tag, 5, NULL, 0),
          "%s: 5 bytes announced, none given, then the final: accepted", name);
    CHECK(ccm_final_only(c, key, nonce, tag0, -1, NULL, 0),
          "%s: nothing but the final, under the right tag: refused", name);
    CHECK(!ccm_final_only(c, key, nonce, tag, -1, NULL, 0),
          "%s: nothing but the final, under another message's tag: accepted", name);
    EVP_CIPHER_free(c);
    ERR_clear_error();
}

/* A context set up for TLS 1.2 CCM records as libssl sets one up, but
 * with an IV given at the init too (iv12). */
static int ccm_tls_ctx(EVP_CIPHER_CTX *x, const EVP_CIPHER *c, int enc, const uint8_t *key,
                       const uint8_t *iv12, const uint8_t fixed[4])
{
    return EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL) &&
           EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
           EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0 &&
           EVP_CipherInit_ex2(x, NULL, key, iv12, enc, NULL) &&
           EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IV_FIXED, 4, (void *)fixed) > 0;
}

/* One record of 32 bytes of msg on x, in rec (8 + 32 + 16 bytes; opening:
 * rec as sealed): 1 if the record went through. */
static int ccm_tls_one(EVP_CIPHER_CTX *x, int enc, uint64_t seq, const uint8_t *msg, uint8_t *rec)
{
    uint8_t aad[EVP_AEAD_TLS1_AAD_LEN];
    for (int i = 0; i < 8; i++)
        aad[i] = (uint8_t)(seq >> (56 - 8 * i));
    aad[8] = 23, aad[9] = 3, aad[10] = 3, aad[11] = 0;
    aad[12] = enc ? 8 + 32 : 8 + 32 + 16;
    if (enc)
        memcpy(rec + 8, msg, 32);
    int ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, EVP_AEAD_TLS1_AAD_LEN, aad) == 16 &&
             EVP_Cipher(x, rec, rec, 8 + 32 + 16) == 8 + 32 + 16;
    ERR_clear_error();
    return ok;
}

/* A sealed TLS CCM record spends its nonce (fixed IV || the sequence number
 * from the record header): the same or a lower sequence number again under
 * the same key is refused (it sealed a second record under the nonce), and
 * so is a message under the context's IV before a new one (the record's
 * nonce was left there as the IV); another key starts afresh. Opening a
 * record leaves the context's IV alone: its nonce used to become the IV a
 * later encryption on the context ran under (the sender's keystream). */
static void test_ccm_tls_nonce(const char *name)
{
    EVP_CIPHER *c = get_present(name);
    if (c == NULL)
        return;
    uint8_t key[32], key2[32], iv[12], fixed[4], msg[32], r1[56], r2[56], o[32 + 16];
    rbytes(key, sizeof key);
    rbytes(key2, sizeof key2);
    rbytes(iv, sizeof iv);
    rbytes(fixed, sizeof fixed);
    rbytes(msg, sizeof msg);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int l = 0;
    CHECK(ccm_tls_ctx(x, c, 1, key, iv, fixed) && ccm_tls_one(x, 1, 5, msg, r1),
          "%s: a TLS record sealed", name);
    CHECK(!ccm_tls_one(x, 1, 5, msg, r2), "%s: a second record sealed under sequence number 5",
          name);
    CHECK(ccm_tls_one(x, 1, 6, msg, r2), "%s: the next sequence number refused", name);
    CHECK(!ccm_tls_one(x, 1, 3, msg, r2), "%s: a record sealed under an earlier sequence number",
          name);
    CHECK(!(EVP_CipherUpdate(x, NULL, &l, NULL, 32) && EVP_CipherUpdate(x, o, &l, msg, 32)),
          "%s: a message encrypted after a record, under no new IV", name);
    ERR_clear_error();
    CHECK(EVP_CipherInit_ex2(x, NULL, key2, NULL, 1, NULL) && ccm_tls_one(x, 1, 5, msg, r2),
          "%s: sequence number 5 under another key refused", name);
    /* opened, then a message encrypted on the same context */
    EVP_CIPHER_CTX *y = EVP_CIPHER_CTX_new();
    memcpy(r2, r1, sizeof r1);
    int ok = ccm_tls_ctx(y, c, 0, key, iv, fixed) && ccm_tls_one(y, 0, 5, NULL, r2) &&
             memcmp(r2 + 8, msg, 32) == 0;
    CHECK(ok, "%s: the record opened", name);
    ok = ok && EVP_CipherInit_ex2(y, NULL, NULL, NULL, 1, NULL) &&
         EVP_CipherUpdate(y, NULL, &l, NULL, 32) && EVP_CipherUpdate(y, o, &l, msg, 32);
    CHECK(ok && memcmp(o, r1 + 8, 32) != 0,
          "%s: a message encrypted after opening a record ran under the record's nonce (%d)", name,
          ok);
    EVP_CIPHER_CTX_free(y);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(c);
    ERR_clear_error();
}

/* A TLS record header set (EVP_CTRL_AEAD_TLS1_AAD) and then a re-init with
 * a new key and IV: the next message is an ordinary one, which encrypts as
 * on a fresh context. The header used to survive the init, so that the
 * message's first update was taken for a TLS record and failed. */
static void test_ccm_tls_aad_reinit(const char *name)
{
    EVP_CIPHER *c = get_present(name);
    if (c == NULL)
        return;
    uint8_t key[32], key2[32], iv[12], fixed[4], msg[32], aad[EVP_AEAD_TLS1_AAD_LEN];
    uint8_t c1[32], c2[32], t1[16], t2[16];
    rbytes(key, sizeof key);
    rbytes(key2, sizeof key2);
    rbytes(iv, sizeof iv);
    rbytes(fixed, sizeof fixed);
    rbytes(msg, sizeof msg);
    memset(aad, 0, sizeof aad);
    aad[8] = 23, aad[9] = 3, aad[10] = 3, aad[12] = 8 + 32;
    for (int enc = 0; enc < 2; enc++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *y = EVP_CIPHER_CTX_new();
        int l = 0, n = 0;
        int ok = ccm_tls_ctx(x, c, enc, key, iv, fixed) &&
                 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, EVP_AEAD_TLS1_AAD_LEN, aad) > 0;
        CHECK(ok, "%s: a TLS record header set", name);
        ok = ok && EVP_CipherInit_ex2(x, NULL, key2, iv, 1, NULL) &&
             EVP_CipherUpdate(x, NULL, &l, NULL, 32) && EVP_CipherUpdate(x, c1, &l, msg, 32) &&
             EVP_CipherFinal_ex(x, c1 + l, &n) &&
             EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t1) > 0;
        int ref = EVP_CipherInit_ex2(y, c, NULL, NULL, 1, NULL) &&
                  EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0 &&
                  EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0 &&
                  EVP_CipherInit_ex2(y, NULL, key2, iv, 1, NULL) &&
                  EVP_CipherUpdate(y, NULL, &l, NULL, 32) && EVP_CipherUpdate(y, c2, &l, msg, 32) &&
                  EVP_CipherFinal_ex(y, c2 + l, &n) &&
                  EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_GET_TAG, 16, t2) > 0;
        CHECK(ok && ref && memcmp(c1, c2, 32) == 0 && memcmp(t1, t2, 16) == 0,
              "%s: a message after a re-init that followed a TLS record header (set %s) failed "
              "or differs (%d, %d)",
              name, enc ? "encrypting" : "decrypting", ok, ref);
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_CTX_free(y);
        ERR_clear_error();
    }
    EVP_CIPHER_free(c);
}

/* CMAC through EVP_MAC, whole or in pieces of random lengths; 0 on failure. */
static int cmac_run(int kuai, const char *cipher, const uint8_t *key, size_t keylen,
                    const uint8_t *msg, size_t len, int split, uint8_t *mac, size_t *maclen)
{
    EVP_MAC *m = EVP_MAC_fetch(NULL, "CMAC", kuai ? "provider=kuai" : "provider=default");
    EVP_MAC_CTX *x = m ? EVP_MAC_CTX_new(m) : NULL;
    OSSL_PARAM p[] = {OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)cipher, 0),
                      OSSL_PARAM_END};
    int ok = x != NULL && EVP_MAC_init(x, key, keylen, p);
    for (size_t off = 0; ok && off < len;) {
        size_t n = split ? piece(len - off) : len - off;
        ok = EVP_MAC_update(x, msg + off, n);
        off += n;
    }
    ok = ok && EVP_MAC_final(x, mac, maclen, 16);
    EVP_MAC_CTX_free(x);
    EVP_MAC_free(m);
    ERR_clear_error();
    return ok;
}

static void test_cmac(int aes)
{
    static const struct {
        const char *cipher;
        size_t keylen;
        int ref;
    } cs[] = {{"AES-128-CBC", 16, 1}, {"AES-192-CBC", 24, 1},        {"AES-256-CBC", 32, 1},
              {"SM4-CBC", 16, 1},     {"UBLOCK-128-128-CBC", 16, 0}, {"UBLOCK-128-256-CBC", 32, 0}};
    EVP_MAC *m = EVP_MAC_fetch(NULL, "CMAC", "provider=kuai");
    CHECK(m != NULL, "CMAC not offered by kuai");
    EVP_MAC_free(m);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (!aes && strncmp(cs[i].cipher, "AES", 3) == 0)
            continue;
        for (size_t li = 0; li < NLENS; li++) {
            uint8_t key[32], t1[16], t2[16];
            size_t l1 = 0, l2 = 0;
            rbytes(key, cs[i].keylen);
            rbytes(in_buf, lens[li]);
            int ok = cmac_run(1, cs[i].cipher, key, cs[i].keylen, in_buf, lens[li], 1, t1, &l1);
            CHECK(ok && l1 == 16, "CMAC %s len %zu on kuai", cs[i].cipher, lens[li]);
            if (cs[i].ref) {
                ok = cmac_run(0, cs[i].cipher, key, cs[i].keylen, in_buf, lens[li], 0, t2, &l2);
                CHECK(ok && l2 == l1 && memcmp(t1, t2, 16) == 0, "CMAC %s len %zu vs OpenSSL",
                      cs[i].cipher, lens[li]);
            } else { /* whole against split, both through kuai */
                ok = cmac_run(1, cs[i].cipher, key, cs[i].keylen, in_buf, lens[li], 0, t2, &l2);
                CHECK(ok && memcmp(t1, t2, 16) == 0, "CMAC %s len %zu split vs whole", cs[i].cipher,
                      lens[li]);
            }
        }
        uint8_t key[40] = {0}, t[16];
        size_t l;
        CHECK(!cmac_run(1, cs[i].cipher, key, cs[i].keylen + 8, in_buf, 10, 0, t, &l),
              "CMAC %s: key length %zu accepted", cs[i].cipher, cs[i].keylen + 8);
    }
    uint8_t key[32] = {0}, t[16];
    size_t l;
    CHECK(!cmac_run(1, "SM4-GCM", key, 16, in_buf, 10, 0, t, &l), "CMAC over GCM accepted");
    CHECK(!cmac_run(1, "UBLOCK-256-256-CBC", key, 32, in_buf, 10, 0, t, &l),
          "CMAC over a 256-bit block accepted");
}

/* Parameters that carry no data, or what a mode does not implement:
 * CCM's length and AAD updates report their lengths as OpenSSL's CCM does
 * (kuai's said 0); a tag read into no buffer is refused and leaves the tag
 * to be read; xts_standard and CMAC's cipher and key with a NULL data
 * pointer are refused (not dereferenced). Against OpenSSL's default
 * provider where it agrees. */
static void test_param_edges(int aes)
{
    uint8_t key[32] = {1}, nonce[7] = {2}, aad[5] = {3}, tag[12];
    const char *ccm = aes ? "AES-128-CCM" : "SM4-CCM";
    for (int s = 0; s < 2; s++) {
        EVP_CIPHER *c = get(ccm, s == 0);
        if (c == NULL)
            continue;
        const char *who = s ? "OpenSSL" : "kuai";
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int l1 = -1, l2 = -1, l3;
        int ok = EVP_EncryptInit_ex2(x, c, key, nonce, NULL) &&
                 EVP_EncryptUpdate(x, NULL, &l1, NULL, 20) &&
                 EVP_EncryptUpdate(x, NULL, &l2, aad, 5);
        CHECK(ok && l1 == 20 && l2 == 5, "%s (%s): CCM length and AAD updates report %d and %d",
              ccm, who, l1, l2);
        ok = ok && EVP_EncryptUpdate(x, o1, &l3, in_buf, 20) && l3 == 20;
        CHECK(ok, "%s (%s): CCM data", ccm, who);
        if (s == 0) { /* OpenSSL 3.0's CCM writes through the NULL buffer */
            CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, NULL) <= 0,
                  "%s: CCM tag read into a NULL buffer accepted", ccm);
            ERR_clear_error();
            CHECK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 12, tag) > 0,
                  "%s: CCM tag not readable after a refused NULL read", ccm);
        }
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_free(c);
    }
    /* xts_standard with no string */
    EVP_CIPHER *c = get("SM4-XTS", 1);
    if (c != NULL) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        OSSL_PARAM p[2] = {OSSL_PARAM_construct_utf8_string("xts_standard", NULL, 0),
                           OSSL_PARAM_END};
        p[0].data_size = 2;
        CHECK(EVP_EncryptInit_ex2(x, c, NULL, NULL, NULL) && EVP_CIPHER_CTX_set_params(x, p) <= 0,
              "SM4-XTS: xts_standard without data accepted");
        ERR_clear_error();
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_free(c);
    }
    /* CMAC: cipher name and key without data */
    EVP_MAC *m = EVP_MAC_fetch(NULL, "CMAC", "provider=kuai");
    if (m != NULL) {
        EVP_MAC_CTX *x = EVP_MAC_CTX_new(m);
        char sm4[] = "SM4-CBC";
        OSSL_PARAM pc[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, NULL, 0),
                            OSSL_PARAM_END};
        pc[0].data_size = 7;
        CHECK(x != NULL && EVP_MAC_CTX_set_params(x, pc) <= 0,
              "CMAC: a cipher name without data accepted");
        OSSL_PARAM pk[3] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, sm4, 0),
                            OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, NULL, 16),
                            OSSL_PARAM_END};
        CHECK(x != NULL && EVP_MAC_CTX_set_params(x, pk) <= 0, "CMAC: a key without data accepted");
        ERR_clear_error();
        EVP_MAC_CTX_free(x);
        EVP_MAC_free(m);
    }
}

/* CFB and OFB refuse libssl's TLS CBC record parameters, which they do not
 * implement (they used to take and ignore them), and still ignore names
 * nobody knows. */
static void test_stream_tls_params(void)
{
    uint8_t key[32] = {1};
    static const char *const streams[] = {"SM4-CFB", "SM4-OFB", "UBLOCK-128-128-CFB"};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
        EVP_CIPHER *sc = get(streams[i], 1);
        if (sc == NULL)
            continue;
        unsigned ver = 0x0303;
        size_t macsize = 20;
        OSSL_PARAM pv[2] = {OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &ver),
                            OSSL_PARAM_END};
        OSSL_PARAM pm[2] = {OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize),
                            OSSL_PARAM_END};
        OSSL_PARAM pu[2] = {OSSL_PARAM_construct_uint("kuai-no-such-parameter", &ver),
                            OSSL_PARAM_END};
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        int ok = EVP_EncryptInit_ex2(x, sc, key, key, NULL);
        CHECK(ok && EVP_CIPHER_CTX_set_params(x, pv) <= 0 && EVP_CIPHER_CTX_set_params(x, pm) <= 0,
              "%s: TLS record parameters accepted", streams[i]);
        ERR_clear_error();
        CHECK(ok && EVP_CIPHER_CTX_set_params(x, pu) > 0, "%s: an unknown parameter refused",
              streams[i]);
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_free(sc);
    }
}

/* CMAC's size and block size: 0 until it is keyed (a cipher alone is not
 * enough), then the cipher's block, on both providers (kuai answered 16
 * from the start). */
static void test_cmac_sizes(int aes)
{
    static const uint8_t key[16] = {1};
    char cipher[16];
    snprintf(cipher, sizeof cipher, "%s", aes ? "AES-128-CBC" : "SM4-CBC");
    for (int s = 0; s < 2; s++) {
        EVP_MAC *m = EVP_MAC_fetch(NULL, "CMAC", s ? "provider=default" : "provider=kuai");
        if (m == NULL)
            continue;
        const char *who = s ? "OpenSSL" : "kuai";
        EVP_MAC_CTX *x = EVP_MAC_CTX_new(m);
        CHECK(x != NULL && EVP_MAC_CTX_get_mac_size(x) == 0 && EVP_MAC_CTX_get_block_size(x) == 0,
              "CMAC (%s): a size before any cipher", who);
        OSSL_PARAM p[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
                           OSSL_PARAM_END};
        CHECK(x != NULL && EVP_MAC_CTX_set_params(x, p) > 0 && EVP_MAC_CTX_get_mac_size(x) == 0,
              "CMAC (%s): a size after the cipher %s alone", who, cipher);
        CHECK(x != NULL && EVP_MAC_init(x, key, sizeof key, NULL) > 0 &&
                  EVP_MAC_CTX_get_mac_size(x) == 16 && EVP_MAC_CTX_get_block_size(x) == 16,
              "CMAC (%s): sizes once keyed under %s", who, cipher);
        ERR_clear_error();
        EVP_MAC_CTX_free(x);
        EVP_MAC_free(m);
    }
}

/* OSSL_CIPHER_PARAM_PADDING as the default provider answers it: 1 until
 * EVP_CIPHER_CTX_set_padding, which CFB and OFB keep (meaningless to
 * them) and XTS ignores. kuai answered 0 for all three. */
static unsigned padding_param(EVP_CIPHER_CTX *x)
{
    unsigned pad = 7;
    OSSL_PARAM p[2] = {OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &pad), OSSL_PARAM_END};
    return EVP_CIPHER_CTX_get_params(x, p) > 0 ? pad : 9;
}

static void test_padding_param(int aes)
{
    static const char *const names[] = {"AES-128-CFB", "AES-256-OFB", "AES-128-XTS",
                                        "SM4-CFB",     "SM4-OFB",     "SM4-XTS"};
    uint8_t key[64] = {1}, iv[16] = {2};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!aes && strncmp(names[i], "AES", 3) == 0)
            continue;
        int xts = strstr(names[i], "XTS") != NULL;
        key[32] = 3; /* XTS: unequal halves */
        for (int s = 0; s < 2; s++) {
            EVP_CIPHER *c = get(names[i], s == 0);
            if (c == NULL) /* OpenSSL 3.0 has no SM4-XTS */
                continue;
            const char *who = s ? "OpenSSL" : "kuai";
            EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
            CHECK(EVP_EncryptInit_ex2(x, c, key, iv, NULL) > 0, "%s (%s): init", names[i], who);
            unsigned p0 = padding_param(x);
            CHECK(p0 == 1, "%s (%s): padding answered %u, not 1", names[i], who, p0);
            EVP_CIPHER_CTX_set_padding(x, 0);
            unsigned p1 = padding_param(x);
            CHECK(p1 == (xts ? 1u : 0u), "%s (%s): padding after set_padding(0) answered %u",
                  names[i], who, p1);
            EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();
            CHECK(EVP_CIPHER_CTX_copy(d, x) > 0 && padding_param(d) == p1,
                  "%s (%s): a copy answers another padding", names[i], who);
            ERR_clear_error();
            EVP_CIPHER_CTX_free(d);
            EVP_CIPHER_CTX_free(x);
            EVP_CIPHER_free(c);
        }
    }
}

/* The IV asked for as a pointer into the context (OSSL_PARAM octet_ptr),
 * as the legacy EVP_CIPHER_CTX_iv, _iv_noconst and _original_iv ask: the
 * default provider answers it, kuai answered only a copy, so those
 * functions returned NULL. Every mode with an IV, kuai's ciphers and
 * (where it has the name) the default provider's side by side. */
static void test_iv_pointer(int aes)
{
    static const char *const names[] = {
        "SM4-CBC",     "SM4-CTR",     "SM4-GCM",     "SM4-CFB",     "SM4-OFB",
        "SM4-XTS",     "SM4-CCM",     "AES-128-CBC", "AES-128-CTR", "AES-128-GCM",
        "AES-128-CFB", "AES-128-OFB", "AES-128-XTS", "AES-128-CCM", "UBLOCK-256-256-CBC"};
    uint8_t key[64], iv[32], in[48], out[64];
    rbytes(key, sizeof key);
    rbytes(iv, sizeof iv);
    rbytes(in, sizeof in);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!aes && strncmp(names[i], "AES", 3) == 0)
            continue;
        for (int s = 0; s < 2; s++) {
            EVP_CIPHER *c = get(names[i], s == 0);
            CHECK(c != NULL || s == 1, "%s not offered by kuai", names[i]);
            if (c == NULL) /* OpenSSL 3.0 has no SM4-XTS, SM4-GCM, SM4-CCM, uBlock */
                continue;
            const char *who = s ? "OpenSSL" : "kuai";
            EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
            int ivl = EVP_CIPHER_get_iv_length(c), l;
            if (strstr(names[i], "CCM") != NULL)
                ivl = 7; /* the context's nonce length (the cipher reports 12) */
            CHECK(EVP_EncryptInit_ex2(x, c, key, iv, NULL) > 0 &&
                      EVP_EncryptUpdate(x, out, &l, in, sizeof in) > 0,
                  "%s (%s): init and update", names[i], who);
            uint8_t upd[32];
            CHECK(EVP_CIPHER_CTX_get_updated_iv(x, upd, (size_t)ivl) > 0, "%s (%s): updated IV",
                  names[i], who);
            for (int u = 0; u < 2; u++) {
                const char *k = u ? OSSL_CIPHER_PARAM_UPDATED_IV : OSSL_CIPHER_PARAM_IV;
                void *ptr = NULL;
                OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_ptr(k, &ptr, 16), OSSL_PARAM_END};
                int r = EVP_CIPHER_CTX_get_params(x, p);
                CHECK(r > 0 && ptr != NULL && memcmp(ptr, u ? upd : iv, (size_t)ivl) == 0,
                      "%s (%s): %s as a pointer: %d, %s", names[i], who, k, r,
                      ptr == NULL ? "NULL" : "another IV");
            }
            ERR_clear_error();
            EVP_CIPHER_CTX_free(x);
            EVP_CIPHER_free(c);
        }
    }
}

void test_modes(void)
{
    int c0 = checks, f0 = failures;
    int aes = 0;
    EVP_CIPHER *probe = get("AES-128-CFB", 1);
    aes = probe != NULL;
    EVP_CIPHER_free(probe);
    if (!aes)
        printf("SKIP AES modes: the kuai provider does not list AES in this build\n");
    static const struct {
        const char *name;
        size_t keylen;
        int aes;
    } streams[] = {{"AES-128-CFB", 16, 1},        {"AES-192-CFB", 24, 1},
                   {"AES-256-CFB", 32, 1},        {"SM4-CFB", 16, 0},
                   {"AES-128-OFB", 16, 1},        {"AES-192-OFB", 24, 1},
                   {"AES-256-OFB", 32, 1},        {"SM4-OFB", 16, 0},
                   {"UBLOCK-128-128-CFB", 16, 0}, {"UBLOCK-128-256-OFB", 32, 0}};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        if (aes || !streams[i].aes)
            test_stream(streams[i].name, streams[i].keylen, strncmp(streams[i].name, "UBLOCK", 6));
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        if (aes || !streams[i].aes)
            test_stream_overlap(streams[i].name, streams[i].keylen);
    test_stream_overlap("SM4-CTR", 16);
    test_stream_overlap("UBLOCK-128-256-CTR", 32);
    if (aes)
        test_stream_overlap("AES-192-CTR", 24);
    if (aes) {
        test_xts("AES-128-XTS", 32, 1, 0);
        test_xts("AES-256-XTS", 64, 1, 0);
    }
    test_xts("SM4-XTS", 32, 0, GCRY_CIPHER_SM4);
    test_xts("UBLOCK-128-128-XTS", 32, 0, 0);
    test_xts("UBLOCK-128-256-XTS", 64, 0, 0);
    if (aes) {
        test_ccm("AES-128-CCM", 16, 1, 0);
        test_ccm("AES-192-CCM", 24, 1, 0);
        test_ccm("AES-256-CCM", 32, 1, 0);
        test_ccm_tls("AES-128-CCM", 16);
        test_ccm_tls("AES-256-CCM", 32);
        test_ccm_tls_nonce("AES-128-CCM");
    }
    test_ccm_tls_nonce("SM4-CCM");
    test_ccm_tls_aad_reinit("SM4-CCM");
    test_ccm_tls_aad_reinit("UBLOCK-128-256-CCM");
    if (aes)
        test_ccm_empty_final("AES-192-CCM");
    test_ccm_empty_final("SM4-CCM");
    if (aes)
        test_ccm_tag_length("AES-128-CCM");
    test_ccm_tag_length("SM4-CCM");
    test_ccm_tag_length("UBLOCK-128-256-CCM");
    test_ccm_empty_final("UBLOCK-128-128-CCM");
    test_ccm_tls_nonce("UBLOCK-128-256-CCM");
    test_ccm("SM4-CCM", 16, 0, 1);
    test_ccm("UBLOCK-128-128-CCM", 16, 0, 0);
    test_ccm("UBLOCK-128-256-CCM", 32, 0, 0);
    test_cmac(aes);
    test_param_edges(aes);
    test_padding_param(aes);
    test_iv_pointer(aes);
    test_cmac_sizes(aes);
    test_stream_tls_params();
    printf("XTS/CCM/CFB/OFB/CMAC %d checks, %d failed\n", checks - c0, failures - f0);
}
