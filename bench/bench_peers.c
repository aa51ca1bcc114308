/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench's peers (yardsticks from other libraries: OpenSSL 3 EVP and
 * libgcrypt) and the table of which peer each cipher's rows are held
 * against. A cipher's peers are a row in `peer_rows[]` (a cipher without one
 * is measured without peers); adding a peer
 * library is one more `peer_ops` and `peer` entries. */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if KUAI_BENCH_GCRYPT
#include <gcrypt.h>
#endif
#include <openssl/crypto.h>
#include <openssl/evp.h>

uint8_t gcm_iv[GCM_IV_LEN], gcm_aad[GCM_AAD_LEN];

/* The key and IV every peer uses (peers are yardsticks: their output is
 * never compared with kuai's while timing). */
static void peer_key_iv(uint8_t key[64], uint8_t iv[32])
{
    fill(key, 64, 77);
    fill(iv, 32, 78);
}

/* ---- OpenSSL 3 EVP (OSSL_NO_AESNI_CAP: bench_internal.h) ---- */

typedef struct ossl_state {
    const peer *p;
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;  /* the peer's direction */
    EVP_CIPHER_CTX *ectx; /* AEAD decryption: an encrypting twin for prepare */
    uint8_t tag[GCM_TAG_LEN];
} ossl_state;

static void ossl_label(const peer *p, char *buf, size_t n)
{
    const char *cap = getenv("OPENSSL_ia32cap");
    int no_aesni = cap && !strcmp(cap, OSSL_NO_AESNI_CAP);
    /* the switch only concerns AES; OpenSSL's SM4 is plain C on x86 */
    int is_aes = !strncmp(p->impl, "AES", 3);
    snprintf(buf, n, "openssl-%u.%u %s%s", OPENSSL_version_major(), OPENSSL_version_minor(),
             p->algo, no_aesni && is_aes ? " (no AES-NI)" : "");
}

static EVP_CIPHER_CTX *ossl_ctx(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv)
{
    EVP_CIPHER_CTX *ec = EVP_CIPHER_CTX_new();
    if (!ec)
        ossl_die("EVP_CIPHER_CTX_new");
    if (!EVP_CipherInit_ex2(ec, c, key, iv, enc, NULL))
        ossl_die("EVP_CipherInit_ex2");
    /* the library pads nothing here: lengths are whole blocks */
    EVP_CIPHER_CTX_set_padding(ec, 0);
    return ec;
}

static void *ossl_open(const peer *p)
{
    ossl_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->p = p;
    s->cipher = EVP_CIPHER_fetch(NULL, p->impl, NULL);
    if (!s->cipher)
        ossl_die("EVP_CIPHER_fetch");
    uint8_t key[64], iv[32];
    int kl = EVP_CIPHER_get_key_length(s->cipher);
    if (kl <= 0 || kl > (int)sizeof key)
        die("unexpected key length %d for %s", kl, p->impl);
    peer_key_iv(key, iv);
    if (p->aead) {
        /* GCM's default IV length is 12 bytes: the IV comes with each call */
        if (EVP_CIPHER_get_iv_length(s->cipher) != GCM_IV_LEN)
            die("OpenSSL %s: IV length %d, expected %d", p->impl,
                EVP_CIPHER_get_iv_length(s->cipher), GCM_IV_LEN);
        s->ctx = ossl_ctx(s->cipher, !p->decrypt, key, NULL);
        if (p->decrypt)
            s->ectx = ossl_ctx(s->cipher, 1, key, NULL);
    } else {
        s->ctx = ossl_ctx(s->cipher, !p->decrypt, key, iv);
    }
    return s;
}

/* One GCM message. tag is written (enc) or checked (dec, check != 0);
 * dec with check == 0 leaves the context mid-message, which the next
 * call's re-initialisation discards. */
