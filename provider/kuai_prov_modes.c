/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai.so's XTS, CCM, CFB128 and OFB ciphers and its CMAC, under OpenSSL's
 * names and aliases and with the EVP behaviour of OpenSSL's default provider
 * (providers/implementations/ciphers/cipher_aes_xts.c, cipher_sm4_xts.c,
 * ciphercommon_ccm.c, the generic stream ciphers, and macs/cmac_prov.c):
 *
 * - XTS: key = data key || tweak key; every update is one whole data unit
 *   of 16 .. 2^24 bytes under the IV (the tweak), which updates do not
 *   advance; an encryption key whose halves are equal is refused, as AES-XTS
 *   does. SM4-XTS (and uBlock's) takes "xts_standard" = "GB" (the default,
 *   as OpenSSL 3.2's SM4-XTS) or "IEEE".
 * - CCM: nonce length (ivlen) 7..13, default 7; tag length 4..16 even,
 *   default 12; the expected tag is set before a decryption's data; the
 *   total length is announced by an update with NULL in and out when there
 *   is AAD; the data is one update, which on decryption fails, with the
 *   output zeroed, when the tag is wrong.
 * - CFB/OFB: streams, any split, the IV restored by a re-init without one.
 */
#include "kuai_prov_slots.h"
#include "kuai_provider.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef OSSL_CIPHER_PARAM_XTS_STANDARD
#define OSSL_CIPHER_PARAM_XTS_STANDARD "xts_standard" /* OpenSSL 3.2 */
#endif

enum kpm_mode {
    KPM_XTS = EVP_CIPH_XTS_MODE,
    KPM_CCM = EVP_CIPH_CCM_MODE,
    KPM_CFB = EVP_CIPH_CFB_MODE,
    KPM_OFB = EVP_CIPH_OFB_MODE
};

typedef struct kpm_alg {
    char names[KP_NAMES_MAX];
    kuai_cipher cipher;
    enum kpm_mode mode;
    int ieee_only; /* XTS: IEEE 1619 by definition, "xts_standard" ignored */
} kpm_alg;

#define KPM_NOT_OFFERED 1u /* a kp_fact flag: the provider has no such algorithm */
#define KPM_IEEE_ONLY 2u   /* a kp_fact flag: see ieee_only */
#define KPM_OPENSSL 4u     /* a kp_fact flag: OpenSSL's default provider has it too */

/* Aliases and OIDs as OpenSSL 3.0's default provider lists them; which
 * algorithms OpenSSL's default provider has too (SM4-XTS and SM4-CCM since
 * 3.2; they are listed first in each mode); which XTS ciphers are IEEE 1619's (XTS-AES-128 and
 * XTS-AES-256 only: OpenSSL has no AES-192-XTS, so neither has this provider). */
static const kp_fact kpm_facts[] = {
    {"AES-128-XTS", "1.3.111.2.1619.0.1.1", KPM_IEEE_ONLY | KPM_OPENSSL},
    {"AES-192-XTS", NULL, KPM_NOT_OFFERED},
    {"AES-256-XTS", "1.3.111.2.1619.0.1.2", KPM_IEEE_ONLY | KPM_OPENSSL},
    {"SM4-XTS", NULL, KPM_OPENSSL}, /* OpenSSL 3.2 */
    {"AES-128-CCM", "id-aes128-CCM:2.16.840.1.101.3.4.1.7", KPM_OPENSSL},
    {"AES-192-CCM", "id-aes192-CCM:2.16.840.1.101.3.4.1.27", KPM_OPENSSL},
    {"AES-256-CCM", "id-aes256-CCM:2.16.840.1.101.3.4.1.47", KPM_OPENSSL},
    {"SM4-CCM", NULL, KPM_OPENSSL}, /* OpenSSL 3.2 */
    {"AES-128-CFB", "2.16.840.1.101.3.4.1.4", KPM_OPENSSL},
    {"AES-192-CFB", "2.16.840.1.101.3.4.1.24", KPM_OPENSSL},
    {"AES-256-CFB", "2.16.840.1.101.3.4.1.44", KPM_OPENSSL},
    {"SM4-CFB", "SM4-CFB128:1.2.156.10197.1.104.4", KPM_OPENSSL},
    {"AES-128-OFB", "2.16.840.1.101.3.4.1.3", KPM_OPENSSL},
    {"AES-192-OFB", "2.16.840.1.101.3.4.1.23", KPM_OPENSSL},
    {"AES-256-OFB", "2.16.840.1.101.3.4.1.43", KPM_OPENSSL},
    {"SM4-OFB", "SM4-OFB128:1.2.156.10197.1.104.3", KPM_OPENSSL},
};

/* This file's modes, each for every cipher with a 16-byte block (SM4-XTS
 * and SM4-CCM as later OpenSSL releases name them). Its table: row i is
 * slot i's algorithm. */
static const struct {
    const char *name;
    enum kpm_mode mode;
} kpm_modes[] = {{"XTS", KPM_XTS}, {"CCM", KPM_CCM}, {"CFB", KPM_CFB}, {"OFB", KPM_OFB}};
static kpm_alg kpm_algs[KP_NSLOTS];

#define KPM_BLOCK 16
#define KPM_XTS_MAX ((size_t)1 << 24) /* IEEE 1619-2018: 2^20 blocks per data unit */
#define KPM_CCM_IV_DEFAULT 7          /* OpenSSL: L = 8 */
#define KPM_CCM_IV_REPORTED 12        /* what OpenSSL's CCM ciphers report before a context */
#define KPM_CCM_TAG_DEFAULT 12

typedef struct kpm_ctx {
    const kp_core *core; /* the provider context: where errors are raised */
    const kpm_alg *alg;
    kp_key *key, *tkey; /* tkey: XTS tweak key */
    int enc;
    int iv_set;
    size_t ivlen;            /* 16; CCM: the nonce length */
    uint8_t oiv[KPM_BLOCK];  /* IV as given (CCM: the nonce) */
    uint8_t iv[KPM_BLOCK];   /* CFB/OFB: OpenSSL's ivec */
    size_t num;              /* CFB/OFB: bytes of the keystream block in iv used */
    unsigned padding;        /* CFB/OFB: as set (meaningless, kept as OpenSSL); XTS: 1 */
    kuai_xts_standard std;   /* XTS */
    int weak;                /* XTS: the key's halves are equal (decryption only) */
    size_t taglen;           /* CCM: M */
    int taglen_set;          /* CCM: M set by a length alone: a tag given must have it */
    uint8_t tag[KPM_BLOCK];  /* CCM: the expected tag (decrypt) or the one made */
    int tag_given, tag_made; /* CCM */
    int len_set;             /* CCM: total length announced */
    size_t msglen;
    uint8_t *aad; /* CCM: held until the data update (the library's CCM is one call) */
    size_t aadlen;
    int aad_set;
    uint8_t tls_aad[EVP_AEAD_TLS1_AAD_LEN]; /* CCM: TLS 1.2 record header for the next record */
    int tls_aad_set;
    /* CCM: the explicit nonce of the last record sealed under this key
     * (tls_sealed), which the next one must exceed */
    uint8_t tls_last[EVP_CCM_TLS_EXPLICIT_IV_LEN];
    int tls_sealed;
} kpm_ctx;

static void *kpm_newctx(void *provctx, const kpm_alg *alg)
{
    kpm_ctx *ctx = kp_ctx_new(provctx, sizeof(*ctx));
    if (ctx == NULL)
        return NULL;
    ctx->core = provctx;
    ctx->alg = alg;
    ctx->ivlen = alg->mode == KPM_CCM ? KPM_CCM_IV_DEFAULT : KPM_BLOCK;
    ctx->taglen = KPM_CCM_TAG_DEFAULT;
    ctx->padding = 1; /* what OpenSSL's stream and XTS ciphers answer until told otherwise */
    /* AES-XTS is IEEE 1619 only; SM4-XTS defaults to GB/T 17964, as OpenSSL. */
    ctx->std = alg->ieee_only ? KUAI_XTS_IEEE1619 : KUAI_XTS_GB17964;
    return ctx;
}

static void kpm_aad_clear(kpm_ctx *ctx)
{
    if (ctx->aad != NULL) {
        OPENSSL_cleanse(ctx->aad, ctx->aadlen);
        free(ctx->aad);
    }
    ctx->aad = NULL;
    ctx->aadlen = 0;
    ctx->aad_set = 0;
}

static void kpm_freectx(void *vctx)
{
    kpm_ctx *ctx = vctx;
    if (ctx == NULL)
        return;
    kp_key_unref(ctx->key);
    kp_key_unref(ctx->tkey);
    kpm_aad_clear(ctx);
    OPENSSL_cleanse(ctx, sizeof(*ctx));
    free(ctx);
}

static void *kpm_dupctx(void *vctx)
{
    kpm_ctx *src = vctx;
    kpm_ctx *dst = kp_ctx_dup(src->core, src, sizeof(*dst));
    if (dst == NULL)
        return NULL;
    if (src->aadlen > 0) {
        dst->aad = malloc(src->aadlen);
        if (dst->aad == NULL) {
            OPENSSL_cleanse(dst, sizeof(*dst));
            free(dst);
            kp_raise(src->core, KP_R_OUT_OF_MEMORY);
            return NULL;
        }
        memcpy(dst->aad, src->aad, src->aadlen);
    }
    if (dst->key != NULL)
        atomic_fetch_add(&dst->key->refs, 1);
    if (dst->tkey != NULL)
        atomic_fetch_add(&dst->tkey->refs, 1);
    return dst;
}

static size_t kpm_keylen(const kpm_alg *alg)
{
    size_t k = kuai_key_size(alg->cipher);
    return alg->mode == KPM_XTS ? 2 * k : k;
}

static int kpm_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int kpm_set_key(kpm_ctx *ctx, const unsigned char *key, size_t keylen)
{
    if (keylen != kpm_keylen(ctx->alg))
        return kp_raise_data(ctx->core, KP_R_INVALID_KEY_LENGTH, "%zu bytes, expected %zu", keylen,
                             kpm_keylen(ctx->alg));
    if (ctx->alg->mode != KPM_XTS)
        return kp_key_set(ctx->core, &ctx->key, ctx->alg->cipher, key, keylen);
    size_t half = keylen / 2;
    /* As OpenSSL's AES-XTS (outside FIPS mode, which refuses decryption
     * too): equal halves make XTS insecure (Rogaway's attack; FIPS 140-2
     * IG A.9), so such a key does not encrypt, neither now nor after a
     * re-init for encryption without a key (weak). CRYPTO_memcmp: no
     * branch on key bytes. */
    int weak = CRYPTO_memcmp(key, key + half, half) == 0;
    if (ctx->enc && weak)
        return kp_raise(ctx->core, KP_R_XTS_DUPLICATED_KEYS);
    ctx->weak = weak;
    if (!kp_key_set(ctx->core, &ctx->key, ctx->alg->cipher, key, half) ||
        !kp_key_set(ctx->core, &ctx->tkey, ctx->alg->cipher, key + half, half)) {
        kp_key_unref(ctx->key);
        kp_key_unref(ctx->tkey);
        ctx->key = ctx->tkey = NULL;
        return 0;
    }
    return 1;
}

static int kpm_init(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                    size_t ivlen, const OSSL_PARAM params[], int enc)
{
    kpm_ctx *ctx = vctx;
    ctx->enc = enc;
    ctx->num = 0;
    /* CCM: an encryption has no expected tag, and it writes the tag it
     * makes where a decryption's is kept: one set earlier for a decryption
     * must not outlive a switch to encrypting, or a later decryption would
     * be checked against the tag this context made (as kp_init for GCM). */
    if (enc)
        ctx->tag_given = 0;
    /* CCM: a TLS record header set for the next record belongs to the
     * context as it was (its length field was cut for that direction): any
     * init drops it, as kp_init does GCM's, or the next message would be
     * taken for a record and fail. */
    ctx->tls_aad_set = 0;
    if (iv != NULL) {
        if (ivlen != ctx->ivlen)
            return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH, "%zu bytes, expected %zu",
                                 ivlen, ctx->ivlen);
        memcpy(ctx->oiv, iv, ivlen);
        memcpy(ctx->iv, iv, ivlen);
        ctx->iv_set = 1;
        /* CCM: a new nonce starts a new message (a tag set to be checked
         * stays: OpenSSL's own order sets it before the IV). */
        ctx->len_set = 0;
        ctx->tag_made = 0;
        kpm_aad_clear(ctx);
    } else if (ctx->iv_set && (ctx->alg->mode == KPM_CFB || ctx->alg->mode == KPM_OFB)) {
        memcpy(ctx->iv, ctx->oiv, KPM_BLOCK); /* as OpenSSL: restart from the given IV */
    }
    if (key != NULL) {
        /* another key: its records' nonces start afresh (the same key
         * given again keeps counting) */
        if (!kp_key_same(ctx->key, key, keylen))
            ctx->tls_sealed = 0;
        if (!kpm_set_key(ctx, key, keylen))
            return 0;
        kp_debug_key(ctx->alg->names, enc, ctx->key);
    } else if (enc && ctx->weak) { /* an XTS key with equal halves, set up to decrypt */
        return kp_raise(ctx->core, KP_R_XTS_DUPLICATED_KEYS);
    }
    return kpm_set_ctx_params(ctx, params);
}

