/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench: never time a backend that computes something else. */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <stdlib.h>
#include <string.h>

#if KUAI_BENCH_GCRYPT
#include <gcrypt.h>
#endif

/* Each backend must agree with the portable "ref" one on a few KiB of
 * ECB, CBC (both directions), CTR and multi-key CBC and ECB; then GCM is
 * checked (gcm_check). The test suite does the real checking; this only
 * keeps a broken build from producing impressive numbers. */
static void ref_check(kuai_cipher c, const char *cname, const char *backend)
{
    enum { LEN = 4096 };
    size_t klen = kuai_key_size(c);
    uint8_t *kb = xalloc(klen * 4), *in = xalloc(LEN * 4), *a = xalloc(LEN * 4),
            *b = xalloc(LEN * 4);
    kuai_key *kr = xalloc(sizeof(kuai_key) * 4), *kx = xalloc(sizeof(kuai_key) * 4);
    uint8_t iva[4][KUAI_MAX_BLOCK], ivb[4][KUAI_MAX_BLOCK];
    fill(kb, klen * 4, 5);
    fill(in, LEN * 4, 6);
    for (int i = 0; i < 4; i++) {
        kcheck(kuai_key_init_backend(&kr[i], c, kb + i * klen, klen, "ref"),
               "kuai_key_init_backend", cname, "ref");
        kcheck(kuai_key_init_backend(&kx[i], c, kb + i * klen, klen, backend),
               "kuai_key_init_backend", cname, backend);
    }
    const char *what = NULL;
#define CMP(name)                                                                                  \
    do {                                                                                           \
        if (!what && memcmp(a, b, LEN) != 0)                                                       \
            what = (name);                                                                         \
    } while (0)
    kcheck(kuai_ecb_encrypt(&kr[0], in, a, LEN), "kuai_ecb_encrypt", cname, "ref");
    kcheck(kuai_ecb_encrypt(&kx[0], in, b, LEN), "kuai_ecb_encrypt", cname, backend);
    CMP("ECB encryption");
    kcheck(kuai_ecb_decrypt(&kr[0], in, a, LEN), "kuai_ecb_decrypt", cname, "ref");
    kcheck(kuai_ecb_decrypt(&kx[0], in, b, LEN), "kuai_ecb_decrypt", cname, backend);
    CMP("ECB decryption");
    memset(iva, 7, sizeof iva);
    memset(ivb, 7, sizeof ivb);
    kcheck(kuai_cbc_encrypt(&kr[0], iva[0], in, a, LEN), "kuai_cbc_encrypt", cname, "ref");
    kcheck(kuai_cbc_encrypt(&kx[0], ivb[0], in, b, LEN), "kuai_cbc_encrypt", cname, backend);
    CMP("CBC encryption");
    kcheck(kuai_cbc_decrypt(&kr[0], iva[0], in, a, LEN), "kuai_cbc_decrypt", cname, "ref");
    kcheck(kuai_cbc_decrypt(&kx[0], ivb[0], in, b, LEN), "kuai_cbc_decrypt", cname, backend);
    CMP("CBC decryption");
    kcheck(kuai_ctr_crypt(&kr[0], iva[0], in, a, LEN), "kuai_ctr_crypt", cname, "ref");
    kcheck(kuai_ctr_crypt(&kx[0], ivb[0], in, b, LEN), "kuai_ctr_crypt", cname, backend);
    CMP("CTR");
    {
        const kuai_key *pr[4] = {&kr[0], &kr[1], &kr[2], &kr[3]};
        const kuai_key *px[4] = {&kx[0], &kx[1], &kx[2], &kx[3]};
        const uint8_t *ins[4] = {in, in + LEN, in + 2 * LEN, in + 3 * LEN};
        uint8_t *oa[4] = {a, a + LEN, a + 2 * LEN, a + 3 * LEN};
        uint8_t *ob[4] = {b, b + LEN, b + 2 * LEN, b + 3 * LEN};
        uint8_t *ia[4] = {iva[0], iva[1], iva[2], iva[3]};
        uint8_t *ib[4] = {ivb[0], ivb[1], ivb[2], ivb[3]};
        memset(iva, 9, sizeof iva);
        memset(ivb, 9, sizeof ivb);
        kcheck(kuai_cbc_encrypt_multi(pr, ia, ins, oa, 4, LEN), "kuai_cbc_encrypt_multi", cname,
               "ref");
        kcheck(kuai_cbc_encrypt_multi(px, ib, ins, ob, 4, LEN), "kuai_cbc_encrypt_multi", cname,
               backend);
        if (!what && memcmp(a, b, 4 * LEN) != 0)
            what = "multi-key CBC encryption";
        kcheck(kuai_cbc_decrypt_multi(pr, ia, ins, oa, 4, LEN), "kuai_cbc_decrypt_multi", cname,
               "ref");
        kcheck(kuai_cbc_decrypt_multi(px, ib, ins, ob, 4, LEN), "kuai_cbc_decrypt_multi", cname,
               backend);
        if (!what && memcmp(a, b, 4 * LEN) != 0)
            what = "multi-key CBC decryption";
        /* one block per key: the backend's own multi-key kernel, which the
         * short multi-key rows time (long streams bypass it) */
        size_t bs = kuai_block_size(c);
        kcheck(kuai_ecb_encrypt_multi(pr, ins, oa, 4, bs), "kuai_ecb_encrypt_multi", cname, "ref");
        kcheck(kuai_ecb_encrypt_multi(px, ins, ob, 4, bs), "kuai_ecb_encrypt_multi", cname,
               backend);
        for (int i = 0; i < 4 && !what; i++)
            if (memcmp(oa[i], ob[i], bs) != 0)
                what = "multi-key ECB encryption";
        kcheck(kuai_ecb_decrypt_multi(pr, ins, oa, 4, bs), "kuai_ecb_decrypt_multi", cname, "ref");
        kcheck(kuai_ecb_decrypt_multi(px, ins, ob, 4, bs), "kuai_ecb_decrypt_multi", cname,
               backend);
        for (int i = 0; i < 4 && !what; i++)
            if (memcmp(oa[i], ob[i], bs) != 0)
                what = "multi-key ECB decryption";
    }
#undef CMP
    if (what)
        die("backend '%s' disagrees with 'ref' on %s for %s: refusing to benchmark it "
            "(run kuai_test)",
            backend, what, cname);
    for (int i = 0; i < 4; i++) {
        kuai_key_wipe(&kr[i]);
        kuai_key_wipe(&kx[i]);
    }
    free(kb), free(in), free(a), free(b), free(kr), free(kx);
}