static void ossl_gcm(EVP_CIPHER_CTX *ec, int enc, int check, const uint8_t *in, uint8_t *out,
                     size_t len, uint8_t *tag)
{
    int outl = 0, finl = 0;
    if (!EVP_CipherInit_ex2(ec, NULL, NULL, gcm_iv, enc, NULL))
        ossl_die("EVP_CipherInit_ex2 (GCM IV)");
    if (!enc && check && !EVP_CIPHER_CTX_ctrl(ec, EVP_CTRL_AEAD_SET_TAG, GCM_TAG_LEN, tag))
        ossl_die("EVP_CTRL_AEAD_SET_TAG");
    if (!EVP_CipherUpdate(ec, NULL, &outl, gcm_aad, GCM_AAD_LEN))
        ossl_die("EVP_CipherUpdate (GCM AAD)");
    if (!EVP_CipherUpdate(ec, out, &outl, in, (int)len) || (size_t)outl != len)
        ossl_die("EVP_CipherUpdate (GCM)");
    if (!enc && !check)
        return;
    if (!EVP_CipherFinal_ex(ec, out + outl, &finl) || finl != 0)
        ossl_die(enc ? "EVP_EncryptFinal_ex (GCM)" : "EVP_DecryptFinal_ex (GCM tag check)");
    if (enc && !EVP_CIPHER_CTX_ctrl(ec, EVP_CTRL_AEAD_GET_TAG, GCM_TAG_LEN, tag))
        ossl_die("EVP_CTRL_AEAD_GET_TAG");
}

static void ossl_prepare(void *state, const uint8_t *in, size_t len)
{
    ossl_state *s = state;
    if (!s->p->aead || !s->p->decrypt)
        return;
    /* decrypt without the tag, re-encrypt: that gives in back, and its tag */
    uint8_t *pt = xalloc(len), *ct = xalloc(len);
    ossl_gcm(s->ctx, 0, 0, in, pt, len, NULL);
    ossl_gcm(s->ectx, 1, 1, pt, ct, len, s->tag);
    if (memcmp(ct, in, len) != 0)
        die("OpenSSL %s: GCM decrypt/encrypt round trip differs", s->p->impl);
    free(pt);
    free(ct);
}

static void ossl_run(void *state, const uint8_t *const *in, uint8_t *const *out, size_t n,
                     size_t len)
{
    ossl_state *s = state;
    for (size_t i = 0; i < n; i++) {
        if (s->p->aead) {
            ossl_gcm(s->ctx, !s->p->decrypt, 1, in[i], out[i], len, s->tag);
        } else {
            int outl = 0;
            if (!EVP_CipherUpdate(s->ctx, out[i], &outl, in[i], (int)len) || (size_t)outl != len)
                ossl_die("EVP_CipherUpdate");
        }
    }
}

static void ossl_close(void *state)
{
    ossl_state *s = state;
    EVP_CIPHER_CTX_free(s->ctx);
    EVP_CIPHER_CTX_free(s->ectx);
    EVP_CIPHER_free(s->cipher);
    free(s);
}

static const peer_ops ossl_ops = {ossl_label, ossl_open, ossl_prepare, ossl_run, ossl_close};

#if KUAI_BENCH_GCRYPT
/* ---- libgcrypt ----
 * Initialised once in kuai_bench_main (gcry_check_version, then
 * GCRYCTL_INITIALIZATION_FINISHED); it picks its own AES-NI/AVX2/VAES
 * code from the CPU, and the header prints its hardware-feature list. */
static char gcry_ver[32]; /* "1.10", from gcry_check_version(NULL) */

static void gcry_die(const char *what, gcry_error_t e)
{
    die("libgcrypt %s failed: %s (%s)", what, gcry_strerror(e), gcry_strsource(e));
}

#define G(call, what)                                                                              \
    do {                                                                                           \
        gcry_error_t e_ = (call);                                                                  \
        if (e_)                                                                                    \
            gcry_die((what), e_);                                                                  \
    } while (0)

typedef struct gcry_state {
    const peer *p;
    gcry_cipher_hd_t h;
    uint8_t tag[GCM_TAG_LEN];
} gcry_state;

static void gcry_label(const peer *p, char *buf, size_t n)
{
    snprintf(buf, n, "libgcrypt-%s %s", gcry_ver, p->algo);
}

