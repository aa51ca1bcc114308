/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EVP model test (issue 15): random sequences of EVP calls run on OpenSSL's
 * default provider and on kuai's side by side. Every call must return the
 * same on both (success or refusal), with the same output length and bytes
 * (GCM bytes and tags only when the IV is the caller's: an IV the provider
 * generates differs between the two). On kuai's side no keystream may ever
 * come out twice: every 8-byte window of every encryption's keystream
 * (ciphertext ^ plaintext, CTR and GCM) goes into a set, and the IVs the
 * model gives are fresh random ones, so a window seen twice can only be the
 * provider reusing a key and IV.
 *
 * The model knows just enough of the state to keep its calls meaningful:
 * after a call both sides refused, the next call gives a new IV (what a
 * caller must do; what happens after a refusal is otherwise not defined the
 * same way by both providers), and a GCM re-initialisation with a new key
 * or the other direction while a message runs gives an IV too (OpenSSL's
 * own provider then goes on with a half-reset state; kuai ends the
 * message). KUAI_MODEL_SEED=N repeats a run; KUAI_MODEL_SEQUENCES=N sets how
 * many sequences (default 4000).
 */
#include "provider_test.h"

#include <openssl/evp.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t mrng;
static uint32_t mr(void)
{
    mrng ^= mrng << 13;
    mrng ^= mrng >> 7;
    mrng ^= mrng << 17;
    return (uint32_t)(mrng >> 11);
}
static void mbytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)mr();
}

/* M_STREAM: CFB and OFB, streams like CTR, but a re-init without an IV
 * restarts from the IV given (as CBC), so their keystream windows repeat by
 * the caller's choice and are not checked for reuse. */
enum { M_GCM, M_CBC, M_CTR, M_STREAM };
static const struct {
    const char *name;
    int mode;
} model_ciphers[] = {{"AES-128-GCM", M_GCM},    {"AES-128-CBC", M_CBC}, {"AES-128-CTR", M_CTR},
                     {"SM4-CBC", M_CBC},        {"SM4-CTR", M_CTR},     {"AES-128-CFB", M_STREAM},
                     {"AES-128-OFB", M_STREAM}, {"SM4-CFB", M_STREAM},  {"SM4-OFB", M_STREAM}};
#define NCIPHERS (sizeof model_ciphers / sizeof model_ciphers[0])

typedef struct model {
    EVP_CIPHER *c[2]; /* [0] default provider, [1] kuai */
    EVP_CIPHER_CTX *x[2];
    int mode;
    int has_cipher; /* an init with the cipher has succeeded */
    int enc;
    size_t ivlen; /* the IV length an IV is given with (GCM: settable) */
    int iv_given; /* an IV was given since the cipher was set */
    int key_enc;  /* the direction the key was set up for (-1: no key) */
    int cur_key;
    int iv_random;  /* GCM: the message runs under a generated IV */
    int tag_random; /* GCM: the tag the contexts hold is from such a message */
    int running;    /* GCM: a message has started and not finished */
    int refused;    /* the last call was refused on both sides */
    int failed;     /* the sides disagreed: this sequence stops */
    uint8_t key[2][16];
    uint8_t last_tag[16];
    uint8_t iv[32];   /* the last IV given */
    uint8_t iv_count; /* IVs given in this sequence (< 40 < 256) */
    char log[6000];
    size_t loglen;
} model;

static unsigned long long n_calls, n_refusals, n_windows, n_generated, n_no_iv;

/* The keystream windows seen on kuai's side in this sequence. */
#define WIN_BITS 15
static uint64_t win_val[1u << WIN_BITS];
static uint32_t win_gen[1u << WIN_BITS], cur_gen;
static size_t win_used;

static int window_seen(uint64_t w)
{
    uint32_t h = (uint32_t)((w * 0x9e3779b97f4a7c15ULL) >> (64 - WIN_BITS));
    while (win_gen[h] == cur_gen) {
        if (win_val[h] == w)
            return 1;
        h = (h + 1) & ((1u << WIN_BITS) - 1);
    }
    if (win_used < (3u << WIN_BITS) / 4) {
        win_gen[h] = cur_gen;
        win_val[h] = w;
        win_used++;
    }
    return 0;
}

static void mlog(model *m, const char *fmt, const char *what, long a, long b)
{
    if (m->loglen < sizeof m->log - 100) {
        int n = snprintf(m->log + m->loglen, sizeof m->log - m->loglen, fmt, what, a, b);
        if (n > 0)
            m->loglen += (size_t)n;
    }
}

