/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES backends without AES instructions (src/aes/aes_ref.c, aes_ssse3.c,
 * aes_avx2.c): the FIPS-197 examples through every AES backend, each
 * backend against OpenSSL's AES-ECB on random keys and data (random inputs
 * reach all 256 S-box entries many times over), and each backend's
 * multi-key kernel against one-key ECB under ref. The full AES suite (CAVP,
 * modes) lives in test_aes.c.
 */
#include "test_util.h"

#include "aes/aes.h"

#if KUAI_TEST_THIRD_PARTY
#include <openssl/evp.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int selected(const char *name)
{
    return !t_only_backend || strcmp(name, t_only_backend) == 0;
}

static const kuai_cipher aes_ciphers[3] = {KUAI_AES_128, KUAI_AES_192, KUAI_AES_256};

/* FIPS-197 Appendix C (C.1, C.2, C.3): key 00 01 02 ..., plaintext
 * 00 11 22 ... ff. */
static const uint8_t fips_pt[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
static const uint8_t fips_ct[3][16] = {{0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd,
                                        0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a},
                                       {0xdd, 0xa9, 0x7c, 0xa4, 0x86, 0x4c, 0xdf, 0xe0, 0x6e, 0xaf,
                                        0x70, 0xa0, 0xec, 0x0d, 0x71, 0x91},
                                       {0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf, 0xea, 0xfc,
                                        0x49, 0x90, 0x4b, 0x49, 0x60, 0x89}};

static void fips197(void)
{
    for (unsigned ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        uint8_t key[32];
        for (unsigned i = 0; i < 32; i++)
            key[i] = (uint8_t)i;
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *im = impls[i];
            if (!selected(im->name) || !im->available())
                continue;
            kuai_key k;
            if (!key_init_ok(&k, c, key, im->name))
                continue;
            /* 37 copies: every batch width and a ragged tail. */
            enum { N = 37 };
            uint8_t in[16 * N], out[16 * N], want[16 * N], back[16 * N];
            for (unsigned b = 0; b < N; b++) {
                memcpy(in + 16 * b, fips_pt, 16);
                memcpy(want + 16 * b, fips_ct[ci], 16);
            }
            char what[96];
            for (size_t n = 1; n <= N; n += n < 20 ? 1 : 8) {
                im->enc_blocks(&k, in, out, n);
                snprintf(what, sizeof what, "%s/%s FIPS-197 C enc, %zu blocks", kuai_cipher_name(c),
                         im->name, n);
                CHECK_MEM(out, want, 16 * n, what);
                im->dec_blocks(&k, out, back, n);
                snprintf(what, sizeof what, "%s/%s FIPS-197 C dec, %zu blocks", kuai_cipher_name(c),
                         im->name, n);
                CHECK_MEM(back, in, 16 * n, what);
            }
            kuai_key_wipe(&k);
        }
    }
}

#if KUAI_TEST_THIRD_PARTY
static const EVP_CIPHER *ossl_ecb(kuai_cipher c)
{
    return c == KUAI_AES_128   ? EVP_aes_128_ecb()
           : c == KUAI_AES_192 ? EVP_aes_192_ecb()
                               : EVP_aes_256_ecb();
}

static void openssl_ecb(kuai_cipher c, const uint8_t *key, const uint8_t *in, uint8_t *out,
                        size_t len)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl = 0;
    EVP_EncryptInit_ex(ctx, ossl_ecb(c), NULL, key, NULL);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_EncryptUpdate(ctx, out, &outl, in, (int)len);
    EVP_CIPHER_CTX_free(ctx);
}

static void vs_openssl(void)
{
    enum { MAXB = 70 };
    for (unsigned ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *im = impls[i];
            if (!selected(im->name) || !im->available())
                continue;
            for (unsigned trial = 0; trial < 40; trial++) {
                uint8_t key[32], in[16 * MAXB], out[16 * MAXB], want[16 * MAXB], back[16 * MAXB];
                size_t n = 1 + rng_below(MAXB);
                rng_fill(key, sizeof key);
                rng_fill(in, sizeof in);
                kuai_key k;
                if (!key_init_ok(&k, c, key, im->name))
                    continue;
                openssl_ecb(c, key, in, want, 16 * n);
                im->enc_blocks(&k, in, out, n);
                char what[96];
                snprintf(what, sizeof what, "%s/%s enc vs OpenSSL, %zu blocks", kuai_cipher_name(c),
                         im->name, n);
                CHECK_MEM(out, want, 16 * n, what);
                im->dec_blocks(&k, want, back, n);
                snprintf(what, sizeof what, "%s/%s dec vs OpenSSL, %zu blocks", kuai_cipher_name(c),
                         im->name, n);
                CHECK_MEM(back, in, 16 * n, what);
                kuai_key_wipe(&k);
            }
        }
    }
}