static void *gcry_open(const peer *p)
{
    gcry_state *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->p = p;
    G(gcry_cipher_open(&s->h, p->gcry_algo, p->gcry_mode, 0), "gcry_cipher_open");
    uint8_t key[64], iv[32];
    size_t kl = gcry_cipher_get_algo_keylen(p->gcry_algo);
    size_t bl = gcry_cipher_get_algo_blklen(p->gcry_algo);
    if (kl == 0 || kl > sizeof key || bl == 0 || bl > sizeof iv)
        die("libgcrypt: unexpected key/block length %zu/%zu for %s", kl, bl, p->algo);
    peer_key_iv(key, iv);
    G(gcry_cipher_setkey(s->h, key, kl), "gcry_cipher_setkey");
    if (p->gcry_mode == GCRY_CIPHER_MODE_CBC)
        G(gcry_cipher_setiv(s->h, iv, bl), "gcry_cipher_setiv");
    else if (p->gcry_mode == GCRY_CIPHER_MODE_CTR)
        G(gcry_cipher_setctr(s->h, iv, bl), "gcry_cipher_setctr");
    return s;
}

/* One GCM message; see ossl_gcm. */
static void gcry_gcm(gcry_cipher_hd_t h, int enc, int check, const uint8_t *in, uint8_t *out,
                     size_t len, uint8_t *tag)
{
    G(gcry_cipher_setiv(h, gcm_iv, GCM_IV_LEN), "gcry_cipher_setiv (GCM)");
    G(gcry_cipher_authenticate(h, gcm_aad, GCM_AAD_LEN), "gcry_cipher_authenticate");
    if (enc) {
        G(gcry_cipher_encrypt(h, out, len, in, len), "gcry_cipher_encrypt (GCM)");
        G(gcry_cipher_gettag(h, tag, GCM_TAG_LEN), "gcry_cipher_gettag");
    } else {
        G(gcry_cipher_decrypt(h, out, len, in, len), "gcry_cipher_decrypt (GCM)");
        if (check)
            G(gcry_cipher_checktag(h, tag, GCM_TAG_LEN), "gcry_cipher_checktag");
    }
}

static void gcry_prepare(void *state, const uint8_t *in, size_t len)
{
    gcry_state *s = state;
    if (!s->p->aead || !s->p->decrypt)
        return;
    uint8_t *pt = xalloc(len), *ct = xalloc(len);
    gcry_gcm(s->h, 0, 0, in, pt, len, NULL);
    gcry_gcm(s->h, 1, 1, pt, ct, len, s->tag);
    if (memcmp(ct, in, len) != 0)
        die("libgcrypt %s: GCM decrypt/encrypt round trip differs", s->p->algo);
    free(pt);
    free(ct);
}

static void gcry_run(void *state, const uint8_t *const *in, uint8_t *const *out, size_t n,
                     size_t len)
{
    gcry_state *s = state;
    for (size_t i = 0; i < n; i++) {
        if (s->p->aead)
            gcry_gcm(s->h, !s->p->decrypt, 1, in[i], out[i], len, s->tag);
        else if (s->p->decrypt)
            G(gcry_cipher_decrypt(s->h, out[i], len, in[i], len), "gcry_cipher_decrypt");
        else
            G(gcry_cipher_encrypt(s->h, out[i], len, in[i], len), "gcry_cipher_encrypt");
    }
}

static void gcry_close(void *state)
{
    gcry_state *s = state;
    gcry_cipher_close(s->h);
    free(s);
}

static const peer_ops gcry_ops = {gcry_label, gcry_open, gcry_prepare, gcry_run, gcry_close};

void gcry_setup(void)
{
    /* gcry_check_version must be the first call into the library */
    const char *v = gcry_check_version(GCRYPT_VERSION);
    if (!v)
        die("libgcrypt is older than the headers (%s) this was built with", GCRYPT_VERSION);
    G(gcry_control(GCRYCTL_DISABLE_SECMEM, 0), "GCRYCTL_DISABLE_SECMEM");
    G(gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0), "GCRYCTL_INITIALIZATION_FINISHED");
    /* "1.10.1" -> "1.10", as the OpenSSL label shows "3.0" */
    unsigned maj = 0, min = 0;
    if (sscanf(gcry_check_version(NULL), "%u.%u", &maj, &min) != 2)
        die("cannot parse the libgcrypt version '%s'", gcry_check_version(NULL));
    snprintf(gcry_ver, sizeof gcry_ver, "%u.%u", maj, min);
}