/* CBC and CTR data before any IV: the default provider runs it under an
 * all-zero IV, kuai refuses it (every such context would share that IV).
 * The one intended difference; the caller then gives an IV. */
static int no_iv_refused(model *m, const char *what, int r1)
{
    n_calls++;
    mlog(m, "  %s -> (no IV yet) kuai %ld%.0ld\n", what, r1 > 0, 0);
    ERR_clear_error();
    if (r1 > 0) {
        m->failed = 1;
        CHECK(0, "EVP model: kuai ran %s before any IV was set; calls:\n%s", what, m->log);
        return -1;
    }
    n_no_iv++;
    m->refused = 1;
    return 0;
}

/* Both sides' results of one call; returns 1 both ok, 0 both refused, -1 disagree. */
static int agree(model *m, const char *what, int r0, int r1, const uint8_t *o0, const uint8_t *o1,
                 int l0, int l1, int cmp_bytes)
{
    n_calls++;
    r0 = r0 > 0;
    r1 = r1 > 0;
    mlog(m, "  %s -> %ld/%ld\n", what, r0, r1);
    ERR_clear_error();
    if (r0 != r1 ||
        (r0 && (l0 != l1 || (cmp_bytes && l0 > 0 && memcmp(o0, o1, (size_t)l0) != 0)))) {
        m->failed = 1;
        CHECK(0, "EVP model: %s differs: default %d (%d bytes), kuai %d (%d bytes); calls:\n%s",
              what, r0, l0, r1, l1, m->log);
        return -1;
    }
    if (!r0)
        n_refusals++;
    m->refused = !r0;
    return r0;
}

static void model_reset(model *m)
{
    m->has_cipher = m->iv_given = m->iv_random = m->tag_random = m->running = 0;
    m->key_enc = -1;
    m->refused = 0;
    m->ivlen = m->mode == M_GCM ? 12 : 16;
}

static int do_init(model *m, int pass_cipher, int enc, int key, int give_iv)
{
    uint8_t *iv = m->iv;
    if (pass_cipher) /* a new provider context: its default IV length */
        m->ivlen = m->mode == M_GCM ? 12 : 16;
    if (give_iv) { /* never one given before in the sequence (even 1-byte IVs) */
        mbytes(iv, sizeof m->iv);
        iv[0] = m->iv_count++;
    }
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CipherInit_ex2(m->x[s], pass_cipher ? m->c[s] : NULL,
                                  key >= 0 ? m->key[key] : NULL, give_iv ? iv : NULL, enc, NULL);
    char what[96];
    snprintf(what, sizeof what, "init(%s, %s, key %d, %s)", pass_cipher ? "cipher" : "NULL",
             enc ? "enc" : "dec", key, give_iv ? "iv" : "no iv");
    int a = agree(m, what, r[0], r[1], NULL, NULL, 0, 0, 0);
    if (a == 1) {
        if (pass_cipher) {
            m->has_cipher = 1;
            m->iv_given = m->running = m->iv_random = 0;
            m->key_enc = -1;
        }
        if (key >= 0) {
            m->key_enc = enc;
            m->cur_key = key;
        }
        if (m->mode == M_GCM && !give_iv && m->running && (key >= 0 || enc != m->enc))
            m->running = 0; /* not reached: the caller gives an IV then */
        m->enc = enc;
        if (give_iv) {
            m->iv_given = 1;
            m->running = m->iv_random = 0;
        }
    }
    return a;
}

/* A GCM message (AAD or data) has started on both sides. */
static void gcm_started(model *m)
{
    if (m->mode == M_GCM && !m->running) {
        m->running = 1;
        if (!m->iv_given) {
            m->iv_random = 1;
            n_generated++;
        }
    }
}

