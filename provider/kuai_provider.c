/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai.so: an OpenSSL 3 provider exposing kuai's uBlock, SM4 and AES through
 * EVP. Here: ECB, CBC, CTR and GCM, where one generic cipher implementation
 * serves every algorithm (the table kp_algs says which kuai cipher and which
 * mode each name is), CBC's TLS record mode (its records' padding and MAC
 * taken off in kuai_prov_tls.c) and the provider itself; XTS, CCM, CFB, OFB
 * and CMAC are in kuai_prov_modes.c.
 *
 * The module links the kuai library statically and exports only
 * OSSL_provider_init. It uses libcrypto only for OSSL_PARAM helpers and
 * OPENSSL_cleanse, which the loading process already has.
 */
#include "kuai_provider.h"
#include "kuai_prov_slots.h"
#include "kuai_prov_tls.h"

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

enum kp_mode {
    KP_ECB = EVP_CIPH_ECB_MODE,
    KP_CBC = EVP_CIPH_CBC_MODE,
    KP_CTR = EVP_CIPH_CTR_MODE,
    KP_GCM = EVP_CIPH_GCM_MODE
};

typedef struct kp_alg {
    char names[KP_NAMES_MAX];
    kuai_cipher cipher;
    enum kp_mode mode;
} kp_alg;

/* The AES and SM4 aliases and OIDs of OpenSSL 3.0's default provider (as
 * `openssl list -cipher-algorithms` prints them), so a name fetched from
 * either provider means the same algorithm. */
static const kp_fact kp_facts[] = {
    {"SM4-ECB", "1.2.156.10197.1.104.1", 0},
    {"SM4-CBC", "SM4:1.2.156.10197.1.104.2", 0},
    {"SM4-CTR", "1.2.156.10197.1.104.7", 0},
    {"AES-128-ECB", "2.16.840.1.101.3.4.1.1", 0},
    {"AES-128-CBC", "AES128:2.16.840.1.101.3.4.1.2", 0},
    {"AES-128-GCM", "id-aes128-GCM:2.16.840.1.101.3.4.1.6", 0},
    {"AES-192-ECB", "2.16.840.1.101.3.4.1.21", 0},
    {"AES-192-CBC", "AES192:2.16.840.1.101.3.4.1.22", 0},
    {"AES-192-GCM", "id-aes192-GCM:2.16.840.1.101.3.4.1.26", 0},
    {"AES-256-ECB", "2.16.840.1.101.3.4.1.41", 0},
    {"AES-256-CBC", "AES256:2.16.840.1.101.3.4.1.42", 0},
    {"AES-256-GCM", "id-aes256-GCM:2.16.840.1.101.3.4.1.46", 0},
};

/* This file's modes, per cipher: ECB, CBC and CTR for every cipher, GCM
 * for 16-byte blocks. Its table: row i is slot i's algorithm. */
static const struct {
    const char *name;
    enum kp_mode mode;
} kp_modes[] = {{"ECB", KP_ECB}, {"CBC", KP_CBC}, {"CTR", KP_CTR}, {"GCM", KP_GCM}};
static kp_alg kp_algs[KP_NSLOTS];
static size_t kp_nalgs;

#define KP_GCM_IV_DEFAULT 12
#define KP_GCM_IV_MAX 128 /* as OpenSSL's own GCM (GCM_IV_MAX_SIZE) */
#define KP_TAG_MAX 16
/* TLS 1.2 GCM records (RFC 5288): 13-byte AAD, 8-byte explicit nonce, 16-byte tag. */
#define KP_TLS_AAD_LEN EVP_AEAD_TLS1_AAD_LEN
#define KP_TLS_EXPLICIT_IV EVP_GCM_TLS_EXPLICIT_IV_LEN
#define KP_TLS_TAG EVP_GCM_TLS_TAG_LEN

static int kp_debug;

void kp_key_unref(kp_key *key)
{
    if (key != NULL && atomic_fetch_sub(&key->refs, 1) == 1) {
        kuai_key_wipe(&key->k);
        OPENSSL_cleanse(key->raw, sizeof key->raw);
        free(key);
    }
}

int kp_key_same(const kp_key *k, const unsigned char *key, size_t keylen)
{
    return k != NULL && keylen == k->raw_len && keylen <= sizeof k->raw &&
           CRYPTO_memcmp(k->raw, key, keylen) == 0;
}

enum kp_gcm_state { KP_GCM_NO_IV, KP_GCM_IV_BUFFERED, KP_GCM_RUNNING, KP_GCM_DONE };

typedef struct kp_ctx {
    const kp_core *core; /* the provider context: where errors are raised */
    const kp_alg *alg;
    kp_key *key;
    int enc;
    unsigned padding;
    size_t bs;    /* cipher block size */
    size_t ivlen; /* fixed for ECB/CBC/CTR, settable for GCM */
    int iv_set;
    uint8_t oiv[KP_GCM_IV_MAX];  /* IV as given (GCM: the next message's IV) */
    uint8_t iv[KUAI_MAX_BLOCK];  /* CBC chaining value / CTR counter */
    uint8_t buf[KUAI_MAX_BLOCK]; /* ECB/CBC partial block */
    size_t buflen;
    uint8_t ks[KUAI_MAX_BLOCK]; /* CTR keystream of the partial block */
    size_t num;                 /* bytes of ks used */
    /* GCM */
    enum kp_gcm_state gcm_state;
    kuai_gcm_ctx gcm;
    /* A context set up under the key (when gcm_tmpl_set): each message
     * starts as a copy of it, restarted with its IV (kuai_gcm_restart), so
     * it skips GHASH's key set-up (the powers of H). Right after gcm, and
     * sizeof(kuai_gcm_ctx) is a multiple of 64, so the copy keeps the
     * GHASH material's alignment and it need not move. */
    kuai_gcm_ctx gcm_tmpl;
    int gcm_tmpl_set;
    uint8_t tag[KP_TAG_MAX];
    size_t taglen; /* 0 = not set */
    /* A decryption's expected tag was set (SET_TAG) since the last final:
     * tag may also hold the tag an encryption made, or the previous
     * decryption's, and neither may authenticate this message. */
    int tag_given;
    int iv_gen; /* TLS-style fixed IV with an incrementing invocation field */
    /* Under iv_gen: a message was started under oiv as it stands (by an
     * update without EVP_CTRL_GCM_IV_GEN, or SET_IV_INV), so IV_GEN must
     * move on before handing an IV out. */
    int iv_spent;
    uint8_t tls_aad[KP_TLS_AAD_LEN]; /* TLS 1.2 record header for the next EVP_Cipher */
    int tls_aad_set;
    /* CBC under a TLS 1.0-1.2 or DTLS record layer (libssl's
     * OSSL_CIPHER_PARAM_TLS_VERSION; 0: not): every update is one record,
     * padded here when encrypting, and unpadded with its MAC (tls_mac_size
     * bytes, 0 with encrypt-then-MAC) taken out when decrypting */
    unsigned tls_version;
    size_t tls_mac_size;
    uint8_t tls_mac[KP_TLS_MAC_MAX]; /* the last record's MAC (OSSL_CIPHER_PARAM_TLS_MAC) */
    uint64_t bytes;                  /* processed, for KUAI_PROVIDER_DEBUG */
} kp_ctx;

_Static_assert(sizeof(kuai_gcm_ctx) % 64 == 0, "kp_ctx.gcm_tmpl's copies would move");

void *kp_ctx_new(const kp_core *core, size_t size)
{
    void *ctx = calloc(1, size);
    if (ctx == NULL)
        kp_raise(core, KP_R_OUT_OF_MEMORY);
    return ctx;
}

void *kp_ctx_dup(const kp_core *core, const void *src, size_t size)
{
    void *dst = malloc(size);
    if (dst == NULL) {
        kp_raise(core, KP_R_OUT_OF_MEMORY);
        return NULL;
    }
    memcpy(dst, src, size);
    return dst;
}

static void *kp_newctx(void *provctx, const kp_alg *alg)
{
    kp_ctx *ctx = kp_ctx_new(provctx, sizeof(*ctx));
    if (ctx == NULL)
        return NULL;
    ctx->core = provctx;
    ctx->alg = alg;
    ctx->padding = 1;
    ctx->bs = kuai_block_size(alg->cipher);
    ctx->ivlen = alg->mode == KP_ECB ? 0 : alg->mode == KP_GCM ? KP_GCM_IV_DEFAULT : ctx->bs;
    return ctx;
}

