/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the provider's two files share: kuai_provider.c (ECB, CBC, CTR, GCM
 * and the provider itself) and kuai_prov_modes.c (XTS, CCM, CFB, OFB and
 * CMAC). Internal to kuai.so: nothing here is exported.
 */
#ifndef KUAI_PROVIDER_H
#define KUAI_PROVIDER_H

#include "kuai_prov_err.h"

#include <kuai.h>

#include <openssl/core.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A key schedule shared by a context and its duplicates: read-only once set
 * up, so sharing is safe, and a running GCM or CMAC message keeps a pointer
 * to it. */
typedef struct kp_key {
    kuai_key k;
    atomic_int refs;
    /* the bytes k was set up from (kp_key_same) */
    unsigned char raw[32];
    size_t raw_len;
} kp_key;

void kp_key_unref(kp_key *key);
/* Whether key (keylen bytes) is the one k was set up from, compared in
 * constant time: what it tells is whether the key changed, not the key. */
int kp_key_same(const kp_key *k, const unsigned char *key, size_t keylen);
/* Whether in and out overlap other than in place (kuai's calls refuse
 * that): a stream mode asks before its state moves, so that a refused
 * update leaves the context as it was. */
static inline int kp_overlap(const void *in, const void *out, size_t len)
{
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    return len != 0 && a != b && (a < b ? b - a : a - b) < len;
}
/* Sets *slot up as cipher c's schedule of key (keylen must be c's key
 * size); 1 on success. On failure *slot no longer holds a key, and the
 * reason is raised through core. */
int kp_key_set(const kp_core *core, kp_key **slot, kuai_cipher c, const unsigned char *key,
               size_t keylen);
/* Raises the reason of kuai's error code r (KUAI_ERR_*) through core, its
 * kuai_strerror text as the data; returns 0. */
int kp_raise_kuai_at(const kp_core *core, const char *file, int line, const char *func, int r);
#define kp_raise_kuai(core, r) kp_raise_kuai_at(core, KP_FILE, __LINE__, __func__, r)
/* KUAI_PROVIDER_DEBUG: one line per keyed init naming the backend. */
void kp_debug_key(const char *names, int enc, const kp_key *key);
/* The cipher whose CBC name or alias is name (CMAC's "cipher"); 0 if none. */
int kp_cbc_cipher_by_name(const char *name, kuai_cipher *c);
/* OSSL_FUNC_CIPHER_GETTABLE_PARAMS: the same list for every cipher. */
const OSSL_PARAM *kp_gettable_params(void *provctx);
/* The context parameters of a cipher that is no AEAD and no XTS (ECB, CBC,
 * CTR, CFB, OFB): what its get_ctx_params answers and set_ctx_params takes. */
extern const OSSL_PARAM kp_gettable_block_ctx[];
extern const OSSL_PARAM kp_settable_block_ctx[];
/* OSSL_FUNC_CIPHER_GET_PARAMS: sets in params what kp_gettable_params lists,
 * from an algorithm's EVP mode, key length, IV length, EVP block size (1 for
 * a stream), whether it is an AEAD and whether its IV is its own business
 * (custom_iv); the rest are 0 for every kuai algorithm. */
int kp_alg_params(OSSL_PARAM params[], unsigned mode, size_t keylen, size_t ivlen, size_t blocksize,
                  int aead, int custom_iv);
/* OSSL_FUNC_CIPHER_GET_CTX_PARAMS's answers every cipher has: the key
 * length, the IV length and, when it has an IV (ivlen > 0), the IV as given
 * (iv) and as it now stands (updated_iv). */
int kp_ctx_iv_params(OSSL_PARAM params[], size_t keylen, const uint8_t *iv,
                     const uint8_t *updated_iv, size_t ivlen);
/* params[0] where params asks for key alone (NULL params: NULL), else
 * NULL: EVP asks for the IV length alone at every EVP_*Init given an IV
 * (EVP_CIPHER_CTX_get_iv_length), and for an AEAD's tag alone after each
 * message; answered without the lookups of every other name (their string
 * compares were 12% of a 16-byte AES-GCM message through EVP; Xeon,
 * Sapphire Rapids). */