/* keep: where to put the default side's output (its length in *kept). */
static int do_update_keep(model *m, const uint8_t *in, int n, int aad, uint8_t *keep, int *kept)
{
    uint8_t out[2][600] = {{0}};
    int l[2] = {0, 0}, r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CipherUpdate(m->x[s], aad ? NULL : out[s], &l[s], in, n);
    char what[64];
    snprintf(what, sizeof what, "%s(%d bytes)", aad ? "aad" : "update", n);
    if (m->mode != M_GCM && !m->iv_given && m->has_cipher)
        return no_iv_refused(m, what, r[1]);
    int a = agree(m, what, r[0], r[1], out[0], out[1], aad ? 0 : l[0], aad ? 0 : l[1],
                  !(m->mode == M_GCM && (m->iv_random || (!m->running && !m->iv_given))));
    if (a == 1 && keep != NULL) {
        memcpy(keep, out[0], (size_t)l[0]);
        *kept = l[0];
    }
    if (a == 1 && n > 0) {
        gcm_started(m);
        /* Keystream windows of kuai's encryptions (CTR is one function both ways,
         * but only encryption makes ciphertexts). */
        if (!aad && m->enc && m->mode != M_CBC && m->mode != M_STREAM && l[1] == n) {
            for (int i = 0; i + 8 <= n; i++) {
                uint64_t w = 0;
                for (int j = 0; j < 8; j++)
                    w = w << 8 | (uint8_t)(out[1][i + j] ^ in[i + j]);
                n_windows++;
                if (window_seen(w)) {
                    m->failed = 1;
                    CHECK(0, "EVP model: kuai repeated a keystream (same key and IV); calls:\n%s",
                          m->log);
                    return -1;
                }
            }
        }
    }
    return a;
}

static int do_update(model *m, const uint8_t *in, int n, int aad)
{
    return do_update_keep(m, in, n, aad, NULL, NULL);
}

static int do_final_keep(model *m, uint8_t *keep, int *kept)
{
    uint8_t out[2][64] = {{0}};
    int l[2] = {0, 0}, r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CipherFinal_ex(m->x[s], out[s], &l[s]);
    if (m->mode == M_CBC && !m->iv_given && m->has_cipher)
        return no_iv_refused(m, "final", r[1]);
    int a = agree(m, "final", r[0], r[1], out[0], out[1], l[0], l[1], 1);
    if (a == 1 && m->mode == M_GCM) {
        gcm_started(m); /* an empty message also uses its IV */
        if (m->enc)
            m->tag_random = m->iv_random;
        m->running = 0;
    }
    if (a == 1 && keep != NULL) {
        memcpy(keep, out[0], (size_t)l[0]);
        *kept = l[0];
    }
    return a;
}

static int do_final(model *m)
{
    return do_final_keep(m, NULL, NULL);
}

static int do_get_tag(model *m, int n)
{
    uint8_t tag[2][32];
    memset(tag, 0, sizeof tag);
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CIPHER_CTX_ctrl(m->x[s], EVP_CTRL_AEAD_GET_TAG, n, tag[s]);
    char what[32];
    snprintf(what, sizeof what, "get_tag(%d)", n);
    int a = agree(m, what, r[0], r[1], tag[0], tag[1], n, n, !m->tag_random);
    if (a == 1 && n == 16)
        memcpy(m->last_tag, tag[0], 16);
    return a;
}

static int do_set_tag(model *m, const uint8_t *tag, int n)
{
    uint8_t t[32];
    memcpy(t, tag, (size_t)n);
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CIPHER_CTX_ctrl(m->x[s], EVP_CTRL_AEAD_SET_TAG, n, t);
    char what[32];
    snprintf(what, sizeof what, "set_tag(%d)", n);
    int a = agree(m, what, r[0], r[1], NULL, NULL, 0, 0, 0);
    /* Refused, the default provider has still copied it in; a shorter tag
     * leaves the bytes after it as they were. */
    if (a == 0)
        m->tag_random = 1;
    else if (a == 1 && n == 16)
        m->tag_random = 0;
    return a;
}

static int do_set_ivlen(model *m, int n)
{
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CIPHER_CTX_ctrl(m->x[s], EVP_CTRL_AEAD_SET_IVLEN, n, NULL);
    char what[32];
    snprintf(what, sizeof what, "set_ivlen(%d)", n);
    int a = agree(m, what, r[0], r[1], NULL, NULL, 0, 0, 0);
    if (a == 1 && (size_t)n != m->ivlen) {
        m->ivlen = (size_t)n;
        m->running = 0; /* an IV set or made before is void: refused until a new one */
    }
    return a;
}

static int do_padding(model *m, int pad)
{
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CIPHER_CTX_set_padding(m->x[s], pad);
    return agree(m, pad ? "padding(on)" : "padding(off)", r[0], r[1], NULL, NULL, 0, 0, 0);
}