static void kp_freectx(void *vctx)
{
    kp_ctx *ctx = vctx;
    if (ctx == NULL)
        return;
    if (kp_debug && ctx->bytes > 0)
        fprintf(stderr, "kuai-provider: %.*s freed after %llu bytes through kuai backend %s\n",
                (int)strcspn(ctx->alg->names, ":"), ctx->alg->names, (unsigned long long)ctx->bytes,
                ctx->key ? kuai_key_backend(&ctx->key->k) : "-");
    kp_key_unref(ctx->key);
    kuai_gcm_wipe(&ctx->gcm);
    kuai_gcm_wipe(&ctx->gcm_tmpl);
    OPENSSL_cleanse(ctx, sizeof(*ctx));
    free(ctx);
}

static void *kp_dupctx(void *vctx)
{
    kp_ctx *src = vctx;
    kp_ctx *dst = kp_ctx_dup(src->core, src, sizeof(*dst));
    if (dst == NULL)
        return NULL;
    if (dst->key != NULL)
        atomic_fetch_add(&dst->key->refs, 1);
    dst->bytes = 0;
    return dst;
}

int kp_raise_kuai_at(const kp_core *core, const char *file, int line, const char *func, int r)
{
    int reason = r == KUAI_ERR_AUTH       ? KP_R_TAG_VERIFY_FAILED
                 : r == KUAI_ERR_LENGTH   ? KP_R_INVALID_INPUT_LENGTH
                 : r == KUAI_ERR_KEY_LEN  ? KP_R_INVALID_KEY_LENGTH
                 : r == KUAI_ERR_EXTERNAL ? KP_R_RANDOM_FAILED
                                          : KP_R_CIPHER_OPERATION_FAILED;
    return kp_raise_at(core, file, line, func, reason, "kuai: %s", kuai_strerror(r));
}

int kp_key_set(const kp_core *core, kp_key **slot, kuai_cipher c, const unsigned char *key,
               size_t keylen)
{
    int r;
    if (keylen != kuai_key_size(c))
        return kp_raise_data(core, KP_R_INVALID_KEY_LENGTH, "%zu bytes, %s takes %zu", keylen,
                             kuai_cipher_name(c), kuai_key_size(c));
    if (*slot != NULL && atomic_load(&(*slot)->refs) == 1) {
        /* No copy shares it: set the new key up in place, since the 8 KiB
         * allocation, wipe and free per re-key (openssl speed re-keys every
         * call; TLS and SSH at every rekey) cost more than the AES key
         * expansion itself. Same cipher and backend, so the new schedule
         * covers the old one's bytes, except uBlock's bitsliced masks
         * (kuai.h, kuai_key_wipe): the old key's stay in this context's
         * key until the new key's first long call rebuilds them, and are
         * wiped with it when the last context lets go of it. */
        if ((r = kuai_key_init(&(*slot)->k, c, key, keylen)) == KUAI_OK) {
            memcpy((*slot)->raw, key, keylen);
            (*slot)->raw_len = keylen;
            return 1;
        }
        kp_key_unref(*slot);
        *slot = NULL;
        return kp_raise_kuai(core, r);
    }
    kp_key *nk = malloc(sizeof(*nk));
    if (nk == NULL)
        return kp_raise(core, KP_R_OUT_OF_MEMORY);
    if ((r = kuai_key_init(&nk->k, c, key, keylen)) != KUAI_OK) {
        kuai_key_wipe(&nk->k);
        free(nk);
        return kp_raise_kuai(core, r);
    }
    atomic_init(&nk->refs, 1);
    memcpy(nk->raw, key, keylen);
    nk->raw_len = keylen;
    kp_key_unref(*slot);
    *slot = nk;
    return 1;
}

void kp_debug_key(const char *names, int enc, const kp_key *key)
{
    if (kp_debug)
        fprintf(stderr, "kuai-provider: %.*s %s, kuai backend %s%s\n", (int)strcspn(names, ":"),
                names, enc ? "encrypt" : "decrypt", kuai_key_backend(&key->k),
                kuai_backend_leaky(kuai_key_backend(&key->k))
                    ? " (WARNING: not constant time, leaks through the cache)"
                    : "");
}

static int kp_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int kp_init(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                   size_t ivlen, const OSSL_PARAM params[], int enc)
{
    kp_ctx *ctx = vctx;
    int was_enc = ctx->enc;
    ctx->enc = enc;
    ctx->buflen = 0;
    ctx->num = 0;
    if (ctx->alg->mode == KP_GCM) {
        /* An IV encrypts at most one message (defect 1 of issue 15): only a
         * new IV starts one. Without an IV, a finished message stays
         * finished (every later update, AAD or final is refused, as in
         * OpenSSL's default provider), and a running one goes on only if
         * neither the key nor the direction changes; never does a re-init
         * restart a message under an IV that was already used. */
        if (iv != NULL) {
            if (ivlen == 0 || ivlen > KP_GCM_IV_MAX)
                return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH,
                                     "%zu bytes, GCM takes 1..%d", ivlen, KP_GCM_IV_MAX);
            ctx->ivlen = ivlen;
            memcpy(ctx->oiv, iv, ivlen);
            ctx->iv_gen = 0;
            ctx->iv_spent = 0;
            kuai_gcm_wipe(&ctx->gcm);
            ctx->gcm_state = KP_GCM_IV_BUFFERED;
        } else if (ctx->gcm_state == KP_GCM_RUNNING && (key != NULL || enc != was_enc)) {
            kuai_gcm_wipe(&ctx->gcm);
            ctx->gcm_state = KP_GCM_DONE;
        }
        ctx->tls_aad_set = 0;
        /* An encryption has no expected tag: one set earlier for a
         * decryption must not outlive a switch to encrypting. (A
         * decryption keeps it: OpenSSL's evp_test sets the tag before the
         * key and IV.) */
        if (enc)
            ctx->tag_given = 0;
    } else if (iv != NULL && ctx->alg->mode != KP_ECB) {
        if (ivlen != ctx->ivlen)
            return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH, "%zu bytes, expected %zu",
                                 ivlen, ctx->ivlen);
        /* `openssl enc` keeps IVs in a 16-byte buffer (EVP_MAX_IV_LENGTH)
         * followed by the key's, so a 32-byte IV reaches us as 16 given
         * bytes || the key's first 16 (defect 12 of issue 15). That IV is
         * refused, and the context keeps no IV: no output under a wrong IV.
         * A caller's own IV matches the key that way with probability
         * 2^-128. CRYPTO_memcmp: no branch on key bytes. */
        if (key != NULL && ivlen > EVP_MAX_IV_LENGTH &&
            CRYPTO_memcmp(iv + EVP_MAX_IV_LENGTH, key,
                          ivlen - EVP_MAX_IV_LENGTH < keylen ? ivlen - EVP_MAX_IV_LENGTH
                                                             : keylen) == 0) {
            ctx->iv_set = 0;
            /* what the refusal shows anyway: the IV's tail is the key's head */
            return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH,
                                 "a %zu-byte IV ending in the key's first bytes (openssl enc "
                                 "passes only 16 IV bytes)",
                                 ivlen);
        }
        memcpy(ctx->oiv, iv, ivlen);
        memcpy(ctx->iv, iv, ivlen);
        ctx->iv_set = 1;
    } else if (ctx->iv_set && ctx->alg->mode == KP_CBC) {
        /* As OpenSSL's own CBC: a re-init without an IV restarts from the original one. */
        memcpy(ctx->iv, ctx->oiv, ctx->ivlen);
    }
    /* The key set up already given again (openssl speed -aead does at
     * every message, as do programs that pass the key with each IV): the
     * key and the GCM template stay (each restart checks the template's H
     * anyway). Key setup and the powers of H had been a quarter of a
     * 16-byte AES-GCM message there. */
    if (key != NULL && !kp_key_same(ctx->key, key, keylen)) {
        /* the template's GHASH material is the old key's (a restart would
         * find that and make it anew for every message) */
        kuai_gcm_wipe(&ctx->gcm_tmpl);
        ctx->gcm_tmpl_set = 0;
        if (!kp_key_set(ctx->core, &ctx->key, ctx->alg->cipher, key, keylen))
            return 0;
        kp_debug_key(ctx->alg->names, enc, ctx->key);
    }
    return kp_set_ctx_params(ctx, params);
}