/* CFB/OFB: first the rest of the keystream block in iv, then the library,
 * which leaves iv as OpenSSL's ivec with num = len % 16. */
static int kpm_stream(kpm_ctx *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    int cfb = ctx->alg->mode == KPM_CFB;
    if (kp_overlap(in, out, len))
        return kp_raise(ctx->core, KP_R_OVERLAPPING_BUFFERS);
    while (ctx->num != 0 && len > 0) {
        uint8_t x = *in++, c = x ^ ctx->iv[ctx->num];
        if (cfb)
            ctx->iv[ctx->num] = ctx->enc ? c : x;
        *out++ = c;
        ctx->num = (ctx->num + 1) % KPM_BLOCK;
        len--;
    }
    if (len == 0)
        return 1;
    const kuai_key *k = &ctx->key->k;
    int r = !cfb       ? kuai_ofb_crypt(k, ctx->iv, in, out, len)
            : ctx->enc ? kuai_cfb_encrypt(k, ctx->iv, in, out, len)
                       : kuai_cfb_decrypt(k, ctx->iv, in, out, len);
    ctx->num = len % KPM_BLOCK;
    return r == KUAI_OK || kp_raise_kuai(ctx->core, r);
}

/* Whether a message of len bytes fits CCM's length field of 15 - ivlen bytes. */
static int kpm_ccm_len_ok(const kpm_ctx *ctx, size_t len)
{
    size_t L = 15 - ctx->ivlen;
    return L >= sizeof(size_t) || (len >> (8 * L)) == 0;
}

