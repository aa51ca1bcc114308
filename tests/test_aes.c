/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES: every backend kuai_backends() lists for AES-128/192/256, checked
 * against OpenSSL's AES (EVP), an implementation that shares no code with
 * kuai, so nothing here depends on kuai's own "ref" backend:
 *
 *  - the backend seam: table entries, the shared schedule (FIPS-197
 *    appendix A round keys, rk/drk equal to the portable expansion), and
 *    the kernels directly (enc/dec/ctr/cbc_enc/multi-key) for 1..70 blocks,
 *    counters across the 2^32, 2^64 and 2^128 carries;
 *  - FIPS-197 appendix C;
 *  - the NIST CAVP sets of the PyPI package cryptography-vectors (ECB and
 *    CBC GFSbox/KeySbox/VarKey/VarTxt/MMT, RFC 3686 CTR, GCM encrypt and
 *    decrypt with the FAIL cases) from $KUAI_CRYPTOGRAPHY_VECTORS, reported
 *    SKIPPED without it;
 *  - ECB/CBC/CTR/GCM against OpenSSL on random keys, IVs, AAD and lengths,
 *    whole, in place and in pieces; and the AESAVS Monte Carlo chain for
 *    ECB (100 x 1000 encryptions with the key updated) against OpenSSL
 *    running the same chain.
 * Cross builds (make test-cross) have no OpenSSL for the target; there the
 * portable ref backend, checked by the vectors first, is the oracle.
 */
#include "test_util.h"

#include "aes/aes.h"
#include "bytes.h"
#include "ghash/ghash.h"
#include "vectors.h"

#if KUAI_TEST_THIRD_PARTY
#include <openssl/evp.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const kuai_cipher aes_ciphers[3] = {KUAI_AES_128, KUAI_AES_192, KUAI_AES_256};

static int selected(const char *name)
{
    return !t_only_backend || strcmp(name, t_only_backend) == 0;
}

/* ---- OpenSSL, the oracle -------------------------------------------------- */

#if KUAI_TEST_THIRD_PARTY
#define ORACLE "OpenSSL"

static const EVP_CIPHER *ossl_cipher(kuai_cipher c, int mode /* 0 ECB 1 CBC 2 CTR 3 GCM */)
{
    static const EVP_CIPHER *(*const tab[3][4])(void) = {
        {EVP_aes_128_ecb, EVP_aes_128_cbc, EVP_aes_128_ctr, EVP_aes_128_gcm},
        {EVP_aes_192_ecb, EVP_aes_192_cbc, EVP_aes_192_ctr, EVP_aes_192_gcm},
        {EVP_aes_256_ecb, EVP_aes_256_cbc, EVP_aes_256_ctr, EVP_aes_256_gcm}};
    int i = c == KUAI_AES_128 ? 0 : c == KUAI_AES_192 ? 1 : 2;
    return tab[i][mode]();
}

static int ossl_crypt(kuai_cipher c, mode_op o, const uint8_t *key, const uint8_t iv[16],
                      const uint8_t *in, uint8_t *out, size_t len)
{
    return ossl_mode_crypt(ossl_cipher(c, o <= OP_ECB_DEC   ? 0
                                          : o <= OP_CBC_DEC ? 1
                                                            : 2),
                           o, key, iv, in, out, len);
}

/* OpenSSL AES-GCM, one message. enc: writes out and tag (tag_len bytes).
 * dec: returns 1 when the tag verifies, 0 when not, -1 on an API failure. */
static int ossl_gcm(kuai_cipher c, int enc, const uint8_t *key, const uint8_t *iv, size_t iv_len,
                    const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                    uint8_t *tag, size_t tag_len)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl = 0, ok = ctx && EVP_CipherInit_ex(ctx, ossl_cipher(c, 3), NULL, NULL, NULL, enc) &&
                       EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len, NULL) &&
                       EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc);
    if (ok && aad_len)
        ok = EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aad_len);
    if (ok && len)
        ok = EVP_CipherUpdate(ctx, out, &outl, in, (int)len) && (size_t)outl == len;
    int r = ok ? 1 : -1;
    if (ok && !enc)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, (int)tag_len, tag);
    if (ok) {
        uint8_t fin[16];
        int fl = 0;
        int fr = EVP_CipherFinal_ex(ctx, fin, &fl);
        if (enc)
            r = fr && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, (int)tag_len, tag) ? 1 : -1;
        else
            r = fr ? 1 : 0;
    } else {
        r = -1;
    }
    EVP_CIPHER_CTX_free(ctx);
    return r;
}

#else /* !KUAI_TEST_THIRD_PARTY */
#define ORACLE "ref (no OpenSSL here)"

/* Cross builds (make test-cross) have no OpenSSL for the target: kuai's ref
 * backend stands in as the oracle. It shares no code with the SIMD
 * backends' rounds, and the FIPS-197 and CAVP vectors check it first. */
static int ossl_crypt(kuai_cipher c, mode_op o, const uint8_t *key, const uint8_t iv[16],
                      const uint8_t *in, uint8_t *out, size_t len)
{
    kuai_key k;
    uint8_t ivc[16] = {0};
    if (iv)
        memcpy(ivc, iv, 16);
    if (kuai_key_init_backend(&k, c, key, kuai_key_size(c), "ref") != KUAI_OK)
        return 0;
    int ok = mode_op_run(o, &k, ivc, in, out, len) == KUAI_OK;
    kuai_key_wipe(&k);
    return ok;
}