/* Whole blocks of ECB or CBC; len is a multiple of the block size. */
static int kp_blocks(kp_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len)
{
    const kuai_key *k = &ctx->key->k;
    int r;
    if (len == 0)
        return 1;
    if (ctx->alg->mode == KP_ECB)
        r = ctx->enc ? kuai_ecb_encrypt(k, in, out, len) : kuai_ecb_decrypt(k, in, out, len);
    else
        r = ctx->enc ? kuai_cbc_encrypt(k, ctx->iv, in, out, len)
                     : kuai_cbc_decrypt(k, ctx->iv, in, out, len);
    if (r != KUAI_OK)
        return kp_raise_kuai(ctx->core, r);
    ctx->bytes += len;
    return 1;
}

static int kp_ctr(kp_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len)
{
    const kuai_key *k = &ctx->key->k;
    size_t bs = ctx->bs;
    int r;
    if (kp_overlap(in, out, len))
        return kp_raise(ctx->core, KP_R_OVERLAPPING_BUFFERS);
    ctx->bytes += len;
    while (ctx->num != 0 && len > 0) {
        *out++ = *in++ ^ ctx->ks[ctx->num];
        ctx->num = (ctx->num + 1) % bs;
        len--;
    }
    size_t whole = len - len % bs;
    if (whole > 0 && (r = kuai_ctr_crypt(k, ctx->iv, in, out, whole)) != KUAI_OK)
        return kp_raise_kuai(ctx->core, r);
    in += whole;
    out += whole;
    len -= whole;
    if (len > 0) {
        /* Keystream for the tail, kept so the next call continues inside it. */
        memset(ctx->ks, 0, bs);
        if ((r = kuai_ctr_crypt(k, ctx->iv, ctx->ks, ctx->ks, bs)) != KUAI_OK)
            return kp_raise_kuai(ctx->core, r);
        for (size_t i = 0; i < len; i++)
            out[i] = in[i] ^ ctx->ks[i];
        ctx->num = len;
    }
    return 1;
}

/* memcpy through a pointer the compiler cannot see through: the
 * template's 960 bytes, copied inline, became rep movsq, whose start-up
 * was ~30 TSC cycles of a 16-byte AES-GCM message (Xeon, Sapphire
 * Rapids); libc's vector copy takes about a third of that. */
static void *(*const volatile kp_memcpy)(void *, const void *, size_t) = memcpy;

static int kp_gcm_start(kp_ctx *ctx)
{
    int r;
    if (ctx->gcm_state == KP_GCM_RUNNING)
        return 1;
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (ctx->gcm_state == KP_GCM_NO_IV) {
        /* As OpenSSL's default provider: an encryption given no IV runs
         * under a random one of at least 12 bytes (read back with
         * OSSL_CIPHER_PARAM_IV); a decryption needs the sender's. */
        if (!ctx->enc)
            return kp_raise(ctx->core, KP_R_NO_IV_SET);
        if (ctx->ivlen < KP_GCM_IV_DEFAULT)
            return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH,
                                 "%zu bytes, a random IV takes %d or more", ctx->ivlen,
                                 KP_GCM_IV_DEFAULT);
        if (getrandom(ctx->oiv, ctx->ivlen, 0) != (ssize_t)ctx->ivlen)
            return kp_raise(ctx->core, KP_R_RANDOM_FAILED);
        ctx->gcm_state = KP_GCM_IV_BUFFERED;
    }
    if (ctx->gcm_state != KP_GCM_IV_BUFFERED)
        return kp_raise(ctx->core, KP_R_IV_ALREADY_USED);
    if (ctx->gcm_tmpl_set) {
        kp_memcpy(&ctx->gcm, &ctx->gcm_tmpl, sizeof ctx->gcm);
        if ((r = kuai_gcm_restart(&ctx->gcm, &ctx->key->k, ctx->oiv, ctx->ivlen)) != KUAI_OK)
            return kp_raise_kuai(ctx->core, r);
    } else {
        if ((r = kuai_gcm_init(&ctx->gcm, &ctx->key->k, ctx->oiv, ctx->ivlen)) != KUAI_OK)
            return kp_raise_kuai(ctx->core, r);
        kp_memcpy(&ctx->gcm_tmpl, &ctx->gcm, sizeof ctx->gcm);
        ctx->gcm_tmpl_set = 1;
    }
    ctx->gcm_state = KP_GCM_RUNNING;
    ctx->iv_spent = 1;
    return 1;
}

/* in != NULL: AAD when out == NULL, else data. in == NULL: the tag step. */
static int kp_gcm_step(kp_ctx *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    if (in == NULL) {
        if (!kp_gcm_start(ctx))
            return 0;
        int r;
        if (ctx->enc) {
            r = kuai_gcm_encrypt_final(&ctx->gcm, ctx->tag, KP_TAG_MAX);
            ctx->taglen = KP_TAG_MAX;
        } else {
            /* Only a tag set for this message authenticates it: never the
             * one an encryption on this context made, nor the previous
             * decryption's (consumed below). */
            r = !ctx->tag_given || ctx->taglen == 0
                    ? KUAI_ERR_ARG
                    : kuai_gcm_decrypt_final(&ctx->gcm, ctx->tag, ctx->taglen);
        }
        int given = ctx->tag_given;
        ctx->tag_given = 0;
        if (r != KUAI_OK && r != KUAI_ERR_AUTH) /* final wiped it, if it ran */
            kuai_gcm_wipe(&ctx->gcm);
        ctx->gcm_state = KP_GCM_DONE;
        if (r == KUAI_OK)
            return 1;
        /* the tag compare is over; its result is the call's, no secret */
        if (!ctx->enc && (!given || ctx->taglen == 0))
            return kp_raise(ctx->core, KP_R_TAG_NOT_SET);
        return kp_raise_kuai(ctx->core, r);
    }
    /* before the message starts under the IV, so that a refused update
     * leaves the context as it was */
    if (out != NULL && kp_overlap(in, out, len))
        return kp_raise(ctx->core, KP_R_OVERLAPPING_BUFFERS);
    if (!kp_gcm_start(ctx))
        return 0;
    if (len == 0)
        return 1;
    int r;
    if (out == NULL) {
        r = kuai_gcm_aad(&ctx->gcm, in, len);
    } else {
        ctx->bytes += len;
        r = ctx->enc ? kuai_gcm_encrypt_update(&ctx->gcm, in, out, len)
                     : kuai_gcm_decrypt_update(&ctx->gcm, in, out, len);
    }
    return r == KUAI_OK || kp_raise_kuai(ctx->core, r);
}

static void kp_gcm_iv_next(kp_ctx *ctx);

/* One TLS 1.2 record, in place: explicit nonce || payload || tag. The nonce
 * is the fixed IV's next invocation value (sending) or taken from the record
 * (receiving); the AAD is the header given by EVP_CTRL_AEAD_TLS1_AAD. */
static int kp_gcm_tls_record(kp_ctx *ctx, unsigned char *out, size_t *outl, const unsigned char *in,
                             size_t len)
{
    int r;
    ctx->tls_aad_set = 0;
    ctx->gcm_state = KP_GCM_DONE;
    if (in == NULL || out != in)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED, "records are processed in place");
    if (len < KP_TLS_EXPLICIT_IV + KP_TLS_TAG)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED,
                             "a %zu-byte record, shorter than its nonce and tag", len);
    if (!ctx->iv_gen || ctx->ivlen != 12)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED, "no 12-byte fixed IV set");
    uint8_t *inv = ctx->oiv + ctx->ivlen - KP_TLS_EXPLICIT_IV;
    size_t plen = len - KP_TLS_EXPLICIT_IV - KP_TLS_TAG;
    uint8_t *payload = out + KP_TLS_EXPLICIT_IV;
    if (ctx->enc) {
        /* A message already ran under this IV (no IV_GEN before it): as
         * kp_gcm_iv_gen, move on rather than seal the record under it too. */
        if (ctx->iv_spent)
            kp_gcm_iv_next(ctx);
        ctx->iv_spent = 0; /* oiv is incremented below: the next one is unused */
        memcpy(out, inv, KP_TLS_EXPLICIT_IV);
        r = kuai_gcm_encrypt(&ctx->key->k, ctx->oiv, ctx->ivlen, ctx->tls_aad, KP_TLS_AAD_LEN,
                             payload, payload, plen, payload + plen, KP_TLS_TAG);
        for (size_t i = KP_TLS_EXPLICIT_IV; i-- > 0;)
            if (++inv[i] != 0)
                break;
        *outl = len;
    } else {
        /* The record's nonce, in a copy: written into oiv, a nonce anyone
         * sent would become the next one this context seals under, after a
         * re-init for encryption. */
        uint8_t nonce[12];
        memcpy(nonce, ctx->oiv, ctx->ivlen - KP_TLS_EXPLICIT_IV);
        memcpy(nonce + ctx->ivlen - KP_TLS_EXPLICIT_IV, in, KP_TLS_EXPLICIT_IV);
        r = kuai_gcm_decrypt(&ctx->key->k, nonce, ctx->ivlen, ctx->tls_aad, KP_TLS_AAD_LEN, payload,
                             payload, plen, payload + plen, KP_TLS_TAG);
        *outl = plen;
    }
    ctx->bytes += plen;
    /* a forged record fails as a whole, its tag compared: the failure is
     * public, and OpenSSL's GCM raises one there too */
    return r == KUAI_OK || kp_raise_kuai(ctx->core, r);
}