/* One TLS 1.2 CCM record (RFC 6655), in place: explicit nonce || payload ||
 * tag, as OpenSSL's ccm_tls_cipher. The nonce is the 4-byte fixed IV and
 * the explicit part, which a sender takes from the record header's
 * sequence number and a receiver from the record. It is built apart from
 * the context's IV: a received nonce must not become the one the context
 * next encrypts under, nor a sealed one stay there to encrypt a message.
 * A sealed record spends its nonce: the next record sealed under the key
 * needs a greater sequence number (as libssl's always is), and a message
 * a new IV. */
static int kpm_ccm_tls_record(kpm_ctx *ctx, uint8_t *out, size_t *outl, const uint8_t *in,
                              size_t len)
{
    ctx->tls_aad_set = 0;
    if (in == NULL || out != in)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED, "records are processed in place");
    if (ctx->ivlen != EVP_CCM_TLS_IV_LEN)
        return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH, "%zu bytes, TLS records' is %d",
                             ctx->ivlen, EVP_CCM_TLS_IV_LEN);
    if (len < EVP_CCM_TLS_EXPLICIT_IV_LEN + ctx->taglen)
        return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED,
                             "a %zu-byte record, shorter than its nonce and tag", len);
    if (ctx->enc) {
        /* sequence numbers are public: a plain compare, big-endian */
        if (ctx->tls_sealed &&
            memcmp(ctx->tls_aad, ctx->tls_last, EVP_CCM_TLS_EXPLICIT_IV_LEN) <= 0)
            return kp_raise_data(ctx->core, KP_R_TLS_RECORD_FAILED,
                                 "a record's sequence number not above the last one sealed "
                                 "(its nonce is spent)");
        memcpy(out, ctx->tls_aad, EVP_CCM_TLS_EXPLICIT_IV_LEN);
    }
    uint8_t nonce[EVP_CCM_TLS_IV_LEN];
    memcpy(nonce, ctx->oiv, EVP_CCM_TLS_FIXED_IV_LEN);
    memcpy(nonce + EVP_CCM_TLS_FIXED_IV_LEN, in, EVP_CCM_TLS_EXPLICIT_IV_LEN);
    size_t plen = len - EVP_CCM_TLS_EXPLICIT_IV_LEN - ctx->taglen;
    uint8_t *payload = out + EVP_CCM_TLS_EXPLICIT_IV_LEN;
    int r =
        ctx->enc
            ? kuai_ccm_encrypt(&ctx->key->k, nonce, ctx->ivlen, ctx->tls_aad, EVP_AEAD_TLS1_AAD_LEN,
                               payload, payload, plen, payload + plen, ctx->taglen)
            : kuai_ccm_decrypt(&ctx->key->k, nonce, ctx->ivlen, ctx->tls_aad, EVP_AEAD_TLS1_AAD_LEN,
                               payload, payload, plen, payload + plen, ctx->taglen);
    if (ctx->enc && r == KUAI_OK) {
        memcpy(ctx->tls_last, ctx->tls_aad, EVP_CCM_TLS_EXPLICIT_IV_LEN);
        ctx->tls_sealed = 1;
        ctx->iv_set = 0;
        ctx->len_set = 0;
        kpm_aad_clear(ctx);
    }
    if (r != KUAI_OK) /* a forged record fails as a whole: public */
        return kp_raise_kuai(ctx->core, r);
    *outl = ctx->enc ? len : plen; /* what libssl's EVP_CipherUpdate expects */
    return 1;
}