static int do_copy(model *m)
{
    EVP_CIPHER_CTX *y[2];
    int r[2], keep_copy = mr() & 1;
    for (int s = 0; s < 2; s++) {
        y[s] = EVP_CIPHER_CTX_new();
        r[s] = EVP_CIPHER_CTX_copy(y[s], m->x[s]);
    }
    int a = agree(m, keep_copy ? "copy, go on with the copy" : "copy, go on with the original",
                  r[0], r[1], NULL, NULL, 0, 0, 0);
    /* Only one of the two goes on: two copies encrypting under one IV would
     * be the caller's nonce reuse, not the provider's. */
    for (int s = 0; s < 2; s++) {
        if (a == 1 && keep_copy) {
            EVP_CIPHER_CTX_free(m->x[s]);
            m->x[s] = y[s];
        } else {
            EVP_CIPHER_CTX_free(y[s]);
        }
    }
    return a;
}

static int do_reset(model *m)
{
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CIPHER_CTX_reset(m->x[s]);
    int a = agree(m, "reset", r[0], r[1], NULL, NULL, 0, 0, 0);
    model_reset(m);
    return a;
}

/* A whole encryption and its decryption (a real ciphertext, so that
 * decryption's tag and padding checks pass or fail for a reason), with a
 * corrupted tag or ciphertext now and then and padding turned off midway. */
static int do_round_trip(model *m)
{
    uint8_t aad[40], pt[200], ct[300], tag[16];
    int aadlen = (int)(mr() % 40), len = (int)(mr() % 200), a;
    mbytes(aad, sizeof aad);
    mbytes(pt, sizeof pt);
    int key = (int)(mr() % 2);
    if ((a = do_init(m, !m->has_cipher, 1, key, 1)) != 1)
        return a;
    if (m->mode == M_GCM && (a = do_update(m, aad, aadlen, 1)) != 1)
        return a;
    int total = 0, fl = 0;
    if ((a = do_update_keep(m, pt, len, 0, ct, &total)) != 1 ||
        (a = do_final_keep(m, ct + total, &fl)) != 1)
        return a;
    total += fl;
    if (m->mode == M_GCM && (a = do_get_tag(m, 16)) != 1)
        return a;
    memcpy(tag, m->last_tag, 16);
    int damage = mr() % 4 == 0;
    if (damage && total > 0)
        ct[mr() % (unsigned)total] ^= 1;
    else if (damage)
        tag[0] ^= 1;
    /* decryption: the same key and IV again (a decryption may), given anew;
     * the key too: OpenSSL's CBC keeps an encryption key schedule otherwise */
    int r[2];
    for (int s = 0; s < 2; s++)
        r[s] = EVP_CipherInit_ex2(m->x[s], NULL, m->key[key], m->iv, 0, NULL);
    if ((a = agree(m, "init(NULL, dec, same iv)", r[0], r[1], NULL, NULL, 0, 0, 0)) != 1)
        return a;
    m->enc = m->key_enc = 0;
    m->running = 0;
    if (m->mode == M_GCM && (a = do_set_tag(m, tag, 16)) != 1)
        return a;
    if (m->mode == M_GCM && (a = do_update(m, aad, aadlen, 1)) != 1)
        return a;
    int cut = total ? (int)(mr() % (unsigned)total) : 0;
    if ((a = do_update(m, ct, cut, 0)) != 1)
        return a;
    if (m->mode == M_CBC && mr() % 3 == 0 && (a = do_padding(m, 0)) != 1)
        return a;
    if ((a = do_update(m, ct + cut, total - cut, 0)) != 1)
        return a;
    return do_final(m);
}