/* libgcrypt's "hwflist:" line (the CPU features it uses), or "?". */
void gcry_hwflist(char *buf, size_t n)
{
    char *txt = NULL;
    size_t tlen = 0;
    snprintf(buf, n, "?");
    FILE *f = open_memstream(&txt, &tlen);
    if (!f)
        return;
    gcry_control(GCRYCTL_PRINT_CONFIG, f);
    fclose(f);
    const char *h = txt ? strstr(txt, "hwflist:") : NULL;
    if (h) {
        h += strlen("hwflist:");
        size_t l = strcspn(h, "\n");
        /* "aesni:pclmul:...:" -> "aesni pclmul ..." */
        snprintf(buf, n, "%.*s", (int)(l < 400 ? l : 400), h);
        for (char *q = buf; *q; q++)
            if (*q == ':')
                *q = ' ';
        size_t bl = strlen(buf);
        while (bl && buf[bl - 1] == ' ')
            buf[--bl] = '\0';
    }
    free(txt);
}

#else
void gcry_setup(void)
{
}
void gcry_hwflist(char *buf, size_t n)
{
    snprintf(buf, n, "(libgcrypt not linked: kuai_bench has its rows)");
}
#endif

/* ---- The peers used ---- */

/* uBlock exists in no library installed here, so its yardstick is the
 * most common fast cipher of the same block size: AES-128-CTR (and
 * AES-128-GCM for the GCM rows), constant-time software AES when
 * OPENSSL_ia32cap turns AES-NI off. */
static const peer peer_ossl_aes128ctr = {
    .ops = &ossl_ops, .algo = "aes-128-ctr", .impl = "AES-128-CTR"};
static const peer peer_ossl_aes128gcm_enc = {
    .ops = &ossl_ops, .algo = "aes-128-gcm-enc", .impl = "AES-128-GCM", .aead = 1};
static const peer peer_ossl_aes128gcm_dec = {
    .ops = &ossl_ops, .algo = "aes-128-gcm-dec", .impl = "AES-128-GCM", .decrypt = 1, .aead = 1};
/* SM4: libgcrypt doing the row's own mode and direction (it has AES-NI /
 * AVX2 SM4 for CTR, CBC decryption and GCM), and OpenSSL's SM4-CTR (plain
 * C) as a second CTR peer. */
static const peer peer_ossl_sm4ctr = {.ops = &ossl_ops, .algo = "sm4-ctr", .impl = "SM4-CTR"};
#if KUAI_BENCH_GCRYPT
#define GSM4(name, mode, dec, ae)                                                                  \
    {                                                                                              \
        .ops = &gcry_ops, .algo = (name), .gcry_algo = GCRY_CIPHER_SM4,                            \
        .gcry_mode = GCRY_CIPHER_MODE_##mode, .decrypt = (dec), .aead = (ae)                       \
    }
static const peer peer_gcry_sm4ecb_enc = GSM4("sm4-ecb-enc", ECB, 0, 0);
static const peer peer_gcry_sm4ecb_dec = GSM4("sm4-ecb-dec", ECB, 1, 0);
static const peer peer_gcry_sm4cbc_enc = GSM4("sm4-cbc-enc", CBC, 0, 0);
static const peer peer_gcry_sm4cbc_dec = GSM4("sm4-cbc-dec", CBC, 1, 0);
static const peer peer_gcry_sm4ctr = GSM4("sm4-ctr", CTR, 0, 0);
static const peer peer_gcry_sm4gcm_enc = GSM4("sm4-gcm-enc", GCM, 0, 1);
static const peer peer_gcry_sm4gcm_dec = GSM4("sm4-gcm-dec", GCM, 1, 1);
#undef GSM4
#else
/* without libgcrypt: OpenSSL's SM4 (plain C on x86) in the row's own mode */
#define OSM4(name, d, dec)                                                                         \
    {                                                                                              \
        .ops = &ossl_ops, .algo = (name), .impl = (d), .decrypt = (dec)                            \
    }
static const peer peer_ossl_sm4[4] = {
    OSM4("sm4-ecb-enc", "SM4-ECB", 0), OSM4("sm4-ecb-dec", "SM4-ECB", 1),
    OSM4("sm4-cbc-enc", "SM4-CBC", 0), OSM4("sm4-cbc-dec", "SM4-CBC", 1)};