/* CCM, as OpenSSL's ccm_cipher_internal: in == NULL with out != NULL is the
 * final; out == NULL is the length (in == NULL) or the AAD; else the data. */
static int kpm_ccm(kpm_ctx *ctx, uint8_t *out, size_t *outl, const uint8_t *in, size_t len)
{
    *outl = 0;
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (ctx->tls_aad_set)
        return kpm_ccm_tls_record(ctx, out, outl, in, len);
    if (in == NULL && out != NULL) /* the final's call; bytes without input are no final */
        return len == 0 || kp_raise_data(ctx->core, KP_R_CIPHER_OPERATION_FAILED,
                                         "%zu bytes, but no input", len);
    /* A data update makes a new tag or fails: either way the last
     * message's tag is no longer there to read. A caller that missed a
     * refused update must not be handed a tag it would send with what it
     * takes for this message's ciphertext (OpenSSL's CCM fails GET_TAG here
     * too). */
    if (out != NULL)
        ctx->tag_made = 0;
    if (!ctx->iv_set)
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (out == NULL) {
        if (in == NULL) {
            /* A length too long for the field is refused at the data, as by
             * OpenSSL (where it wraps and then mismatches). */
            ctx->msglen = len;
            ctx->len_set = 1;
            *outl = len; /* as OpenSSL's CCM: the length announced */
            return 1;
        }
        if (len == 0)
            return 1;
        /* AAD needs the length first; and it is one call (a second one
         * would not be what OpenSSL's CCM makes of it either). */
        if (!ctx->len_set || ctx->aad_set)
            return kp_raise_data(ctx->core, KP_R_WRONG_CALL_ORDER,
                                 "CCM's AAD: after the total length, in one update");
        ctx->aad = malloc(len);
        if (ctx->aad == NULL)
            return kp_raise(ctx->core, KP_R_OUT_OF_MEMORY);
        memcpy(ctx->aad, in, len);
        ctx->aadlen = len;
        ctx->aad_set = 1;
        *outl = len; /* as OpenSSL's CCM (and kuai's GCM): the AAD taken */
        return 1;
    }
    /* refused before the nonce, tag and AAD are used up, as by the other
     * modes: the library would refuse it only once they were */
    if (kp_overlap(in, out, len))
        return kp_raise(ctx->core, KP_R_OVERLAPPING_BUFFERS);
    if (ctx->len_set && len != ctx->msglen)
        return kp_raise_data(ctx->core, KP_R_INVALID_INPUT_LENGTH, "%zu bytes, %zu announced", len,
                             ctx->msglen);
    if (!kpm_ccm_len_ok(ctx, len))
        return kp_raise_data(ctx->core, KP_R_INVALID_INPUT_LENGTH,
                             "%zu bytes, over what a %zu-byte nonce leaves the length field", len,
                             ctx->ivlen);
    if (!ctx->enc && !ctx->tag_given) /* the tag must be set before the data */
        return kp_raise(ctx->core, KP_R_TAG_NOT_SET);
    int r;
    if (ctx->enc) {
        r = kuai_ccm_encrypt(&ctx->key->k, ctx->oiv, ctx->ivlen, ctx->aad, ctx->aadlen, in, out,
                             len, ctx->tag, ctx->taglen);
        ctx->tag_made = r == KUAI_OK;
    } else {
        /* A wrong tag fails this update, out zeroed, as OpenSSL's. */
        r = kuai_ccm_decrypt(&ctx->key->k, ctx->oiv, ctx->ivlen, ctx->aad, ctx->aadlen, in, out,
                             len, ctx->tag, ctx->taglen);
        ctx->tag_given = 0;
    }
    /* The nonce is used: no second message under it until a new IV. */
    ctx->iv_set = 0;
    ctx->len_set = 0;
    kpm_aad_clear(ctx);
    if (r != KUAI_OK) /* a tag mismatch included: the update fails on it anyway */
        return kp_raise_kuai(ctx->core, r);
    *outl = len;
    return 1;
}