#else
static void vs_openssl(void)
{
    printf("  AES vs OpenSSL: SKIPPED (built without OpenSSL: cross build)\n");
}
#endif

/* Each backend's multi-key kernel, with keys set up by ref and by the
 * backend itself (the shared schedule makes them interchangeable), against
 * one-key ECB under ref. */
static void multi_key(void)
{
    enum { L = KUAI_MK_MAX_LANES };
    for (unsigned ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *im = impls[i];
            if (!selected(im->name) || !im->available() || !im->mk_setup)
                continue;
            for (const kuai_impl *kern = im; kern; kern = kern->mk_narrow) {
                for (unsigned trial = 0; trial < 6; trial++) {
                    size_t n = 1 + rng_below(kern->mk_lanes);
                    kuai_key *keys = key_alloc(n), *refk = key_alloc(n);
                    const kuai_key *kp[L];
                    uint8_t in[16 * L], out[16 * L], want[16 * L], back[16 * L];
                    rng_fill(in, sizeof in);
                    for (size_t j = 0; j < n; j++) {
                        uint8_t key[32];
                        rng_fill(key, sizeof key);
                        key_init_ok(&refk[j], c, key, "ref");
                        key_init_ok(&keys[j], c, key, (trial & 1) ? "ref" : im->name);
                        kp[j] = &keys[j];
                        kuai_key_impl(&refk[j])->enc_blocks(&refk[j], in + 16 * j, want + 16 * j,
                                                            1);
                    }
                    kuai_mk *m = xmalloc(sizeof *m);
                    kern->mk_setup(m, kp, n);
                    kern->mk_enc(m, in, out, n);
                    char what[96];
                    snprintf(what, sizeof what, "%s/%s mk_enc (%zu lanes), %zu keys",
                             kuai_cipher_name(c), im->name, kern->mk_lanes, n);
                    CHECK_MEM(out, want, 16 * n, what);
                    kern->mk_dec(m, out, back, n);
                    snprintf(what, sizeof what, "%s/%s mk_dec (%zu lanes), %zu keys",
                             kuai_cipher_name(c), im->name, kern->mk_lanes, n);
                    CHECK_MEM(back, in, 16 * n, what);
                    free(m);
                    free(keys);
                    free(refk);
                }
            }
        }
    }
}

/* Fused CTR, where a backend has one, against counter blocks through ref,
 * including a counter that carries across 64 bits. */
static void ctr_fused(void)
{
    enum { MAXB = 80 };
    for (unsigned ci = 0; ci < 3; ci++) {
        kuai_cipher c = aes_ciphers[ci];
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *im = impls[i];
            if (!selected(im->name) || !im->available() || !im->ctr_blocks)
                continue;
            for (unsigned trial = 0; trial < 20; trial++) {
                uint8_t key[32], ctr[16], ctr0[16], cb[16 * MAXB], in[16 * MAXB], out[16 * MAXB],
                    want[16 * MAXB];
                size_t n = 1 + rng_below(MAXB);
                rng_fill(key, sizeof key);
                rng_fill(in, sizeof in);
                rng_fill(ctr, sizeof ctr);
                if (trial & 1)
                    memset(ctr + 8, 0xff, 7); /* low 64 bits near wrap */
                memcpy(ctr0, ctr, 16);
                kuai_key k, r;
                key_init_ok(&k, c, key, im->name);
                key_init_ok(&r, c, key, "ref");
                for (size_t b = 0; b < n; b++) {
                    memcpy(cb + 16 * b, ctr0, 16);
                    ctr_inc(ctr0, 16);
                }
                kuai_key_impl(&r)->enc_blocks(&r, cb, want, n);
                for (size_t j = 0; j < 16 * n; j++)
                    want[j] ^= in[j];
                im->ctr_blocks(&k, ctr, in, out, n);
                char what[96];
                snprintf(what, sizeof what, "%s/%s ctr_blocks, %zu blocks", kuai_cipher_name(c),
                         im->name, n);
                CHECK_MEM(out, want, 16 * n, what);
                CHECK_MEM(ctr, ctr0, 16, "counter after ctr_blocks");
            }
        }
    }
}

void test_aes_sw(void)
{
    group_begin("aes-sw fips-197");
    fips197();
    group_end();
    group_begin("aes-sw vs openssl");
    vs_openssl();
    group_end();
    group_begin("aes-sw multi-key");
    multi_key();
    ctr_fused();
    group_end();
}