/* Whether a TLS/DTLS version is one whose CBC records this code knows:
 * TLS 1.0 (IV chained from the previous record), TLS 1.1, 1.2, DTLS 1.0,
 * 1.2 and OpenSSL's pre-standard DTLS (an explicit IV block first). SSL 3.0
 * (padding of another form) is not, nor TLS 1.3 (AEAD only). */
static int kp_tls_cbc_version(unsigned v)
{
    return v == 0x0301 || v == 0x0302 || v == 0x0303 || v == 0xfeff || v == 0xfefd || v == 0x0100;
}

/*
 * One TLS CBC record, in place (as libssl passes it), under a record layer's
 * parameters. Encryption: the record (explicit IV, data and MAC, all made by
 * libssl) gets its padding, bs - len % bs bytes of value count - 1, and is
 * encrypted. Decryption: a record whose length is publicly wrong (not whole
 * blocks; too short for the explicit IV, a padding byte and the MAC) fails;
 * any other is decrypted and its padding and MAC taken off in constant time
 * (kp_tls_cbc_unpad). *outl excludes the explicit IV, the padding and the
 * MAC: libssl skips the IV itself and asks for the MAC with
 * OSSL_CIPHER_PARAM_TLS_MAC.
 */
static int kp_cbc_tls_record(kp_ctx *ctx, unsigned char *out, size_t *outl, size_t outsize,
                             const unsigned char *in, size_t inl)
{
    const size_t bs = ctx->bs, mac_size = ctx->tls_mac_size;
    if (in == NULL || out != in)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED, "records are processed in place");
    if (!ctx->padding || ctx->buflen != 0)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED,
                             "padding off, or bytes buffered by an update before");
    if (!ctx->iv_set)
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (ctx->enc) {
        const size_t pad = bs - inl % bs;
        if (inl > SIZE_MAX - bs || outsize < inl + pad)
            return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
        memset(out + inl, (int)(pad - 1), pad);
        if (!kp_blocks(ctx, out, out, inl + pad))
            return 0;
        *outl = inl + pad;
        return 1;
    }
    const size_t skip = ctx->tls_version == 0x0301 ? 0 : bs; /* the explicit IV */
    /* lengths only: public, as the record's length on the wire */
    if (inl == 0 || inl % bs != 0 || inl < skip + 1 + mac_size)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED,
                             "a %zu-byte record: not whole %zu-byte blocks, or too short for its "
                             "IV, MAC (%zu bytes) and padding",
                             inl, bs, mac_size);
    if (outsize < inl)
        return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
    if (!kp_blocks(ctx, in, out, inl))
        return 0;
    /* a bad padding leaves the length as if there were none and a random
     * MAC (kuai_prov_tls.c), so that libssl's MAC check fails as for any
     * forged record */
    uint8_t rnd[KP_TLS_MAC_MAX];
    if (mac_size > 0 && getrandom(rnd, mac_size, 0) != (ssize_t)mac_size)
        return kp_raise(ctx->core, KP_R_RANDOM_FAILED);
    size_t data_len;
    const size_t good =
        kp_tls_cbc_unpad(out + skip, inl - skip, mac_size, rnd, &data_len, ctx->tls_mac);
    /* with no MAC (encrypt-then-MAC), libssl checked it before: a bad
     * padding may fail the call, and say so once the whole record is done,
     * as OpenSSL's providers do. With a MAC (MAC-then-encrypt) nothing is
     * raised: a bad padding must look like a bad MAC, to libssl's timing
     * and to its error queue alike (Lucky 13). */
    if (mac_size == 0 && !good)
        return kp_raise(ctx->core, KP_R_TLS_RECORD_FAILED);
    *outl = data_len;
    return 1;
}

/* ECB, CBC and CTR read inl bytes from in and write to out (a padded
 * decryption's update holds bytes back, but writes them later): neither
 * buffer may be missing when there are bytes, whatever the output length
 * this update would have (1), else refused (0) rather than dereferenced. */
static int kp_buffers_given(const kp_ctx *ctx, const unsigned char *out, const unsigned char *in,
                            size_t inl)
{
    return inl == 0 || (in != NULL && out != NULL) ||
           kp_raise_data(ctx->core, KP_R_CIPHER_OPERATION_FAILED, "%zu bytes, but no %s", inl,
                         in == NULL ? "input" : "output");
}

static int kp_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                     const unsigned char *in, size_t inl)
{
    kp_ctx *ctx = vctx;
    if (!kp_length_ok(ctx->core, inl))
        return 0;
    if (ctx->alg->mode == KP_GCM && inl == 0) {
        /* an empty update, never the tag step: accepted in any state, as
         * by the default provider */
        *outl = 0;
        return 1;
    }
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (ctx->alg->mode == KP_GCM) {
        if (in == NULL)
            return kp_raise_data(ctx->core, KP_R_CIPHER_OPERATION_FAILED, "no input");
        if (out != NULL && outsize < inl)
            return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
        /* libssl seals TLS 1.2 records through EVP_CipherUpdate on provided ciphers. */
        if (ctx->tls_aad_set)
            return kp_gcm_tls_record(ctx, out, outl, in, inl);
        if (!kp_gcm_step(ctx, out, in, inl))
            return 0;
        *outl = inl;
        return 1;
    }
    if (!kp_buffers_given(ctx, out, in, inl))
        return 0;
    if (ctx->alg->mode != KP_ECB && !ctx->iv_set)
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (ctx->alg->mode == KP_CTR) {
        if (outsize < inl)
            return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
        if (!kp_ctr(ctx, in, out, inl))
            return 0;
        *outl = inl;
        return 1;
    }
    if (ctx->tls_version != 0)
        return kp_cbc_tls_record(ctx, out, outl, outsize, in, inl);

    /* ECB/CBC: keep partial blocks; a padded decryption holds back its last
     * whole block until final, where the padding is checked. */
    size_t bs = ctx->bs, written = 0;
    int hold = !ctx->enc && ctx->padding;
    size_t total = ctx->buflen + inl;
    size_t out_blocks = total / bs;
    if (hold && total % bs == 0 && out_blocks > 0)
        out_blocks--;
    if (outsize < out_blocks * bs)
        return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
    /* What the steps below write must not land on input they have yet to
     * read (in place while bytes are buffered: the output runs behind the
     * input), checked before anything moves so that a refused update
     * leaves the context as it was (as kp_overlap, on addresses). The
     * direct blocks are read as they are written (exactly in place is
     * fine), and the bytes after them (a partial block, or a padded
     * decryption's held-back block) are kept only once they are written:
     * so the direct blocks' output must miss all of the input from i on,
     * not just their own part of it. */
    size_t take = ctx->buflen > 0 ? (bs - ctx->buflen < inl ? bs - ctx->buflen : inl) : 0;
    int via_buf = ctx->buflen > 0 && ctx->buflen + take == bs && out_blocks > 0;
    size_t direct = ctx->buflen > 0 && !via_buf ? 0 : out_blocks * bs - (via_buf ? bs : 0);
    size_t rest = inl - take; /* the input from i on: direct blocks, then the bytes kept */
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)in + take, od = o + (via_buf ? bs : 0);
    if ((via_buf && i < o + bs && o < i + rest) ||
        (direct > 0 && i != od && i < od + direct && od < i + rest))
        return kp_raise_data(ctx->core, KP_R_OVERLAPPING_BUFFERS,
                             "output over input not yet read (%zu bytes buffered)", ctx->buflen);
    if (ctx->buflen > 0) {
        memcpy(ctx->buf + ctx->buflen, in, take);
        ctx->buflen += take;
        in += take;
        inl -= take;
        if (ctx->buflen == bs && out_blocks > 0) {
            if (!kp_blocks(ctx, ctx->buf, out, bs))
                return 0;
            written = bs;
            ctx->buflen = 0;
        }
    }
    if (ctx->buflen == 0) {
        /* direct == out_blocks * bs - written */
        if (!kp_blocks(ctx, in, out + written, direct))
            return 0;
        written += direct;
        memcpy(ctx->buf, in + direct, inl - direct);
        ctx->buflen = inl - direct;
    }
    *outl = written;
    return 1;
}