static int kpm_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
    kpm_ctx *ctx = vctx;
    if (!kp_length_ok(ctx->core, inl)) /* CCM: the length announced too */
        return 0;
    if (out != NULL && in != NULL && outsize < inl)
        return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
    if (ctx->alg->mode == KPM_CCM)
        return kpm_ccm(ctx, out, outl, in, inl);
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    if (!ctx->iv_set)
        return kp_raise(ctx->core, KP_R_NO_IV_SET);
    if (inl == 0 && ctx->alg->mode != KPM_XTS) {
        /* CFB/OFB: an empty update, whatever its buffers (an empty
         * message's may be NULL), as OpenSSL's stream ciphers */
        *outl = 0;
        return 1;
    }
    if (in == NULL || out == NULL)
        return kp_raise_data(ctx->core, KP_R_CIPHER_OPERATION_FAILED, "no input or output");
    if (ctx->alg->mode == KPM_XTS) {
        /* One data unit per call, as OpenSSL's XTS; never an encryption
         * under equal halves (an init refused for it leaves enc set). */
        if (inl < KPM_BLOCK || inl > KPM_XTS_MAX)
            return kp_raise_data(ctx->core, KP_R_INVALID_INPUT_LENGTH,
                                 "%zu bytes, an XTS data unit is 16..2^24", inl);
        if (ctx->enc && ctx->weak)
            return kp_raise(ctx->core, KP_R_XTS_DUPLICATED_KEYS);
        if (kp_overlap(in, out, inl))
            return kp_raise(ctx->core, KP_R_OVERLAPPING_BUFFERS);
        int r =
            ctx->enc
                ? kuai_xts_encrypt(&ctx->key->k, &ctx->tkey->k, ctx->oiv, in, out, inl, ctx->std)
                : kuai_xts_decrypt(&ctx->key->k, &ctx->tkey->k, ctx->oiv, in, out, inl, ctx->std);
        if (r != KUAI_OK)
            return kp_raise_kuai(ctx->core, r);
    } else if (!kpm_stream(ctx, out, in, inl)) {
        return 0;
    }
    *outl = inl;
    return 1;
}

/* EVP_Cipher: as an update, but CCM's length is always inl (OpenSSL's
 * ossl_ccm_cipher: a TLS record's whole length, both ways). */
static int kpm_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
    kpm_ctx *ctx = vctx;
    if (!kpm_update(vctx, out, outl, outsize, in, inl))
        return 0;
    if (ctx->alg->mode == KPM_CCM)
        *outl = inl;
    return 1;
}

static int kpm_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    kpm_ctx *ctx = vctx;
    (void)outsize;
    *outl = 0;
    if (ctx->alg->mode == KPM_CCM) {
        if (ctx->key == NULL || ctx->tls_aad_set || ctx->enc || !ctx->iv_set)
            return kpm_ccm(ctx, out, outl, NULL, 0); /* refused, or nothing to do */
        /* A decryption whose nonce no data update used: its message is
         * empty, and must pass the tag as any other (OpenSSL's CCM
         * returns success there, having checked nothing). As the data
         * update of 0 bytes that OpenSSL needs to check it. */
        static const uint8_t none[1];
        uint8_t sink[1];
        return kpm_ccm(ctx, sink, outl, none, 0);
    }
    /* As OpenSSL: its XTS final always succeeds, its stream modes' only once keyed. */
    return ctx->alg->mode == KPM_XTS || ctx->key != NULL || kp_raise(ctx->core, KP_R_NO_KEY_SET);
}

/* ---- parameters ---------------------------------------------------------- */

static int kpm_alg_get_params(const kpm_alg *alg, OSSL_PARAM params[])
{
    int ccm = alg->mode == KPM_CCM;
    return kp_alg_params(params, (unsigned)alg->mode, kpm_keylen(alg),
                         ccm ? KPM_CCM_IV_REPORTED : KPM_BLOCK, 1, ccm,
                         ccm || alg->mode == KPM_XTS);
}

static const OSSL_PARAM kpm_settable_xts_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_XTS_STANDARD, NULL, 0), OSSL_PARAM_END};
static const OSSL_PARAM kpm_gettable_ccm_ctx[] = {KP_GETTABLE_AEAD, OSSL_PARAM_END};
static const OSSL_PARAM kpm_settable_ccm_ctx[] = {KP_SETTABLE_AEAD, OSSL_PARAM_END};

