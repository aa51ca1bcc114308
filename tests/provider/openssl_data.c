/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OpenSSL's own cipher test data (test/recipes/30-test_evp_data/evpciph_*.txt,
 * committed unchanged under tests/provider/openssl-data/) run through kuai's
 * provider: every record whose cipher kuai offers, encrypt and decrypt (or
 * the one its "Operation" names), with its IV and IV length, AAD, tag,
 * NextIV and expected failure ("Result"), in one piece and split in two
 * updates at a place that changes per record. Records for ciphers kuai does
 * not offer are counted as skipped, by mode; records marked "Availablein =
 * fips" are for OpenSSL's FIPS provider and skipped too. Like OpenSSL's
 * evp_test, padding is off (the data are whole blocks).
 */
#include "provider_test.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 4096

typedef struct rec {
    char cipher[64], op[16], result[64], avail[32], xts_standard[16];
    uint8_t key[64], iv[256], pt[MAXV], ct[MAXV], aad[MAXV], tag[64], next_iv[64];
    size_t keylen, ivlen, ptlen, ctlen, aadlen, taglen, next_ivlen;
    int has_iv, has_pt, has_ct, has_tag, has_next_iv, tag_late, unknown;
    char unknown_key[32];
    int line;
} rec;

/* A hex value, or a "quoted" string, or nothing. */
static int value(const char *v, uint8_t *out, size_t max, size_t *len)
{
    size_t n = 0;
    if (*v == '"') {
        const char *e = strrchr(v + 1, '"');
        if (e == NULL || (size_t)(e - v - 1) > max)
            return 0;
        memcpy(out, v + 1, (size_t)(e - v - 1));
        *len = (size_t)(e - v - 1);
        return 1;
    }
    while (v[0] && !isspace((unsigned char)v[0])) {
        unsigned x;
        if (!isxdigit((unsigned char)v[0]) || !isxdigit((unsigned char)v[1]) || n >= max ||
            sscanf(v, "%2x", &x) != 1)
            return 0;
        out[n++] = (uint8_t)x;
        v += 2;
    }
    *len = n;
    return 1;
}

/* Copies a field's text, cut to the buffer (the data's names are short). */
static void set_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src) < size - 1 ? strlen(src) : size - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* Reads the next record (a "Cipher = " block); 0 at the end of the file. */
static int next_record(FILE *fp, rec *r, int *line)
{
    static char buf[2 * MAXV + 256];
    memset(r, 0, sizeof *r);
    int in_rec = 0;
    char pending_avail[32] = "";
    while (fgets(buf, sizeof buf, fp)) {
        (*line)++;
        size_t n = strlen(buf);
        while (n > 0 && isspace((unsigned char)buf[n - 1]))
            buf[--n] = 0;
        if (n == 0) {
            if (in_rec)
                return 1;
            pending_avail[0] = 0;
            continue;
        }
        if (buf[0] == '#')
            continue;
        char *eq = strchr(buf, '=');
        if (eq == NULL)
            continue;
        char *k = buf, *v = eq + 1;
        char *ke = eq;
        while (ke > k && isspace((unsigned char)ke[-1]))
            ke--;
        *ke = 0;
        while (isspace((unsigned char)*v))
            v++;
        if (strcmp(k, "Cipher") == 0) {
            in_rec = 1;
            r->line = *line;
            set_str(r->cipher, sizeof r->cipher, v);
            set_str(r->avail, sizeof r->avail, pending_avail);
            continue;
        }
        if (!in_rec) {
            if (strcmp(k, "Availablein") == 0)
                set_str(pending_avail, sizeof pending_avail, v);
            continue; /* Title, FIPSversion, ... */
        }
        int ok = 1;
        if (strcmp(k, "Key") == 0)
            ok = value(v, r->key, sizeof r->key, &r->keylen);
        else if (strcmp(k, "IV") == 0)
            ok = r->has_iv = value(v, r->iv, sizeof r->iv, &r->ivlen);
        else if (strcmp(k, "Plaintext") == 0)
            ok = r->has_pt = value(v, r->pt, sizeof r->pt, &r->ptlen);
        else if (strcmp(k, "Ciphertext") == 0)
            ok = r->has_ct = value(v, r->ct, sizeof r->ct, &r->ctlen);
        else if (strcmp(k, "AAD") == 0) { /* may come in several pieces */
            size_t l = 0;
            ok = value(v, r->aad + r->aadlen, sizeof r->aad - r->aadlen, &l);
            r->aadlen += l;
        } else if (strcmp(k, "Tag") == 0)
            ok = r->has_tag = value(v, r->tag, sizeof r->tag, &r->taglen);
        else if (strcmp(k, "NextIV") == 0)
            ok = r->has_next_iv = value(v, r->next_iv, sizeof r->next_iv, &r->next_ivlen);
        else if (strcmp(k, "Operation") == 0)
            set_str(r->op, sizeof r->op, v);
        else if (strcmp(k, "SetTagLate") == 0) /* the expected tag after the AAD */
            r->tag_late = strcmp(v, "TRUE") == 0;
        else if (strcmp(k, "XTSStandard") == 0)
            set_str(r->xts_standard, sizeof r->xts_standard, v);
        else if (strcmp(k, "Result") == 0)
            set_str(r->result, sizeof r->result, v);
        else if (!r->unknown) {
            r->unknown = 1;
            set_str(r->unknown_key, sizeof r->unknown_key, k);
        }
        if (!ok) {
            r->unknown = 1;
            set_str(r->unknown_key, sizeof r->unknown_key, k); /* a value not understood */
        }
    }
    return in_rec;
}