static int kp_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    kp_ctx *ctx = vctx;
    size_t bs = ctx->bs;
    *outl = 0;
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (ctx->alg->mode == KP_GCM)
        return kp_gcm_step(ctx, NULL, NULL, 0);
    if (ctx->alg->mode == KP_CTR)
        return 1;
    if (ctx->alg->mode == KP_CBC &&
        !ctx->iv_set) /* as update: no CBC block under an IV nobody set */
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (ctx->tls_version != 0) /* a record layer's context: every record is one update */
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED, "a TLS record has no final");
    /* A final that writes a block (padded encryption), or that may (a
     * decryption holding one back: how many of its bytes come out is
     * plaintext), needs somewhere to write it. */
    if (out == NULL && (ctx->enc ? ctx->padding != 0 : ctx->buflen == bs))
        return kp_raise_data(ctx->core, KP_R_CIPHER_OPERATION_FAILED,
                             "a final with a block to write, but no output");
    if (ctx->enc) {
        if (!ctx->padding)
            return ctx->buflen == 0 || kp_raise_data(ctx->core, KP_R_WRONG_FINAL_BLOCK_LENGTH,
                                                     "%zu bytes left, padding off", ctx->buflen);
        if (outsize < bs)
            return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
        uint8_t p = (uint8_t)(bs - ctx->buflen);
        memset(ctx->buf + ctx->buflen, p, p);
        if (!kp_blocks(ctx, ctx->buf, out, bs))
            return 0;
        ctx->buflen = 0;
        *outl = bs;
        return 1;
    }
    if (!ctx->padding) {
        if (ctx->buflen == 0)
            return 1;
        /* The block a padded update held back before padding was turned
         * off: returned as it is, unchecked (defect 11 of issue 15; the
         * default provider does the same). */
        if (ctx->buflen != bs)
            return kp_raise_data(ctx->core, KP_R_WRONG_FINAL_BLOCK_LENGTH,
                                 "%zu bytes left, padding off", ctx->buflen);
        if (outsize < bs)
            return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
        if (!kp_blocks(ctx, ctx->buf, out, bs))
            return 0;
        ctx->buflen = 0;
        *outl = bs;
        return 1;
    }
    if (ctx->buflen != bs)
        return kp_raise_data(ctx->core, KP_R_WRONG_FINAL_BLOCK_LENGTH,
                             "%zu bytes left, a padded decryption ends on a whole block",
                             ctx->buflen);
    if (!kp_blocks(ctx, ctx->buf, ctx->buf, bs))
        return 0;
    ctx->buflen = 0;
    /* Padding check without a branch on any byte of the padding. */
    unsigned p = ctx->buf[bs - 1];
    unsigned bad = ((p - 1) >> 8) | ((unsigned)(bs - p) >> 8); /* p == 0 or p > bs */
    for (size_t i = 0; i < bs; i++) {
        unsigned in_pad = (unsigned)((bs - 1 - i) - p) >> 8 & 1; /* i >= bs - p */
        bad |= in_pad & ((ctx->buf[i] ^ p) + 0xff) >> 8;
    }
    if (bad & 1) {
        OPENSSL_cleanse(ctx->buf, bs);
        /* as OpenSSL's block modes: the call fails on it anyway (a
         * decryption whose padding must not be told apart from a bad MAC
         * is a TLS record, kp_cbc_tls_record) */
        return kp_raise(ctx->core, KP_R_BAD_DECRYPT);
    }
    if (outsize < bs - p) /* no length in the data: p is plaintext */
        return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
    memcpy(out, ctx->buf, bs - p);
    OPENSSL_cleanse(ctx->buf, bs);
    *outl = bs - p;
    return 1;
}

/* EVP_Cipher: no buffering; for GCM, out == NULL is AAD and in == NULL the tag. */
static int kp_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                     const unsigned char *in, size_t inl)
{
    kp_ctx *ctx = vctx;
    if (!kp_length_ok(ctx->core, inl))
        return 0;
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (ctx->alg->mode == KP_GCM) {
        if (in != NULL && out != NULL && outsize < inl)
            return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
        if (ctx->tls_aad_set)
            return kp_gcm_tls_record(ctx, out, outl, in, inl);
        if (!kp_gcm_step(ctx, out, in, inl))
            return 0;
        *outl = in == NULL ? 0 : inl;
        return 1;
    }
    if (!kp_buffers_given(ctx, out, in, inl))
        return 0;
    if (outsize < inl)
        return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
    if (ctx->alg->mode != KP_ECB && !ctx->iv_set)
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (ctx->alg->mode == KP_CTR) {
        if (!kp_ctr(ctx, in, out, inl))
            return 0;
    } else if (inl % ctx->bs != 0) {
        return kp_raise_data(ctx->core, KP_R_INVALID_INPUT_LENGTH,
                             "%zu bytes, not whole %zu-byte blocks", inl, ctx->bs);
    } else if (!kp_blocks(ctx, in, out, inl)) {
        return 0;
    }
    *outl = inl;
    return 1;
}

/* ---- parameters ---------------------------------------------------------- */

static int kp_alg_get_params(const kp_alg *alg, OSSL_PARAM params[])
{
    size_t bs = kuai_block_size(alg->cipher);
    size_t ivlen = alg->mode == KP_ECB ? 0 : alg->mode == KP_GCM ? KP_GCM_IV_DEFAULT : bs;
    size_t evp_bs = alg->mode == KP_ECB || alg->mode == KP_CBC ? bs : 1;
    int aead = alg->mode == KP_GCM;
    return kp_alg_params(params, (unsigned)alg->mode, kuai_key_size(alg->cipher), ivlen, evp_bs,
                         aead, aead);
}

static const OSSL_PARAM kp_gettable_alg[] = {
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
    OSSL_PARAM_END};

const OSSL_PARAM *kp_gettable_params(void *provctx)
{
    (void)provctx;
    return kp_gettable_alg;
}

/* One answer of a get_params call: 1 if params does not ask for key or
 * takes the value. */
static int kp_put_uint(OSSL_PARAM params[], const char *key, unsigned v)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, key);
    return p == NULL || OSSL_PARAM_set_uint(p, v);
}

static int kp_put_int(OSSL_PARAM params[], const char *key, int v)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, key);
    return p == NULL || OSSL_PARAM_set_int(p, v);
}

static int kp_put_size(OSSL_PARAM params[], const char *key, size_t v)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, key);
    return p == NULL || OSSL_PARAM_set_size_t(p, v);
}

/* An IV is answered only by a cipher that has one (ECB has none): as a
 * copy, or as a pointer into the context, which is how the legacy
 * EVP_CIPHER_CTX_iv, _iv_noconst and _original_iv ask (OpenSSL's providers
 * answer both; answering only the copy made those return NULL). */
static int kp_put_iv(OSSL_PARAM params[], const char *key, const uint8_t *iv, size_t ivlen)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, key);
    return p == NULL || ivlen == 0 ||
           (p->data_type == OSSL_PARAM_OCTET_PTR ? OSSL_PARAM_set_octet_ptr(p, iv, ivlen)
                                                 : OSSL_PARAM_set_octet_string(p, iv, ivlen));
}

int kp_alg_params(OSSL_PARAM params[], unsigned mode, size_t keylen, size_t ivlen, size_t blocksize,
                  int aead, int custom_iv)
{
    /* OSSL_FUNC_CIPHER_GET_PARAMS has no provider context: raised through
     * any load's core (kp_raise_any_at) */
    return (kp_put_uint(params, OSSL_CIPHER_PARAM_MODE, mode) &&
            kp_put_size(params, OSSL_CIPHER_PARAM_KEYLEN, keylen) &&
            kp_put_size(params, OSSL_CIPHER_PARAM_IVLEN, ivlen) &&
            kp_put_size(params, OSSL_CIPHER_PARAM_BLOCK_SIZE, blocksize) &&
            kp_put_int(params, OSSL_CIPHER_PARAM_AEAD, aead) &&
            kp_put_int(params, OSSL_CIPHER_PARAM_CUSTOM_IV, custom_iv) &&
            kp_put_int(params, OSSL_CIPHER_PARAM_CTS, 0) &&
            kp_put_int(params, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, 0) &&
            kp_put_int(params, OSSL_CIPHER_PARAM_HAS_RAND_KEY, 0)) ||
           kp_raise_any_data(KP_R_FAILED_TO_GET_PARAMETER, "a parameter of the wrong type or size");
}