static int kpm_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    kpm_ctx *ctx = vctx;
    OSSL_PARAM *p;
    int ccm = ctx->alg->mode == KPM_CCM;
    int stream = ctx->alg->mode == KPM_CFB || ctx->alg->mode == KPM_OFB;
    /* the query EVP makes for every message (kp_param_alone) */
    if ((p = kp_param_alone(params, OSSL_CIPHER_PARAM_IVLEN)) != NULL)
        return OSSL_PARAM_set_size_t(p, ctx->ivlen) ||
               kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    /* ivlen is never 0 here (16, or CCM's 7..13). */
    if (!kp_ctx_iv_params(params, kpm_keylen(ctx->alg), ctx->oiv, stream ? ctx->iv : ctx->oiv,
                          ctx->ivlen))
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "key or IV length, or IV");
    if (!ccm)
        return kp_get_padding_num(ctx->core, params, ctx->padding, ctx->num);
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) != NULL &&
        !OSSL_PARAM_set_size_t(p, ctx->taglen))
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    if (!kp_get_tls1_aad_pad(ctx->core, params, ctx->tls_aad_set, ctx->taglen))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TAG)) != NULL) {
        /* The tag an encryption made, at its length, once (as OpenSSL);
         * into no buffer it is refused, not a size query that uses it up. */
        if (!ctx->enc || !ctx->tag_made)
            return kp_raise_data(ctx->core, KP_R_TAG_NOT_SET,
                                 "no tag made: an encryption's data first, read once");
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s: no buffer", p->key);
        if (p->data_size != ctx->taglen)
            return kp_raise_data(ctx->core, KP_R_INVALID_TAG_LENGTH, "%zu bytes, the tag has %zu",
                                 p->data_size, ctx->taglen);
        if (!OSSL_PARAM_set_octet_string(p, ctx->tag, ctx->taglen))
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
        ctx->tag_made = 0;
        ctx->iv_set = 0;
        ctx->len_set = 0;
    }
    return 1;
}

static int kpm_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    kpm_ctx *ctx = vctx;
    const OSSL_PARAM *p;
    if (params == NULL)
        return 1;
    if (!kp_set_keylen_param(ctx->core, params, kpm_keylen(ctx->alg)))
        return 0;
    if (ctx->alg->mode == KPM_XTS) {
        p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_XTS_STANDARD);
        /* AES-XTS is IEEE 1619 by definition and, as OpenSSL's, ignores it. */
        if (p != NULL && !ctx->alg->ieee_only) {
            const char *s = NULL;
            /* get_utf8_string_ptr hands out a NULL data pointer as it is */
            if (p->data_type != OSSL_PARAM_UTF8_STRING || !OSSL_PARAM_get_utf8_string_ptr(p, &s) ||
                s == NULL)
                return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
            if (OPENSSL_strcasecmp(s, "GB") == 0)
                ctx->std = KUAI_XTS_GB17964;
            else if (OPENSSL_strcasecmp(s, "IEEE") == 0)
                ctx->std = KUAI_XTS_IEEE1619;
            else
                return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                     "%s \"%.32s\": GB or IEEE", p->key, s);
        }
        return 1;
    }
    if (ctx->alg->mode != KPM_CCM) {
        /* CFB/OFB: no TLS record mode either (kp_tls_record_params) */
        return kp_refuse_tls_record_params(ctx->core, params) &&
               kp_set_padding_num(ctx->core, params, &ctx->padding, &ctx->num, KPM_BLOCK);
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_IVLEN)) != NULL) {
        size_t ivlen;
        if (!kp_param_get_size(p, &ivlen, SIZE_MAX))
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        if (ivlen < 7 || ivlen > 13)
            return kp_raise_data(ctx->core, KP_R_INVALID_IV_LENGTH, "%zu bytes, CCM takes 7..13",
                                 ivlen);
        if (ivlen != ctx->ivlen) {
            ctx->ivlen = ivlen;
            ctx->iv_set = 0; /* a nonce of the old length is no nonce of the new one */
        }
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TAG)) != NULL) {
        /* A length alone (encryption), or the expected tag (decryption). */
        if (p->data_type != OSSL_PARAM_OCTET_STRING)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        if ((p->data_size & 1) != 0 || p->data_size < 4 || p->data_size > KPM_BLOCK)
            return kp_raise_data(ctx->core, KP_R_INVALID_TAG_LENGTH,
                                 "%zu bytes, CCM takes 4..16, even", p->data_size);
        if (p->data != NULL) {
            if (ctx->enc)
                return kp_raise(ctx->core, KP_R_TAG_NOT_NEEDED);
            /* A tag is compared at the length M the context was set up
             * with: one of another length is no new M (a forger's short
             * tag would pick its own); without M set up, the tag sets it
             * (OpenSSL's one call). */
            if (ctx->taglen_set && p->data_size != ctx->taglen)
                return kp_raise_data(ctx->core, KP_R_INVALID_TAG_LENGTH,
                                     "%zu bytes, the tag length set is %zu", p->data_size,
                                     ctx->taglen);
            memcpy(ctx->tag, p->data, p->data_size);
            ctx->tag_given = 1;
        } else {
            /* a tag given at the old length is compared at none other
             * (nor cut to a shorter M); nor is a tag made at the old
             * length one of the new: CCM's MAC depends on M, and
             * GET_TAG would hand out its bytes padded with an older
             * tag's, or cut short */
            if (p->data_size != ctx->taglen)
                ctx->tag_given = ctx->tag_made = 0;
            ctx->taglen_set = 1;
        }
        ctx->taglen = p->data_size;
    }
    /* TLS 1.2's CCM records (libssl, through EVP_Cipher), as OpenSSL's. */
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) != NULL) {
        if (!kp_tls1_aad(ctx->tls_aad, p,
                         EVP_CCM_TLS_EXPLICIT_IV_LEN + (ctx->enc ? 0 : ctx->taglen)))
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                 "%s: a %d-byte record header whose length covers the record's "
                                 "nonce and tag",
                                 p->key, EVP_AEAD_TLS1_AAD_LEN);
        ctx->tls_aad_set = 1;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL ||
            p->data_size != EVP_CCM_TLS_FIXED_IV_LEN)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s: %d bytes", p->key,
                                 EVP_CCM_TLS_FIXED_IV_LEN);
        memcpy(ctx->oiv, p->data, EVP_CCM_TLS_FIXED_IV_LEN);
    }
    return 1;
}

