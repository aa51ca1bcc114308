/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4: checks on the backend seam (src/internal.h, src/sm4/sm4.h), every
 * backend against OpenSSL's SM4 (EVP_sm4_ecb/cbc/ctr) on random keys, IVs
 * and lengths, and the third-party vector sets of the PyPI package
 * cryptography-vectors (draft-ribose-cfrg-sm4-10 ECB/CBC/CTR), read from
 * $KUAI_CRYPTOGRAPHY_VECTORS (`make vectors` installs them; without the
 * variable those sets are reported SKIPPED). The standard's own examples,
 * the one-million-encryption one included, are in tests/vectors/sm4.txt
 * and run by the generic vector group.
 */
#include "test_util.h"

#include "sm4/sm4.h"
#include "vectors.h"

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

/* ---- the backend seam --------------------------------------------------- */

/* GB/T 32907-2016, Appendix A, example 1: the key and its first and last
 * round keys as the standard prints them. */
static const uint8_t std_key[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                    0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
#define STD_RK0 0xf12186f9u
#define STD_RK31 0x9124a012u

static void seam_table(void)
{
    const kuai_impl *const *impls = kuai_impls(KUAI_SM4);
    size_t n = 0, have_ref = 0;
    for (; impls[n]; n++) {
        const kuai_impl *p = impls[n];
        CHECK(p->name && p->family == KUAI_FAMILY_SM4 && p->available && p->expand &&
                  p->enc_blocks && p->dec_blocks && p->mk_lanes >= 1 &&
                  p->mk_lanes <= KUAI_MK_MAX_LANES && p->mk_setup && p->mk_enc && p->mk_dec,
              "sm4: backend table entry %zu (%s) incomplete", n, p->name ? p->name : "(null)");
        have_ref += strcmp(p->name, "ref") == 0;
    }
    CHECK(have_ref == 1, "sm4: %zu \"ref\" entries in the backend table, want 1", have_ref);
    /* The T-table backend leaks through the cache: it says so, and it is
     * last, so never picked. */
    CHECK(n >= 2 && strcmp(impls[n - 1]->name, "ttable") == 0 && impls[n - 1]->leaky,
          "sm4: \"ttable\" is not the last entry of the backend table, or not marked leaky");
    const char *saved = getenv("KUAI_BACKEND");
    if (!saved || !*saved) {
        kuai_key k;
        if (CHECK_RC(kuai_key_init(&k, KUAI_SM4, std_key, 16), KUAI_OK, "sm4: kuai_key_init")) {
            const char *b = kuai_key_backend(&k);
            CHECK(b && strcmp(b, "ttable") != 0, "sm4: kuai_key_init chose \"%s\"",
                  b ? b : "(null)");
        }
        kuai_key_wipe(&k);
    }
}

/* Every backend stores the standard's rk[32] first, identical to ref's. */
static void seam_schedule(const char *backend)
{
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    if (key_init_ok(k, KUAI_SM4, std_key, backend)) {
        const sm4_sched *s = sm4_sched_const(k);
        CHECK(s->rk[0] == STD_RK0 && s->rk[31] == STD_RK31,
              "sm4/%s: standard key gives rk0 %08x, rk31 %08x (want %08x, %08x)", backend, s->rk[0],
              s->rk[31], STD_RK0, STD_RK31);
    }
    for (int t = 0; t < 8; t++) {
        uint8_t key[16];
        rng_fill(key, sizeof key);
        if (!key_init_ok(k, KUAI_SM4, key, backend) || !key_init_ok(r, KUAI_SM4, key, "ref"))
            break;
        char kh[33];
        to_hex(kh, key, 16);
        if (!CHECK(memcmp(sm4_sched_const(k)->rk, sm4_sched_const(r)->rk, 128) == 0,
                   "sm4/%s key %s: raw rk[32] differs from ref's", backend, kh))
            break;
    }
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* enc_blocks/dec_blocks/ctr_blocks for 1..70 blocks against ref's. */
static void seam_kernels(const kuai_impl *p, const kuai_impl *ref)
{
    const size_t maxb = 70;
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    uint8_t key[16];
    rng_fill(key, sizeof key);
    int ok = key_init_ok(k, KUAI_SM4, key, p->name) && key_init_ok(r, KUAI_SM4, key, "ref");
    uint8_t *in = xmalloc(maxb * 16), *want = xmalloc(maxb * 16), *got = xmalloc(maxb * 16);
    char what[160];
    for (size_t nb = 1; ok && nb <= maxb; nb++) {
        rng_fill(in, nb * 16);
        for (int dec = 0; dec <= 1; dec++) {
            (dec ? ref->dec_blocks : ref->enc_blocks)(r, in, want, nb);
            (dec ? p->dec_blocks : p->enc_blocks)(k, in, got, nb);
            snprintf(what, sizeof what, "sm4/%s %s_blocks(%zu)", p->name, dec ? "dec" : "enc", nb);
            CHECK_MEM(got, want, nb * 16, what);
            memcpy(got, in, nb * 16);
            (dec ? p->dec_blocks : p->enc_blocks)(k, got, got, nb);
            snprintf(what, sizeof what, "sm4/%s %s_blocks(%zu) in place", p->name,
                     dec ? "dec" : "enc", nb);
            CHECK_MEM(got, want, nb * 16, what);
        }
        if (p->ctr_blocks) {
            /* Counters ending in ff bytes: carries across bytes and words. */
            static const size_t tails[] = {0, 1, 4, 8, 16};
            uint8_t ctr[16], ctr_want[16], ctr0[16];
            size_t tail = tails[nb % 5];
            rng_fill(ctr0, 16);
            memset(ctr0 + 16 - tail, 0xff, tail);
            if (tail)
                ctr0[15] = (uint8_t)(0x100 - 1 - rng_below(nb));
            memcpy(ctr_want, ctr0, 16);
            model_ctr(r, 16, ctr_want, in, want, nb * 16);
            memcpy(ctr, ctr0, 16);
            p->ctr_blocks(k, ctr, in, got, nb);
            snprintf(what, sizeof what, "sm4/%s ctr_blocks(%zu)", p->name, nb);
            CHECK_MEM(got, want, nb * 16, what);
            CHECK_MEM(ctr, ctr_want, 16, what);
        }
        if (p->cbc_enc_blocks) {
            /* the chain through ref's one-block kernel, out of place and
             * in place, and the IV left as the last ciphertext block */
            uint8_t iv0[16], iv[16];
            rng_fill(iv0, 16);
            const uint8_t *chain = iv0;
            for (size_t i = 0; i < nb; i++) {
                for (size_t j = 0; j < 16; j++)
                    want[16 * i + j] = in[16 * i + j] ^ chain[j];
                ref->enc_blocks(r, want + 16 * i, want + 16 * i, 1);
                chain = want + 16 * i;
            }
            for (int inplace = 0; inplace <= 1; inplace++) {
                memcpy(iv, iv0, 16);
                if (inplace)
                    memcpy(got, in, nb * 16);
                p->cbc_enc_blocks(k, iv, inplace ? got : in, got, nb);
                snprintf(what, sizeof what, "sm4/%s cbc_enc_blocks(%zu)%s", p->name, nb,
                         inplace ? " in place" : "");
                CHECK_MEM(got, want, nb * 16, what);
                CHECK_MEM(iv, want + (nb - 1) * 16, 16, what);
            }
        }
    }
    free(in);
    free(want);
    free(got);
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* mk_setup/mk_enc/mk_dec for every batch size, keys of every usable backend
 * mixed, against ref's one-block kernels. */
static void seam_mk(const kuai_impl *p, const kuai_impl *ref)
{
    static kuai_mk mk; /* 32 KiB: not on the stack */
    const char *all[MAX_BACKENDS];
    const size_t lanes = p->mk_lanes, nall = usable_backends(KUAI_SM4, all, MAX_BACKENDS);
    if (lanes < 1 || lanes > KUAI_MK_MAX_LANES || nall == 0)
        return; /* reported by seam_table */
    kuai_key *kobj = key_alloc(lanes);
    const kuai_key *keys[KUAI_MK_MAX_LANES];
    uint8_t in[KUAI_MK_MAX_LANES * 16], want[sizeof in], got[sizeof in];
    char what[160];
    for (size_t i = 0; i < lanes; i++) {
        uint8_t key[16];
        rng_fill(key, sizeof key);
        key_init_ok(&kobj[i], KUAI_SM4, key, all[i % nall]);
    }
    for (size_t n = 1; n <= lanes; n++) {
        for (size_t i = 0; i < n; i++)
            keys[i] = &kobj[(i * 7 + n) % lanes];
        rng_fill(in, n * 16);
        p->mk_setup(&mk, keys, n);
        for (int dec = 0; dec <= 1; dec++) {
            for (size_t i = 0; i < n; i++)
                (dec ? ref->dec_blocks : ref->enc_blocks)(keys[i], in + i * 16, want + i * 16, 1);
            (dec ? p->mk_dec : p->mk_enc)(&mk, in, got, n);
            snprintf(what, sizeof what, "sm4/%s mk_%s, %zu lanes", p->name, dec ? "dec" : "enc", n);
            CHECK_MEM(got, want, n * 16, what);
            memcpy(got, in, n * 16);
            (dec ? p->mk_dec : p->mk_enc)(&mk, got, got, n);
            snprintf(what, sizeof what, "sm4/%s mk_%s, %zu lanes, in place", p->name,
                     dec ? "dec" : "enc", n);
            CHECK_MEM(got, want, n * 16, what);
        }
    }
    for (size_t i = 0; i < lanes; i++)
        kuai_key_wipe(&kobj[i]);
    kuai_wipe(&mk, sizeof mk);
    free(kobj);
}

void test_sm4_backend_internals(void)
{
    group_begin("SM4 backend seam");
    seam_table();
    const kuai_impl *const *impls = kuai_impls(KUAI_SM4), *ref = NULL;
    for (size_t i = 0; impls[i]; i++)
        if (strcmp(impls[i]->name, "ref") == 0)
            ref = impls[i];
    for (size_t i = 0; ref && impls[i]; i++) {
        const kuai_impl *p = impls[i];
        if (!p->available() || !selected(p->name))
            continue;
        seam_schedule(p->name);
        seam_kernels(p, ref);
        seam_mk(p, ref);
    }
    group_end();
}

/* ---- against OpenSSL ------------------------------------------------------ */

#if KUAI_TEST_THIRD_PARTY
static int ossl_crypt(mode_op o, const uint8_t key[16], const uint8_t iv[16], const uint8_t *in,
                      uint8_t *out, size_t len)
{
    const EVP_CIPHER *c = o <= OP_ECB_DEC   ? EVP_sm4_ecb()
                          : o <= OP_CBC_DEC ? EVP_sm4_cbc()
                                            : EVP_sm4_ctr();
    return ossl_mode_crypt(c, o, key, iv, in, out, len);
}

/* One message: whole, in place, and in pieces at block multiples (only the
 * last piece may have a partial block, in CTR), each against OpenSSL. */
static void diff_case(const char *backend, mode_op o, size_t len)
{
    uint8_t key[16], iv0[16];
    rng_fill(key, 16);
    rng_fill(iv0, 16);
    if (o == OP_CTR && rng_below(3) == 0) {
        size_t tail = 1 + rng_below(16); /* carries out of the low bytes */
        memset(iv0 + 16 - tail, 0xff, tail);
    }
    uint8_t *in = xmalloc(len), *want = xmalloc(len);
    rng_fill(in, len);
    char what[192];
    snprintf(what, sizeof what, "sm4/%s vs OpenSSL", backend);
    if (CHECK(ossl_crypt(o, key, iv0, in, want, len), "%s %s: oracle call failed", what,
              mode_op_names[o]))
        check_vs_want(KUAI_SM4, backend, key, o, iv0, in, want, len, what);
    free(in);
    free(want);
}

void test_sm4_openssl(void)
{
    group_begin("SM4 vs OpenSSL");
    static const size_t lens[] = {0,
                                  1,
                                  15,
                                  16,
                                  17,
                                  31,
                                  32,
                                  33,
                                  47,
                                  48,
                                  63,
                                  64,
                                  100,
                                  255,
                                  256,
                                  257,
                                  1023,
                                  4096 + 5,
                                  8191,
                                  65536 + 16 + 3,
                                  300 * 1024 + 7};
    const char *be[MAX_BACKENDS];
    const size_t nbe = test_backends(KUAI_SM4, be, MAX_BACKENDS);
    for (size_t b = 0; b < nbe; b++) {
        for (int o = 0; o < OP_N; o++) {
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
                /* ECB and CBC: the block multiple at or below the length. */
                size_t len = o == OP_CTR ? lens[i] : lens[i] / 16 * 16;
                diff_case(be[b], (mode_op)o, len);
            }
            for (int r = 0; r < 12; r++) {
                size_t len = rng_below(2048);
                diff_case(be[b], (mode_op)o, o == OP_CTR ? len : len / 16 * 16);
            }
        }
    }
    group_end();
}
#else
void test_sm4_openssl(void)
{
    /* The backends still meet the vector files, the cryptography-vectors
     * sets and the portable oracle of test_modes. */
    printf("  SM4 vs OpenSSL: SKIPPED (built without OpenSSL: cross build)\n");
}
#endif

/* ---- cryptography-vectors ------------------------------------------------- */

/* NIST-style records: "[ENCRYPT]" / "[DECRYPT]" sections, "COUNT = n",
 * then KEY, IV (not for ECB), PLAINTEXT, CIPHERTEXT in hex. */
static void nist_run(const nist_rec *r, const char *file, mode_op enc_op, mode_op dec_op,
                     const char *backend)
{
    char what[256];
    snprintf(what, sizeof what, "sm4/%s %s:%d", backend, file, r->line);
    const int need_iv = enc_op != OP_ECB_ENC;
    if (!CHECK(r->key && r->pt && r->ct && r->key_len == 16 && r->pt_len == r->ct_len &&
                   r->pt_len > 0 && (enc_op == OP_CTR || r->pt_len % 16 == 0) &&
                   (!need_iv || (r->iv && r->iv_len == 16)),
               "%s: record lacks a field or has the wrong sizes", what))
        return;
    kuai_key k;
    if (!key_init_ok(&k, KUAI_SM4, r->key, backend))
        return;
    const size_t len = r->pt_len;
    uint8_t *out = xmalloc(len), iv[16] = {0};
    for (int dir = 0; dir <= 1; dir++) {
        const uint8_t *src = dir ? r->ct : r->pt, *want = dir ? r->pt : r->ct;
        char w2[300];
        snprintf(w2, sizeof w2, "%s %s", what, mode_op_names[dir ? dec_op : enc_op]);
        if (need_iv)
            memcpy(iv, r->iv, 16);
        CHECK_RC(mode_op_run(dir ? dec_op : enc_op, &k, iv, src, out, len), KUAI_OK, w2);
        CHECK_MEM(out, want, len, w2);
    }
    free(out);
    kuai_key_wipe(&k);
}

typedef struct nist_ctx {
    const char *name;
    mode_op enc_op, dec_op;
    const char *const *be;
    size_t nbe;
} nist_ctx;

static void nist_record(const nist_rec *r, void *arg)
{
    nist_ctx *c = arg;
    for (size_t b = 0; b < c->nbe; b++)
        nist_run(r, c->name, c->enc_op, c->dec_op, c->be[b]);
}

/* Returns the number of records run per backend, -1 if the file is missing. */
static long nist_file(const char *dir, const char *name, mode_op enc_op, mode_op dec_op,
                      const char *const *be, size_t nbe)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/ciphers/SM4/%s", dir, name);
    nist_ctx c = {name, enc_op, dec_op, be, nbe};
    return nist_file_read(path, name, 0, nist_record, &c);
}

void test_sm4_cryptography_vectors(void)
{
    const char *dir = getenv("KUAI_CRYPTOGRAPHY_VECTORS");
    if (!dir || !*dir) {
        /* Not a pass: said on every run, -q or not. */
        printf("SM4 cryptography-vectors SKIPPED: KUAI_CRYPTOGRAPHY_VECTORS is not set (make "
               "vectors; make test sets it)\n");
        return;
    }
    group_begin("SM4 cryptography-vectors");
    static const struct {
        const char *file;
        mode_op enc, dec;
    } sets[] = {
        {"draft-ribose-cfrg-sm4-10-ecb.txt", OP_ECB_ENC, OP_ECB_DEC},
        {"draft-ribose-cfrg-sm4-10-cbc.txt", OP_CBC_ENC, OP_CBC_DEC},
        {"draft-ribose-cfrg-sm4-10-ctr.txt", OP_CTR, OP_CTR},
    };
    const char *be[MAX_BACKENDS];
    const size_t nbe = test_backends(KUAI_SM4, be, MAX_BACKENDS);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        long n = nist_file(dir, sets[i].file, sets[i].enc, sets[i].dec, be, nbe);
        /* The variable is set, so a missing or empty file is a failure. */
        if (CHECK(n > 0, "%s/ciphers/SM4/%s: missing or no records", dir, sets[i].file))
            t_note("  %s: %ld records x %zu backend(s)", sets[i].file, n, nbe);
    }
    group_end();
}