OSSL_PARAM *kp_param_alone(OSSL_PARAM params[], const char *key)
{
    if (params == NULL || params[0].key == NULL || params[1].key != NULL)
        return NULL;
    /* the names are a few bytes: compared here, where libc's strcmp took
     * ~12 cycles a call to set up */
    const char *a = params[0].key;
    while (*a != '\0' && *a == *key) {
        a++;
        key++;
    }
    return *a == *key ? &params[0] : NULL;
}

int kp_ctx_iv_params(OSSL_PARAM params[], size_t keylen, const uint8_t *iv,
                     const uint8_t *updated_iv, size_t ivlen)
{
    return kp_put_size(params, OSSL_CIPHER_PARAM_KEYLEN, keylen) &&
           kp_put_size(params, OSSL_CIPHER_PARAM_IVLEN, ivlen) &&
           kp_put_iv(params, OSSL_CIPHER_PARAM_IV, iv, ivlen) &&
           kp_put_iv(params, OSSL_CIPHER_PARAM_UPDATED_IV, updated_iv, ivlen);
}

int kp_length_ok(const kp_core *core, size_t inl)
{
    return inl <= PTRDIFF_MAX || kp_raise_data(core, KP_R_INVALID_INPUT_LENGTH,
                                               "%zu bytes, more than any buffer has", inl);
}

int kp_param_get_size(const OSSL_PARAM *p, size_t *v, size_t max)
{
    size_t x;
    if (p->data == NULL || !OSSL_PARAM_get_size_t(p, &x) || x > max)
        return 0;
    *v = x;
    return 1;
}

int kp_tls_record_params(const OSSL_PARAM params[])
{
    return OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_VERSION) != NULL ||
           OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_MAC_SIZE) != NULL;
}

int kp_tls1_aad(uint8_t aad[EVP_AEAD_TLS1_AAD_LEN], const OSSL_PARAM *p, size_t strip)
{
    if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL ||
        p->data_size != EVP_AEAD_TLS1_AAD_LEN)
        return 0;
    memcpy(aad, p->data, EVP_AEAD_TLS1_AAD_LEN);
    size_t len = (size_t)aad[EVP_AEAD_TLS1_AAD_LEN - 2] << 8 | aad[EVP_AEAD_TLS1_AAD_LEN - 1];
    if (len < strip)
        return 0;
    len -= strip;
    aad[EVP_AEAD_TLS1_AAD_LEN - 2] = (uint8_t)(len >> 8);
    aad[EVP_AEAD_TLS1_AAD_LEN - 1] = (uint8_t)len;
    return 1;
}

/* The block modes' parameters; CBC's add a TLS record layer's. */
#define KP_GETTABLE_BLOCK                                                                          \
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),                                             \
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),                                          \
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),                                          \
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),                                              \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),                                    \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0)
#define KP_SETTABLE_BLOCK                                                                          \
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),                                             \
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),                                          \
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL)
const OSSL_PARAM kp_gettable_block_ctx[] = {KP_GETTABLE_BLOCK, OSSL_PARAM_END};
const OSSL_PARAM kp_settable_block_ctx[] = {KP_SETTABLE_BLOCK, OSSL_PARAM_END};
static const OSSL_PARAM kp_gettable_cbc_ctx[] = {
    KP_GETTABLE_BLOCK, OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, NULL, 0), OSSL_PARAM_END};
static const OSSL_PARAM kp_settable_cbc_ctx[] = {
    KP_SETTABLE_BLOCK, OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL), OSSL_PARAM_END};
static const OSSL_PARAM kp_gettable_gcm_ctx[] = {
    KP_GETTABLE_AEAD, OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL, 0),
    OSSL_PARAM_END};
static const OSSL_PARAM kp_settable_gcm_ctx[] = {
    KP_SETTABLE_AEAD, OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL, 0),
    OSSL_PARAM_END};

int kp_set_keylen_param(const kp_core *core, const OSSL_PARAM params[], size_t keylen)
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_KEYLEN);
    size_t kl;
    if (p == NULL)
        return 1;
    if (!kp_param_get_size(p, &kl, SIZE_MAX))
        return kp_raise_data(core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
    return kl == keylen ||
           kp_raise_data(core, KP_R_INVALID_KEY_LENGTH, "%zu bytes, expected %zu", kl, keylen);
}

int kp_get_padding_num(const kp_core *core, OSSL_PARAM params[], unsigned padding, size_t num)
{
    OSSL_PARAM *p;
    if (((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_PADDING)) != NULL &&
         !OSSL_PARAM_set_uint(p, padding)) ||
        ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_NUM)) != NULL &&
         !OSSL_PARAM_set_uint(p, (unsigned)num)))
        return kp_raise_data(core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    return 1;
}

int kp_set_padding_num(const kp_core *core, const OSSL_PARAM params[], unsigned *padding,
                       size_t *num, size_t bs)
{
    const OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_PADDING)) != NULL) {
        size_t pad;
        if (!kp_param_get_size(p, &pad, UINT_MAX))
            return kp_raise_data(core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        /* CFB, OFB and CTR: meaningless, but kept and answered, as by
         * OpenSSL's stream modes */
        *padding = pad != 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_NUM)) != NULL) {
        size_t n;
        /* a stream's position in its keystream block; ECB and CBC keep it
         * unused, as OpenSSL's block modes do */
        if (!kp_param_get_size(p, &n, bs - 1))
            return kp_raise_data(core, KP_R_FAILED_TO_SET_PARAMETER,
                                 "%s: less than the block's %zu bytes", p->key, bs);
        *num = n;
    }
    return 1;
}

int kp_refuse_tls_record_params(const kp_core *core, const OSSL_PARAM params[])
{
    return !kp_tls_record_params(params) ||
           kp_raise_data(core, KP_R_FAILED_TO_SET_PARAMETER, "TLS records (%s, %s) are CBC's alone",
                         OSSL_CIPHER_PARAM_TLS_VERSION, OSSL_CIPHER_PARAM_TLS_MAC_SIZE);
}

int kp_get_tls1_aad_pad(const kp_core *core, OSSL_PARAM params[], int aad_set, size_t pad)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD);
    if (p == NULL)
        return 1;
    if (!aad_set)
        return kp_raise_data(core, KP_R_WRONG_CALL_ORDER, "%s before %s", p->key,
                             OSSL_CIPHER_PARAM_AEAD_TLS1_AAD);
    return OSSL_PARAM_set_size_t(p, pad) ||
           kp_raise_data(core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
}

/* The IV's invocation field (its last 8 bytes) plus one. */
static void kp_gcm_iv_next(kp_ctx *ctx)
{
    for (size_t i = ctx->ivlen; i-- > ctx->ivlen - 8;)
        if (++ctx->oiv[i] != 0)
            break;
}

/* The SSH/TLS nonce discipline (EVP_CTRL_GCM_IV_GEN): this message runs
 * under the current IV, whose last 8 bytes are then incremented. A NULL
 * buffer is refused before anything changes (as by OpenSSL's default
 * provider); a size of 0 or over the IV length means the whole IV, the
 * ctrl's contract, which OpenSSL keeps too. */
static int kp_gcm_iv_gen(kp_ctx *ctx, OSSL_PARAM *p)
{
    if (!ctx->iv_gen)
        return kp_raise_data(ctx->core, KP_R_WRONG_CALL_ORDER, "%s before a fixed IV (%s)",
                             OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN,
                             OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED);
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL)
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s: no buffer",
                             OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN);
    if (ctx->ivlen < 8)
        return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH,
                             "%zu bytes, shorter than the 8-byte invocation field", ctx->ivlen);
    /* A message already ran under this IV (no IV_GEN before it): handing
     * the IV out again would encrypt a second message under it. */
    if (ctx->iv_spent)
        kp_gcm_iv_next(ctx);
    kuai_gcm_wipe(&ctx->gcm);
    ctx->gcm_state = KP_GCM_IV_BUFFERED;
    if (!kp_gcm_start(ctx))
        return 0;
    size_t n = p->data_size == 0 || p->data_size > ctx->ivlen ? ctx->ivlen : p->data_size;
    memcpy(p->data, ctx->oiv + ctx->ivlen - n, n);
    p->return_size = n;
    kp_gcm_iv_next(ctx);
    ctx->iv_spent = 0; /* oiv is now the next message's, unused */
    return 1;
}

