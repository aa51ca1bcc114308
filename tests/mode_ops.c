/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One message through ECB/CBC/CTR for the differential tests of SM4 and
 * AES (test_sm4.c, test_aes.c): the five operations by number, the
 * chaining value a whole message leaves, the three ways a caller can run
 * it (whole, in place, in pieces), and OpenSSL's answer.
 */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#if KUAI_TEST_THIRD_PARTY
#include <openssl/evp.h>
#endif

const char *const mode_op_names[OP_N] = {"ECB-enc", "ECB-dec", "CBC-enc", "CBC-dec", "CTR"};

int mode_op_run(mode_op o, const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                size_t len)
{
    switch (o) {
    case OP_ECB_ENC:
        return kuai_ecb_encrypt(k, in, out, len);
    case OP_ECB_DEC:
        return kuai_ecb_decrypt(k, in, out, len);
    case OP_CBC_ENC:
        return kuai_cbc_encrypt(k, iv, in, out, len);
    case OP_CBC_DEC:
        return kuai_cbc_decrypt(k, iv, in, out, len);
    case OP_CTR:
        return kuai_ctr_crypt(k, iv, in, out, len);
    case OP_N:
        break;
    }
    return 99;
}

/* By the definitions: CBC leaves the last ciphertext block (the IV for an
 * empty message), CTR the start plus one per block, a partial last block
 * included. */
void mode_op_iv_after(mode_op o, const uint8_t iv0[16], const uint8_t *in, const uint8_t *out,
                      size_t len, uint8_t iv[16])
{
    memcpy(iv, iv0, 16);
    if ((o == OP_CBC_ENC || o == OP_CBC_DEC) && len)
        memcpy(iv, (o == OP_CBC_ENC ? out : in) + len - 16, 16);
    if (o == OP_CTR)
        for (size_t i = 0; i < (len + 15) / 16; i++)
            ctr_inc(iv, 16);
}

void check_case(const kuai_key *k, const char *ctx, const tcase *t, size_t off_in, size_t off_out,
                unsigned variants)
{
    const size_t len = t->len, bs = t->bs;
    char what[320];
    gbuf in = gbuf_new(len, off_in), out = gbuf_new(len, off_out);
    gbuf iv = gbuf_new(bs, (off_in * 3 + 1) & 15);
    memcpy(in.p, t->in, len);

    for (unsigned v = 1; v <= V_SPLIT_INPLACE; v <<= 1) {
        if (!(variants & v))
            continue;
        const int inplace = v == V_INPLACE || v == V_SPLIT_INPLACE;
        const int split = v == V_SPLIT || v == V_SPLIT_INPLACE;
        uint8_t *dst = inplace ? in.p : out.p;
        const gbuf *dstbuf = inplace ? &in : &out;
        memset(out.p, GUARD_FILL, len);
        memcpy(in.p, t->in, len);
        if (t->iv0)
            memcpy(iv.p, t->iv0, bs);
        uint8_t *ivp = t->iv0 ? iv.p : NULL;

        /* Pieces at block multiples (empty ones included: they must be
         * no-ops that keep the IV); only the last may have a partial block. */
        char layout[96] = "";
        int rc = 0;
        if (!split) {
            rc = mode_op_run(t->o, k, ivp, in.p, dst, len);
        } else {
            size_t nb = len / bs, done = 0, npieces = 2 + rng_below(4), lp = 0;
            for (size_t p = 0; p < npieces && !rc; p++) {
                size_t take = p + 1 == npieces ? len - done : rng_below(nb - done / bs + 1) * bs;
                rc = mode_op_run(t->o, k, ivp, in.p + done, dst + done, take);
                if (lp < sizeof layout - 24)
                    lp += (size_t)snprintf(layout + lp, sizeof layout - lp, "%s%zu",
                                           p ? "+" : " pieces ", take);
                done += take;
            }
        }
        snprintf(what, sizeof what, "%s %s len=%zu %s%s%s (in+%zu out+%zu)", ctx,
                 mode_op_names[t->o], len, split ? "split" : "whole",
                 inplace ? " in place" : " out of place", layout, off_in,
                 inplace ? off_in : off_out);
        if (!CHECK_RC(rc, KUAI_OK, what))
            continue;
        CHECK_MEM(dst, t->want, len, what);
        GBUF_CHECK(dstbuf, what);
        if (!inplace) {
            char w2[360];
            snprintf(w2, sizeof w2, "%s: input buffer modified", what);
            CHECK_MEM(in.p, t->in, len, w2);
            GBUF_CHECK(&in, w2);
        }
        if (t->iv0) {
            char w2[360];
            snprintf(w2, sizeof w2, "%s: %s after the call", what,
                     t->o == OP_CTR ? "counter" : "IV");
            CHECK_MEM(iv.p, t->iv_want, bs, w2);
            GBUF_CHECK(&iv, w2);
        }
    }
    gbuf_free(&in);
    gbuf_free(&out);
    gbuf_free(&iv);
}

void check_vs_want(kuai_cipher c, const char *backend, const uint8_t *key, mode_op o,
                   const uint8_t iv0[16], const uint8_t *in, const uint8_t *want, size_t len,
                   const char *what)
{
    kuai_key k;
    if (!key_init_ok(&k, c, key, backend))
        return;
    uint8_t ivw[16];
    mode_op_iv_after(o, iv0, in, want, len, ivw);
    const int ecb = o <= OP_ECB_DEC;
    const tcase t = {o, len, 16, in, want, ecb ? NULL : iv0, ecb ? NULL : ivw};
    check_case(&k, what, &t, rng_below(16), rng_below(16), V_ALL);
    kuai_key_wipe(&k);
}

#if KUAI_TEST_THIRD_PARTY
int ossl_mode_crypt(const EVP_CIPHER *ci, mode_op o, const uint8_t *key, const uint8_t iv[16],
                    const uint8_t *in, uint8_t *out, size_t len)
{
    const int enc = o != OP_ECB_DEC && o != OP_CBC_DEC;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = ctx && ci && EVP_CipherInit_ex(ctx, ci, NULL, key, o <= OP_ECB_DEC ? NULL : iv, enc) &&
             EVP_CIPHER_CTX_set_padding(ctx, 0);
    size_t done = 0;
    /* EVP_CipherUpdate takes an int length: feed big messages in pieces. */
    while (ok && done < len) {
        int piece = len - done > (1u << 20) ? 1 << 20 : (int)(len - done), outl = 0;
        ok = EVP_CipherUpdate(ctx, out + done, &outl, in + done, piece) && outl == piece;
        done += (size_t)piece;
    }
    int fl = 0;
    uint8_t fin[32];
    ok = ok && EVP_CipherFinal_ex(ctx, fin, &fl) && fl == 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}
#endif
