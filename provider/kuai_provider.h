/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the provider's two files share: kuai_provider.c (ECB, CBC, CTR, GCM
 * and the provider itself) and kuai_prov_modes.c (XTS, CCM, CFB, OFB and
 * CMAC). Internal to kuai.so: nothing here is exported.
 */
#ifndef KUAI_PROVIDER_H
#define KUAI_PROVIDER_H

#include <kuai.h>

#include <openssl/core.h>

#include <stdatomic.h>
#include <stddef.h>

/* A key schedule shared by a context and its duplicates: read-only once set
 * up, so sharing is safe, and a running GCM or CMAC message keeps a pointer
 * to it. */
typedef struct kp_key {
    kuai_key k;
    atomic_int refs;
} kp_key;

void kp_key_unref(kp_key *key);
/* Sets *slot up as cipher c's schedule of key (keylen must be c's key
 * size); 1 on success. On failure *slot no longer holds a key. */
int kp_key_set(kp_key **slot, kuai_cipher c, const unsigned char *key, size_t keylen);
/* KUAI_PROVIDER_DEBUG: one line per keyed init naming the backend. */
void kp_debug_key(const char *names, int enc, const kp_key *key);
/* The cipher whose CBC name or alias is name (CMAC's "cipher"); 0 if none. */
int kp_cbc_cipher_by_name(const char *name, kuai_cipher *c);
/* OSSL_FUNC_CIPHER_GETTABLE_PARAMS: the same list for every cipher. */
const OSSL_PARAM *kp_gettable_params(void *provctx);

/* The algorithm tables of both files are built once, at the first provider
 * init, from kuai_ciphers(). OpenSSL hands an algorithm's newctx only the
 * provider context, so every algorithm needs functions of its own: each
 * file has KP_NSLOTS numbered slots, slot i's functions serving row i of
 * its table. A capacity, not a cipher list (16 ciphers in 4 modes). */
#define KP_NSLOTS 64
/* clang-format off */
#define KP_SLOTS(X) \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
    X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) \
    X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) \
    X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) \
    X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) \
    X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) \
    X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) \
    X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
/* clang-format on */
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

/* kuai_prov_modes.c: builds its table from the n ciphers of list and writes
 * its ciphers to out (room for KP_NSLOTS); returns how many, or (size_t)-1
 * if the table does not fit. Runs once, before any query. */
size_t kp_modes_ciphers(OSSL_ALGORITHM *out, const kuai_cipher *list, size_t n);
/* Its MACs, written to out; the count is returned. */
size_t kp_modes_macs(OSSL_ALGORITHM *out);

#endif