static void run_sequence(model *m, unsigned nops)
{
    for (unsigned op = 0; op < nops && !m->failed; op++) {
        int gcm = m->mode == M_GCM;
        unsigned pick = m->has_cipher && !m->refused ? mr() % 100 : 0;
        uint8_t buf[320];
        mbytes(buf, sizeof buf);
        if (pick < 18) { /* init */
            int pass_cipher = !m->has_cipher || mr() % 5 == 0;
            int enc = mr() % 3 != 0;
            int key = mr() % 3 == 0 ? -1 : (int)(mr() % 2);
            int give_iv = m->refused || mr() % 3 != 0;
            if (gcm && m->running && !pass_cipher && (key >= 0 || enc != m->enc))
                give_iv = 1;
            if (m->refused && !m->has_cipher)
                pass_cipher = 1;
            /* OpenSSL's CBC turned round without a key decrypts with the
             * encryption key schedule (wrong output): not modelled */
            if (m->mode == M_CBC && key < 0 && !pass_cipher && enc != m->key_enc)
                key = (int)(mr() % 2);
            do_init(m, pass_cipher, enc, key, give_iv);
        } else if (pick < 26) {
            if (gcm) {
                static const int lens[] = {1, 8, 12, 13, 16};
                do_set_ivlen(m, lens[mr() % 5]);
            } else {
                do_padding(m, (int)(mr() & 1));
            }
        } else if (pick < 36) {
            if (gcm)
                do_update(m, buf, (int)(mr() % 40), 1);
            else
                do_padding(m, (int)(mr() & 1));
        } else if (pick < 62) {
            int n = mr() % 8 == 0 ? (int)(mr() % 300) : (int)(mr() % 48);
            do_update(m, buf, n, 0);
        } else if (pick < 72) {
            do_final(m);
        } else if (pick < 78) {
            if (gcm) {
                static const int tl[] = {16, 12, 4, 17};
                do_get_tag(m, tl[mr() % 4]);
            } else {
                do_padding(m, (int)(mr() & 1));
            }
        } else if (pick < 82) {
            if (gcm) {
                static const int tl[] = {16, 12, 4};
                do_set_tag(m, mr() & 1 ? m->last_tag : buf, tl[mr() % 3]);
            } else {
                do_final(m);
            }
        } else if (pick < 87) {
            do_copy(m);
        } else if (pick < 90) {
            do_reset(m);
        } else {
            do_round_trip(m);
        }
    }
}

void test_evp_model(void)
{
    const char *e = getenv("KUAI_MODEL_SEED");
    uint64_t seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
    const char *ns = getenv("KUAI_MODEL_SEQUENCES");
    unsigned nseq = ns ? (unsigned)strtoul(ns, NULL, 0) : 4000;
    mrng = seed * 2862933555777941757ULL + 3037000493ULL;
    if (mrng == 0)
        mrng = 1;
    model m;
    memset(&m, 0, sizeof m);
    EVP_CIPHER *ciphers[NCIPHERS][2];
    for (size_t i = 0; i < NCIPHERS; i++) {
        ciphers[i][0] = EVP_CIPHER_fetch(NULL, model_ciphers[i].name, "provider=default");
        ciphers[i][1] = EVP_CIPHER_fetch(NULL, model_ciphers[i].name, "provider=kuai");
    }
    if (!ciphers[0][1]) {
        printf("SKIP EVP model: the kuai provider has no AES in this build\n");
        for (size_t i = 0; i < NCIPHERS; i++)
            EVP_CIPHER_free(ciphers[i][0]), EVP_CIPHER_free(ciphers[i][1]);
        return;
    }
    int failures_before = failures;
    unsigned seq;
    for (seq = 0; seq < nseq; seq++) {
        size_t ci = mr() % NCIPHERS;
        m.mode = model_ciphers[ci].mode;
        m.failed = 0;
        m.loglen = 0;
        mlog(&m, "  [%s, sequence %ld, seed %ld]\n", model_ciphers[ci].name, (long)seq, (long)seed);
        for (int s = 0; s < 2; s++) {
            m.c[s] = ciphers[ci][s];
            m.x[s] = EVP_CIPHER_CTX_new();
        }
        mbytes(m.key[0], 16);
        mbytes(m.key[1], 16);
        mbytes(m.last_tag, 16);
        model_reset(&m);
        m.iv_count = 0;
        cur_gen++;
        win_used = 0;
        run_sequence(&m, 1 + mr() % 40);
        for (int s = 0; s < 2; s++)
            EVP_CIPHER_CTX_free(m.x[s]);
        if (failures - failures_before >= 5)
            break; /* enough to go on */
    }
    for (size_t i = 0; i < NCIPHERS; i++) {
        EVP_CIPHER_free(ciphers[i][0]);
        EVP_CIPHER_free(ciphers[i][1]);
    }
    printf("EVP model (seed %llu; KUAI_MODEL_SEED=%llu repeats it): %u sequences, %llu calls on "
           "each provider, %llu of them refused by both, %llu GCM messages under a generated IV, "
           "%llu keystream windows checked for reuse, %llu CBC/CTR/CFB/OFB calls before any IV "
           "refused by "
           "kuai "
           "(the default provider runs them under a zero IV), %d disagreements\n",
           (unsigned long long)seed, (unsigned long long)seed, seq, n_calls, n_refusals,
           n_generated, n_windows, n_no_iv, failures - failures_before);
}