/* GCM on a 128-bit-block cipher: the backend must give ref's ciphertext
 * and tag, decrypt its own message back, and refuse a wrong tag. For SM4
 * both ECB and GCM must also match libgcrypt byte for byte on the same
 * key, IV and AAD (an implementation that shares no code with kuai), so
 * the rows of bench_scenarios.c time the right function against the right peer. The
 * length is not a multiple of 16, to cover the partial last block. */
static void gcm_check(kuai_cipher c, const char *cname, const char *backend)
{
    enum { LEN = 4096 + 7 };
    size_t klen = kuai_key_size(c);
    uint8_t *kb = xalloc(klen), *in = xalloc(LEN), *a = xalloc(LEN), *b = xalloc(LEN);
    uint8_t ta[GCM_TAG_LEN], tb[GCM_TAG_LEN];
    kuai_key *kr = xalloc(sizeof(kuai_key)), *kx = xalloc(sizeof(kuai_key));
    const char *what = NULL;
    fill(kb, klen, 11);
    fill(in, LEN, 12);
    kcheck(kuai_key_init_backend(kr, c, kb, klen, "ref"), "kuai_key_init_backend", cname, "ref");
    kcheck(kuai_key_init_backend(kx, c, kb, klen, backend), "kuai_key_init_backend", cname,
           backend);
    kcheck(
        kuai_gcm_encrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, in, a, LEN, ta, GCM_TAG_LEN),
        "kuai_gcm_encrypt", cname, backend);
    if (strcmp(backend, "ref")) {
        kcheck(kuai_gcm_encrypt(kr, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, in, b, LEN, tb,
                                GCM_TAG_LEN),
               "kuai_gcm_encrypt", cname, "ref");
        if (memcmp(a, b, LEN) || memcmp(ta, tb, GCM_TAG_LEN))
            what = "GCM encryption (vs ref)";
    }
#if KUAI_BENCH_GCRYPT
    if (!what && c == KUAI_SM4) {
        gcry_sm4_ref(GCRY_CIPHER_MODE_GCM, kb, in, b, LEN, tb);
        if (memcmp(a, b, LEN) != 0)
            what = "SM4-GCM ciphertext (vs libgcrypt)";
        else if (memcmp(ta, tb, GCM_TAG_LEN) != 0)
            what = "SM4-GCM tag (vs libgcrypt)";
    }
    if (!what && c == KUAI_SM4) {
        gcry_sm4_ref(GCRY_CIPHER_MODE_ECB, kb, in, b, 4096, NULL);
        kcheck(kuai_ecb_encrypt(kx, in, a, 4096), "kuai_ecb_encrypt", cname, backend);
        if (memcmp(a, b, 4096) != 0)
            what = "SM4-ECB encryption (vs libgcrypt)";
    }
#endif
    if (!what) {
        kcheck(kuai_gcm_encrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, in, a, LEN, ta,
                                GCM_TAG_LEN),
               "kuai_gcm_encrypt", cname, backend);
        kcheck(kuai_gcm_decrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, a, b, LEN, ta,
                                GCM_TAG_LEN),
               "kuai_gcm_decrypt (own message)", cname, backend);
        if (memcmp(b, in, LEN) != 0)
            what = "GCM decryption (round trip)";
        ta[3] ^= 0x10;
        if (!what && kuai_gcm_decrypt(kx, gcm_iv, GCM_IV_LEN, gcm_aad, GCM_AAD_LEN, a, b, LEN, ta,
                                      GCM_TAG_LEN) != KUAI_ERR_AUTH)
            what = "GCM decryption with a wrong tag (not KUAI_ERR_AUTH)";
    }
    if (what)
        die("backend '%s' of %s fails the check on %s: refusing to benchmark it (run kuai_test)",
            backend, cname, what);
    kuai_key_wipe(kr);
    kuai_key_wipe(kx);
    free(kb), free(in), free(a), free(b), free(kr), free(kx);
}

void cross_check(kuai_cipher c, const char *cname, const char *backend)
{
    if (strcmp(backend, "ref"))
        ref_check(c, cname, backend);
    if (kuai_block_size(c) == 16)
        gcm_check(c, cname, backend);
}