/* The tag: once an encryption has made one (the last one made, as
 * OpenSSL's default provider), and at most its 16 bytes. */
static int kp_gcm_get_tag(const kp_ctx *ctx, OSSL_PARAM *p)
{
    if (!ctx->enc || ctx->taglen == 0)
        return kp_raise_data(ctx->core, KP_R_TAG_NOT_SET,
                             "no tag made: an encryption's final first");
    if (p->data_size == 0 || p->data_size > KP_TAG_MAX)
        return kp_raise_data(ctx->core, KP_R_INVALID_TAG_LENGTH, "%zu bytes, GCM's is 1..%d",
                             p->data_size, KP_TAG_MAX);
    return OSSL_PARAM_set_octet_string(p, ctx->tag, p->data_size) ||
           kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", OSSL_CIPHER_PARAM_AEAD_TAG);
}

static int kp_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    kp_ctx *ctx = vctx;
    OSSL_PARAM *p;
    int gcm = ctx->alg->mode == KP_GCM;
    /* the queries EVP makes for every message (kp_param_alone) */
    if ((p = kp_param_alone(params, OSSL_CIPHER_PARAM_IVLEN)) != NULL)
        return OSSL_PARAM_set_size_t(p, ctx->ivlen) ||
               kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    if (gcm && (p = kp_param_alone(params, OSSL_CIPHER_PARAM_AEAD_TAG)) != NULL)
        return kp_gcm_get_tag(ctx, p);
    /* No IV was ever set or generated: there is none to read back (oiv's
     * zeros are no IV), as OpenSSL's GCM refuses it then. */
    if (gcm && ctx->gcm_state == KP_GCM_NO_IV &&
        (OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IV) != NULL ||
         OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_UPDATED_IV) != NULL))
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (!kp_ctx_iv_params(params, kuai_key_size(ctx->alg->cipher), ctx->oiv,
                          gcm ? ctx->oiv : ctx->iv, ctx->ivlen))
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "key or IV length, or IV");
    if (!gcm) {
        if (!kp_get_padding_num(ctx->core, params, ctx->padding, ctx->num))
            return 0;
        /* the last record's MAC, where it stays until the next record */
        if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_TLS_MAC)) != NULL &&
            (ctx->tls_version == 0 || ctx->enc ||
             !OSSL_PARAM_set_octet_ptr(p, ctx->tls_mac, ctx->tls_mac_size)))
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER,
                                 "%s: a TLS record decryption's alone", p->key);
        return 1;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) != NULL &&
        !OSSL_PARAM_set_size_t(p, ctx->taglen ? ctx->taglen : KP_TAG_MAX))
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TAG)) != NULL &&
        !kp_gcm_get_tag(ctx, p))
        return 0;
    if (!kp_get_tls1_aad_pad(ctx->core, params, ctx->tls_aad_set, KP_TLS_TAG))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN)) != NULL &&
        !kp_gcm_iv_gen(ctx, p))
        return 0;
    return 1;
}

static int kp_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    kp_ctx *ctx = vctx;
    const OSSL_PARAM *p;
    if (params == NULL)
        return 1;
    if (!kp_set_keylen_param(ctx->core, params, kuai_key_size(ctx->alg->cipher)))
        return 0;
    if (ctx->alg->mode != KP_GCM) {
        /* A TLS 1.0-1.2 or DTLS record layer's CBC (kp_cbc_tls_record);
         * refused by the other modes, which no record layer uses (taken and
         * ignored, they would make records libssl cannot read). Unknown
         * names are still ignored, as by OpenSSL's providers. */
        if (ctx->alg->mode != KP_CBC && !kp_refuse_tls_record_params(ctx->core, params))
            return 0;
        if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_VERSION)) != NULL) {
            size_t v;
            if (!kp_param_get_size(p, &v, UINT_MAX))
                return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
            if (!kp_tls_cbc_version(v))
                return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                     "%s 0x%04zx: TLS 1.0-1.2 and DTLS CBC records only", p->key,
                                     v);
            ctx->tls_version = (unsigned)v;
        }
        if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_MAC_SIZE)) != NULL) {
            size_t m;
            if (!kp_param_get_size(p, &m, KP_TLS_MAC_MAX))
                return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s (at most %d)",
                                     p->key, KP_TLS_MAC_MAX);
            ctx->tls_mac_size = m;
        }
        return kp_set_padding_num(ctx->core, params, &ctx->padding, &ctx->num, ctx->bs);
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_IVLEN)) != NULL) {
        size_t ivlen;
        if (!kp_param_get_size(p, &ivlen, SIZE_MAX))
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        if (ivlen == 0 || ivlen > KP_GCM_IV_MAX)
            return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH, "%zu bytes, GCM takes 1..%d",
                                 ivlen, KP_GCM_IV_MAX);
        if (ivlen != ctx->ivlen) {
            /* An IV already set (or generated) does not become another of
             * the new length: until a new IV comes, nothing runs. */
            ctx->ivlen = ivlen;
            /* A fixed IV was one of the old length: IV_GEN and TLS records
             * under the new one would count on in bytes that are no
             * invocation field, back onto IVs already used. */
            ctx->iv_gen = 0;
            if (ctx->gcm_state != KP_GCM_NO_IV) {
                kuai_gcm_wipe(&ctx->gcm);
                ctx->gcm_state = KP_GCM_DONE;
            }
        }
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TAG)) != NULL) {
        /* The expected tag of a decryption (a length alone is not enough). */
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                 "%s: the tag itself (a length alone does not do)", p->key);
        if (ctx->enc)
            return kp_raise(ctx->core, KP_R_TAG_NOT_NEEDED);
        if (p->data_size == 0 || p->data_size > KP_TAG_MAX)
            return kp_raise_data(ctx->core, KP_R_INVALID_TAG_LENGTH, "%zu bytes, GCM's is 1..%d",
                                 p->data_size, KP_TAG_MAX);
        memcpy(ctx->tag, p->data, p->data_size);
        ctx->taglen = p->data_size;
        ctx->tag_given = 1;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) != NULL) {
        if (!kp_tls1_aad(ctx->tls_aad, p, KP_TLS_EXPLICIT_IV + (ctx->enc ? 0 : KP_TLS_TAG)))
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                 "%s: a %d-byte record header whose length covers the record's "
                                 "nonce and tag",
                                 p->key, KP_TLS_AAD_LEN);
        ctx->tls_aad_set = 1;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        if (p->data_size == (size_t)-1) {
            /* EVP_CTRL_GCM_SET_IV_FIXED with length -1: the whole IV (OpenSSH). */
            memcpy(ctx->oiv, p->data, ctx->ivlen);
        } else {
            /* TLS: a fixed field of >= 4 bytes, then >= 8 invocation bytes.
             * Compared without n + 8, which a length such as (size_t)-4
             * (EVP_CIPHER_CTX_ctrl's arg -4) wraps to below ivlen. */
            size_t n = p->data_size;
            if (n < 4 || n > ctx->ivlen || ctx->ivlen - n < 8)
                return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH,
                                     "a fixed field of %zu bytes in a %zu-byte IV (4 or more, "
                                     "and 8 left)",
                                     n, ctx->ivlen);
            memcpy(ctx->oiv, p->data, n);
            if (ctx->enc && getrandom(ctx->oiv + n, ctx->ivlen - n, 0) != (ssize_t)(ctx->ivlen - n))
                return kp_raise(ctx->core, KP_R_RANDOM_FAILED);
        }
        ctx->iv_gen = 1;
        ctx->iv_spent = 0;
        kuai_gcm_wipe(&ctx->gcm);
        ctx->gcm_state = KP_GCM_IV_BUFFERED;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV)) != NULL) {
        /* EVP_CTRL_GCM_SET_IV_INV: a decryption under a fixed IV takes the
         * sender's invocation field (the IV's last bytes) for its next
         * message, as OpenSSL's default provider; anywhere else, refused
         * rather than ignored (the message would run under another IV). */
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL || p->data_size == 0 ||
            p->data_size > ctx->ivlen)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                 "%s: 1..%zu bytes (the IV's)", p->key, ctx->ivlen);
        if (!ctx->iv_gen || ctx->enc)
            return kp_raise_data(ctx->core, KP_R_WRONG_CALL_ORDER,
                                 "%s: a decryption's, after a fixed IV (%s)", p->key,
                                 OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED);
        if (ctx->key == NULL)
            return kp_raise(ctx->core, KP_R_NO_KEY_SET);
        memcpy(ctx->oiv + ctx->ivlen - p->data_size, p->data, p->data_size);
        kuai_gcm_wipe(&ctx->gcm);
        ctx->gcm_state = KP_GCM_IV_BUFFERED;
        if (!kp_gcm_start(ctx))
            return 0;
    }
    return 1;
}