#undef OSM4
#endif

/* AES: OpenSSL EVP and libgcrypt, each in the row's own mode and direction,
 * indexed by row kind (Y_*; the sweep is ECB encryption). The OpenSSL peers
 * of the AES-NI/VAES backends run with OpenSSL's AES-NI on, whatever
 * OPENSSL_ia32cap says (see run_aes_child in bench.c); the portable backends are held
 * against what the environment asked for (make bench: AES-NI off). */
#define OAES(bits, m, d, ae)                                                                       \
    {                                                                                              \
        .ops = &ossl_ops, .algo = "aes-" #bits "-" m, .impl = "AES-" #bits "-" d, .aead = ae,      \
        .decrypt = 0                                                                               \
    }
#define OAES_DEC(bits, m, d, ae)                                                                   \
    {                                                                                              \
        .ops = &ossl_ops, .algo = "aes-" #bits "-" m, .impl = "AES-" #bits "-" d, .aead = ae,      \
        .decrypt = 1                                                                               \
    }
#define GAES(bits, m, mode, dec, ae)                                                               \
    {                                                                                              \
        .ops = &gcry_ops, .algo = "aes-" #bits "-" m, .gcry_algo = GCRY_CIPHER_AES##bits,          \
        .gcry_mode = GCRY_CIPHER_MODE_##mode, .decrypt = (dec), .aead = (ae)                       \
    }
/* Y_ECB_ENC, Y_ECB_DEC, Y_CBC_ENC, Y_CBC_DEC, Y_CTR, Y_CTR_ALT, Y_GCM_ENC, Y_GCM_DEC, Y_SWEEP */
#define OSSL_AES_PEERS(bits)                                                                       \
    {                                                                                              \
        OAES(bits, "ecb-enc", "ECB", 0), OAES_DEC(bits, "ecb-dec", "ECB", 0),                      \
            OAES(bits, "cbc-enc", "CBC", 0), OAES_DEC(bits, "cbc-dec", "CBC", 0),                  \
            OAES(bits, "ctr", "CTR", 0), {0}, OAES(bits, "gcm-enc", "GCM", 1),                     \
            OAES_DEC(bits, "gcm-dec", "GCM", 1), OAES(bits, "ecb-enc", "ECB", 0)                   \
    }
#define GCRY_AES_PEERS(bits)                                                                       \
    {                                                                                              \
        GAES(bits, "ecb-enc", ECB, 0, 0), GAES(bits, "ecb-dec", ECB, 1, 0),                        \
            GAES(bits, "cbc-enc", CBC, 0, 0), GAES(bits, "cbc-dec", CBC, 1, 0),                    \
            GAES(bits, "ctr", CTR, 0, 0), {0}, GAES(bits, "gcm-enc", GCM, 0, 1),                   \
            GAES(bits, "gcm-dec", GCM, 1, 1), GAES(bits, "ecb-enc", ECB, 0, 0)                     \
    }
static const peer ossl_aes[3][9] = {OSSL_AES_PEERS(128), OSSL_AES_PEERS(192), OSSL_AES_PEERS(256)};
#if KUAI_BENCH_GCRYPT
static const peer gcry_aes[3][9] = {GCRY_AES_PEERS(128), GCRY_AES_PEERS(192), GCRY_AES_PEERS(256)};
#endif
#undef GAES
#undef GCRY_AES_PEERS
#undef OAES
#undef OAES_DEC
#undef OSSL_AES_PEERS

#define UBLOCK_PEERS(gcm_enc, gcm_dec)                                                             \
    {&peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     &peer_ossl_aes128ctr,                                                                         \
     NULL,                                                                                         \
     gcm_enc,                                                                                      \
     gcm_dec,                                                                                      \
     &peer_ossl_aes128ctr},                                                                        \
    {                                                                                              \
        0                                                                                          \
    }

