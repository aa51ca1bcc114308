/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The algorithm tables of kuai_provider.c and kuai_prov_modes.c, and the
 * numbered slots that serve them, written once for both files. Internal to
 * kuai.so.
 *
 * Each file's table is built once, at the first provider init, from
 * kuai_ciphers(). OpenSSL hands an algorithm's newctx only the provider
 * context, so every algorithm needs functions of its own: each file has
 * KP_NSLOTS numbered slots, slot i's functions serving row i of its table.
 */
#ifndef KUAI_PROV_SLOTS_H
#define KUAI_PROV_SLOTS_H

#include "kuai_provider.h"

#include <kuai.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

#include <stddef.h>

/* A capacity, not a cipher list (16 ciphers in 4 modes). */
#define KP_NSLOTS 64
/* clang-format off */
#define KP_SLOTS(X, p) \
    X(p, 0) X(p, 1) X(p, 2) X(p, 3) X(p, 4) X(p, 5) X(p, 6) X(p, 7) \
    X(p, 8) X(p, 9) X(p, 10) X(p, 11) X(p, 12) X(p, 13) X(p, 14) X(p, 15) \
    X(p, 16) X(p, 17) X(p, 18) X(p, 19) X(p, 20) X(p, 21) X(p, 22) X(p, 23) \
    X(p, 24) X(p, 25) X(p, 26) X(p, 27) X(p, 28) X(p, 29) X(p, 30) X(p, 31) \
    X(p, 32) X(p, 33) X(p, 34) X(p, 35) X(p, 36) X(p, 37) X(p, 38) X(p, 39) \
    X(p, 40) X(p, 41) X(p, 42) X(p, 43) X(p, 44) X(p, 45) X(p, 46) X(p, 47) \
    X(p, 48) X(p, 49) X(p, 50) X(p, 51) X(p, 52) X(p, 53) X(p, 54) X(p, 55) \
    X(p, 56) X(p, 57) X(p, 58) X(p, 59) X(p, 60) X(p, 61) X(p, 62) X(p, 63)
/* clang-format on */

/* KP_DEFINE_SLOTS(p): a file with the prefix p (kp, kpm) defines its table
 * p_algs[KP_NSLOTS] and, before this, its cipher functions: those every
 * row shares (p_freectx, p_dupctx, p_einit, p_dinit, p_update, p_final,
 * p_cipher, p_get_ctx_params, p_set_ctx_params) and those that take a row
 * (p_newctx(provctx, row), p_alg_get_params(row, params),
 * p_alg_gettable_ctx(row), p_alg_settable_ctx(row)), and p_init(vctx,
 * key, keylen, iv, ivlen, params, enc), which KP_DEFINE_SLOTS(p) makes
 * p_einit (enc = 1) and p_dinit (enc = 0) of. It then defines each slot i's
 * functions, which pass row i to those, its dispatch table p_dispatch_i,
 * and p_dispatches[i] pointing at it. */
#define KP_SLOT_INIT(p, ed, enc)                                                                   \
    static int p##_##ed##init(void *vctx, const unsigned char *key, size_t keylen,                 \
                              const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])    \
    {                                                                                              \
        return p##_init(vctx, key, keylen, iv, ivlen, params, enc);                                \
    }
#define KP_SLOT_CTX_TABLE(p, i, which)                                                             \
    static const OSSL_PARAM *p##_##which##_ctx_##i(void *cctx, void *provctx)                      \
    {                                                                                              \
        (void)cctx;                                                                                \
        (void)provctx;                                                                             \
        return p##_alg_##which##_ctx(&p##_algs[i]);                                                \
    }
#define KP_SLOT_FUNCS(p, i)                                                                        \
    static void *p##_newctx_##i(void *provctx)                                                     \
    {                                                                                              \
        return p##_newctx(provctx, &p##_algs[i]);                                                  \
    }                                                                                              \
    static int p##_get_params_##i(OSSL_PARAM params[])                                             \
    {                                                                                              \
        return p##_alg_get_params(&p##_algs[i], params);                                           \
    }                                                                                              \
    KP_SLOT_CTX_TABLE(p, i, gettable)                                                              \
    KP_SLOT_CTX_TABLE(p, i, settable)                                                              \
    static const OSSL_DISPATCH p##_dispatch_##i[] = {                                              \
        {OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))p##_newctx_##i},                                 \
        {OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))p##_freectx},                                   \
        {OSSL_FUNC_CIPHER_DUPCTX, (void (*)(void))p##_dupctx},                                     \
        {OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))p##_einit},                                \
        {OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))p##_dinit},                                \
        {OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))p##_update},                                     \
        {OSSL_FUNC_CIPHER_FINAL, (void (*)(void))p##_final},                                       \
        {OSSL_FUNC_CIPHER_CIPHER, (void (*)(void))p##_cipher},                                     \
        {OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))p##_get_params_##i},                         \
        {OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (void (*)(void))kp_gettable_params},                    \
        {OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))p##_get_ctx_params},                     \
        {OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))p##_set_ctx_params},                     \
        {OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))p##_gettable_ctx_##i},              \
        {OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))p##_settable_ctx_##i},              \
        {0, NULL}};
#define KP_SLOT_DISPATCH(p, i) p##_dispatch_##i,
#define KP_DEFINE_SLOTS(p)                                                                         \
    KP_SLOT_INIT(p, e, 1)                                                                          \
    KP_SLOT_INIT(p, d, 0)                                                                          \
    KP_SLOTS(KP_SLOT_FUNCS, p)                                                                     \
    static const OSSL_DISPATCH *const p##_dispatches[KP_NSLOTS] = {KP_SLOTS(KP_SLOT_DISPATCH, p)}

/* Room for a row's names: the algorithm's and its aliases, ':'-separated. */
#define KP_NAMES_MAX 96

/* Facts about an algorithm name that kuai's list cannot know: OpenSSL's
 * aliases and OIDs of it (NULL: none), and per-file flags. Keyed by name,
 * so a cipher without rows just has its name. */
typedef struct kp_fact {
    const char *name;
    const char *aliases;
    unsigned flags;
} kp_fact;

/* Writes cipher c's algorithm name in mode ("AES-128" "-" "CBC": the kuai
 * name in upper case) and then the aliases facts[] gives it to out; the
 * flags of its fact (0 if none) to *flags. 0 if it does not fit. */
int kp_alg_names(char *out, size_t size, kuai_cipher c, const char *mode, const kp_fact *facts,
                 size_t nfacts, unsigned *flags);
/* Whether this build has a backend of cipher c (the provider offers only those). */
int kp_cipher_available(kuai_cipher c);

#endif