/* ---- one dispatch table per slot, all pointing at the generic code ------- */

static const OSSL_PARAM *kp_alg_gettable_ctx(const kp_alg *alg)
{
    return alg->mode == KP_GCM   ? kp_gettable_gcm_ctx
           : alg->mode == KP_CBC ? kp_gettable_cbc_ctx
                                 : kp_gettable_block_ctx;
}

static const OSSL_PARAM *kp_alg_settable_ctx(const kp_alg *alg)
{
    return alg->mode == KP_GCM   ? kp_settable_gcm_ctx
           : alg->mode == KP_CBC ? kp_settable_cbc_ctx
                                 : kp_settable_block_ctx;
}

KP_DEFINE_SLOTS(kp);

/* ---- the provider -------------------------------------------------------- */

/* What every query returns: built once, then read-only. */
static OSSL_ALGORITHM kp_cipher_algs[2 * KP_NSLOTS + 1];
static OSSL_ALGORITHM kp_mac_algs[2];
static size_t kp_ncipher_algs, kp_nciphers;
static int kp_built; /* 1: the tables are there; 0: they did not fit */
static pthread_once_t kp_build_once = PTHREAD_ONCE_INIT;

int kp_alg_names(char *out, size_t size, kuai_cipher c, const char *mode, const kp_fact *facts,
                 size_t nfacts, unsigned *flags)
{
    const char *kn = kuai_cipher_name(c);
    size_t n = 0;
    for (; kn[n] != '\0' && n + 1 < size; n++)
        out[n] = kn[n] >= 'a' && kn[n] <= 'z' ? (char)(kn[n] - 'a' + 'A') : kn[n];
    int w = snprintf(out + n, size - n, "-%s", mode);
    if (kn[n] != '\0' || w < 0 || (size_t)w >= size - n)
        return 0;
    if (flags != NULL)
        *flags = 0;
    for (size_t i = 0; i < nfacts; i++) {
        if (strcmp(facts[i].name, out) != 0)
            continue;
        if (flags != NULL)
            *flags = facts[i].flags;
        if (facts[i].aliases != NULL) {
            size_t l = strlen(out);
            w = snprintf(out + l, size - l, ":%s", facts[i].aliases);
            if (w < 0 || (size_t)w >= size - l)
                return 0;
        }
        break;
    }
    return 1;
}

int kp_cipher_available(kuai_cipher c)
{
    return kuai_backends(c, NULL, 0) > 0;
}

void kp_algorithm_set(OSSL_ALGORITHM *out, const char *names, const OSSL_DISPATCH *impl)
{
    out->algorithm_names = names;
    out->property_definition = "provider=kuai";
    out->implementation = impl;
    out->algorithm_description = NULL;
}

static void kp_build(void)
{
    /* Read once per process, here under pthread_once: a later load into
     * another library context would otherwise write kp_debug while other
     * threads' contexts read it (a data race, helgrind). */
    const char *dbg = getenv("KUAI_PROVIDER_DEBUG");
    kp_debug = dbg != NULL && dbg[0] != '\0' && strcmp(dbg, "0") != 0;
    kuai_cipher list[KP_NSLOTS];
    size_t nc = kuai_ciphers(list, KP_NSLOTS);
    if (nc > KP_NSLOTS)
        return;
    size_t n = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!kp_cipher_available(list[i]))
            continue;
        kp_nciphers++;
        for (size_t m = 0; m < sizeof(kp_modes) / sizeof(kp_modes[0]); m++) {
            if (kp_modes[m].mode == KP_GCM && kuai_block_size(list[i]) != 16)
                continue;
            if (n == KP_NSLOTS ||
                !kp_alg_names(kp_algs[n].names, sizeof(kp_algs[n].names), list[i], kp_modes[m].name,
                              kp_facts, sizeof(kp_facts) / sizeof(kp_facts[0]), NULL))
                return;
            kp_algs[n].cipher = list[i];
            kp_algs[n].mode = kp_modes[m].mode;
            kp_algorithm_set(&kp_cipher_algs[n], kp_algs[n].names, kp_dispatches[n]);
            n++;
        }
    }
    kp_nalgs = n;
    size_t nm = kp_modes_ciphers(kp_cipher_algs + n, list, nc);
    if (nm == (size_t)-1)
        return;
    kp_ncipher_algs = n + nm;
    kp_modes_macs(kp_mac_algs);
    kp_built = 1;
}

static const OSSL_ALGORITHM *kp_query(void *vprov, int operation_id, int *no_cache)
{
    (void)vprov;
    *no_cache = 0;
    return operation_id == OSSL_OP_CIPHER ? kp_cipher_algs
           : operation_id == OSSL_OP_MAC  ? kp_mac_algs
                                          : NULL;
}

int kp_cbc_cipher_by_name(const char *name, kuai_cipher *c)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < kp_nalgs; i++) {
        if (kp_algs[i].mode != KP_CBC)
            continue;
        for (const char *a = kp_algs[i].names; *a;) {
            size_t l = strcspn(a, ":");
            if (l == n && OPENSSL_strncasecmp(a, name, n) == 0) {
                *c = kp_algs[i].cipher;
                return 1;
            }
            a += l + (a[l] == ':');
        }
    }
    return 0;
}

static const OSSL_PARAM kp_prov_gettable[] = {
    OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_NAME, NULL, 0),
    OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_VERSION, NULL, 0),
    OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, NULL, 0),
    OSSL_PARAM_int(OSSL_PROV_PARAM_STATUS, NULL), OSSL_PARAM_END};

static const OSSL_PARAM *kp_prov_gettable_params(void *provctx)
{
    (void)provctx;
    return kp_prov_gettable;
}

static int kp_prov_get_params(void *provctx, OSSL_PARAM params[])
{
    OSSL_PARAM *p;
    if (((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME)) != NULL &&
         !OSSL_PARAM_set_utf8_ptr(p, "kuai provider (uBlock, SM4, AES)")) ||
        ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION)) != NULL &&
         !OSSL_PARAM_set_utf8_ptr(p, KUAI_VERSION)) ||
        ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO)) != NULL &&
         !OSSL_PARAM_set_utf8_ptr(p, "kuai " KUAI_VERSION)) ||
        ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS)) != NULL &&
         !OSSL_PARAM_set_int(p, 1)))
        return kp_raise_data(provctx, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    return 1;
}

static void kp_teardown(void *provctx)
{
    kp_core_unregister(provctx);
    free(provctx);
}

static const OSSL_DISPATCH kp_prov_dispatch[] = {
    {OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))kp_teardown},
    {OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))kp_reason_strings},
    {OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))kp_prov_gettable_params},
    {OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))kp_prov_get_params},
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))kp_query},
    {0, NULL}};

__attribute__((visibility("default"))) int OSSL_provider_init(const OSSL_CORE_HANDLE *handle,
                                                              const OSSL_DISPATCH *in,
                                                              const OSSL_DISPATCH **out,
                                                              void **provctx);

int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
    pthread_once(&kp_build_once, kp_build);
    if (!kp_built) {
        fprintf(stderr, "kuai-provider: the cipher list does not fit the provider's %d slots\n",
                KP_NSLOTS);
        return 0;
    }
    if (kp_debug)
        fprintf(stderr, "kuai-provider: loaded, %zu algorithms of %zu ciphers\n", kp_ncipher_algs,
                kp_nciphers);
    /* The provider context is this load's core (handle and error upcalls):
     * the tables are global, but each library context that loads the
     * module has a handle of its own, which every raised error needs. */
    kp_core *core = malloc(sizeof(*core));
    if (core == NULL)
        return 0;
    kp_core_init(core, handle, in);
    kp_core_register(core);
    *out = kp_prov_dispatch;
    *provctx = core;
    return 1;
}