static const OSSL_PARAM *kpm_alg_gettable_ctx(const kpm_alg *alg)
{
    return alg->mode == KPM_CCM ? kpm_gettable_ccm_ctx : kp_gettable_block_ctx;
}

static const OSSL_PARAM *kpm_alg_settable_ctx(const kpm_alg *alg)
{
    return alg->mode == KPM_CCM   ? kpm_settable_ccm_ctx
           : alg->mode == KPM_XTS ? kpm_settable_xts_ctx
                                  : kp_settable_block_ctx;
}

KP_DEFINE_SLOTS(kpm);

size_t kp_modes_ciphers(OSSL_ALGORITHM *out, const kuai_cipher *list, size_t nc)
{
    size_t n = 0;
    /* In each mode, OpenSSL's algorithms first, then kuai's own; each in
     * the list's order (the order `openssl list` has always shown). */
    for (size_t pass = 0; pass < 2 * sizeof(kpm_modes) / sizeof(kpm_modes[0]); pass++) {
        size_t m = pass / 2;
        unsigned want_openssl = pass % 2 == 0 ? KPM_OPENSSL : 0;
        for (size_t i = 0; i < nc; i++) {
            if (kuai_block_size(list[i]) != KPM_BLOCK || !kp_cipher_available(list[i]))
                continue;
            kpm_alg *alg = &kpm_algs[n];
            unsigned flags;
            if (n == KP_NSLOTS ||
                !kp_alg_names(alg->names, sizeof(alg->names), list[i], kpm_modes[m].name, kpm_facts,
                              sizeof(kpm_facts) / sizeof(kpm_facts[0]), &flags))
                return (size_t)-1;
            if ((flags & KPM_NOT_OFFERED) || (flags & KPM_OPENSSL) != want_openssl)
                continue;
            alg->cipher = list[i];
            alg->mode = kpm_modes[m].mode;
            alg->ieee_only = (flags & KPM_IEEE_ONLY) != 0;
            kp_algorithm_set(&out[n], alg->names, kpm_dispatches[n]);
            n++;
        }
    }
    return n;
}

/* ---- CMAC (EVP_MAC "CMAC" with the "cipher" parameter) -------------------- */

typedef struct kpc_ctx {
    const kp_core *core; /* the provider context: where errors are raised */
    int have_cipher;
    kuai_cipher cipher;
    kp_key *key;
    int started; /* cm holds a running message */
    kuai_cmac_ctx cm;
} kpc_ctx;

static void *kpc_newctx(void *provctx)
{
    kpc_ctx *ctx = kp_ctx_new(provctx, sizeof(*ctx));
    if (ctx != NULL)
        ctx->core = provctx;
    return ctx;
}

static void kpc_freectx(void *vctx)
{
    kpc_ctx *ctx = vctx;
    if (ctx == NULL)
        return;
    kuai_cmac_wipe(&ctx->cm);
    kp_key_unref(ctx->key);
    OPENSSL_cleanse(ctx, sizeof(*ctx));
    free(ctx);
}

static void *kpc_dupctx(void *vctx)
{
    kpc_ctx *src = vctx;
    /* cm points at the shared, read-only key */
    kpc_ctx *dst = kp_ctx_dup(src->core, src, sizeof(*dst));
    if (dst != NULL && dst->key != NULL)
        atomic_fetch_add(&dst->key->refs, 1);
    return dst;
}

static int kpc_set_key(kpc_ctx *ctx, const unsigned char *key, size_t keylen)
{
    kuai_cmac_wipe(&ctx->cm);
    ctx->started = 0;
    if (!ctx->have_cipher)
        return kp_raise_data(ctx->core, KP_R_WRONG_CALL_ORDER, "CMAC's key before its %s",
                             OSSL_MAC_PARAM_CIPHER);
    if (!kp_key_set(ctx->core, &ctx->key, ctx->cipher, key, keylen))
        return 0;
    kp_debug_key("CMAC", 1, ctx->key);
    int r = kuai_cmac_init(&ctx->cm, &ctx->key->k);
    ctx->started = r == KUAI_OK;
    return ctx->started || kp_raise_kuai(ctx->core, r);
}