/* evp_test's names: CIPHERINIT_ERROR for the init with the cipher,
 * KEY_SET_ERROR for the one with the key and IV. */
enum { ST_OK, ST_INIT, ST_KEY, ST_IVLEN, ST_TAG, ST_UPDATE, ST_FINAL, ST_CHECK };
static const char *const stage_names[] = {
    "success",       "CIPHERINIT_ERROR",   "KEY_SET_ERROR",     "INVALID_IV_LENGTH",
    "TAG_SET_ERROR", "CIPHERUPDATE_ERROR", "CIPHERFINAL_ERROR", "wrong output"};

/* Whether a mode's data must come in one update, as OpenSSL's evp_test
 * runs them: XTS (each update is one data unit) and CCM. */
static int one_piece(const EVP_CIPHER *c)
{
    return EVP_CIPHER_get_mode(c) == EVP_CIPH_XTS_MODE ||
           EVP_CIPHER_get_mode(c) == EVP_CIPH_CCM_MODE;
}

/* One direction; returns the stage that failed (ST_OK: all as expected). The
 * AEAD steps in evp_test's order: IV length, tag (CCM: its length when
 * encrypting), key and IV, CCM's total length, AAD, data, final, tag. */
static int run_one(const EVP_CIPHER *c, const rec *r, int enc, size_t split)
{
    const uint8_t *in = enc ? r->pt : r->ct, *want = enc ? r->ct : r->pt;
    size_t inlen = enc ? r->ptlen : r->ctlen, wantlen = enc ? r->ctlen : r->ptlen;
    int ccm = EVP_CIPHER_get_mode(c) == EVP_CIPH_CCM_MODE;
    int gcm = EVP_CIPHER_get_mode(c) == EVP_CIPH_GCM_MODE || ccm; /* AEAD */
    static uint8_t out[MAXV + 64];
    uint8_t tag[64];
    int st = ST_OK, l1 = 0, l2 = 0, l3 = 0;
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    if (!EVP_CipherInit_ex2(x, c, NULL, NULL, enc, NULL)) {
        st = ST_INIT;
        goto done;
    }
    if (gcm && r->has_iv && r->ivlen != (size_t)EVP_CIPHER_CTX_get_iv_length(x) &&
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IVLEN, (int)r->ivlen, NULL) <= 0) {
        st = ST_IVLEN;
        goto done;
    }
    if (ccm && r->has_tag &&
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)r->taglen,
                            enc || r->tag_late ? NULL : (void *)r->tag) <= 0) {
        st = ST_TAG;
        goto done;
    }
    if (r->xts_standard[0]) {
        OSSL_PARAM p[] = {OSSL_PARAM_utf8_string("xts_standard", (char *)r->xts_standard, 0),
                          OSSL_PARAM_END};
        if (!EVP_CIPHER_CTX_set_params(x, p)) {
            st = ST_INIT;
            goto done;
        }
    }
    if (!EVP_CipherInit_ex2(x, NULL, r->key, r->has_iv ? r->iv : NULL, enc, NULL)) {
        st = ST_KEY;
        goto done;
    }
    EVP_CIPHER_CTX_set_padding(x, 0);
    if (gcm && !ccm && !enc && r->has_tag && !r->tag_late &&
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)r->taglen, (void *)r->tag) <= 0) {
        st = ST_TAG;
        goto done;
    }
    if (ccm && !EVP_CipherUpdate(x, NULL, &l1, NULL, (int)inlen)) {
        st = ST_UPDATE;
        goto done;
    }
    if (gcm && r->aadlen > 0 && !EVP_CipherUpdate(x, NULL, &l1, r->aad, (int)r->aadlen)) {
        st = ST_UPDATE;
        goto done;
    }
    if (gcm && !enc && r->has_tag && r->tag_late &&
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)r->taglen, (void *)r->tag) <= 0) {
        st = ST_TAG;
        goto done;
    }
    if (split > inlen)
        split = inlen;
    if (!EVP_CipherUpdate(x, out, &l1, in, (int)split) ||
        (!one_piece(c) && !EVP_CipherUpdate(x, out + l1, &l2, in + split, (int)(inlen - split)))) {
        st = ST_UPDATE;
        goto done;
    }
    if (!EVP_CipherFinal_ex(x, out + l1 + l2, &l3)) {
        st = ST_FINAL;
        goto done;
    }
    if ((size_t)(l1 + l2 + l3) != wantlen || memcmp(out, want, wantlen) != 0)
        st = ST_CHECK;
    if (gcm && enc && r->has_tag &&
        (EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, (int)r->taglen, tag) <= 0 ||
         memcmp(tag, r->tag, r->taglen) != 0))
        st = ST_CHECK;
    if (enc && r->has_next_iv && !gcm &&
        (!EVP_CIPHER_CTX_get_updated_iv(x, tag, r->next_ivlen) ||
         memcmp(tag, r->next_iv, r->next_ivlen) != 0))
        st = ST_CHECK;