static int ossl_gcm(kuai_cipher c, int enc, const uint8_t *key, const uint8_t *iv, size_t iv_len,
                    const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                    uint8_t *tag, size_t tag_len)
{
    kuai_key k;
    if (kuai_key_init_backend(&k, c, key, kuai_key_size(c), "ref") != KUAI_OK)
        return -1;
    int r = enc ? kuai_gcm_encrypt(&k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len)
                : kuai_gcm_decrypt(&k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
    kuai_key_wipe(&k);
    return r == KUAI_OK ? 1 : r == KUAI_ERR_AUTH ? 0 : -1;
}
#endif /* KUAI_TEST_THIRD_PARTY */

/* ---- the backend seam ------------------------------------------------------ */

/* FIPS-197 appendix A: the cipher keys and their last round keys. */
static const struct {
    kuai_cipher c;
    const char *key, *last_rk;
} fips197_a[] = {
    {KUAI_AES_128, "2b7e151628aed2a6abf7158809cf4f3c", "d014f9a8c9ee2589e13f0cc8b6630ca6"},
    {KUAI_AES_192, "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "e98ba06f448c773c8ecc720401002202"},
    {KUAI_AES_256, "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "fe4890d1e6188d0b046df344706c631e"},
};

static void seam_table(kuai_cipher c)
{
    const char *cn = kuai_cipher_name(c);
    const kuai_impl *const *impls = kuai_impls(c);
    for (size_t n = 0; impls[n]; n++) {
        const kuai_impl *p = impls[n];
        CHECK(p->name && p->family == KUAI_FAMILY_AES && p->available && p->expand &&
                  p->enc_blocks && p->dec_blocks && p->mk_lanes >= 1 &&
                  p->mk_lanes <= KUAI_MK_MAX_LANES && p->mk_setup && p->mk_enc && p->mk_dec,
              "%s: backend table entry %zu (%s) incomplete", cn, n, p->name ? p->name : "(null)");
        for (size_t j = 0; j < n; j++)
            CHECK(strcmp(impls[j]->name, p->name) != 0, "%s: backend %s listed twice", cn, p->name);
    }
}

/* The schedule every backend stores: appendix A's last round key, and rk/drk
 * identical to the portable expansion (aes_key.c) on random keys. */
static void seam_schedule(kuai_cipher c, const char *backend)
{
    const char *cn = kuai_cipher_name(c);
    const size_t kl = kuai_key_size(c);
    kuai_key *k = key_alloc(1);
    for (size_t i = 0; i < sizeof fips197_a / sizeof fips197_a[0]; i++) {
        if (fips197_a[i].c != c)
            continue;
        uint8_t *key, *last;
        size_t l1, l2;
        hex_decode(fips197_a[i].key, &key, &l1);
        hex_decode(fips197_a[i].last_rk, &last, &l2);
        if (key_init_ok(k, c, key, backend)) {
            const aes_sched *s = aes_sched_const(k);
            CHECK(s->nr == kl / 4 + 6 && s->nk == kl / 4, "%s/%s: nr %u nk %u", cn, backend, s->nr,
                  s->nk);
            char what[96];
            snprintf(what, sizeof what, "%s/%s FIPS-197 appendix A last round key", cn, backend);
            CHECK_MEM(s->rk[kl / 4 + 6], last, 16, what);
            snprintf(what, sizeof what, "%s/%s FIPS-197 appendix A rk[0] (the key)", cn, backend);
            CHECK_MEM(s->rk[0], key, 16, what);
        }
        free(key);
        free(last);
    }
    static aes_sched want;
    for (int t = 0; t < 8; t++) {
        uint8_t key[32];
        rng_fill(key, sizeof key);
        if (!key_init_ok(k, c, key, backend))
            break;
        aes_expand_raw(&want, key, (unsigned)kl);
        const aes_sched *s = aes_sched_const(k);
        size_t nbytes = 16 * (want.nr + 1);
        char kh[65], what[160];
        to_hex(kh, key, kl);
        snprintf(what, sizeof what, "%s/%s key %s: rk vs the portable expansion", cn, backend, kh);
        if (!CHECK_MEM(s->rk, want.rk, nbytes, what))
            break;
        snprintf(what, sizeof what, "%s/%s key %s: drk vs the portable expansion", cn, backend, kh);
        if (!CHECK_MEM(s->drk, want.drk, nbytes, what))
            break;
    }
    kuai_wipe(&want, sizeof want);
    kuai_key_wipe(k);
    free(k);
}

/* A counter start for block count nb: random, or just below the 2^32,
 * 2^64 or 2^128 carry so that the run crosses it. */
static void ctr_start(uint8_t ctr[16], size_t nb, int kind)
{
    rng_fill(ctr, 16);
    static const int tails[] = {0, 4, 8, 16};
    int tail = tails[kind & 3];
    if (tail) {
        memset(ctr + 16 - tail, 0xff, (size_t)tail);
        ctr[15] = (uint8_t)(0x100 - 1 - rng_below(nb < 200 ? nb : 200));
    }
}

/* The kernels directly, 1..70 blocks, against OpenSSL. */
static void seam_kernels(kuai_cipher c, const kuai_impl *p)
{
    const char *cn = kuai_cipher_name(c);
    const size_t maxb = 70, kl = kuai_key_size(c);
    kuai_key *k = key_alloc(1);
    uint8_t key[32];
    rng_fill(key, sizeof key);
    int ok = key_init_ok(k, c, key, p->name);
    uint8_t *in = xmalloc(maxb * 16), *want = xmalloc(maxb * 16), *got = xmalloc(maxb * 16);
    char what[160];
    for (size_t nb = 1; ok && nb <= maxb; nb++) {
        rng_fill(in, nb * 16);
        for (int dec = 0; dec <= 1; dec++) {
            ossl_crypt(c, dec ? OP_ECB_DEC : OP_ECB_ENC, key, NULL, in, want, nb * 16);
            (dec ? p->dec_blocks : p->enc_blocks)(k, in, got, nb);
            snprintf(what, sizeof what, "%s/%s %s_blocks(%zu)", cn, p->name, dec ? "dec" : "enc",
                     nb);
            CHECK_MEM(got, want, nb * 16, what);
            memcpy(got, in, nb * 16);
            (dec ? p->dec_blocks : p->enc_blocks)(k, got, got, nb);
            snprintf(what, sizeof what, "%s/%s %s_blocks(%zu) in place", cn, p->name,
                     dec ? "dec" : "enc", nb);
            CHECK_MEM(got, want, nb * 16, what);
        }
        if (p->ctr_blocks) {
            uint8_t ctr[16], ctr_want[16], ctr0[16];
            ctr_start(ctr0, nb, (int)nb);
            ossl_crypt(c, OP_CTR, key, ctr0, in, want, nb * 16);
            memcpy(ctr_want, ctr0, 16);
            for (size_t i = 0; i < nb; i++)
                ctr_inc(ctr_want, 16);
            memcpy(ctr, ctr0, 16);
            p->ctr_blocks(k, ctr, in, got, nb);
            char c0[33];
            to_hex(c0, ctr0, 16);
            snprintf(what, sizeof what, "%s/%s ctr_blocks(%zu) from %s", cn, p->name, nb, c0);
            CHECK_MEM(got, want, nb * 16, what);
            CHECK_MEM(ctr, ctr_want, 16, what);
        }
        if (p->cbc_enc_blocks) {
            uint8_t iv[16], iv0[16];
            rng_fill(iv0, 16);
            ossl_crypt(c, OP_CBC_ENC, key, iv0, in, want, nb * 16);
            memcpy(iv, iv0, 16);
            memcpy(got, in, nb * 16);
            p->cbc_enc_blocks(k, iv, got, got, nb);
            snprintf(what, sizeof what, "%s/%s cbc_enc_blocks(%zu) in place", cn, p->name, nb);
            CHECK_MEM(got, want, nb * 16, what);
            CHECK_MEM(iv, want + (nb - 1) * 16, 16, what);
        }
        if (p->cbc_dec_blocks) {
            uint8_t iv[16], iv0[16];
            rng_fill(iv0, 16);
            ossl_crypt(c, OP_CBC_DEC, key, iv0, in, want, nb * 16);
            memcpy(iv, iv0, 16);
            p->cbc_dec_blocks(k, iv, in, got, nb);
            snprintf(what, sizeof what, "%s/%s cbc_dec_blocks(%zu)", cn, p->name, nb);
            CHECK_MEM(got, want, nb * 16, what);
            CHECK_MEM(iv, in + (nb - 1) * 16, 16, what);
            memcpy(iv, iv0, 16);
            memcpy(got, in, nb * 16);
            p->cbc_dec_blocks(k, iv, got, got, nb);
            snprintf(what, sizeof what, "%s/%s cbc_dec_blocks(%zu) in place", cn, p->name, nb);
            CHECK_MEM(got, want, nb * 16, what);
            CHECK_MEM(iv, in + (nb - 1) * 16, 16, what);
        }
    }
    (void)kl;
    free(in);
    free(want);
    free(got);
    kuai_key_wipe(k);
    free(k);
}

/* mk_setup/mk_enc/mk_dec for every batch size, keys of every usable backend
 * mixed, against OpenSSL one key at a time. */
static void seam_mk(kuai_cipher c, const kuai_impl *p)
{
    static kuai_mk mk; /* 32 KiB: not on the stack */
    const char *cn = kuai_cipher_name(c);
    const char *all[MAX_BACKENDS];
    const size_t lanes = p->mk_lanes, nall = usable_backends(c, all, MAX_BACKENDS);
    const size_t kl = kuai_key_size(c);
    if (lanes < 1 || lanes > KUAI_MK_MAX_LANES || nall == 0)
        return; /* reported by seam_table */
    kuai_key *kobj = key_alloc(lanes);
    uint8_t keybytes[KUAI_MK_MAX_LANES][32];
    const kuai_key *keys[KUAI_MK_MAX_LANES];
    size_t kidx[KUAI_MK_MAX_LANES];
    uint8_t in[KUAI_MK_MAX_LANES * 16], want[sizeof in], got[sizeof in];
    char what[160];
    for (size_t i = 0; i < lanes; i++) {
        rng_fill(keybytes[i], 32);
        key_init_ok(&kobj[i], c, keybytes[i], all[i % nall]);
    }
    for (size_t n = 1; n <= lanes; n++) {
        for (size_t i = 0; i < n; i++) {
            kidx[i] = (i * 7 + n) % lanes;
            keys[i] = &kobj[kidx[i]];
        }
        rng_fill(in, n * 16);
        p->mk_setup(&mk, keys, n);
        for (int dec = 0; dec <= 1; dec++) {
            for (size_t i = 0; i < n; i++)
                ossl_crypt(c, dec ? OP_ECB_DEC : OP_ECB_ENC, keybytes[kidx[i]], NULL, in + i * 16,
                           want + i * 16, 16);
            (dec ? p->mk_dec : p->mk_enc)(&mk, in, got, n);
            snprintf(what, sizeof what, "%s/%s mk_%s, %zu lanes", cn, p->name, dec ? "dec" : "enc",
                     n);
            CHECK_MEM(got, want, n * 16, what);
            memcpy(got, in, n * 16);
            (dec ? p->mk_dec : p->mk_enc)(&mk, got, got, n);
            snprintf(what, sizeof what, "%s/%s mk_%s, %zu lanes, in place", cn, p->name,
                     dec ? "dec" : "enc", n);
            CHECK_MEM(got, want, n * 16, what);
        }
    }
    /* The fused multi-key CBC encryption, n streams of 1..3 blocks (in
     * place for odd n), against OpenSSL's CBC per stream. */
    for (size_t n = 1; p->mk_cbc_enc && n <= lanes; n++) {
        size_t nb = 1 + n % 3;
        uint8_t *buf = xmalloc(2 * n * nb * 16), ivs[KUAI_MK_MAX_LANES * 16];
        uint8_t *wantb = xmalloc(n * nb * 16);
        const uint8_t *ins[KUAI_MK_MAX_LANES];
        uint8_t *outs[KUAI_MK_MAX_LANES];
        rng_fill(buf, n * nb * 16);
        rng_fill(ivs, n * 16);
        for (size_t i = 0; i < n; i++) {
            kidx[i] = (i * 5 + n) % lanes;
            keys[i] = &kobj[kidx[i]];
            ins[i] = buf + i * nb * 16;
            outs[i] = n % 2 ? buf + i * nb * 16 : buf + (n + i) * nb * 16;
            ossl_crypt(c, OP_CBC_ENC, keybytes[kidx[i]], ivs + 16 * i, ins[i], wantb + i * nb * 16,
                       nb * 16);
        }
        p->mk_setup(&mk, keys, n);
        p->mk_cbc_enc(&mk, ivs, ins, outs, n, nb);
        snprintf(what, sizeof what, "%s/%s mk_cbc_enc, %zu streams of %zu blocks%s", cn, p->name, n,
                 nb, n % 2 ? ", in place" : "");
        for (size_t i = 0; i < n; i++) {
            if (!CHECK_MEM(outs[i], wantb + i * nb * 16, nb * 16, what))
                break;
            CHECK_MEM(ivs + 16 * i, wantb + (i * nb + nb - 1) * 16, 16, what);
        }
        free(buf);
        free(wantb);
    }
    (void)kl;
    for (size_t i = 0; i < lanes; i++)
        kuai_key_wipe(&kobj[i]);
    kuai_wipe(&mk, sizeof mk);
    free(kobj);
}

/* The portable SubWord (aes_subword_ct, the key expansion's S-box) against
 * FIPS-197 5.1.1 computed here the slow way: the inverse by search, then
 * the affine map. Every byte value in every byte position. */
static uint8_t model_gf_mul8(uint8_t a, uint8_t b)
{
    unsigned r = 0, x = a;
    for (int i = 0; i < 8; i++) {
        if (b >> i & 1)
            r ^= x;
        x <<= 1;
        if (x & 0x100)
            x ^= 0x11b;
    }
    return (uint8_t)r;
}

static uint8_t model_sbox(uint8_t x)
{
    uint8_t inv = 0;
    for (unsigned y = 1; y < 256 && x; y++)
        if (model_gf_mul8(x, (uint8_t)y) == 1)
            inv = (uint8_t)y;
    uint8_t s = 0x63;
    for (int i = 0; i < 8; i++) {
        int bit = (inv >> i ^ inv >> ((i + 4) & 7) ^ inv >> ((i + 5) & 7) ^ inv >> ((i + 6) & 7) ^
                   inv >> ((i + 7) & 7)) &
                  1;
        s ^= (uint8_t)(bit << i);
    }
    return s;
}

static void seam_subword(void)
{
    size_t bad = 0;
    for (unsigned x = 0; x < 256; x++) {
        uint8_t s = model_sbox((uint8_t)x);
        for (unsigned pos = 0; pos < 32; pos += 8) {
            /* the other bytes fixed and different, so a mix-up shows */
            uint32_t fill = 0x00525252u & ~(0xffu << pos);
            uint32_t want = (aes_subword_ct(fill) & ~(0xffu << pos)) | (uint32_t)s << pos;
            bad += aes_subword_ct(fill | x << pos) != want;
        }
    }
    CHECK(bad == 0, "aes_subword_ct: %zu of 1024 byte/position cases differ from FIPS-197", bad);
    CHECK(aes_subword_ct(0x00525252u) == 0x63000000u, "aes_subword_ct(0x00525252) = 0x%08x",
          aes_subword_ct(0x00525252u));
}

/* A backend's fused GCM kernels (kuai_impl.gcm) directly, each over its
 * own GHASH backend where that one is usable on this CPU (whatever GCM
 * would pick here: vaes's ymm kernel runs on CPUs with AVX-512 only
 * through this), against OpenSSL's CTR and ref's GHASH: 0..100 blocks and
 * a few long runs, in place and out, a counter whose low word ends the
 * call at 2^32 (kept from wrapping, as gcm.c does, and 32-bit counting
 * after it), both directions. */
static void seam_gcm(kuai_cipher c, const kuai_impl *p)
{
    const char *cn = kuai_cipher_name(c);
    const size_t maxb = 1100;
    kuai_key *k = key_alloc(1);
    uint8_t key[32], h[16];
    rng_fill(key, sizeof key);
    if (!key_init_ok(k, c, key, p->name)) {
        free(k);
        return;
    }
    ossl_crypt(c, OP_ECB_ENC, key, NULL, (const uint8_t[16]){0}, h, 16);
    unsigned char *hk = aligned_alloc(64, GHASH_KEY_BYTES),
                  *hr = aligned_alloc(64, GHASH_KEY_BYTES);
    uint8_t *in = xmalloc(maxb * 16), *want = xmalloc(maxb * 16), *got = xmalloc(maxb * 16);
    if (!hk || !hr)
        abort();
    ghash_ref.init(hr, h);
    char what[200];
    for (int e = 0; e < KUAI_GCM_FUSED_MAX; e++) {
        const struct kuai_gcm_fused *f = &p->gcm[e];
        if (!f->blocks || !f->ghash->available())
            continue;
        f->ghash->init(hk, h);
        for (size_t t = 0; t <= 108; t++) {
            size_t nb = t <= 100 ? t : 101 + rng_below(maxb - 100);
            int dec = (int)(t & 1), inplace = (int)(t % 3 == 0), edge = (int)(t % 4 == 1);
            uint8_t ctr0[16], ctr[16], ctr_want[16], y0[16], y[16], y_want[16];
            rng_fill(ctr0, 16);
            rng_fill(y0, 16);
            if (edge) /* the low word ends at 2^32 */
                store_be32(ctr0 + 12, (uint32_t)(UINT64_C(0x100000000) - nb));
            else /* far enough from it */
                ctr0[12] &= 0x7f;
            rng_fill(in, nb * 16);
            ossl_crypt(c, OP_CTR, key, ctr0, in, want, nb * 16);
            memcpy(ctr_want, ctr0, 16); /* 32-bit counting: the upper 12 bytes kept */
            store_be32(ctr_want + 12, load_be32(ctr0 + 12) + (uint32_t)nb);
            memcpy(y_want, y0, 16);
            ghash_ref.update(hr, y_want, dec ? in : want, nb);
            memcpy(ctr, ctr0, 16);
            memcpy(y, y0, 16);
            uint8_t *src = in;
            if (inplace) {
                memcpy(got, in, nb * 16);
                src = got;
            }
            f->blocks(k, hk, y, ctr, src, got, nb, !dec);
            snprintf(what, sizeof what, "%s/%s gcm over %s, %zu blocks, %s%s%s", cn, p->name,
                     f->ghash->name, nb, dec ? "decryption" : "encryption",
                     inplace ? ", in place" : "", edge ? ", counter to 2^32" : "");
            CHECK_MEM(got, want, nb * 16, what);
            CHECK_MEM(ctr, ctr_want, 16, what);
            CHECK_MEM(y, y_want, 16, what);
        }
    }
    kuai_wipe(hk, GHASH_KEY_BYTES);
    free(hk);
    free(hr);
    free(in);
    free(want);
    free(got);
    kuai_key_wipe(k);
    free(k);
}

void test_aes_backend_internals(void)
{
    group_begin("AES backend seam");
    seam_subword();
    for (int ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        seam_table(c);
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *p = impls[i];
            if (!p->available() || !selected(p->name))
                continue;
            seam_schedule(c, p->name);
            seam_kernels(c, p);
            seam_mk(c, p);
            seam_gcm(c, p);
        }
    }
    group_end();
}

/* ---- FIPS-197 appendix C ------------------------------------------------- */

static const struct {
    kuai_cipher c;
    const char *key, *ct;
} fips197_c[] = {
    {KUAI_AES_128, "000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
    {KUAI_AES_192, "000102030405060708090a0b0c0d0e0f1011121314151617",
     "dda97ca4864cdfe06eaf70a0ec0d7191"},
    {KUAI_AES_256, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "8ea2b7ca516745bfeafc49904b496089"},
};
#define FIPS197_PT "00112233445566778899aabbccddeeff"

void test_aes_fips197(void)
{
    group_begin("AES FIPS-197");
    for (size_t i = 0; i < sizeof fips197_c / sizeof fips197_c[0]; i++) {
        kuai_cipher c = fips197_c[i].c;
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        uint8_t *key, *pt, *ct, got[16], back[16];
        size_t l;
        hex_decode(fips197_c[i].key, &key, &l);
        hex_decode(FIPS197_PT, &pt, &l);
        hex_decode(fips197_c[i].ct, &ct, &l);
        for (size_t b = 0; b < nbe; b++) {
            kuai_key k;
            if (!key_init_ok(&k, c, key, be[b]))
                continue;
            char what[96];
            snprintf(what, sizeof what, "%s/%s FIPS-197 C encrypt", kuai_cipher_name(c), be[b]);
            CHECK_RC(kuai_ecb_encrypt(&k, pt, got, 16), KUAI_OK, what);
            CHECK_MEM(got, ct, 16, what);
            /* The comparison can fail: a vector with one bit flipped must
             * not match what the backend computes. */
            uint8_t bad[16];
            memcpy(bad, ct, 16);
            bad[rng_below(16)] ^= (uint8_t)(1u << rng_below(8));
            CHECK(memcmp(got, bad, 16) != 0, "%s: a corrupted vector matched", what);
            snprintf(what, sizeof what, "%s/%s FIPS-197 C decrypt", kuai_cipher_name(c), be[b]);
            CHECK_RC(kuai_ecb_decrypt(&k, ct, back, 16), KUAI_OK, what);
            CHECK_MEM(back, pt, 16, what);
            kuai_key_wipe(&k);
        }
        free(key);
        free(pt);
        free(ct);
    }
    group_end();
}

/* ---- cryptography-vectors (NIST CAVP, RFC 3686) ---------------------------- */

/* One record of a .rsp/.txt file: "NAME = hex" fields, "FAIL" flag. */
typedef enum cavp_kind { CV_ECB, CV_CBC, CV_CTR, CV_GCM } cavp_kind;

typedef struct cavp_stats {
    long records, skipped;
    long per_backend[MAX_BACKENDS]; /* records whose checks all passed */
} cavp_stats;

static kuai_cipher cipher_for_key(size_t kl)
{
    return kl == 16 ? KUAI_AES_128 : kl == 24 ? KUAI_AES_192 : kl == 32 ? KUAI_AES_256 : 0;
}

/* One record under one backend; 1 when every check passed. */
static int cavp_run(const nist_rec *r, const char *file, cavp_kind kind, const char *backend,
                    long *skipped)
{
    unsigned long long f0 = t_failed;
    char what[256];
    snprintf(what, sizeof what, "%s %s:%d %s", backend, file, r->line,
             r->decrypt ? "decrypt" : "encrypt");
    kuai_cipher c = cipher_for_key(r->key_len);
    /* A GCM FAIL record has no plaintext. */
    const int no_pt = kind == CV_GCM && r->decrypt && r->fail;
    if (!CHECK(r->key && c && r->ct && (no_pt || (r->pt && r->pt_len == r->ct_len)),
               "%s: record lacks a field or has the wrong sizes", what))
        return 0;
    kuai_key k;
    if (!key_init_ok(&k, c, r->key, backend))
        return 0;
    const size_t len = r->ct_len;
    uint8_t *out = xmalloc(len + 1), iv[16] = {0};
    if (kind == CV_GCM) {
        if (!CHECK(r->iv && r->tag && (r->aad || r->aad_len == 0), "%s: GCM record lacks a field",
                   what))
            goto done;
        /* The API takes IVs of >= 1 byte and tags of 4..16 bytes. */
        if (r->iv_len == 0 || r->tag_len < 4 || r->tag_len > 16) {
            (*skipped)++;
            goto done;
        }
        /* the one-shot calls, then the same under a template made under
         * the record's key (kuai_gcm_encrypt_with / _decrypt_with) */
        kuai_gcm_ctx tmpl;
        CHECK_RC(kuai_gcm_init(&tmpl, &k, r->iv, r->iv_len), KUAI_OK, what);
        for (int with = 0; with <= 1; with++) {
            char w2[300];
            snprintf(w2, sizeof w2, "%s%s", what, with ? ", with a template" : "");
            if (!r->decrypt) {
                uint8_t tag[16];
                CHECK_RC(with ? kuai_gcm_encrypt_with(&tmpl, &k, r->iv, r->iv_len, r->aad,
                                                      r->aad_len, r->pt, out, len, tag, r->tag_len)
                              : kuai_gcm_encrypt(&k, r->iv, r->iv_len, r->aad, r->aad_len, r->pt,
                                                 out, len, tag, r->tag_len),
                         KUAI_OK, w2);
                CHECK_MEM(out, r->ct, len, w2);
                CHECK_MEM(tag, r->tag, r->tag_len, w2);
                continue;
            }
            memset(out, 0x5a, len);
            int rc = with ? kuai_gcm_decrypt_with(&tmpl, &k, r->iv, r->iv_len, r->aad, r->aad_len,
                                                  r->ct, out, len, r->tag, r->tag_len)
                          : kuai_gcm_decrypt(&k, r->iv, r->iv_len, r->aad, r->aad_len, r->ct, out,
                                             len, r->tag, r->tag_len);
            if (r->fail) {
                CHECK_RC(rc, KUAI_ERR_AUTH, w2);
                uint8_t *zero = calloc(1, len + 1);
                CHECK_MEM(out, zero, len, w2); /* no unauthenticated plaintext */
                free(zero);
            } else {
                CHECK_RC(rc, KUAI_OK, w2);
                CHECK_MEM(out, r->pt, len, w2);
            }
        }
        kuai_gcm_wipe(&tmpl);
        goto done;
    }
    {
        mode_op op = kind == CV_ECB   ? (r->decrypt ? OP_ECB_DEC : OP_ECB_ENC)
                     : kind == CV_CBC ? (r->decrypt ? OP_CBC_DEC : OP_CBC_ENC)
                                      : OP_CTR;
        if (!CHECK(kind == CV_ECB || (r->iv && r->iv_len == 16), "%s: IV missing", what))
            goto done;
        const uint8_t *src = r->decrypt ? r->ct : r->pt, *want = r->decrypt ? r->pt : r->ct;
        if (r->iv)
            memcpy(iv, r->iv, 16);
        CHECK_RC(mode_op_run(op, &k, iv, src, out, len), KUAI_OK, what);
        CHECK_MEM(out, want, len, what);
        /* The file states one direction; the inverse must give it back. */
        mode_op inv = op == OP_ECB_ENC   ? OP_ECB_DEC
                      : op == OP_ECB_DEC ? OP_ECB_ENC
                      : op == OP_CBC_ENC ? OP_CBC_DEC
                      : op == OP_CBC_DEC ? OP_CBC_ENC
                                         : OP_CTR;
        if (r->iv)
            memcpy(iv, r->iv, 16);
        memcpy(out, want, len);
        CHECK_RC(mode_op_run(inv, &k, iv, out, out, len), KUAI_OK, what);
        CHECK_MEM(out, src, len, what);
    }
done:
    free(out);
    kuai_key_wipe(&k);
    return t_failed == f0;
}

typedef struct cavp_ctx {
    const char *name;
    cavp_kind kind;
    const char *const *be;
    size_t nbe;
    cavp_stats *st;
} cavp_ctx;

static void cavp_record(const nist_rec *r, void *arg)
{
    cavp_ctx *c = arg;
    for (size_t b = 0; b < c->nbe; b++)
        c->st->per_backend[b] += cavp_run(r, c->name, c->kind, c->be[b], &c->st->skipped);
}

/* Returns the records in the file, -1 if it is missing. */
static long cavp_file(const char *dir, const char *sub, const char *name, cavp_kind kind,
                      const char *const *be, size_t nbe, cavp_stats *st)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/ciphers/AES/%s/%s", dir, sub, name);
    cavp_ctx c = {name, kind, be, nbe, st};
    /* The GCM files have no sections: the direction is in the name. */
    long n = nist_file_read(path, name, kind == CV_GCM && strstr(name, "Decrypt") != NULL,
                            cavp_record, &c);
    if (n > 0)
        st->records += n;
    return n;
}

void test_aes_cryptography_vectors(void)
{
    const char *dir = getenv("KUAI_CRYPTOGRAPHY_VECTORS");
    if (!dir || !*dir) {
        printf("AES cryptography-vectors SKIPPED: KUAI_CRYPTOGRAPHY_VECTORS is not set (make "
               "vectors; make test sets it)\n");
        return;
    }
    group_begin("AES cryptography-vectors");
    /* One list of backends over all three key sizes: every AES backend so
     * far serves all three, and each record picks its cipher by key length. */
    const char *be[MAX_BACKENDS];
    const size_t nbe = test_backends(KUAI_AES_128, be, MAX_BACKENDS);
    static const char *const kinds[] = {"GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT"};
    static const char *const sizes[] = {"128", "192", "256"};
    cavp_stats st;
    memset(&st, 0, sizeof st);
    char name[64];
    for (int m = 0; m < 2; m++) {
        const char *sub = m ? "CBC" : "ECB";
        for (size_t i = 0; i < 5; i++)
            for (size_t s = 0; s < 3; s++) {
                snprintf(name, sizeof name, "%s%s%s.rsp", sub, kinds[i], sizes[s]);
                long n = cavp_file(dir, sub, name, m ? CV_CBC : CV_ECB, be, nbe, &st);
                CHECK(n > 0, "%s/ciphers/AES/%s/%s: missing or no records", dir, sub, name);
            }
    }
    for (size_t s = 0; s < 3; s++) {
        snprintf(name, sizeof name, "aes-%s-ctr.txt", sizes[s]);
        long n = cavp_file(dir, "CTR", name, CV_CTR, be, nbe, &st);
        CHECK(n > 0, "%s/ciphers/AES/CTR/%s: missing or no records", dir, name);
    }
    for (int d = 0; d < 2; d++)
        for (size_t s = 0; s < 3; s++) {
            snprintf(name, sizeof name, "%s%s.rsp", d ? "gcmDecrypt" : "gcmEncryptExtIV", sizes[s]);
            cavp_stats g;
            memset(&g, 0, sizeof g);
            long n = cavp_file(dir, "GCM", name, CV_GCM, be, nbe, &g);
            CHECK(n > 0, "%s/ciphers/AES/GCM/%s: missing or no records", dir, name);
            st.records += g.records;
            st.skipped += g.skipped;
            for (size_t b = 0; b < nbe; b++)
                st.per_backend[b] += g.per_backend[b];
        }
    t_note("  %ld records (ECB, CBC, CTR, GCM incl. FAIL cases); %ld record-runs skipped as the "
           "API forbids them",
           st.records, st.skipped);
    for (size_t b = 0; b < nbe; b++)
        t_note("  %-8s %ld of %ld records passed", be[b], st.per_backend[b], st.records);
    /* Every record was run by every backend: nothing may go missing. */
    for (size_t b = 0; b < nbe; b++)
        CHECK(st.per_backend[b] + st.skipped / (long)(nbe ? nbe : 1) == st.records,
              "%s: %ld of %ld records passed", be[b], st.per_backend[b], st.records);
    group_end();
}

/* ---- against OpenSSL on random inputs ------------------------------------- */

static void diff_case(kuai_cipher c, const char *backend, mode_op o, size_t len)
{
    uint8_t key[32], iv0[16];
    rng_fill(key, 32);
    rng_fill(iv0, 16);
    if (o == OP_CTR && rng_below(3) == 0)
        ctr_start(iv0, len / 16 + 1, 1 + (int)rng_below(3));
    uint8_t *in = xmalloc(len + 1), *want = xmalloc(len + 1);
    rng_fill(in, len);
    char what[192];
    snprintf(what, sizeof what, "%s/%s vs " ORACLE, kuai_cipher_name(c), backend);
    if (CHECK(ossl_crypt(c, o, key, iv0, in, want, len), "%s %s: oracle call failed", what,
              mode_op_names[o]))
        check_vs_want(c, backend, key, o, iv0, in, want, len, what);
    free(in);
    free(want);
}

/* One GCM message against OpenSSL: one-shot, in place, streamed in random
 * pieces, decrypted back, and a forged tag refused with the output zeroed. */
static void gcm_case(kuai_cipher c, const char *backend, size_t len)
{
    const char *cn = kuai_cipher_name(c);
    uint8_t key[32], iv[64], tag[16], want_tag[16];
    size_t iv_len = rng_below(4) ? 12 : 1 + rng_below(64);
    size_t aad_len = rng_below(3) ? rng_below(80) : 0;
    size_t tag_len = rng_below(2) ? 16 : 4 + rng_below(13);
    rng_fill(key, 32);
    rng_fill(iv, sizeof iv);
    uint8_t *aad = xmalloc(aad_len + 1), *in = xmalloc(len + 1), *want = xmalloc(len + 1);
    gbuf out = gbuf_new(len, rng_below(16));
    rng_fill(aad, aad_len);
    rng_fill(in, len);
    char what[192];
    snprintf(what, sizeof what, "%s/%s GCM len %zu iv %zu aad %zu tag %zu vs " ORACLE, cn, backend,
             len, iv_len, aad_len, tag_len);
    kuai_key k;
    if (!CHECK(ossl_gcm(c, 1, key, iv, iv_len, aad, aad_len, in, want, len, want_tag, tag_len) == 1,
               "%s: OpenSSL failed", what) ||
        !key_init_ok(&k, c, key, backend))
        goto done;
    CHECK_RC(kuai_gcm_encrypt(&k, iv, iv_len, aad, aad_len, in, out.p, len, tag, tag_len), KUAI_OK,
             what);
    CHECK_MEM(out.p, want, len, what);
    CHECK_MEM(tag, want_tag, tag_len, what);
    GBUF_CHECK(&out, what);

    /* in place */
    memcpy(out.p, in, len);
    CHECK_RC(kuai_gcm_encrypt(&k, iv, iv_len, aad, aad_len, out.p, out.p, len, tag, tag_len),
             KUAI_OK, what);
    CHECK_MEM(out.p, want, len, what);
    CHECK_MEM(tag, want_tag, tag_len, what);

    /* streamed: AAD and data in random pieces */
    kuai_gcm_ctx ctx;
    int rc = kuai_gcm_init(&ctx, &k, iv, iv_len);
    for (size_t off = 0; rc == KUAI_OK && off < aad_len;) {
        size_t take = 1 + rng_below(aad_len - off);
        rc = kuai_gcm_aad(&ctx, aad + off, take);
        off += take;
    }
    memset(out.p, 0, len);
    for (size_t off = 0; rc == KUAI_OK && off < len;) {
        size_t take = rng_below(2) ? 1 + rng_below(len - off) : 16 * (1 + rng_below(40));
        if (take > len - off)
            take = len - off;
        rc = kuai_gcm_encrypt_update(&ctx, in + off, out.p + off, take);
        off += take;
    }
    if (rc == KUAI_OK)
        rc = kuai_gcm_encrypt_final(&ctx, tag, tag_len);
    else
        kuai_gcm_wipe(&ctx);
    char w2[224];
    snprintf(w2, sizeof w2, "%s, streamed", what);
    CHECK_RC(rc, KUAI_OK, w2);
    CHECK_MEM(out.p, want, len, w2);
    CHECK_MEM(tag, want_tag, tag_len, w2);

    /* decrypt, and refuse a forgery (one bit of tag or ciphertext) */
    snprintf(w2, sizeof w2, "%s, decrypt", what);
    CHECK_RC(kuai_gcm_decrypt(&k, iv, iv_len, aad, aad_len, want, out.p, len, want_tag, tag_len),
             KUAI_OK, w2);
    CHECK_MEM(out.p, in, len, w2);
    uint8_t *forged = xmalloc(len + 1);
    memcpy(forged, want, len);
    uint8_t bad_tag[16];
    memcpy(bad_tag, want_tag, 16);
    if (len && rng_below(2))
        forged[rng_below(len)] ^= (uint8_t)(1u << rng_below(8));
    else
        bad_tag[rng_below(tag_len)] ^= (uint8_t)(1u << rng_below(8));
    snprintf(w2, sizeof w2, "%s, forgery", what);
    CHECK(ossl_gcm(c, 0, key, iv, iv_len, aad, aad_len, forged, want, len, bad_tag, tag_len) == 0,
          "%s: OpenSSL accepted the forgery", w2);
    CHECK_RC(kuai_gcm_decrypt(&k, iv, iv_len, aad, aad_len, forged, out.p, len, bad_tag, tag_len),
             KUAI_ERR_AUTH, w2);
    uint8_t *zero = calloc(1, len + 1);
    CHECK_MEM(out.p, zero, len, w2);
    GBUF_CHECK(&out, w2);
    free(zero);
    free(forged);
    kuai_key_wipe(&k);
done:
    free(aad);
    free(in);
    free(want);
    gbuf_free(&out);
}

void test_aes_openssl(void)
{
    group_begin("AES vs " ORACLE);
    static const size_t lens[] = {
        0,   1,   15,  16,  17,  31,  32,   33,   63,         64,
        100, 127, 128, 129, 255, 256, 1023, 4101, 65536 + 19, 300 * 1024 + 7};
    for (int ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        const char *be[MAX_BACKENDS];
        const size_t nbe = test_backends(c, be, MAX_BACKENDS);
        for (size_t b = 0; b < nbe; b++) {
            for (int o = 0; o < OP_N; o++) {
                for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
                    size_t len = o == OP_CTR ? lens[i] : lens[i] / 16 * 16;
                    diff_case(c, be[b], (mode_op)o, len);
                }
                for (int r = 0; r < 10; r++) {
                    size_t len = rng_below(3000);
                    diff_case(c, be[b], (mode_op)o, o == OP_CTR ? len : len / 16 * 16);
                }
            }
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
                gcm_case(c, be[b], lens[i]);
            for (int r = 0; r < 30; r++)
                gcm_case(c, be[b], rng_below(5000));
        }
    }
    group_end();
}

/* ---- Monte Carlo ------------------------------------------------------------
 * AESAVS section 6.4.1 (ECB): 100 rounds of 1000 chained encryptions, the
 * key updated from the last ciphertexts after each round. The CAVP MCT
 * files are not in cryptography-vectors, so OpenSSL runs the same chain;
 * 100,000 dependent encryptions and 100 key setups per backend and size. */
static void mct_step_key(uint8_t *key, size_t kl, const uint8_t prev[16], const uint8_t last[16])
{
    /* key ^= the last kl bytes of (prev || last) */
    uint8_t tail[32];
    memcpy(tail, prev, 16);
    memcpy(tail + 16, last, 16);
    for (size_t i = 0; i < kl; i++)
        key[i] ^= tail[32 - kl + i];
}

/* The chain on one kuai backend: key and pt in, the final key and
 * ciphertext out; 0 if a call failed. */
static int ecb_mct(kuai_cipher c, const char *backend, uint8_t key[32], uint8_t pt[16])
{
    const size_t kl = kuai_key_size(c);
    uint8_t prev[16] = {0};
    kuai_key k;
    int ok = 1;
    for (int i = 0; ok && i < 100; i++) {
        ok = kuai_key_init_backend(&k, c, key, kl, backend) == KUAI_OK;
        for (int j = 0; ok && j < 1000; j++) {
            memcpy(prev, pt, 16);
            ok = kuai_ecb_encrypt(&k, prev, pt, 16) == KUAI_OK;
        }
        mct_step_key(key, kl, prev, pt);
        kuai_key_wipe(&k);
    }
    return ok;
}

/* The same chain as the oracle runs it. */
#if KUAI_TEST_THIRD_PARTY
static void oracle_ecb_mct(kuai_cipher c, uint8_t key[32], uint8_t pt[16])
{
    const size_t kl = kuai_key_size(c);
    uint8_t prev[16] = {0};
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    for (int i = 0; i < 100; i++) {
        EVP_EncryptInit_ex(ctx, ossl_cipher(c, 0), NULL, key, NULL);
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        for (int j = 0; j < 1000; j++) {
            int outl;
            memcpy(prev, pt, 16);
            EVP_EncryptUpdate(ctx, pt, &outl, prev, 16);
        }
        mct_step_key(key, kl, prev, pt);
    }
    EVP_CIPHER_CTX_free(ctx);
}
#else
/* No OpenSSL in cross builds: the chain on ref. */
static void oracle_ecb_mct(kuai_cipher c, uint8_t key[32], uint8_t pt[16])
{
    ecb_mct(c, "ref", key, pt);
}
#endif

void test_aes_monte_carlo(void)
{
    group_begin("AES Monte Carlo");
    for (int ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        const size_t kl = kuai_key_size(c);
        const char *be[MAX_BACKENDS];
        const size_t nbe = test_backends(c, be, MAX_BACKENDS);
        uint8_t key0[32], pt0[16];
        rng_fill(key0, sizeof key0);
        rng_fill(pt0, sizeof pt0);
        uint8_t okey[32], opt[16];
        memcpy(okey, key0, 32);
        memcpy(opt, pt0, 16);
        oracle_ecb_mct(c, okey, opt);
        for (size_t b = 0; b < nbe; b++) {
            uint8_t key[32], pt[16];
            memcpy(key, key0, 32);
            memcpy(pt, pt0, 16);
            char what[96];
            snprintf(what, sizeof what, "%s/%s ECB Monte Carlo", kuai_cipher_name(c), be[b]);
            CHECK(ecb_mct(c, be[b], key, pt), "%s: a call failed", what);
            CHECK_MEM(pt, opt, 16, what);
            CHECK_MEM(key, okey, kl, what);
        }
    }
    group_end();
}