/* Peers per cipher, keyed by kuai name; .id is set by bench_cipher_of. */
static const struct {
    const char *name;
    bench_cipher bc;
} peer_rows[] = {
    {"ublock-128-128", {0, UBLOCK_PEERS(&peer_ossl_aes128gcm_enc, &peer_ossl_aes128gcm_dec)}},
    {"ublock-128-256", {0, UBLOCK_PEERS(&peer_ossl_aes128gcm_enc, &peer_ossl_aes128gcm_dec)}},
    /* 256-bit blocks: no GCM */
    {"ublock-256-256", {0, UBLOCK_PEERS(NULL, NULL)}},
#if KUAI_BENCH_GCRYPT
    {"sm4",
     {0,
      {&peer_gcry_sm4ecb_enc, &peer_gcry_sm4ecb_dec, &peer_gcry_sm4cbc_enc, &peer_gcry_sm4cbc_dec,
       &peer_gcry_sm4ctr, &peer_ossl_sm4ctr, &peer_gcry_sm4gcm_enc, &peer_gcry_sm4gcm_dec,
       &peer_gcry_sm4ecb_enc},
      {0}}},
#else
    {"sm4",
     {0,
      {&peer_ossl_sm4[0], &peer_ossl_sm4[1], &peer_ossl_sm4[2], &peer_ossl_sm4[3],
       &peer_ossl_sm4ctr, NULL, NULL, NULL, &peer_ossl_sm4[0]},
      {0}}},
#endif
/* AES: OpenSSL in the row's own mode, then the same row against libgcrypt;
 * the sweep against libgcrypt (OPENSSL_ia32cap does not reach it). */
#if KUAI_BENCH_GCRYPT
#define AES_PEERS(i)                                                                               \
    {&ossl_aes[i][0], &ossl_aes[i][1], &ossl_aes[i][2], &ossl_aes[i][3], &ossl_aes[i][4], NULL,    \
     &ossl_aes[i][6], &ossl_aes[i][7], &gcry_aes[i][8]},                                           \
    {                                                                                              \
        &gcry_aes[i][0], &gcry_aes[i][1], &gcry_aes[i][2], &gcry_aes[i][3], &gcry_aes[i][4], NULL, \
            &gcry_aes[i][6], &gcry_aes[i][7], NULL                                                 \
    }
#else
#define AES_PEERS(i)                                                                               \
    {&ossl_aes[i][0], &ossl_aes[i][1], &ossl_aes[i][2], &ossl_aes[i][3], &ossl_aes[i][4], NULL,    \
     &ossl_aes[i][6], &ossl_aes[i][7], &ossl_aes[i][8]},                                           \
    {                                                                                              \
        0                                                                                          \
    }
#endif
    {"aes-128", {0, AES_PEERS(0)}},
    {"aes-192", {0, AES_PEERS(1)}},
    {"aes-256", {0, AES_PEERS(2)}},
#undef AES_PEERS
};
#undef UBLOCK_PEERS

bench_cipher bench_cipher_of(kuai_cipher c)
{
    bench_cipher bc = {c, {0}, {0}};
    for (size_t i = 0; i < sizeof peer_rows / sizeof peer_rows[0]; i++)
        if (!strcmp(peer_rows[i].name, kuai_cipher_name(c))) {
            bc = peer_rows[i].bc;
            bc.id = c;
        }
    return bc;
}

int bench_is_aes(kuai_cipher c)
{
    return !strncmp(kuai_cipher_name(c), "aes-", 4);
}

#if KUAI_BENCH_GCRYPT
/* libgcrypt SM4 in `mode` over len bytes under key (16 bytes), as an
 * independent reference for kuai's SM4: ECB, or one GCM message with the
 * benchmark's IV and AAD (tag written). */
void gcry_sm4_ref(int mode, const uint8_t *key, const uint8_t *in, uint8_t *out, size_t len,
                  uint8_t *tag)
{
    gcry_cipher_hd_t h;
    G(gcry_cipher_open(&h, GCRY_CIPHER_SM4, mode, 0), "gcry_cipher_open (check)");
    G(gcry_cipher_setkey(h, key, 16), "gcry_cipher_setkey (check)");
    if (mode == GCRY_CIPHER_MODE_GCM)
        gcry_gcm(h, 1, 1, in, out, len, tag);
    else
        G(gcry_cipher_encrypt(h, out, len, in, len), "gcry_cipher_encrypt (check)");
    gcry_cipher_close(h);
}
#endif