done:
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return st;
}

/* Skip reasons: a mode kuai does not offer (by the name's last part), FIPS only. */
#define NREASONS 24
static char reasons[NREASONS][96];
static int reason_count[NREASONS];
static void skip(const char *why)
{
    for (int i = 0; i < NREASONS; i++) {
        if (reasons[i][0] == 0)
            snprintf(reasons[i], sizeof reasons[i], "%s", why);
        if (strcmp(reasons[i], why) == 0) {
            reason_count[i]++;
            return;
        }
    }
}

void test_openssl_data(const char *dir)
{
    static const char *const files[] = {"evpciph_aes_common.txt", "evpciph_sm4.txt"};
    int ran = 0, passed = 0, skipped = 0, runs = 0, found = 0;
    static rec r;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        FILE *fp = fopen(path, "r");
        if (fp == NULL) {
            printf("OpenSSL data: %s not there (see tests/provider/openssl-data/README.md)\n",
                   files[f]);
            continue;
        }
        found++;
        int line = 0;
        while (next_record(fp, &r, &line)) {
            char why[96];
            const char *mode = strrchr(r.cipher, '-');
            if (strcmp(r.avail, "fips") == 0) {
                skip("for the FIPS provider only (Availablein = fips)");
                skipped++;
                continue;
            }
            EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, r.cipher, "provider=kuai");
            if (c == NULL) {
                ERR_clear_error();
                /* by mode, whatever the record's case ("xts", "XTS") */
                int n = snprintf(why, sizeof why, "not offered by kuai: ");
                for (const char *u = mode ? mode + 1 : r.cipher; *u && n < (int)sizeof why - 1; u++)
                    why[n++] = (char)toupper((unsigned char)*u);
                why[n] = 0;
                skip(why);
                skipped++;
                continue;
            }
            ran++;
            int ok = 1;
            if (r.unknown) {
                CHECK(0, "%s:%d %s: field %s not understood by this runner", files[f], r.line,
                      r.cipher, r.unknown_key);
                ok = 0;
            }
            int want_stage = ST_OK;
            for (int s = ST_INIT; s <= ST_FINAL && r.result[0]; s++)
                if (strcmp(r.result, stage_names[s]) == 0)
                    want_stage = s;
            if (r.result[0] && want_stage == ST_OK) {
                CHECK(0, "%s:%d: Result = %s not understood", files[f], r.line, r.result);
                ok = 0;
            }
            for (int enc = 1; enc >= 0 && ok; enc--) {
                if ((enc && strcmp(r.op, "DECRYPT") == 0) || (!enc && strcmp(r.op, "ENCRYPT") == 0))
                    continue;
                /* An expected tag failure is a decryption's; encryption makes a tag. */
                if (enc && want_stage == ST_FINAL && r.has_tag && !r.op[0])
                    continue;
                size_t inlen = enc ? r.ptlen : r.ctlen;
                size_t splits[2] = {inlen, inlen ? (size_t)(r.line * 7919u) % (inlen + 1) : 0};
                for (int s = 0; s < (one_piece(c) ? 1 : 2) && ok; s++) {
                    runs++;
                    int st = run_one(c, &r, enc, splits[s]);
                    if (st != want_stage) {
                        CHECK(0, "%s:%d %s %s (split at %zu): %s, expected %s", files[f], r.line,
                              r.cipher, enc ? "encrypt" : "decrypt", splits[s], stage_names[st],
                              stage_names[want_stage]);
                        ok = 0;
                    }
                }
            }
            passed += ok;
            EVP_CIPHER_free(c);
        }
        fclose(fp);
    }
    CHECK(found > 0, "no OpenSSL test data found in %s", dir);
    printf("OpenSSL test data (%d files): %d records ran through kuai (%d encrypt/decrypt runs), "
           "%d passed, %d failed; %d skipped:\n",
           found, ran, runs, passed, ran - passed, skipped);
    for (int i = 0; i < NREASONS && reasons[i][0]; i++)
        printf("  %4d %s\n", reason_count[i], reasons[i]);
}
