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

/* kuai_prov_modes.c: its ciphers (those of the ciphers supported[] marks)
 * and its MACs, written to out; the counts are returned. */
#define KP_MODES_MAX 32
size_t kp_modes_ciphers(OSSL_ALGORITHM *out, const int *supported);
size_t kp_modes_macs(OSSL_ALGORITHM *out, const int *supported);

#endif