OSSL_PARAM *kp_param_alone(OSSL_PARAM params[], const char *key);
/* Whether an update's or EVP_Cipher's length is one a buffer can have (at
 * most PTRDIFF_MAX), else 'invalid input length' raised through core (0):
 * every mode asks first, before its state moves or an output size is
 * worked out from it. */
int kp_length_ok(const kp_core *core, size_t inl);
/* An integer parameter being set (key length, IV length, padding, num, a
 * TLS version or MAC size) as a size_t, into *v: 1 if p has data holding an
 * integer of 0..max, else 0. Every integer a cipher takes is read through
 * it: OpenSSL 3.0's OSSL_PARAM_get_uint and get_size_t read through a NULL
 * data pointer. */
int kp_param_get_size(const OSSL_PARAM *p, size_t *v, size_t max);
/* Whether params holds OSSL_CIPHER_PARAM_TLS_VERSION or TLS_MAC_SIZE,
 * libssl's TLS 1.0-1.2 CBC record mode (the provider pads records and
 * strips padding and MAC), which no kuai cipher implements: its block
 * ciphers refuse these rather than ignore them. */
int kp_tls_record_params(const OSSL_PARAM params[]);
/* OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, a TLS 1.2 AEAD record's header: copied
 * from p to aad, its length field less strip (the explicit nonce and, in a
 * received record, the tag), which the field counts and the authenticated
 * length does not. 0 if p holds no such header or too short a length. */
int kp_tls1_aad(uint8_t aad[EVP_AEAD_TLS1_AAD_LEN], const OSSL_PARAM *p, size_t strip);
/* A cipher context of size bytes: zeroed (kp_ctx_new) or a copy of src
 * (kp_ctx_dup, which takes no references: its caller does); NULL with
 * 'out of memory' raised through core when there is no room. */
void *kp_ctx_new(const kp_core *core, size_t size);
void *kp_ctx_dup(const kp_core *core, const void *src, size_t size);
/* set_ctx_params' OSSL_CIPHER_PARAM_KEYLEN, which no cipher here changes:
 * 1 if params has none or one of keylen, else 0 with the reason raised. */
int kp_set_keylen_param(const kp_core *core, const OSSL_PARAM params[], size_t keylen);
/* The non-AEAD, non-XTS modes' padding and num (ECB, CBC, CTR, CFB,
 * OFB): answered (get), or taken (set: padding as 0 or 1, num below bs)
 * into *padding and *num where params has them; 0 with the reason raised
 * if one does not fit. */
int kp_get_padding_num(const kp_core *core, OSSL_PARAM params[], unsigned padding, size_t num);
int kp_set_padding_num(const kp_core *core, const OSSL_PARAM params[], unsigned *padding,
                       size_t *num, size_t bs);
/* A mode with no TLS record layer (all but CBC): 0 with the reason raised
 * if params holds its parameters (kp_tls_record_params), else 1. */
int kp_refuse_tls_record_params(const kp_core *core, const OSSL_PARAM params[]);
/* An AEAD's OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD (what EVP_CTRL_AEAD_TLS1_AAD
 * returns: the record grows by the tag, pad bytes): answered once a record
 * header is set (aad_set), refused before; 1 if params does not ask. */
int kp_get_tls1_aad_pad(const kp_core *core, OSSL_PARAM params[], int aad_set, size_t pad);
/* The context parameters GCM and CCM share; each adds its own. */
#define KP_GETTABLE_AEAD                                                                           \
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),                                             \
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),                                          \
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),                                    \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),                                    \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),                            \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),                              \
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL)
#define KP_SETTABLE_AEAD                                                                           \
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),                                             \
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),                                     \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),                              \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),                         \
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0)
/* One entry of what the provider's queries return: names and implementation
 * under the property "provider=kuai". */
void kp_algorithm_set(OSSL_ALGORITHM *out, const char *names, const OSSL_DISPATCH *impl);

/* kuai_prov_modes.c: builds its table (kuai_prov_slots.h) from the n
 * ciphers of list and writes its ciphers to out (room for KP_NSLOTS);
 * returns how many, or (size_t)-1 if the table does not fit. Runs once,
 * before any query. */
size_t kp_modes_ciphers(OSSL_ALGORITHM *out, const kuai_cipher *list, size_t n);
/* Its MACs, written to out; the count is returned. */
size_t kp_modes_macs(OSSL_ALGORITHM *out);

#endif
