/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `kuai_bench --modes-ext`: XTS, CCM, CFB, CMAC and key wrap (KW of MSG
 * bytes: 6 * MSG / 8 chained block operations) rows for every backend of
 * every 128-bit-block cipher, each beside the same backend's ECB (the ratio
 * the XTS target is stated in) and beside OpenSSL (AES) and libgcrypt (SM4)
 * doing the same mode on the same message size.
 *
 * Each row: one message of MSG bytes per call (XTS: one data unit), calls
 * repeated for ~0.1 s of the thread's CPU time (CLOCK_THREAD_CPUTIME_ID:
 * time spent descheduled on a shared machine does not count), best of 5
 * such runs; MiB/s. A quick look, not the protocol of the main benchmark.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "kuai.h"

/* libgcrypt only in kuai_bench (KUAI_BENCH_GCRYPT, as bench.c): `kuai speed`
 * links this file too and must not need libgcrypt; its SM4 XTS/CCM/CMAC rows
 * then have no yardstick. */
#ifndef KUAI_BENCH_GCRYPT
#define KUAI_BENCH_GCRYPT 0
#endif
#if KUAI_BENCH_GCRYPT
#include <gcrypt.h>
#endif
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MSG 4096

typedef enum {
    M_ECB,
    M_XTS_ENC,
    M_XTS_DEC_GB,
    M_CCM_ENC,
    M_CCM_DEC,
    M_CFB_DEC,
    M_CMAC,
    M_KW,
    M_N
} mode;
static const char *const mode_names[M_N] = {"ECB enc", "XTS enc", "XTS-GB dec", "CCM enc",
                                            "CCM dec", "CFB dec", "CMAC",       "KW wrap"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct job {
    mode m;
    const kuai_key *k1, *k2;
    EVP_CIPHER_CTX *ossl;
    EVP_MAC_CTX *mac;
#if KUAI_BENCH_GCRYPT
    gcry_cipher_hd_t gc;
#endif
    uint8_t *buf, *wrapped, iv[16], tag[16]; /* wrapped: MSG + 8 bytes (KW) */
    int kind;                                /* 0 kuai, 1 OpenSSL, 2 libgcrypt */
} job;

static void fail(const char *what)
{
    fprintf(stderr, "kuai_bench --modes-ext: %s failed\n", what);
    exit(1);
}

static void run_once(job *j)
{
    static const uint8_t aad[16];
    int outl;
    if (j->kind == 0) {
        int rc = 0;
        switch (j->m) {
        case M_ECB:
            rc = kuai_ecb_encrypt(j->k1, j->buf, j->buf, MSG);
            break;
        case M_XTS_ENC:
            rc = kuai_xts_encrypt(j->k1, j->k2, j->iv, j->buf, j->buf, MSG, KUAI_XTS_IEEE1619);
            break;
        case M_XTS_DEC_GB:
            rc = kuai_xts_decrypt(j->k1, j->k2, j->iv, j->buf, j->buf, MSG, KUAI_XTS_GB17964);
            break;
        case M_CCM_ENC:
            rc = kuai_ccm_encrypt(j->k1, j->iv, 12, aad, 16, j->buf, j->buf, MSG, j->tag, 16);
            break;
        case M_CCM_DEC:
            /* the whole pass runs whether the tag matches or not (then
             * the output is zeroed) */
            rc = kuai_ccm_decrypt(j->k1, j->iv, 12, aad, 16, j->buf, j->buf, MSG, j->tag, 16);
            rc = rc == KUAI_ERR_AUTH ? 0 : rc;
            break;
        case M_CFB_DEC:
            rc = kuai_cfb_decrypt(j->k1, j->iv, j->buf, j->buf, MSG);
            break;
        case M_KW:
            rc = kuai_kw_wrap(j->k1, j->buf, MSG, j->wrapped);
            break;
        default:
            rc = kuai_cmac(j->k1, j->buf, MSG, j->tag, 16);
        }
        if (rc)
            fail(mode_names[j->m]);
    } else if (j->kind == 1) {
        if (j->m == M_CMAC) {
            size_t ol;
            if (!EVP_MAC_init(j->mac, NULL, 0, NULL) || !EVP_MAC_update(j->mac, j->buf, MSG) ||
                !EVP_MAC_final(j->mac, j->tag, &ol, 16))
                fail("EVP_MAC");
            return;
        }
        /* KW: no IV (an IV given would be a custom integrity value) */
        if (!EVP_CipherInit_ex(j->ossl, NULL, NULL, NULL, j->m == M_KW ? NULL : j->iv, -1))
            fail("EVP_CipherInit_ex");
        if (j->m == M_CCM_ENC && (!EVP_CipherUpdate(j->ossl, NULL, &outl, NULL, MSG) ||
                                  !EVP_CipherUpdate(j->ossl, NULL, &outl, aad, 16)))
            fail("EVP CCM lengths");
        if (!EVP_CipherUpdate(j->ossl, j->m == M_KW ? j->wrapped : j->buf, &outl, j->buf, MSG))
            fail("EVP_CipherUpdate");
        if (j->m == M_CCM_ENC && (!EVP_CipherFinal_ex(j->ossl, j->tag, &outl) ||
                                  !EVP_CIPHER_CTX_ctrl(j->ossl, EVP_CTRL_AEAD_GET_TAG, 16, j->tag)))
            fail("EVP CCM tag");
    } else {
#if KUAI_BENCH_GCRYPT
        if (j->m == M_CMAC) {
            gcry_mac_hd_t h = (gcry_mac_hd_t)(void *)j->gc;
            size_t tl = 16;
            if (gcry_mac_reset(h) || gcry_mac_write(h, j->buf, MSG) ||
                gcry_mac_read(h, j->tag, &tl))
                fail("gcry_mac");
            return;
        }
        if (j->m == M_KW) {
            if (gcry_cipher_encrypt(j->gc, j->wrapped, MSG + 8, j->buf, MSG))
                fail("gcry_cipher_encrypt (AESWRAP)");
            return;
        }
        if (gcry_cipher_setiv(j->gc, j->iv, j->m == M_CCM_ENC ? 12 : 16))
            fail("gcry_cipher_setiv");
        if (j->m == M_CCM_ENC) {
            uint64_t lens[3] = {MSG, 16, 16};
            if (gcry_cipher_ctl(j->gc, GCRYCTL_SET_CCM_LENGTHS, lens, sizeof lens) ||
                gcry_cipher_authenticate(j->gc, aad, 16))
                fail("gcry CCM");
        }
        gcry_error_t e = j->m == M_CFB_DEC ? gcry_cipher_decrypt(j->gc, j->buf, MSG, NULL, 0)
                                           : gcry_cipher_encrypt(j->gc, j->buf, MSG, NULL, 0);
        if (e)
            fail("gcry_cipher_encrypt");
        if (j->m == M_CCM_ENC && gcry_cipher_gettag(j->gc, j->tag, 16))
            fail("gcry_cipher_gettag");
#endif
    }
}

/* MiB/s, best of 5 runs of ~0.1 s. */
static double measure(job *j)
{
    double best = 0;
    for (int r = 0; r < 5; r++) {
        long n = 0;
        double t0 = now(), t;
        do {
            for (int i = 0; i < 16; i++)
                run_once(j);
            n += 16;
        } while ((t = now() - t0) < 0.1);
        double mibs = (double)n * MSG / t / 1048576.0;
        best = mibs > best ? mibs : best;
    }
    return best;
}

static const EVP_CIPHER *ossl_cipher(kuai_cipher c, mode m)
{
    if (c == KUAI_AES_128)
        return m == M_XTS_ENC   ? EVP_aes_128_xts()
               : m == M_CCM_ENC ? EVP_aes_128_ccm()
               : m == M_CFB_DEC ? EVP_aes_128_cfb128()
               : m == M_ECB     ? EVP_aes_128_ecb()
               : m == M_KW      ? EVP_aes_128_wrap()
                                : NULL;
    if (c == KUAI_AES_256)
        return m == M_XTS_ENC   ? EVP_aes_256_xts()
               : m == M_CCM_ENC ? EVP_aes_256_ccm()
               : m == M_CFB_DEC ? EVP_aes_256_cfb128()
               : m == M_ECB     ? EVP_aes_256_ecb()
               : m == M_KW      ? EVP_aes_256_wrap()
                                : NULL;
    if (c == KUAI_SM4)
        return m == M_ECB ? EVP_sm4_ecb() : m == M_CFB_DEC ? EVP_sm4_cfb128() : NULL;
    return NULL;
}

/* The yardstick for (c, m): OpenSSL for AES (and SM4 ECB/CFB), libgcrypt
 * for SM4's XTS/CCM/CMAC; 0 when neither has it. */
static double yardstick(kuai_cipher c, mode m, uint8_t *buf, uint8_t *wrapped, const uint8_t *key,
                        const char **who)
{
    job j;
    memset(&j, 0, sizeof j);
    j.m = m;
    j.buf = buf;
    j.wrapped = wrapped;
    double r = 0;
    size_t kl = kuai_key_size(c);
    const EVP_CIPHER *ci = ossl_cipher(c, m);
    if (m == M_CMAC && c != KUAI_SM4 && (c == KUAI_AES_128 || c == KUAI_AES_256)) {
        EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
        j.mac = EVP_MAC_CTX_new(mac);
        OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(
                              OSSL_MAC_PARAM_CIPHER,
                              (char *)(c == KUAI_AES_128 ? "AES-128-CBC" : "AES-256-CBC"), 0),
                          OSSL_PARAM_construct_end()};
        if (!j.mac || !EVP_MAC_init(j.mac, key, kl, p))
            fail("EVP_MAC_init");
        j.kind = 1;
        *who = "OpenSSL";
        r = measure(&j);
        EVP_MAC_CTX_free(j.mac);
        EVP_MAC_free(mac);
    } else if (ci) {
        j.ossl = EVP_CIPHER_CTX_new();
        int enc = m != M_CFB_DEC;
        EVP_CIPHER_CTX_set_flags(j.ossl, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
        if (!EVP_CipherInit_ex(j.ossl, ci, NULL, NULL, NULL, enc) ||
            (m == M_CCM_ENC && (!EVP_CIPHER_CTX_ctrl(j.ossl, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) ||
                                !EVP_CIPHER_CTX_ctrl(j.ossl, EVP_CTRL_AEAD_SET_TAG, 16, NULL))) ||
            !EVP_CipherInit_ex(j.ossl, NULL, NULL, key, m == M_ECB || m == M_KW ? NULL : j.iv, enc))
            fail("EVP_CipherInit_ex");
        EVP_CIPHER_CTX_set_padding(j.ossl, 0);
        j.kind = 1;
        *who = "OpenSSL";
        r = measure(&j);
        EVP_CIPHER_CTX_free(j.ossl);
    }
#if KUAI_BENCH_GCRYPT
    else if (c == KUAI_SM4 && m != M_XTS_DEC_GB && m != M_CCM_DEC) {
        j.kind = 2;
        *who = "libgcrypt";
        if (m == M_CMAC) {
            gcry_mac_hd_t h;
            if (gcry_mac_open(&h, GCRY_MAC_CMAC_SM4, 0, NULL) || gcry_mac_setkey(h, key, 16))
                fail("gcry_mac_open");
            j.gc = (gcry_cipher_hd_t)(void *)h;
            r = measure(&j);
            gcry_mac_close(h);
        } else {
            int gm = m == M_XTS_ENC   ? GCRY_CIPHER_MODE_XTS
                     : m == M_CCM_ENC ? GCRY_CIPHER_MODE_CCM
                     : m == M_KW      ? GCRY_CIPHER_MODE_AESWRAP
                                      : GCRY_CIPHER_MODE_CFB;
            if (gcry_cipher_open(&j.gc, GCRY_CIPHER_SM4, gm, 0) ||
                gcry_cipher_setkey(j.gc, key, m == M_XTS_ENC ? 32 : 16))
                fail("gcry_cipher_open");
            r = measure(&j);
            gcry_cipher_close(j.gc);
        }
    }
#endif
    return r;
}

int kuai_bench_modes_ext(const char *name, int argc, char **argv)
{
    /* alone: another option (--json FILE, --cipher, ...) was ignored, and
     * the run ended with exit 0 and no report written */
    if (argc > 1) {
        fprintf(stderr, "%s: --modes-ext takes no other option, not '%s'\n", name, argv[1]);
        return 1;
    }
    static const kuai_cipher ciphers[] = {KUAI_SM4, KUAI_AES_128, KUAI_AES_256, KUAI_UBLOCK_128_128,
                                          KUAI_UBLOCK_128_256};
#if KUAI_BENCH_GCRYPT
    if (!gcry_check_version(NULL))
        fail("gcry_check_version");
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    const char *gcrypt_version = gcry_check_version(NULL);
#else
    const char *gcrypt_version = "not linked";
#endif
    uint8_t *buf = malloc(MSG), *wrapped = malloc(MSG + 8), key[64];
    for (int i = 0; i < 64; i++)
        key[i] = (uint8_t)(i * 37 + 1);
    memset(buf, 0x5a, MSG);
    kuai_key *k = malloc(2 * sizeof *k);
    printf("%s --modes-ext: kuai %s, %s, libgcrypt %s; %d-byte messages, MiB/s (best of 5)\n", name,
           KUAI_VERSION, OpenSSL_version(OPENSSL_VERSION), gcrypt_version, MSG);
    printf("| cipher | backend | mode | kuai MiB/s | ÷ same backend's ECB | yardstick | "
           "yardstick MiB/s | kuai ÷ yardstick |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t ci = 0; ci < sizeof ciphers / sizeof *ciphers; ci++) {
        kuai_cipher c = ciphers[ci];
        size_t kl = kuai_key_size(c);
        const char *names[16];
        size_t nb = kuai_backends(c, names, 16);
        double ys[M_N];
        const char *who[M_N];
        for (int m = 0; m < M_N; m++) {
            who[m] = "-";
            ys[m] = yardstick(c, (mode)m, buf, wrapped, key, &who[m]);
        }
        for (size_t b = 0; b < nb && b < 16; b++) {
            if (kuai_key_init_backend(&k[0], c, key, kl, names[b]) ||
                kuai_key_init_backend(&k[1], c, key + 32, kl, names[b]))
                fail("kuai_key_init_backend");
            job j;
            memset(&j, 0, sizeof j);
            j.k1 = &k[0], j.k2 = &k[1], j.buf = buf, j.wrapped = wrapped;
            double ecb = 0;
            for (int m = 0; m < M_N; m++) {
                j.m = (mode)m;
                double r = measure(&j);
                if (m == M_ECB)
                    ecb = r;
                printf("| %s | %s | %s | %.0f | %.2f | %s | ", kuai_cipher_name(c), names[b],
                       mode_names[m], r, r / ecb, who[m]);
                if (ys[m] > 0)
                    printf("%.0f | %.2f× |\n", ys[m], r / ys[m]);
                else
                    printf("- | - |\n");
                fflush(stdout);
            }
            kuai_key_wipe(&k[0]);
            kuai_key_wipe(&k[1]);
        }
    }
    free(k);
    free(buf);
    free(wrapped);
    return 0;
}