static int kpc_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    kpc_ctx *ctx = vctx;
    const OSSL_PARAM *p;
    if (params == NULL)
        return 1;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_CIPHER)) != NULL) {
        const char *name = NULL;
        kuai_cipher c;
        /* A CBC cipher of this provider with a 16-byte block (CMAC's). */
        if (p->data_type != OSSL_PARAM_UTF8_STRING || !OSSL_PARAM_get_utf8_string_ptr(p, &name) ||
            name == NULL)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        if (!kp_cbc_cipher_by_name(name, &c) || kuai_block_size(c) != KPM_BLOCK)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER,
                                 "%s \"%.64s\": a CBC cipher of this provider, 16-byte block",
                                 p->key, name);
        if (!ctx->have_cipher || c != ctx->cipher) {
            kuai_cmac_wipe(&ctx->cm);
            ctx->started = 0;
            kp_key_unref(ctx->key);
            ctx->key = NULL;
        }
        ctx->cipher = c;
        ctx->have_cipher = 1;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL)
            return kp_raise_data(ctx->core, KP_R_FAILED_TO_SET_PARAMETER, "%s", p->key);
        if (!kpc_set_key(ctx, p->data, p->data_size))
            return 0;
    }
    return 1; /* "properties": there is one provider of these ciphers here */
}

static int kpc_init(void *vctx, const unsigned char *key, size_t keylen, const OSSL_PARAM params[])
{
    kpc_ctx *ctx = vctx;
    if (!kpc_set_ctx_params(ctx, params))
        return 0;
    if (key != NULL)
        return kpc_set_key(ctx, key, keylen);
    /* No key: restart under the one there is. */
    if (ctx->key == NULL)
        return kp_raise(ctx->core, KP_R_NO_KEY_SET);
    kuai_cmac_wipe(&ctx->cm);
    int r = kuai_cmac_init(&ctx->cm, &ctx->key->k);
    ctx->started = r == KUAI_OK;
    return ctx->started || kp_raise_kuai(ctx->core, r);
}

static int kpc_update(void *vctx, const unsigned char *data, size_t len)
{
    kpc_ctx *ctx = vctx;
    if (!ctx->started)
        return kp_raise_data(ctx->core, KP_R_WRONG_CALL_ORDER, "no CMAC running: an init first");
    int r = kuai_cmac_update(&ctx->cm, data, len);
    return r == KUAI_OK || kp_raise_kuai(ctx->core, r);
}

static int kpc_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    kpc_ctx *ctx = vctx;
    int r;
    if (!ctx->started)
        return kp_raise_data(ctx->core, KP_R_WRONG_CALL_ORDER, "no CMAC running: an init first");
    if (outsize < KPM_BLOCK)
        return kp_raise(ctx->core, KP_R_OUTPUT_BUFFER_TOO_SMALL);
    if ((r = kuai_cmac_final(&ctx->cm, out, KPM_BLOCK)) != KUAI_OK)
        return kp_raise_kuai(ctx->core, r);
    ctx->started = 0;
    *outl = KPM_BLOCK;
    return 1;
}

static const OSSL_PARAM kpc_gettable[] = {OSSL_PARAM_size_t(OSSL_MAC_PARAM_SIZE, NULL),
                                          OSSL_PARAM_size_t(OSSL_MAC_PARAM_BLOCK_SIZE, NULL),
                                          OSSL_PARAM_END};
static const OSSL_PARAM kpc_settable[] = {
    OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_CIPHER, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_PROPERTIES, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0), OSSL_PARAM_END};

static const OSSL_PARAM *kpc_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return kpc_gettable;
}

static const OSSL_PARAM *kpc_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return kpc_settable;
}

static int kpc_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    const kpc_ctx *ctx = vctx;
    OSSL_PARAM *p;
    /* the cipher's block once keyed; 0 before, as OpenSSL 3.0's CMAC */
    size_t n = ctx->key != NULL ? KPM_BLOCK : 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_MAC_PARAM_SIZE)) != NULL &&
        !OSSL_PARAM_set_size_t(p, n))
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    if ((p = OSSL_PARAM_locate(params, OSSL_MAC_PARAM_BLOCK_SIZE)) != NULL &&
        !OSSL_PARAM_set_size_t(p, n))
        return kp_raise_data(ctx->core, KP_R_FAILED_TO_GET_PARAMETER, "%s", p->key);
    return 1;
}

static const OSSL_DISPATCH kpc_dispatch[] = {
    {OSSL_FUNC_MAC_NEWCTX, (void (*)(void))kpc_newctx},
    {OSSL_FUNC_MAC_DUPCTX, (void (*)(void))kpc_dupctx},
    {OSSL_FUNC_MAC_FREECTX, (void (*)(void))kpc_freectx},
    {OSSL_FUNC_MAC_INIT, (void (*)(void))kpc_init},
    {OSSL_FUNC_MAC_UPDATE, (void (*)(void))kpc_update},
    {OSSL_FUNC_MAC_FINAL, (void (*)(void))kpc_final},
    {OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (void (*)(void))kpc_gettable_ctx_params},
    {OSSL_FUNC_MAC_GET_CTX_PARAMS, (void (*)(void))kpc_get_ctx_params},
    {OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (void (*)(void))kpc_settable_ctx_params},
    {OSSL_FUNC_MAC_SET_CTX_PARAMS, (void (*)(void))kpc_set_ctx_params},
    {0, NULL}};

size_t kp_modes_macs(OSSL_ALGORITHM *out)
{
    /* CMAC's "cipher" resolves only the CBC names the provider offers. */
    kp_algorithm_set(&out[0], "CMAC", kpc_dispatch);
    return 1;
}
